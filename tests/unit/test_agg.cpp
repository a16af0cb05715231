// Aggregate operations (core/agg.hpp) and 256-bit arithmetic (core/wide.hpp): every AggOp
// over seeded random sequences split at random points, partial states merged in several
// orders and compared with one sequential state (bit-identical for the exact ops) and with
// independent long double / exact integer references; Wide256 against __int128 and a slow
// schoolbook multiply; wide_to_double against a bit-by-bit round-to-nearest-even.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/group_table.hpp"
#include "runtime/grow_array.hpp"
#include "exec/holistic.hpp"
#include "ranks/group_exchange.hpp"
#include "result/spill.hpp"
#include "reference_stats.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/wide.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

using u128 = unsigned __int128;

// ---- aggregate helpers ----------------------------------------------------------------

struct alignas(16) Block {
  char bytes[1024];  // larger than any state (CorrFloatState is ~420 bytes)
};

AggDesc desc(AggOp op, Type t, uint8_t scale = 0, Type t2 = Type::Int, uint8_t scale2 = 0) {
  return AggDesc{op, t, scale, t2, scale2, 0};
}

struct Row {
  Value x, y;
  uint64_t order;
};

// One state over rows [b, e).
Block state_of(const AggDesc& a, const std::vector<Row>& rows, size_t b, size_t e) {
  Block blk;
  std::memset(blk.bytes, 0xAB, sizeof blk.bytes);  // init must not rely on zeroed memory
  agg_init(a, blk.bytes);
  for (size_t i = b; i < e; ++i) agg_update(a, blk.bytes, rows[i].x, rows[i].y, rows[i].order);
  return blk;
}

uint64_t bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Bit-identical results: null flag, then the payload the type uses.
bool same_value(const Value& a, const Value& b, Type t) {
  if (a.null || b.null) return a.null == b.null;
  if (t == Type::Float) return bits(a.f) == bits(b.f);
  if (t == Type::String) return a.s.len == b.s.len && std::memcmp(a.s.ptr, b.s.ptr, a.s.len) == 0;
  return a.i == b.i;
}

// The result type an op's finalize produces.
Type result_type(AggOp op, Type in) {
  switch (op) {
    case AggOp::CountStar:
    case AggOp::Count:
    case AggOp::SumExact:
      return Type::Int;
    case AggOp::Min:
    case AggOp::Max:
    case AggOp::First:
    case AggOp::Last:
      return in;
    default:
      return Type::Float;
  }
}

// Random cut points splitting [0, n) into pieces (some empty).
std::vector<size_t> random_cuts(std::mt19937_64& rng, size_t n) {
  std::vector<size_t> cuts = {0, n};
  const size_t k = rng() % 8;
  for (size_t i = 0; i < k; ++i) cuts.push_back(n ? rng() % (n + 1) : 0);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// Partial states merged three ways: left to right, right to left (grouping changes), and in
// a random order. Each result is finalized.
std::vector<Value> merged_results(std::mt19937_64& rng, const AggDesc& a, const std::vector<Row>& rows) {
  const std::vector<size_t> cuts = random_cuts(rng, rows.size());
  std::vector<Block> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) parts.push_back(state_of(a, rows, cuts[i], cuts[i + 1]));
  std::vector<Value> out;

  Block left = state_of(a, rows, 0, 0);
  for (const Block& p : parts) agg_merge(a, left.bytes, p.bytes);
  out.push_back(agg_finalize(a, left.bytes));

  std::vector<Block> right = parts;  // fold from the right: p0 + (p1 + (p2 + ...))
  for (size_t i = right.size(); i-- > 1;) agg_merge(a, right[i - 1].bytes, right[i].bytes);
  out.push_back(agg_finalize(a, right[0].bytes));

  std::vector<size_t> perm(parts.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Block shuffled = state_of(a, rows, 0, 0);
  for (size_t i : perm) agg_merge(a, shuffled.bytes, parts[i].bytes);
  out.push_back(agg_finalize(a, shuffled.bytes));
  return out;
}

// Random integral values (Int, or Decimal scaled) with nulls; some huge.
std::vector<Row> random_int_rows(std::mt19937_64& rng, size_t n, bool huge) {
  std::vector<Row> rows;
  for (size_t i = 0; i < n; ++i) {
    auto draw = [&]() {
      if (rng() % 7 == 0) return Value::make_null();
      int64_t v = static_cast<int64_t>(rng() % 2000001) - 1000000;
      if (huge && rng() % 3 == 0) v = static_cast<int64_t>(rng());  // full 64-bit range
      return Value::of_int(v);
    };
    rows.push_back(Row{draw(), draw(), i});
  }
  return rows;
}

std::vector<Row> random_float_rows(std::mt19937_64& rng, size_t n) {
  std::vector<Row> rows;
  std::uniform_real_distribution<double> u(-1000.0, 1000.0);
  for (size_t i = 0; i < n; ++i) {
    auto draw = [&]() {
      return rng() % 7 == 0 ? Value::make_null() : Value::of_float(u(rng) * (1 + rng() % 3));
    };
    rows.push_back(Row{draw(), draw(), i});
  }
  return rows;
}

long double pow10l_int(int e) {
  long double p = 1;
  for (int i = 0; i < e; ++i) p *= 10;
  return p;
}

// Independent references, in long double (or exactly) from the raw values.
struct Moments {
  int64_t n = 0;
  __int128 sum = 0;
  long double mean = 0, var = 0;
};
Moments moments(const std::vector<Row>& rows, bool use_float, long double unit) {
  Moments m;
  std::vector<long double> xs;
  for (const Row& r : rows) {
    if (r.x.null) continue;
    ++m.n;
    if (!use_float) m.sum += r.x.i;
    xs.push_back(use_float ? static_cast<long double>(r.x.f) : static_cast<long double>(r.x.i) / unit);
  }
  long double s = 0;
  for (long double x : xs) s += x;
  if (m.n) m.mean = s / m.n;
  long double m2 = 0;
  for (long double x : xs) m2 += (x - m.mean) * (x - m.mean);
  if (m.n > 1) m.var = m2 / (m.n - 1);
  return m;
}
long double corr_ref(const std::vector<Row>& rows, bool use_float) {
  std::vector<std::pair<long double, long double>> v;
  for (const Row& r : rows)
    if (!r.x.null && !r.y.null) {
      const long double x = use_float ? static_cast<long double>(r.x.f) : static_cast<long double>(r.x.i);
      const long double y = use_float ? static_cast<long double>(r.y.f) : static_cast<long double>(r.y.i);
      v.push_back({x, y});
    }
  return testing::naive_pearson(v).value_or(std::nanl(""));
}

bool close(long double got, long double want, long double rel) {
  return std::fabs(got - want) <= rel * std::max<long double>(1, std::fabs(want));
}

// ---- 256-bit reference: 8 limbs of 32 bits, two's complement -------------------------

struct Ref256 {
  uint32_t l[8];
};
Ref256 ref_of(const Wide256& w) {
  Ref256 r;
  for (int i = 0; i < 4; ++i) {
    r.l[2 * i] = static_cast<uint32_t>(w.w[i]);
    r.l[2 * i + 1] = static_cast<uint32_t>(w.w[i] >> 32);
  }
  return r;
}
Ref256 ref_of_i128(__int128 x) { return ref_of(Wide256::of(x)); }
bool ref_eq(const Ref256& a, const Ref256& b) { return std::memcmp(a.l, b.l, sizeof a.l) == 0; }
Ref256 ref_add(const Ref256& a, const Ref256& b) {
  Ref256 r;
  uint64_t c = 0;
  for (int i = 0; i < 8; ++i) {
    const uint64_t s = uint64_t{a.l[i]} + b.l[i] + c;
    r.l[i] = static_cast<uint32_t>(s);
    c = s >> 32;
  }
  return r;
}
Ref256 ref_neg(const Ref256& a) {
  Ref256 inv, one{};
  for (int i = 0; i < 8; ++i) inv.l[i] = ~a.l[i];
  one.l[0] = 1;
  return ref_add(inv, one);
}
// Schoolbook product modulo 2^256 (two's complement makes signs come out right).
Ref256 ref_mul(const Ref256& a, const Ref256& b) {
  uint64_t acc[8] = {};
  Ref256 r{};
  for (int i = 0; i < 8; ++i) {
    uint64_t carry = 0;
    for (int j = 0; i + j < 8; ++j) {
      const uint64_t t = uint64_t{a.l[i]} * b.l[j] + acc[i + j] + carry;
      acc[i + j] = t & 0xffffffffu;
      carry = t >> 32;
    }
  }
  for (int i = 0; i < 8; ++i) r.l[i] = static_cast<uint32_t>(acc[i]);
  return r;
}

// Round-to-nearest-even of a 256-bit two's complement value, bit by bit.
double ref_to_double(const Wide256& w) {
  const bool neg = w.negative();
  const Wide256 u = neg ? wide_neg(w) : w;
  auto bit = [&](int i) { return (u.w[i / 64] >> (i % 64)) & 1; };
  int top = 255;
  while (top >= 0 && !bit(top)) --top;
  if (top < 0) return 0.0;
  if (top < 53) {
    double d = 0;
    for (int i = top; i >= 0; --i) d = d * 2 + static_cast<double>(bit(i));
    return neg ? -d : d;
  }
  uint64_t mant = 0;
  for (int i = top; i > top - 53; --i) mant = mant * 2 + bit(i);
  const int low = top - 52;  // weight of mant's last bit
  const bool half = bit(low - 1);
  bool rest = false;
  for (int i = low - 2; i >= 0; --i) rest = rest || bit(i);
  if (half && (rest || (mant & 1))) ++mant;
  const double d = std::ldexp(static_cast<double>(mant), low);
  return neg ? -d : d;
}

Wide256 wide_pow2(int k) {
  Wide256 w = Wide256::zero();
  w.w[k / 64] = 1ull << (k % 64);
  return w;
}

}  // namespace

TEST_CASE("agg: exact ops give the same bits however the rows are split and merged") {
  std::mt19937_64 rng(42);
  struct Case {
    AggOp op;
    Type t;
    uint8_t scale;
  };
  const std::vector<Case> cases = {{AggOp::CountStar, Type::Int, 0},     {AggOp::Count, Type::Int, 0},
                                   {AggOp::SumExact, Type::Int, 0},      {AggOp::SumExact, Type::Decimal, 2},
                                   {AggOp::Min, Type::Int, 0},           {AggOp::Max, Type::Decimal, 3},
                                   {AggOp::MeanExact, Type::Decimal, 2}, {AggOp::VarExact, Type::Int, 0},
                                   {AggOp::VarExact, Type::Decimal, 4},  {AggOp::StdExact, Type::Decimal, 1},
                                   {AggOp::First, Type::Int, 0},         {AggOp::Last, Type::Decimal, 2},
                                   {AggOp::CorrExact, Type::Int, 0},     {AggOp::Min, Type::Float, 0},
                                   {AggOp::Max, Type::Float, 0},         {AggOp::First, Type::Float, 0},
                                   {AggOp::Last, Type::Float, 0}};
  for (const Case& c : cases) {
    for (int iter = 0; iter < 60; ++iter) {
      const size_t n = rng() % 200;
      std::vector<Row> rows =
          c.t == Type::Float ? random_float_rows(rng, n) : random_int_rows(rng, n, iter % 2);
      const AggDesc a = desc(c.op, c.t, c.scale, c.t, c.scale);
      const Block seq = state_of(a, rows, 0, rows.size());
      const Value want = agg_finalize(a, seq.bytes);
      INFO("op " << static_cast<int>(c.op) << " type " << static_cast<int>(c.t) << " n " << n << " iter "
                 << iter);
      for (const Value& got : merged_results(rng, a, rows))
        REQUIRE(same_value(got, want, result_type(c.op, c.t)));
    }
  }
}

TEST_CASE("agg: results match independent references") {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    const size_t n = rng() % 300;
    const bool huge = iter % 3 == 0;
    const std::vector<Row> rows = random_int_rows(rng, n, huge);
    const uint8_t scale = static_cast<uint8_t>(rng() % 5);
    const Moments m = moments(rows, false, pow10l_int(scale));
    INFO("iter " << iter << " n " << n << " scale " << int(scale));

    auto fin = [&](AggOp op) {
      const AggDesc a = desc(op, Type::Decimal, scale, Type::Decimal, scale);
      Block b = state_of(a, rows, 0, rows.size());
      return agg_finalize(a, b.bytes);
    };
    CHECK(fin(AggOp::CountStar).i == static_cast<__int128>(n));
    CHECK(fin(AggOp::Count).i == m.n);
    const Value sum = fin(AggOp::SumExact);
    REQUIRE(sum.null == (m.n == 0));
    if (m.n) CHECK(sum.i == m.sum);
    const Value mean = fin(AggOp::MeanExact);
    if (m.n) CHECK(close(mean.f, m.mean, 1e-15L));
    const Value var = fin(AggOp::VarExact), sd = fin(AggOp::StdExact);
    REQUIRE(var.null == (m.n < 2));
    if (m.n >= 2) {
      CHECK(close(var.f, m.var, 1e-14L));
      CHECK(close(sd.f, std::sqrt(m.var), 1e-14L));
    }
    // Min / max / first / last by a plain scan.
    Value mn = Value::make_null(), mx = Value::make_null(), first = Value::make_null(),
          last = Value::make_null();
    for (const Row& r : rows) {
      if (r.x.null) continue;
      if (mn.null || r.x.i < mn.i) mn = r.x;
      if (mx.null || r.x.i > mx.i) mx = r.x;
      if (first.null) first = r.x;
      last = r.x;
    }
    CHECK(same_value(fin(AggOp::Min), mn, Type::Int));
    CHECK(same_value(fin(AggOp::Max), mx, Type::Int));
    CHECK(same_value(fin(AggOp::First), first, Type::Int));
    CHECK(same_value(fin(AggOp::Last), last, Type::Int));

    size_t pairs = 0;
    for (const Row& r : rows) pairs += !r.x.null && !r.y.null;
    const Value corr = fin(AggOp::CorrExact);
    if (pairs >= 2) {
      REQUIRE_FALSE(corr.null);
      CHECK(std::fabs(corr.f - corr_ref(rows, false)) <= 1e-13L);
    } else {
      CHECK(corr.null);
    }
  }
}

TEST_CASE("agg: float ops stay close to the reference in any merge order") {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    const std::vector<Row> rows = random_float_rows(rng, 2 + rng() % 300);
    const Moments m = moments(rows, true, 1);
    long double abs_sum = 0;
    for (const Row& r : rows)
      if (!r.x.null) abs_sum += std::fabs(static_cast<long double>(r.x.f));
    INFO("iter " << iter);
    for (AggOp op : {AggOp::SumFloat, AggOp::MeanFloat, AggOp::VarFloat, AggOp::StdFloat, AggOp::CorrFloat}) {
      const AggDesc a = desc(op, Type::Float, 0, Type::Float, 0);
      for (const Value& v : merged_results(rng, a, rows)) {
        if (op == AggOp::SumFloat) {
          // Exact accumulation: the sum is the correctly rounded exact sum.
          if (m.n) CHECK(std::fabs(v.f - m.mean * m.n) <= 1e-15L * abs_sum + 1e-300L);
        } else if (op == AggOp::MeanFloat) {
          if (m.n) CHECK(close(v.f, m.mean, 1e-12L));
        } else if (op == AggOp::VarFloat) {
          if (m.n >= 2) CHECK(close(v.f, m.var, 1e-12L));
        } else if (op == AggOp::StdFloat) {
          if (m.n >= 2) CHECK(close(v.f, std::sqrt(m.var), 1e-12L));
        } else if (!v.null) {
          CHECK(std::fabs(v.f - corr_ref(rows, true)) <= 1e-12L);
        }
      }
    }
  }
}

TEST_CASE("agg: strings for min, max, first and last") {
  const char* words[] = {"pear", "apple", "", "zebra", "apple pie", "Zed", "\xc3\xa9t\xc3\xa9"};
  std::vector<Row> rows;
  for (size_t i = 0; i < 7; ++i) {
    const Value w =
        i == 2 ? Value::make_null() : Value::of_str(words[i], static_cast<uint32_t>(std::strlen(words[i])));
    rows.push_back(Row{w, Value::make_null(), 100 + i});
  }
  auto fin = [&](AggOp op) {
    const AggDesc a = desc(op, Type::String);
    Block b = state_of(a, rows, 0, rows.size());
    const Value v = agg_finalize(a, b.bytes);
    return std::string(v.s.ptr, v.s.len);
  };
  CHECK(fin(AggOp::Min) == "Zed");  // bytewise: uppercase before lowercase
  CHECK(fin(AggOp::Max) == "\xc3\xa9t\xc3\xa9");
  CHECK(fin(AggOp::First) == "pear");
  CHECK(fin(AggOp::Last) == "\xc3\xa9t\xc3\xa9");
  CHECK(agg_holds_string(desc(AggOp::Min, Type::String)));
  CHECK_FALSE(agg_holds_string(desc(AggOp::Count, Type::String)));
  // "apple" < "apple pie": a prefix orders first.
  CHECK(agg_compare(rows[1].x, rows[4].x, Type::String) < 0);
}

// A group's first row (distinct in the scan): the least order key of its
// rows, nulls among the values or not, whatever way its parts merge.
TEST_CASE("agg: FirstRow keeps the least order key through updates and merges") {
  const AggDesc a = desc(AggOp::FirstRow, Type::Int);
  Block none = state_of(a, {}, 0, 0);
  CHECK(agg_finalize(a, none.bytes).null);
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Row> rows(1 + rng() % 40);
    uint64_t least = UINT64_MAX;
    for (Row& r : rows) {
      r.x = rng() % 3 ? Value::of_int(7) : Value::make_null();  // the argument is not read
      r.y = Value::make_null();
      r.order = rng() % 4 == 0 ? 0 : rng() >> (rng() % 2);  // 0 is a first row too; keys past 2^63 (later ranks)
      least = std::min(least, r.order);
    }
    const std::vector<size_t> cuts = random_cuts(rng, rows.size());
    Block merged = state_of(a, {}, 0, 0);
    for (size_t c = cuts.size() - 1; c-- > 0;) {  // parts merged from the last
      const Block part = state_of(a, rows, cuts[c], cuts[c + 1]);
      agg_merge(a, merged.bytes, part.bytes);
    }
    const Value whole = agg_finalize(a, state_of(a, rows, 0, rows.size()).bytes);
    REQUIRE_FALSE(whole.null);
    CHECK(static_cast<uint64_t>(whole.i) == (least ^ (uint64_t{1} << 63)));  // ints in the keys' order
    CHECK(same_value(agg_finalize(a, merged.bytes), whole, Type::Int));
  }
  CHECK(agg_state_size(AggOp::FirstRow) == 8);
  CHECK_FALSE(agg_holds_string(desc(AggOp::FirstRow, Type::String)));
}

TEST_CASE("agg: empty and all-null inputs") {
  const Value null = Value::make_null();
  for (AggOp op : {AggOp::SumExact, AggOp::SumFloat, AggOp::Min, AggOp::Max, AggOp::MeanExact,
                   AggOp::MeanFloat, AggOp::VarExact, AggOp::VarFloat, AggOp::StdExact, AggOp::StdFloat,
                   AggOp::First, AggOp::Last, AggOp::CorrExact, AggOp::CorrFloat}) {
    const AggDesc a = desc(op, Type::Int);
    Block b = state_of(a, {}, 0, 0);
    CHECK(agg_finalize(a, b.bytes).null);
    agg_update(a, b.bytes, null, null, 1);
    CHECK(agg_finalize(a, b.bytes).null);
  }
  const AggDesc cs = desc(AggOp::CountStar, Type::Int), c = desc(AggOp::Count, Type::Int);
  Block b1 = state_of(cs, {}, 0, 0), b2 = state_of(c, {}, 0, 0);
  agg_update(cs, b1.bytes, null, null, 0);
  agg_update(c, b2.bytes, null, null, 0);
  CHECK(agg_finalize(cs, b1.bytes).i == 1);  // count() counts null rows
  CHECK(agg_finalize(c, b2.bytes).i == 0);   // count(x) does not
  // A constant column has no correlation: null, not NaN.
  const AggDesc corr = desc(AggOp::CorrExact, Type::Int);
  Block b3 = state_of(corr, {}, 0, 0);
  for (int i = 0; i < 5; ++i) agg_update(corr, b3.bytes, Value::of_int(3), Value::of_int(i), i);
  CHECK(agg_finalize(corr, b3.bytes).null);
  // Variance of equal values is exactly zero.
  const AggDesc var = desc(AggOp::VarExact, Type::Decimal, 2);
  Block b4 = state_of(var, {}, 0, 0);
  for (int i = 0; i < 5; ++i) agg_update(var, b4.bytes, Value::of_int(1234), null, i);
  CHECK(agg_finalize(var, b4.bytes).f == 0.0);
}

TEST_CASE("agg: a min or max state is one value, null until the first; 0 is a value, an empty state merges as none") {
  CHECK(agg_state_size(AggOp::Min) == 32);
  CHECK(agg_state_size(AggOp::Max) == 32);
  for (AggOp op : {AggOp::Min, AggOp::Max}) {
    const AggDesc a = desc(op, Type::Int);
    const std::vector<Row> rows = {{Value::of_int(0), Value{}, 1}, {Value::of_int(op == AggOp::Min ? 5 : -5), Value{}, 2}};
    const Block empty = state_of(a, rows, 0, 0);
    for (size_t split = 0; split <= rows.size(); ++split) {
      INFO("op " << static_cast<int>(op) << " split " << split);
      Block left = state_of(a, rows, 0, split), right = state_of(a, rows, split, rows.size());
      agg_merge(a, left.bytes, right.bytes);
      agg_merge(a, left.bytes, empty.bytes);
      Block into_empty = empty;
      agg_merge(a, into_empty.bytes, left.bytes);
      for (const Block* b : {&left, &into_empty}) {
        const Value v = agg_finalize(a, b->bytes);
        REQUIRE(!v.null);
        CHECK(v.i == 0);  // the first row's 0, not taken for "no value yet"
      }
    }
  }
}

// var over decimals is the exact quotient n*sum(x^2) - sum(x)^2 over n(n-1)10^2s,
// rounded once: with both below 2^53, IEEE division of the two exact doubles.
TEST_CASE("agg: var over decimals is correctly rounded") {
  std::mt19937_64 rng(11);
  const Value null = Value::make_null();
  for (int scale : {1, 2, 4}) {
    const AggDesc var = desc(AggOp::VarExact, Type::Decimal, static_cast<uint8_t>(scale));
    for (int iter = 0; iter < 3000; ++iter) {
      Block b = state_of(var, {}, 0, 0);
      const int n = 2 + static_cast<int>(rng() % 40);
      __int128 sum = 0, sum_sq = 0;
      for (int i = 0; i < n; ++i) {
        const int64_t x = static_cast<int64_t>(rng() % 20001) - 10000;  // scaled: -1.0000 .. 1.0000 at scale 4
        agg_update(var, b.bytes, Value::of_int(x), null, static_cast<uint64_t>(i));
        sum += x;
        sum_sq += static_cast<__int128>(x) * x;
      }
      const __int128 num = sum_sq * n - sum * sum;
      double den = static_cast<double>(n) * (n - 1);
      for (int k = 0; k < 2 * scale; ++k) den *= 10;
      const double expect = static_cast<double>(num) / den;  // num < 2^53 here: one rounding
      INFO("scale " << scale << " n " << n);
      CHECK(bits(agg_finalize(var, b.bytes).f) == bits(expect));
    }
  }
  // The case the two-step division got 1 ulp off.
  const AggDesc var = desc(AggOp::VarExact, Type::Decimal, 2);
  Block b = state_of(var, {}, 0, 0);
  for (int64_t x : {1, 2, 4}) agg_update(var, b.bytes, Value::of_int(x), null, 0);
  CHECK(bits(agg_finalize(var, b.bytes).f) == bits(14.0 / 60000.0));
}

// d is the double nearest num / den (ties to even), checked in exact integers:
// d = M 2^E, and |num - M 2^E den| <= den 2^E / 2 (scaled by 2^-E when E < 0).
static bool nearest(unsigned __int128 num, unsigned __int128 den, double d) {
  int exp = 0;
  const double frac = std::frexp(d, &exp);  // d = frac 2^exp, frac in [0.5, 1)
  const unsigned __int128 m = static_cast<unsigned __int128>(std::ldexp(frac, 53));
  const int e = exp - 53;
  unsigned __int128 lhs = num, rhs = m * den, unit = den;  // compare num with m den 2^e
  if (e >= 0) rhs <<= e, unit <<= e;
  else lhs <<= -e;
  const unsigned __int128 diff = lhs > rhs ? lhs - rhs : rhs - lhs;
  return 2 * diff < unit || (2 * diff == unit && (m & 1) == 0);
}

TEST_CASE("agg: mean of large ints is correctly rounded; uint128_div_to_double against an exact check") {
  std::mt19937_64 rng(17);
  for (int iter = 0; iter < 20000; ++iter) {
    // num up to 2^100, den up to 2^24: every product in the check fits 128 bits.
    const int nb = 53 + static_cast<int>(rng() % 48), db = 1 + static_cast<int>(rng() % 24);
    unsigned __int128 num = ((static_cast<unsigned __int128>(rng()) << 64) | rng()) >> (128 - nb);
    unsigned __int128 den = (rng() >> (64 - db)) | 1;
    num |= static_cast<unsigned __int128>(1) << (nb - 1);
    const double d = uint128_div_to_double(num, den);
    INFO("iter " << iter << " nb " << nb << " db " << db);
    REQUIRE(nearest(num, den, d));
  }
  // Ties go to even: (2^53 + 1) / 1 and (2^54 + 2) / 2 lie halfway.
  CHECK(uint128_div_to_double((static_cast<unsigned __int128>(1) << 53) + 1, 1) == 9007199254740992.0);
  CHECK(uint128_div_to_double((static_cast<unsigned __int128>(1) << 53) + 3, 1) == 9007199254740996.0);
  // mean over ints whose sum passes 2^63 (microsecond timestamps, say).
  const AggDesc mean = desc(AggOp::MeanExact, Type::Int);
  const Value null = Value::make_null();
  for (int iter = 0; iter < 2000; ++iter) {
    Block b = state_of(mean, {}, 0, 0);
    const int n = 2 + static_cast<int>(rng() % 3000);
    __int128 sum = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t x = static_cast<int64_t>(rng() >> 2);  // up to 2^62
      agg_update(mean, b.bytes, Value::of_int(x), null, static_cast<uint64_t>(i));
      sum += x;
    }
    INFO("n " << n);
    REQUIRE(nearest(static_cast<unsigned __int128>(sum), static_cast<unsigned __int128>(n), agg_finalize(mean, b.bytes).f));
  }
}

TEST_CASE("agg: min and max of -0.0 and 0.0 do not depend on merge order") {
  // agg_compare calls -0.0 and 0.0 equal, so the state keeps whichever came first; the
  // per-worker tables of the CPU executor then print "0.0" or "-0.0" by thread timing.
  const Value neg = Value::of_float(-0.0), pos = Value::of_float(0.0);
  for (AggOp op : {AggOp::Min, AggOp::Max}) {
    const AggDesc a = desc(op, Type::Float);
    Block x = state_of(a, {}, 0, 0), y = state_of(a, {}, 0, 0);
    agg_update(a, x.bytes, neg, neg, 0);
    agg_update(a, y.bytes, pos, pos, 1);
    Block xy = x, yx = y;
    agg_merge(a, xy.bytes, y.bytes);
    agg_merge(a, yx.bytes, x.bytes);
    CHECK(bits(agg_finalize(a, xy.bytes).f) == bits(agg_finalize(a, yx.bytes).f));
  }
}

TEST_CASE("wide: add, sub, neg and mul against __int128 and a schoolbook reference") {
  std::mt19937_64 rng(3);
  auto rand_i128 = [&](int bits_wanted) {
    u128 u = (u128(rng()) << 64) | rng();
    if (bits_wanted < 128) u &= (u128(1) << bits_wanted) - 1;
    __int128 v = static_cast<__int128>(u);
    return rng() % 2 ? v : -v;
  };
  for (int iter = 0; iter < 20000; ++iter) {
    const int nb = 1 + static_cast<int>(rng() % 128);
    const __int128 a = rand_i128(nb), b = rand_i128(1 + static_cast<int>(rng() % 128));
    const Wide256 wa = Wide256::of(a), wb = Wide256::of(b);
    INFO("iter " << iter);
    REQUIRE(ref_eq(ref_of(wide_mul(a, b)), ref_mul(ref_of_i128(a), ref_of_i128(b))));
    REQUIRE(ref_eq(ref_of(wide_add(wa, wb)), ref_add(ref_of_i128(a), ref_of_i128(b))));
    REQUIRE(ref_eq(ref_of(wide_sub(wa, wb)), ref_add(ref_of_i128(a), ref_neg(ref_of_i128(b)))));
    REQUIRE(ref_eq(ref_of(wide_neg(wa)), ref_neg(ref_of_i128(a))));
    // Where the result fits 128 bits, __int128 is the reference.
    const __int128 sa = a >> 66, sb = b >> 66;
    REQUIRE(ref_eq(ref_of(wide_mul(sa, sb)), ref_of_i128(sa * sb)));
    REQUIRE(ref_eq(ref_of(wide_add(Wide256::of(sa), Wide256::of(sb))), ref_of_i128(sa + sb)));
    // 256 x 64 products.
    const Wide256 big = wide_mul(a, b);
    const uint64_t k = rng() >> (rng() % 64);
    Ref256 rk{};
    rk.l[0] = static_cast<uint32_t>(k);
    rk.l[1] = static_cast<uint32_t>(k >> 32);
    // Both are products modulo 2^256.
    REQUIRE(ref_eq(ref_of(wide_mul_u64(big, k)), ref_mul(ref_of(big), rk)));
  }
  // Extremes.
  const __int128 max = static_cast<__int128>(~u128(0) >> 1), min = -max - 1;
  CHECK(ref_eq(ref_of(wide_mul(min, min)), ref_mul(ref_of_i128(min), ref_of_i128(min))));
  CHECK(ref_eq(ref_of(wide_mul(min, max)), ref_mul(ref_of_i128(min), ref_of_i128(max))));
  CHECK(ref_eq(ref_of(wide_mul(min, -1)), ref_neg(ref_of_i128(min))));
  CHECK(wide_mul(0, min).is_zero());
  CHECK(Wide256::of(-1).negative());
  CHECK_FALSE(Wide256::of(0).negative());
}

// A sum of products made in 128 bits where both factors fit 64 bits: the
// bits of the schoolbook product added, over sums that cross zero and wrap,
// with factors at the 64-bit edges and past them.
TEST_CASE("wide: wide_add_product gives wide_add of wide_mul") {
  std::mt19937_64 rng(9);
  const __int128 edges[] = {0, 1, -1, INT64_MAX, INT64_MIN, static_cast<__int128>(INT64_MAX) + 1,
                            static_cast<__int128>(INT64_MIN) - 1, static_cast<__int128>(1) << 100};
  auto pick = [&]() -> __int128 {
    switch (rng() % 4) {
      case 0: return edges[rng() % 8];
      case 1: return static_cast<int64_t>(rng()) >> (rng() % 64);
      case 2: return static_cast<__int128>(static_cast<int64_t>(rng())) * (static_cast<__int128>(1) << (rng() % 64));
      default: return static_cast<int64_t>(rng() % 2001) - 1000;
    }
  };
  for (int run = 0; run < 200; ++run) {
    Wide256 fast = rng() % 2 ? wide_mul(pick(), pick()) : Wide256::zero(), slow = fast;
    for (int i = 0; i < 100; ++i) {
      const __int128 a = pick(), b = rng() % 3 ? pick() : a;
      wide_add_product(fast, a, b);
      slow = wide_add(slow, wide_mul(a, b));
      INFO("run " << run << ", product " << i);
      REQUIRE(ref_eq(ref_of(fast), ref_of(slow)));
    }
  }
}

TEST_CASE("wide: wide_to_double rounds to nearest, ties to even") {
  auto from_u64 = [](uint64_t x) { return Wide256::of(static_cast<__int128>(x)); };
  const double two53 = 9007199254740992.0;
  CHECK(wide_to_double(Wide256::zero()) == 0.0);
  CHECK(wide_to_double(Wide256::of(-1)) == -1.0);
  CHECK(wide_to_double(from_u64((1ull << 53) + 1)) == two53);        // tie: to even (down)
  CHECK(wide_to_double(from_u64((1ull << 53) + 3)) == two53 + 4);    // tie: to even (up)
  CHECK(wide_to_double(from_u64(~0ull)) == 18446744073709551616.0);  // 2^64 - 1 rounds up
  CHECK(wide_to_double(Wide256::of(-static_cast<__int128>((1ull << 53) + 1))) == -two53);
  // A tie at 2^200 broken by a sticky bit far below, in a lower limb.
  const Wide256 p200 = wide_pow2(200);
  const Wide256 tie = wide_add(p200, wide_pow2(147));
  CHECK(wide_to_double(tie) == std::ldexp(1.0, 200));
  CHECK(wide_to_double(wide_add(tie, wide_pow2(0))) == std::nextafter(std::ldexp(1.0, 200), INFINITY));
  CHECK(wide_to_double(wide_add(tie, wide_pow2(64))) == std::nextafter(std::ldexp(1.0, 200), INFINITY));
  CHECK(wide_to_double(wide_neg(wide_add(tie, wide_pow2(1)))) ==
        -std::nextafter(std::ldexp(1.0, 200), INFINITY));
  // Just below a power of two: all ones over 128 and 255 bits.
  Wide256 ones128 = Wide256::zero();
  ones128.w[0] = ones128.w[1] = ~0ull;
  CHECK(wide_to_double(ones128) == std::ldexp(1.0, 128));
  Wide256 ones255{{~0ull, ~0ull, ~0ull, ~0ull >> 1}};
  CHECK(wide_to_double(ones255) == std::ldexp(1.0, 255));
  CHECK(wide_to_double(wide_neg(ones255)) == -std::ldexp(1.0, 255));

  // Random values of every length, with runs of zeros and ones that make ties likely.
  std::mt19937_64 rng(17);
  for (int iter = 0; iter < 50000; ++iter) {
    Wide256 w;
    for (auto& limb : w.w) {
      const int kind = static_cast<int>(rng() % 4);
      limb = kind == 0 ? 0 : kind == 1 ? ~0ull : kind == 2 ? (1ull << (rng() % 64)) : rng();
    }
    const int top_bits = 1 + static_cast<int>(rng() % 255);  // keep the sign bit clear
    for (int b = top_bits; b < 256; ++b) w.w[b / 64] &= ~(1ull << (b % 64));
    if (rng() % 2) w = wide_neg(w);
    INFO("iter " << iter);
    REQUIRE(bits(wide_to_double(w)) == bits(ref_to_double(w)));
  }
}

namespace {
// Every float op over `rows`, merged in several orders, must finalize to the sequential bits.
void check_float_merge_bits(std::mt19937_64& rng, const std::vector<Row>& rows) {
  for (AggOp op : {AggOp::SumFloat, AggOp::MeanFloat, AggOp::VarFloat, AggOp::StdFloat, AggOp::CorrFloat}) {
    const AggDesc a = desc(op, Type::Float, 0, Type::Float, 0);
    const Block seq = state_of(a, rows, 0, rows.size());
    const Value want = agg_finalize(a, seq.bytes);
    INFO("op " << static_cast<int>(op) << " rows " << rows.size());
    for (const Value& got : merged_results(rng, a, rows)) REQUIRE(same_value(got, want, Type::Float));
  }
}
}  // namespace

TEST_CASE("agg: float ops give the same bits in any merge order") {
  // Results never depend on partitioning: float moments are exact sums (docs/architecture.md, "Exactness").
  std::mt19937_64 rng(23);
  for (int iter = 0; iter < 300; ++iter) {
    INFO("iter " << iter);
    check_float_merge_bits(rng, random_float_rows(rng, 2 + rng() % 300));
  }
}

// A large common offset (epoch seconds with fractions, 1.7e9 + ms) cancels most digits
// of n*sum_sq - sum^2: only exact moments give the same bits in every merge order.
TEST_CASE("agg: float var/std/corr with a large offset give the same bits in any merge order") {
  std::mt19937_64 rng(29);
  for (int iter = 0; iter < 300; ++iter) {
    std::vector<Row> rows = random_float_rows(rng, 2 + rng() % 300);
    for (Row& r : rows) {
      if (!r.x.null) r.x.f = 1e9 + r.x.f * 1e-3;
      if (!r.y.null) r.y.f = -3e8 + r.y.f * 1e-2;
    }
    INFO("iter " << iter);
    check_float_merge_bits(rng, rows);
  }
}

// ---- the forms the CUDA executor keeps states in ---------------------------------------------

TEST_CASE("agg: float min/max keys order doubles as agg_compare does and come back exactly") {
  std::mt19937_64 rng(99);
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
                           std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 2000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    v.push_back(d);
    v.push_back(static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000) / 8);
  }
  for (double a : v) {
    const double back = agg_float_of_key(agg_float_key(a));
    if (a == a) CHECK(std::memcmp(&back, &a, 8) == 0);
    else CHECK(back != back);
    for (int j = 0; j < 20; ++j) {
      const double b = v[rng() % v.size()];
      const int c = agg_compare(Value::of_float(a), Value::of_float(b), Type::Float);
      const int64_t ka = agg_float_key(a), kb = agg_float_key(b);
      CHECK((ka < kb ? -1 : ka > kb ? 1 : 0) == c);
    }
  }
}

TEST_CASE("agg: holistic keys of strings up to 8 bytes order as their bytes and come back exactly") {
  std::mt19937_64 rng(7);
  std::vector<std::string> v = {"", "a", "a\x01", "ab", "abcdefgh", "abcdefg", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff",
                                "id001", "id010", "z"};
  for (int i = 0; i < 3000; ++i) {
    std::string t(rng() % 9, 'x');
    for (char& c : t) c = static_cast<char>(1 + rng() % (i % 2 ? 3 : 255));  // short alphabets make prefixes
    v.push_back(t);
  }
  auto str = [](const std::string& t) { return Value::of_str(t.data(), static_cast<uint32_t>(t.size())); };
  for (const std::string& a : v) {
    REQUIRE(holistic_key_fits(str(a), Type::String));
    char bytes[8];
    const uint32_t n = string_of_holistic_key(holistic_value_of_key(holistic_key(str(a), Type::String), Type::String),
                                              bytes);
    CHECK(std::string(bytes, n) == a);
    for (int j = 0; j < 20; ++j) {
      const std::string& b = v[rng() % v.size()];
      const uint64_t ka = holistic_key(str(a), Type::String), kb = holistic_key(str(b), Type::String);
      const int bytes_order = a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;  // std::string compares as unsigned
      CHECK((ka < kb ? -1 : ka > kb ? 1 : 0) == bytes_order);
    }
  }
  const std::string nul("a\0b", 3), nine = "123456789";
  CHECK_FALSE(holistic_key_fits(str(nul), Type::String));
  CHECK_FALSE(holistic_key_fits(str(nine), Type::String));
}

TEST_CASE("agg: an exact float sum kept as positive and negative magnitudes equals FloatAcc") {
  // The CUDA kernels add each double's two limbs to one of two unsigned
  // magnitudes with carries (atomics); the host takes their difference.
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    FloatAcc acc = FloatAcc::zero(), pos = FloatAcc::zero(), neg = FloatAcc::zero();
    uint32_t flags = 0, flags2 = 0;
    const int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      const int e = static_cast<int>(rng() % 1200) - 700;
      double x = std::ldexp(static_cast<double>(rng() >> 11), e - 53);
      if (rng() % 2) x = -x;
      if (rng() % 50 == 0) x = 0.0;
      float_acc_add(acc, flags, x);
      FloatAddend a;
      if (!float_acc_addend(x, flags2, a)) continue;
      FloatAcc& m = a.neg ? neg : pos;
      FloatAcc add = FloatAcc::zero();
      add.w[a.limb] = a.lo;
      if (a.limb + 1 < kFloatAccLimbs) add.w[a.limb + 1] = a.hi;
      m = big_add(m, add);
    }
    CHECK(flags == flags2);
    const FloatAcc diff = big_sub(pos, neg);
    CHECK(std::memcmp(diff.w, acc.w, sizeof acc.w) == 0);
  }
}

TEST_CASE("group table: groups appended as distinct are found again, and new ones still inserted") {
  GroupLayout layout;
  layout.key_types = {Type::String, Type::Int};
  AggDesc d{};
  d.op = AggOp::SumExact;
  d.in_type = Type::Int;
  layout.aggs.push_back(d);
  layout.state_bytes = 48;
  GroupTable t(&layout);
  const size_t n = 20000;
  std::string text;
  for (size_t g = 0; g < n; ++g) text += "key" + std::to_string(g);
  std::unique_ptr<char[]> strings(new char[text.size()]);
  std::memcpy(strings.get(), text.data(), text.size());
  std::vector<Value> keys(2 * n);
  std::vector<uint64_t> hashes(n);
  size_t at = 0;
  for (size_t g = 0; g < n; ++g) {
    const size_t len = 3 + std::to_string(g).size();
    keys[2 * g] = Value::of_str(strings.get() + at, static_cast<uint32_t>(len));
    keys[2 * g + 1] = Value::of_int(static_cast<int64_t>(g % 7));
    at += len;
    hashes[g] = t.hash_keys(&keys[2 * g]);
  }
  t.append_distinct(n, hashes.data(), std::move(strings), 3, [&](size_t g, Value* k, char* state) {
    k[0] = keys[2 * g];
    k[1] = keys[2 * g + 1];
    reinterpret_cast<SumExactState*>(state)->sum = static_cast<int128>(g);
    reinterpret_cast<SumExactState*>(state)->n = 1;
  });
  REQUIRE(t.size() == n);
  for (size_t g = 0; g < n; g += 97) {
    const std::string s = "key" + std::to_string(g);
    const Value k[2] = {Value::of_str(s.data(), static_cast<uint32_t>(s.size())), Value::of_int(static_cast<int64_t>(g % 7))};
    const char* state = t.find_or_insert(k, t.hash_keys(k));
    CHECK(reinterpret_cast<const SumExactState*>(state)->sum == static_cast<int128>(g));
  }
  const std::string s = "new";
  const Value k[2] = {Value::of_str(s.data(), 3), Value::of_int(1)};
  t.find_or_insert(k, t.hash_keys(k));
  CHECK(t.size() == n + 1);
}

namespace {

// Keys (string, int), and a sum, a string max and a string first per group.
GroupLayout merge_test_layout() {
  GroupLayout layout;
  layout.key_types = {Type::String, Type::Int};
  const AggOp ops[] = {AggOp::SumExact, AggOp::Max, AggOp::First};
  const Type types[] = {Type::Int, Type::String, Type::String};
  uint32_t off = 0;
  for (int i = 0; i < 3; ++i) {
    AggDesc d{};
    d.op = ops[i];
    d.in_type = types[i];
    d.offset = off;
    off += (agg_state_size(d.op) + kAggStateAlign - 1) / kAggStateAlign * kAggStateAlign;
    layout.aggs.push_back(d);
  }
  layout.state_bytes = off;
  return layout;
}

// Six threads' rows, 20000 each over 60000 keys (they overlap), the same
// every call (one seed): row(thread, keys, args, order) for each.
template <class Row>
void merge_test_rows(Row&& row) {
  std::mt19937_64 rng(11);
  uint64_t order = 0;
  for (int t = 0; t < 6; ++t)
    for (int r = 0; r < 20000; ++r) {
      const uint64_t key = rng() % 60000;
      const std::string s = "k" + std::to_string(key);
      const std::string v = "v" + std::to_string(rng() % 100000);  // a row's bytes: copied on store
      const Value keys[2] = {Value::of_str(s.data(), static_cast<uint32_t>(s.size())),
                             Value::of_int(static_cast<int64_t>(key % 3))};
      const Value x[3] = {Value::of_int(static_cast<int64_t>(rng() % 1000) - 500),
                          Value::of_str(v.data(), static_cast<uint32_t>(v.size())),
                          Value::of_str(v.data(), static_cast<uint32_t>(v.size()))};
      row(t, keys, x, order++);
    }
}

void update_group(const GroupLayout& layout, GroupTable& table, const Value* keys, const Value* x, uint64_t order) {
  char* block = table.find_or_insert(keys, table.hash_keys(keys));
  bool strings = false;
  for (int a = 0; a < 3; ++a) strings |= agg_update(layout.aggs[a], block, x[a], Value{}, order);
  if (strings) table.stabilize_strings(block);
}

std::string merge_test_state(const GroupLayout& layout, const char* state) {
  const auto* sum = reinterpret_cast<const SumExactState*>(state + layout.aggs[0].offset);
  const auto* max = reinterpret_cast<const ExtremeState*>(state + layout.aggs[1].offset);
  const auto* first = reinterpret_cast<const OrderedState*>(state + layout.aggs[2].offset);
  return std::to_string(static_cast<int64_t>(sum->sum)) + "/" + std::to_string(sum->n) + "/" +
         std::string(max->v.s.ptr, max->v.s.len) + "/" + std::string(first->v.s.ptr, first->v.s.len) + "/" +
         std::to_string(first->order);
}

std::vector<Value> keys_of(const GroupTable& t, size_t g) {
  std::vector<Value> k(t.layout().key_types.size());
  t.keys_of(g, k.data());
  return k;
}

// Every thread's rows folded into one table, one after another.
GroupTable merged_one_by_one(const GroupLayout& layout) {
  GroupTable all(&layout);
  merge_test_rows([&](int, const Value* keys, const Value* x, uint64_t order) {
    update_group(layout, all, keys, x, order);
  });
  return all;
}

// A layout of these keys and count() alone.
GroupLayout count_layout(std::vector<Type> keys, std::vector<bool> narrow) {
  GroupLayout layout;
  layout.key_types = std::move(keys);
  layout.narrow_keys = std::move(narrow);
  AggDesc d{};
  d.op = AggOp::CountStar;
  layout.aggs.push_back(d);
  layout.state_bytes = 16;
  return layout;
}

}  // namespace

TEST_CASE("group table: keys found as packed bytes and as values are the same groups; short strings hash alike") {
  std::mt19937_64 rng(11);
  // A short string's hash from two loads is hash_bytes's, at every length, of any bytes.
  for (int trial = 0; trial < 2000; ++trial) {
    char bytes[16];
    for (char& c : bytes) c = static_cast<char>(rng());
    const uint32_t n = static_cast<uint32_t>(trial % 16);
    REQUIRE(hash_short_bytes(bytes, n) == hash_bytes(bytes, n));
  }
  const GroupLayout layout = count_layout({Type::Int, Type::String, Type::Decimal}, {true, false, false});
  GroupTable t(&layout);
  const PackedKeys& packer = t.packed_keys();
  const std::vector<std::string> strings = {"", "a", "seven b", "eight by", "fifteen bytes!!", "sixteen bytes..!",
                                            "a string past sixteen bytes"};
  std::vector<char> packed(packer.bytes());
  for (int row = 0; row < 5000; ++row) {
    const std::string& s = strings[rng() % strings.size()];
    Value keys[3] = {rng() % 9 == 0 ? Value::make_null() : Value::of_int(static_cast<int64_t>(rng() % 5)),
                     rng() % 9 == 0 ? Value::make_null() : Value::of_str(s.data(), static_cast<uint32_t>(s.size())),
                     Value::of_int(static_cast<int64_t>(rng() % 3) - 1)};
    const uint64_t h = t.hash_keys(keys);
    char* by_value = t.find_or_insert(keys, h);
    if (!packer.packs_exactly(keys)) {
      CHECK(s.size() > PackedKeys::kInlineString);
      continue;
    }
    packer.pack(keys, packed.data());
    CHECK(t.state(t.group_for_packed(packed.data(), keys, h)) == by_value);
  }
  CHECK(t.size() == 6 * 8 * 3);  // int or null, string or null, decimal: every combination met
}

TEST_CASE("keys of up to 24 bytes hashed from three words, as hash_bytes hashes their bytes") {
  std::mt19937_64 rng(24);
  for (int trial = 0; trial < 2500; ++trial) {
    char bytes[24];
    for (char& c : bytes) c = static_cast<char>(rng());
    const uint32_t n = static_cast<uint32_t>(trial % 25);
    uint64_t w[3] = {0, 0, 0};
    std::memcpy(w, bytes, n);  // the bytes past n stay zero
    INFO("length " << n);
    REQUIRE(hash_three_words(w[0], w[1], w[2], n) == hash_bytes(bytes, n));
  }
}

TEST_CASE("group table: one short string key, packed and hashed from two loads, as pack and hash_keys give it") {
  const GroupLayout layout = count_layout({Type::String}, {});
  GroupTable t(&layout);
  const PackedKeys& packer = t.packed_keys();
  REQUIRE(packer.one_string_key());
  std::mt19937_64 rng(12);
  std::vector<char> by_pack(packer.bytes()), by_words(packer.bytes(), 'x');
  for (int trial = 0; trial < 3000; ++trial) {
    char bytes[16];  // the key's bytes, then whatever follows it in the input
    for (char& c : bytes) c = static_cast<char>(rng());
    const uint32_t n = static_cast<uint32_t>(trial % 16);
    const Value key = Value::of_str(bytes, n);
    uint64_t lo, hi;
    load_short_bytes(bytes, n, &lo, &hi);
    INFO("length " << n);
    REQUIRE(GroupTable::hash_of_short_string(lo, hi, n) == t.hash_keys(&key));
    packer.pack(&key, by_pack.data());
    packer.pack_short_string(lo, hi, n, by_words.data());
    REQUIRE(by_words == by_pack);
  }
  for (const std::string& other : {std::string("a"), std::string("ab")}) {  // no false match of the other key
    const Value a = Value::of_str("ab", 2), b = Value::of_str(other.data(), static_cast<uint32_t>(other.size()));
    uint64_t lo, hi;
    load_short_bytes("ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 2, &lo, &hi);
    packer.pack_short_string(lo, hi, 2, by_words.data());
    CHECK(packer.equal(by_words.data(), &a));
    CHECK(packer.equal(by_words.data(), &b) == (other == "ab"));
  }
}

// Thread tables folded on threads by hash partition must hold what folding
// them one after another gives: the same groups, the same states (sums,
// string maxima whose bytes the merged table owns, first values by order).
TEST_CASE("group table: merge_all on threads gives the groups and states of merging one by one") {
  const GroupLayout layout = merge_test_layout();
  auto make_thread_tables = [&] {
    std::vector<std::unique_ptr<GroupTable>> made;
    for (int t = 0; t < 6; ++t) made.push_back(std::make_unique<GroupTable>(&layout));
    merge_test_rows([&](int t, const Value* keys, const Value* x, uint64_t order) {
      update_group(layout, *made[static_cast<size_t>(t)], keys, x, order);
    });
    return made;
  };
  auto pointers = [](const std::vector<std::unique_ptr<GroupTable>>& owned) {
    std::vector<const GroupTable*> p;
    for (const auto& t : owned) p.push_back(t.get());
    return p;
  };
  const GroupTable one_by_one = merged_one_by_one(layout);
  auto state_text = [&](const char* state) { return merge_test_state(layout, state); };
  for (int threads : {1, 2, 3, 8}) {
    for (bool start_with_groups : {false, true}) {
      INFO("threads " << threads << ", starting with groups " << start_with_groups);
      GroupTable merged(&layout);
      {
        auto owned = make_thread_tables();
        std::vector<const GroupTable*> rest = pointers(owned);
        if (start_with_groups) {  // the table already holds the first thread's groups
          merged.merge_from(*rest[0]);
          rest.erase(rest.begin());
        }
        size_t in_rest = 0;
        for (const GroupTable* t : rest) in_rest += t->size();
        REQUIRE(in_rest > (1u << 15));  // enough groups for the threaded path
        // Every group's keys before the merge: the inputs', then the merged table's own.
        auto key_text = [](const GroupTable& t, size_t g) {
          const std::vector<Value> k = keys_of(t, g);
          return std::string(k[0].s.ptr, k[0].s.len) + "/" + std::to_string(static_cast<int64_t>(k[1].i));
        };
        std::vector<std::vector<std::string>> before(rest.size() + 1);
        for (size_t i = 0; i < rest.size(); ++i)
          for (size_t g = 0; g < rest[i]->size(); ++g) before[i].push_back(key_text(*rest[i], g));
        for (size_t g = 0; g < merged.size(); ++g) before.back().push_back(key_text(merged, g));
        // The inputs are freed as soon as merge_all is done reading them.
        int done_calls = 0;
        std::vector<std::vector<uint32_t>> renumbered;
        merged.merge_all(rest, threads, [&] {
          ++done_calls;
          owned.clear();
        }, &renumbered);
        CHECK(done_calls == 1);
        // Where each group went: the merged group with its keys.
        REQUIRE(renumbered.size() == rest.size() + 1);
        size_t misplaced = 0;
        for (size_t i = 0; i < rest.size(); ++i) {
          REQUIRE(renumbered[i].size() == before[i].size());
          for (size_t g = 0; g < before[i].size(); ++g) misplaced += key_text(merged, renumbered[i][g]) != before[i][g];
        }
        for (size_t g = 0; g < before.back().size(); ++g)
          misplaced += key_text(merged, renumbered.back().empty() ? g : renumbered.back()[g]) != before.back()[g];
        CHECK(misplaced == 0);
        // On threads the merged table's own groups are renumbered too.
        CHECK(renumbered.back().empty() == (threads == 1 || !start_with_groups));
      }  // the threads' tables are gone: the merged table must own every string it holds
      REQUIRE(merged.size() == one_by_one.size());
      size_t differ = 0;
      for (size_t g = 0; g < one_by_one.size(); ++g) {
        const std::vector<Value> k = keys_of(one_by_one, g);
        const char* found = merged.find_or_insert(k.data(), one_by_one.hash_keys(k.data()));
        differ += state_text(found) != state_text(one_by_one.state(g));
      }
      CHECK(merged.size() == one_by_one.size());  // every group was found, none inserted
      CHECK(differ == 0);
    }
  }
}

// Ranks send groups as records and merge those of their hash range on
// threads: the same groups and states as folding the tables one by one, and
// the merged table owns its strings once the records are gone.
TEST_CASE("group records: tables written as records and merged on threads give the one-by-one merge") {
  const GroupLayout layout = merge_test_layout();
  const GroupTable one_by_one = merged_one_by_one(layout);
  const GroupRecords records(layout);
  for (int threads : {1, 3, 8}) {
    INFO("threads " << threads);
    GroupTable merged(&layout);
    {
      std::vector<std::unique_ptr<GroupTable>> tables;
      for (int t = 0; t < 6; ++t) tables.push_back(std::make_unique<GroupTable>(&layout));
      merge_test_rows([&](int t, const Value* keys, const Value* x, uint64_t order) {
        update_group(layout, *tables[static_cast<size_t>(t)], keys, x, order);
      });
      std::vector<std::vector<char>> written(tables.size());
      for (size_t t = 0; t < tables.size(); ++t)
        for (size_t g = 0; g < tables[t]->size(); ++g) records.append(*tables[t], g, written[t]);
      tables.clear();
      std::vector<std::pair<const char*, size_t>> inputs;
      for (const auto& w : written) inputs.emplace_back(w.data(), w.size());
      merged = merge_group_records(layout, inputs, threads);
      for (auto& w : written) std::fill(w.begin(), w.end(), '\xff');  // no string may point here
    }
    REQUIRE(merged.size() == one_by_one.size());
    size_t differ = 0;
    for (size_t g = 0; g < one_by_one.size(); ++g) {
      const std::vector<Value> k = keys_of(one_by_one, g);
      const char* found = merged.find_or_insert(k.data(), one_by_one.hash_keys(k.data()));
      differ += merge_test_state(layout, found) != merge_test_state(layout, one_by_one.state(g));
    }
    CHECK(merged.size() == one_by_one.size());
    CHECK(differ == 0);
  }
}

// GPUs spill whole tables to the hash parts, and a group may be in several
// spills: the parts aggregated and merged give the one-by-one merge's groups
// and states, in key order, with any memory budget.
TEST_CASE("spilled groups: whole tables spilled by hash, a group in several, give the one-by-one merge in order") {
  const std::vector<OutputColumn> schema = {{"s", ColumnType{Type::String, 0}}, {"k", ColumnType{Type::Int, 0}},
                                            {"a", ColumnType{Type::Int, 0}},    {"t", ColumnType{Type::String, 0}},
                                            {"u", ColumnType{Type::String, 0}}};
  const Plan plan = build_plan("groupby s, k | agg sum(a), max(t), first(u)", schema);
  const GroupLayout layout = GroupLayout::from_plan(plan);
  const GroupLayout expected = merge_test_layout();
  REQUIRE(layout.key_types == expected.key_types);
  REQUIRE(layout.aggs.size() == 3);
  for (size_t a = 0; a < 3; ++a) REQUIRE(layout.aggs[a].op == expected.aggs[a].op);
  GroupTable one_by_one = merged_one_by_one(layout);
  for (int threads : {1, 3}) {
    for (uint64_t budget : {uint64_t{0}, uint64_t{1}}) {
      INFO("threads " << threads << ", budget " << budget);
      SpilledGroups spilled(layout, 16, budget);
      {
        std::vector<std::unique_ptr<GroupTable>> tables;
        for (int t = 0; t < 6; ++t) tables.push_back(std::make_unique<GroupTable>(&layout));
        merge_test_rows([&](int t, const Value* keys, const Value* x, uint64_t order) {
          update_group(layout, *tables[static_cast<size_t>(t)], keys, x, order);
        });
        for (const auto& t : tables) spilled.spill_table(*t, threads);
      }  // the tables are gone: the parts hold every byte
      CHECK(spilled.spills() == 6);
      const std::unique_ptr<OrderedGroups> ordered = spilled.sorted(plan, threads, 1000);
      REQUIRE(ordered->size() == one_by_one.size());
      size_t seen = 0, differ = 0, out_of_order = 0;
      std::string last_s;
      int64_t last_k = 0;
      for (GroupRun run = ordered->next(); run.n; run = ordered->next()) {
        for (size_t r = 0; r < run.n; ++r, ++seen) {
          const size_t g = run.group(r);
          const Value keys[2] = {run.keys.at(g, 0), run.keys.at(g, 1)};
          const std::string s(keys[0].s.ptr, keys[0].s.len);
          if (seen && (s < last_s || (s == last_s && keys[1].i <= last_k))) ++out_of_order;
          last_s = s;
          last_k = keys[1].i;
          const size_t before = one_by_one.size();
          const char* found = one_by_one.find_or_insert(keys, one_by_one.hash_keys(keys));
          REQUIRE(one_by_one.size() == before);  // the group is one of the merge's
          differ += merge_test_state(layout, found) != merge_test_state(layout, run.held_state(g));
        }
      }
      CHECK(seen == one_by_one.size());
      CHECK(out_of_order == 0);
      CHECK(differ == 0);
    }
  }
}

// Arrays past 2 MiB move to mappings of their own and grow by remapping:
// what was written stays, and assign_zero gives zeroes even over pages the
// array wrote before.
namespace {
template <class Array>  // a GrowArray of uint64_t, in 2 MiB pages or 4 KiB ones
void check_growth_into_a_mapping() {
  Array a;
  for (uint64_t i = 0; i < (3u << 20); ++i) a.push_back(i * 7 + 1);  // 24 MiB, past the mapping size
  size_t wrong = 0;
  for (uint64_t i = 0; i < a.size(); ++i) wrong += a[i] != i * 7 + 1;
  CHECK(wrong == 0);
  Array b = std::move(a);
  CHECK(a.size() == 0);
  CHECK(b.size() == (3u << 20));
  CHECK(b[12345] == 12345 * 7 + 1);
  for (size_t n : {size_t{100}, size_t{1} << 20, size_t{5} << 20}) {
    b.assign_zero(n);
    REQUIRE(b.size() == n);
    CHECK(std::count(b.data(), b.data() + n, uint64_t{0}) == static_cast<std::ptrdiff_t>(n));
    for (size_t i = 0; i < n; i += 4099) b[i] = 9;  // dirty it for the next round
  }
  b.resize(b.size() + 1000);  // grows a mapping already made
  CHECK(b[4099] == 9);
}
}  // namespace

TEST_CASE("grow array: elements survive growth into a mapping; assign_zero zeroes") {
  SECTION("in 2 MiB pages") { check_growth_into_a_mapping<GrowArray<uint64_t>>(); }
  SECTION("in 4 KiB pages") { check_growth_into_a_mapping<GrowArray<uint64_t, false>>(); }
}

// Tables split by hash into parts fold part by part, each into the largest
// of its kind: the groups and states of folding every row into one table,
// however many threads fold and whether the result held groups before.
TEST_CASE("group table: partitioned tables fold part by part to the groups and states of one table") {
  const GroupLayout layout = merge_test_layout();
  const GroupTable one_by_one = merged_one_by_one(layout);
  for (int threads : {1, 3}) {
    for (bool fold_twice : {false, true}) {
      INFO("threads " << threads << ", folded twice " << fold_twice);
      PartitionedGroups merged(&layout, 16);
      {
        std::vector<std::unique_ptr<PartitionedGroups>> owned;
        for (int t = 0; t < 6; ++t) owned.push_back(std::make_unique<PartitionedGroups>(&layout, 16));
        std::vector<PartitionedGroups*> inputs;
        for (const auto& t : owned) inputs.push_back(t.get());
        int folds = 0;
        merge_test_rows([&](int t, const Value* keys, const Value* x, uint64_t order) {
          if (fold_twice && t == 3 && folds == 0) {  // half the rows are in: fold them, as a memory budget does
            merged.fold(inputs, threads);
            ++folds;
            for (const PartitionedGroups* in : inputs) CHECK(in->size() == 0);
          }
          update_group(layout, owned[static_cast<size_t>(t)]->part_for(merged.hash_keys(keys)), keys, x, order);
        });
        merged.fold(inputs, threads);
        for (const PartitionedGroups* in : inputs) CHECK(in->size() == 0);
      }  // the threads' tables are gone: the merged parts must own every string they hold
      REQUIRE(merged.size() == one_by_one.size());
      size_t differ = 0, misplaced = 0;
      for (size_t g = 0; g < one_by_one.size(); ++g) {
        const std::vector<Value> k = keys_of(one_by_one, g);
        const uint64_t hash = one_by_one.hash_keys(k.data());
        GroupTable& part = merged.part_for(hash);
        const size_t before = part.size();
        differ += merge_test_state(layout, part.find_or_insert(k.data(), hash)) !=
                  merge_test_state(layout, one_by_one.state(g));
        misplaced += part.size() != before;  // a group not where its hash says
      }
      CHECK(misplaced == 0);
      CHECK(differ == 0);
      size_t in_tables = 0;
      for (const GroupTable* t : merged.tables()) in_tables += t->size();
      CHECK(in_tables == one_by_one.size());
    }
  }
}

TEST_CASE("agg: quantile positions are exact decimals; interpolation between ints and decimals rounds once") {
  // 0.9 of 11 values is position 10 x 9/10 = 9 exactly (the double 0.9 would give 9.000000000000002).
  QuantilePosition p = quantile_position(11, 9, 1);
  CHECK(p.lo == 9);
  CHECK(p.rest == 0);
  p = quantile_position(4, 25, 2);  // 3 x 0.25 = 0.75
  CHECK(p.lo == 0);
  CHECK(p.rest == 75);
  CHECK(p.one == 100);
  p = quantile_position(1, 1, 0);  // one value: every fraction is it
  CHECK(p.lo == 0);
  CHECK(p.rest == 0);
  std::mt19937_64 rng(23);
  for (int iter = 0; iter < 20000; ++iter) {
    const int scale = static_cast<int>(rng() % 5), qscale = 1 + static_cast<int>(rng() % 6);
    const int64_t a = static_cast<int64_t>(rng() >> 2), b = a + static_cast<int64_t>(rng() >> 3);
    const uint64_t n = 2 + rng() % 100000;
    int64_t one = 1;
    for (int k = 0; k < qscale; ++k) one *= 10;
    const int64_t units = static_cast<int64_t>(rng() % static_cast<uint64_t>(one + 1));
    const QuantilePosition pos = quantile_position(n, units, qscale);
    REQUIRE(static_cast<unsigned __int128>(pos.lo) * pos.one + pos.rest ==
            static_cast<unsigned __int128>(n - 1) * static_cast<uint64_t>(units));
    const double d = interpolate(Value::of_int(a), Value::of_int(b), scale ? Type::Decimal : Type::Int, scale, pos);
    // Exactly (a one + (b - a) rest) / (one 10^scale).
    unsigned __int128 den = pos.one;
    for (int k = 0; k < scale; ++k) den *= 10;
    const unsigned __int128 num =
        static_cast<unsigned __int128>(a) * pos.one + static_cast<unsigned __int128>(b - a) * pos.rest;
    INFO("a " << a << " b " << b << " scale " << scale << " n " << n << " q " << units << "/" << one);
    REQUIRE(nearest(num, den, d));
  }
  // The median of two ints past 2^53 is their exact midpoint, rounded once.
  const QuantilePosition mid = quantile_position(2, 5, 1);
  const int64_t big = (int64_t{1} << 62) + 1;
  CHECK(interpolate(Value::of_int(big), Value::of_int(big + 2), Type::Int, 0, mid) == std::ldexp(1.0, 62));
  CHECK(interpolate(Value::of_float(-0.0), Value::of_float(0.0), Type::Float, 0, mid) == 0.0);
  CHECK(!std::signbit(interpolate(Value::of_float(-0.0), Value::of_float(-0.0), Type::Float, 0, mid)));
}

TEST_CASE("agg: exact sums past 128 bits are caught in any order; float sums past the accumulator too") {
  const Value null = Value::make_null();
  const int128 big = (static_cast<int128>(1) << 126) + 12345;
  for (AggOp op : {AggOp::SumExact, AggOp::MeanExact}) {
    const AggDesc a = desc(op, Type::Int);
    // big + big passes 2^127; with -big - big after it the total fits again, in every order and split.
    std::vector<int128> xs = {big, big, -big, -big, 7};
    std::sort(xs.begin(), xs.end());
    do {
      Block whole = state_of(a, {}, 0, 0), left = state_of(a, {}, 0, 0), right = state_of(a, {}, 0, 0);
      for (size_t i = 0; i < xs.size(); ++i) {
        agg_update(a, whole.bytes, Value::of_int(xs[i]), null, i);
        agg_update(a, i < 2 ? left.bytes : right.bytes, Value::of_int(xs[i]), null, i);
      }
      agg_merge(a, left.bytes, right.bytes);
      CHECK_FALSE(agg_overflowed(a, whole.bytes));
      CHECK_FALSE(agg_overflowed(a, left.bytes));
      if (op == AggOp::SumExact) CHECK(agg_finalize(a, whole.bytes).i == 7);
    } while (std::next_permutation(xs.begin(), xs.end()));
    Block over = state_of(a, {}, 0, 0), under = state_of(a, {}, 0, 0);
    for (int i = 0; i < 2; ++i) {
      agg_update(a, over.bytes, Value::of_int(big), null, 0);
      agg_update(a, under.bytes, Value::of_int(-big), null, 0);
    }
    CHECK(agg_overflowed(a, over.bytes));
    CHECK(agg_overflowed(a, under.bytes));
    agg_merge(a, over.bytes, under.bytes);  // the total is 0 again
    CHECK_FALSE(agg_overflowed(a, over.bytes));
  }
  // var and corr: exact while every value fits 64 bits (their squares and products stay in 256 bits),
  // whatever the count; one value beyond that fails them, even when the sums would fit.
  const AggDesc var = desc(AggOp::VarExact, Type::Int);
  Block v64 = state_of(var, {}, 0, 0), v65 = state_of(var, {}, 0, 0);
  for (int i = 0; i < 1000; ++i) agg_update(var, v64.bytes, Value::of_int(i % 2 ? INT64_MAX : INT64_MIN), null, 0);
  CHECK_FALSE(agg_overflowed(var, v64.bytes));
  CHECK(agg_finalize(var, v64.bytes).f > 0);
  agg_update(var, v65.bytes, Value::of_int(static_cast<int128>(INT64_MAX) + 1), null, 0);
  agg_update(var, v65.bytes, Value::of_int(-static_cast<int128>(INT64_MAX) - 1), null, 0);
  CHECK(agg_overflowed(var, v65.bytes));
  agg_merge(var, v64.bytes, v65.bytes);  // a merge keeps it
  CHECK(agg_overflowed(var, v64.bytes));
  const AggDesc corr = desc(AggOp::CorrExact, Type::Int, 0, Type::Int);
  Block c = state_of(corr, {}, 0, 0);
  agg_update(corr, c.bytes, Value::of_int(1), Value::of_int(big), 0);
  CHECK(agg_overflowed(corr, c.bytes));
  // Floats: 1e200 is past what the accumulator takes (an error, not inf); an infinity among the values is itself.
  // 5e114 is below 2^383, but ten of them wrapped the accumulator: values stop at 2^318.
  {
    const AggDesc fs = desc(AggOp::SumFloat, Type::Float);
    Block ok = state_of(fs, {}, 0, 0), wraps = state_of(fs, {}, 0, 0);
    for (int i = 0; i < 10; ++i) agg_update(fs, ok.bytes, Value::of_float(5e94), null, 0);
    CHECK_FALSE(agg_overflowed(fs, ok.bytes));
    CHECK(agg_finalize(fs, ok.bytes).f == 5e95);
    for (int i = 0; i < 10; ++i) agg_update(fs, wraps.bytes, Value::of_float(5e114), null, 0);
    CHECK(agg_overflowed(fs, wraps.bytes));
  }
  const AggDesc fsum = desc(AggOp::SumFloat, Type::Float);
  Block f = state_of(fsum, {}, 0, 0);
  agg_update(fsum, f.bytes, Value::of_float(1e200), null, 0);
  CHECK(agg_overflowed(fsum, f.bytes));
  agg_update(fsum, f.bytes, Value::of_float(HUGE_VAL), null, 1);
  CHECK_FALSE(agg_overflowed(fsum, f.bytes));
  CHECK(std::isinf(agg_finalize(fsum, f.bytes).f));
  // A variance is never negative, also where squares below 2^-256 are dropped.
  const AggDesc fvar = desc(AggOp::VarFloat, Type::Float);
  Block v = state_of(fvar, {}, 0, 0);
  for (double x : {1e-40, 2e-40, 3e-40}) agg_update(fvar, v.bytes, Value::of_float(x), null, 0);
  CHECK(agg_finalize(fvar, v.bytes).f >= 0);
}

TEST_CASE("agg: decimal_to_double rounds once") {
  CHECK(decimal_to_double(114, 2) == 1.14);
  CHECK(decimal_to_double(136, 2) == 1.36);
  CHECK(decimal_to_double(-2452917, 6) == -2.452917);
  CHECK(decimal_to_double(90071992547409935, 1) == 9007199254740994.0);
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 20000; ++iter) {
    const int scale = 1 + static_cast<int>(rng() % 18);
    const int64_t v = static_cast<int64_t>(rng() >> (1 + rng() % 60));
    unsigned __int128 den = 1;
    for (int k = 0; k < scale; ++k) den *= 10;
    INFO("v " << v << " scale " << scale);
    REQUIRE(nearest(static_cast<unsigned __int128>(v), den, decimal_to_double(v, scale)));
  }
}

// ---- exact rational references for var, std and corr ----------------------------------

namespace {

// A non-negative integer of any size (32-bit digits, little endian), with a
// sign beside it where needed: slow, and independent of wide.hpp.
struct Nat {
  std::vector<uint32_t> d;
};
void nat_trim(Nat& a) {
  while (!a.d.empty() && a.d.back() == 0) a.d.pop_back();
}
Nat nat_of(u128 v) {
  Nat r;
  for (; v; v >>= 32) r.d.push_back(static_cast<uint32_t>(v));
  return r;
}
int nat_cmp(const Nat& a, const Nat& b) {
  if (a.d.size() != b.d.size()) return a.d.size() < b.d.size() ? -1 : 1;
  for (size_t i = a.d.size(); i-- > 0;)
    if (a.d[i] != b.d[i]) return a.d[i] < b.d[i] ? -1 : 1;
  return 0;
}
Nat nat_add(const Nat& a, const Nat& b) {
  Nat r;
  uint64_t c = 0;
  for (size_t i = 0; i < std::max(a.d.size(), b.d.size()) || c; ++i) {
    c += (i < a.d.size() ? a.d[i] : 0ull) + (i < b.d.size() ? b.d[i] : 0ull);
    r.d.push_back(static_cast<uint32_t>(c));
    c >>= 32;
  }
  nat_trim(r);
  return r;
}
Nat nat_sub(const Nat& a, const Nat& b) {  // a >= b
  Nat r;
  int64_t borrow = 0;
  for (size_t i = 0; i < a.d.size(); ++i) {
    int64_t t = static_cast<int64_t>(a.d[i]) - (i < b.d.size() ? b.d[i] : 0) - borrow;
    borrow = t < 0;
    r.d.push_back(static_cast<uint32_t>(t + (borrow << 32)));
  }
  nat_trim(r);
  return r;
}
Nat nat_absdiff(const Nat& a, const Nat& b) { return nat_cmp(a, b) >= 0 ? nat_sub(a, b) : nat_sub(b, a); }
Nat nat_mul(const Nat& a, const Nat& b) {
  Nat r;
  r.d.assign(a.d.size() + b.d.size() + 1, 0);
  for (size_t i = 0; i < a.d.size(); ++i) {
    uint64_t c = 0;
    for (size_t j = 0; j < b.d.size(); ++j) {
      c += uint64_t{a.d[i]} * b.d[j] + r.d[i + j];
      r.d[i + j] = static_cast<uint32_t>(c);
      c >>= 32;
    }
    for (size_t k = i + b.d.size(); c; ++k) {
      c += r.d[k];
      r.d[k] = static_cast<uint32_t>(c);
      c >>= 32;
    }
  }
  nat_trim(r);
  return r;
}
Nat nat_shl(const Nat& a, int s) {
  Nat r;
  r.d.assign(static_cast<size_t>(s / 32), 0);
  uint64_t c = 0;
  for (uint32_t x : a.d) {
    c |= uint64_t{x} << (s % 32);
    r.d.push_back(static_cast<uint32_t>(c));
    c >>= 32;
  }
  r.d.push_back(static_cast<uint32_t>(c));
  nat_trim(r);
  return r;
}
struct SNat {  // sign and magnitude
  bool neg;
  Nat m;
};
SNat snat_of(__int128 v) { return SNat{v < 0, nat_of(v < 0 ? -static_cast<u128>(v) : static_cast<u128>(v))}; }
SNat snat_add(const SNat& a, const SNat& b) {
  if (a.neg == b.neg) return SNat{a.neg, nat_add(a.m, b.m)};
  return nat_cmp(a.m, b.m) >= 0 ? SNat{a.neg, nat_sub(a.m, b.m)} : SNat{b.neg, nat_sub(b.m, a.m)};
}
SNat snat_mul(const SNat& a, const SNat& b) { return SNat{a.neg != b.neg, nat_mul(a.m, b.m)}; }
SNat snat_neg(SNat a) {
  a.neg = !a.neg;
  return a;
}

// n sum(x y) - sum(x) sum(y), exactly.
SNat centered_ref(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys) {
  SNat sx = snat_of(0), sy = snat_of(0), sxy = snat_of(0);
  for (size_t i = 0; i < xs.size(); ++i) {
    sx = snat_add(sx, snat_of(xs[i]));
    sy = snat_add(sy, snat_of(ys[i]));
    sxy = snat_add(sxy, snat_mul(snat_of(xs[i]), snat_of(ys[i])));
  }
  return snat_add(snat_mul(snat_of(static_cast<__int128>(xs.size())), sxy), snat_neg(snat_mul(sx, sy)));
}

// Every finite double times 2^kFix is an integer (the least is 2^-1074).
constexpr int kFix = 1200;
// den * |d| * 2^kFix, exactly.
Nat nat_times_double(const Nat& den, double d) {
  int e = 0;
  const double f = std::frexp(std::fabs(d), &e);
  const uint64_t m = static_cast<uint64_t>(std::ldexp(f, 53));
  return nat_shl(nat_mul(den, nat_of(m)), e - 53 + kFix);
}
// d >= 0 is the double nearest num / den, ties to even.
bool nearest_ratio(const Nat& num, const Nat& den, double d) {
  const Nat x = nat_shl(num, kFix);
  const Nat here = nat_absdiff(x, nat_times_double(den, d));
  for (double other : {std::nextafter(d, 0.0), std::nextafter(d, INFINITY)}) {
    if (other == d) continue;
    const int c = nat_cmp(here, nat_absdiff(x, nat_times_double(den, other)));
    if (c > 0 || (c == 0 && (bits(d) & 1))) return false;
  }
  return true;
}
// d >= 0 is within 1 ulp of sqrt(num / den): the root lies strictly between
// d's neighbours (compared as squares: den d'^2 against num).
bool faithful_sqrt(const Nat& num, const Nat& den, double d) {
  if (num.d.empty()) return d == 0;
  const Nat x = nat_shl(num, 2 * kFix);
  auto den_sq = [&](double y) { return nat_times_double(nat_times_double(den, y), y); };
  const double lo = std::nextafter(d, 0.0), hi = std::nextafter(d, INFINITY);
  return (lo == 0 || nat_cmp(den_sq(lo), x) < 0) && nat_cmp(x, den_sq(hi)) < 0;
}

Nat var_den(size_t n, int scale) {
  Nat den = nat_of(static_cast<u128>(n) * (n - 1));
  for (int i = 0; i < 2 * scale; ++i) den = nat_mul(den, nat_of(10));
  return den;
}

// Values for the exact finalization checks: near +-2^63, 62-bit, full 64-bit, small, or of
// any magnitude.
int64_t draw_value(std::mt19937_64& rng, int kind) {
  switch (kind) {
    case 0: {
      const int64_t off = static_cast<int64_t>(rng() % 1000);
      return rng() % 2 ? INT64_MAX - off : INT64_MIN + off;
    }
    case 1: return static_cast<int64_t>(rng()) >> 1;
    case 2: return static_cast<int64_t>(rng());
    case 3: return static_cast<int64_t>(rng() % 41) - 20;
    default: {
      const int64_t v = static_cast<int64_t>(rng() >> (1 + rng() % 63));
      return rng() % 2 ? -v : v;
    }
  }
}

Value finalize_exact(const AggDesc& a, const std::vector<int64_t>& xs, const std::vector<int64_t>& ys) {
  Block b = state_of(a, {}, 0, 0);
  for (size_t i = 0; i < xs.size(); ++i)
    agg_update(a, b.bytes, Value::of_int(xs[i]), ys.empty() ? Value::make_null() : Value::of_int(ys[i]), i);
  return agg_finalize(a, b.bytes);
}

}  // namespace

TEST_CASE("agg: exact var is correctly rounded and std within 1 ulp of exact rationals") {
  std::mt19937_64 rng(2024);
  for (int iter = 0; iter < 20000; ++iter) {
    const int kind = static_cast<int>(rng() % 5);
    const size_t n = 2 + rng() % (iter % 4 == 0 ? 40 : 7);
    const int scale = iter % 3 == 0 ? static_cast<int>(rng() % 19) : 0;
    std::vector<int64_t> xs;
    for (size_t i = 0; i < n; ++i) xs.push_back(draw_value(rng, rng() % 4 ? kind : static_cast<int>(rng() % 5)));
    const SNat num = centered_ref(xs, xs);
    REQUIRE_FALSE((num.neg && !num.m.d.empty()));
    const Nat den = var_den(n, scale);
    const double var = finalize_exact(desc(AggOp::VarExact, Type::Decimal, static_cast<uint8_t>(scale)), xs, {}).f;
    const double sd = finalize_exact(desc(AggOp::StdExact, Type::Decimal, static_cast<uint8_t>(scale)), xs, {}).f;
    INFO("iter " << iter << " kind " << kind << " n " << n << " scale " << scale << " x0 " << xs[0]);
    REQUIRE(nearest_ratio(num.m, den, var));
    REQUIRE(faithful_sqrt(num.m, den, sd));
  }
  // Three values near 2^63: the numerator passes 2^128, where dividing its double rounded twice.
  const std::vector<int64_t> xs = {7000000000000000001, -7000000000000000000, 7000000000000000000};
  CHECK(finalize_exact(desc(AggOp::VarExact, Type::Int), xs, {}).f == 6.533333333333333e+37);
}

TEST_CASE("agg: exact corr is within 1 ulp of exact rationals") {
  std::mt19937_64 rng(4048);
  const AggDesc corr = desc(AggOp::CorrExact, Type::Int, 0, Type::Int, 0);
  int checked = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    const int kx = static_cast<int>(rng() % 5), ky = static_cast<int>(rng() % 5);
    const size_t n = 2 + rng() % (iter % 4 == 0 ? 40 : 7);
    std::vector<int64_t> xs, ys;
    for (size_t i = 0; i < n; ++i) {
      xs.push_back(draw_value(rng, kx));
      ys.push_back(draw_value(rng, ky));
    }
    const SNat cov = centered_ref(xs, ys), vx = centered_ref(xs, xs), vy = centered_ref(ys, ys);
    const Value c = finalize_exact(corr, xs, ys);
    INFO("iter " << iter << " kinds " << kx << ky << " n " << n << " x0 " << xs[0] << " y0 " << ys[0]);
    if (vx.m.d.empty() || vy.m.d.empty()) {
      REQUIRE(c.null);
      continue;
    }
    REQUIRE_FALSE(c.null);
    REQUIRE(std::fabs(c.f) <= 1.0);
    if (!cov.m.d.empty()) REQUIRE(std::signbit(c.f) == cov.neg);
    REQUIRE(faithful_sqrt(nat_mul(cov.m, cov.m), nat_mul(vx.m, vy.m), std::fabs(c.f)));
    ++checked;
  }
  CHECK(checked > 15000);
  // Exactly -0.99453547822020512276...: the old quotient of three roundings was 2 ulp off.
  const double c = finalize_exact(corr, {0, -9, 13}, {-6, -4, -8}).f;
  CHECK((c == -0.9945354782202052 || c == std::nextafter(-0.9945354782202052, 0.0)));
}

TEST_CASE("wide: big_ratio_to_double rounds num / den to nearest with ties to even") {
  std::mt19937_64 rng(99);
  auto random_big = [&](int bits_wanted) {
    BigInt<8> v = BigInt<8>::zero();
    for (int i = 0; i < 8; ++i) v.w[i] = rng();
    for (int b = 511; b >= bits_wanted; --b) v.w[b / 64] &= ~(1ull << (b % 64));
    return v;
  };
  auto nat_of_big = [](const BigInt<8>& v) {
    Nat r;
    for (int i = 0; i < 8; ++i) {
      r.d.push_back(static_cast<uint32_t>(v.w[i]));
      r.d.push_back(static_cast<uint32_t>(v.w[i] >> 32));
    }
    nat_trim(r);
    return r;
  };
  for (int iter = 0; iter < 20000; ++iter) {
    const BigInt<8> num = random_big(static_cast<int>(rng() % 512)), den = random_big(1 + static_cast<int>(rng() % 511));
    if (den.is_zero()) continue;
    const double d = big_ratio_to_double(num, den);
    INFO("iter " << iter);
    REQUIRE(nearest_ratio(nat_of_big(num), nat_of_big(den), d));
  }
  // Halfway cases go to even: 2^53 + 1 and 2^53 + 3, as (2^53 + 1) / 1, (2^55 + 4) / 4 and (2^55 + 12) / 4.
  const BigInt<8> one = BigInt<8>::of(1), four = BigInt<8>::of(4);
  const __int128 p53 = static_cast<__int128>(1) << 53;
  CHECK(big_ratio_to_double(BigInt<8>::of(p53 + 1), one) == 9007199254740992.0);
  CHECK(big_ratio_to_double(BigInt<8>::of(4 * p53 + 4), four) == 9007199254740992.0);
  CHECK(big_ratio_to_double(BigInt<8>::of(4 * p53 + 12), four) == 9007199254740996.0);
}
