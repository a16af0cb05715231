// The GPU's aggregate state words (cuda/agg_words.hpp) on the host: rows
// updated into words in two parts, the parts merged as a block cache merges,
// and the words read back (cuda/gpu_states.hpp) must give the state, and so
// the result, that the core's agg_update gives for the same rows.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "catch.hpp"
#include "cuda/agg_words.hpp"
#include "cuda/gpu_states.hpp"
#include "cuda/short_key_state.hpp"
#include "warpcsv/core/agg.hpp"

using namespace warpcsv;
using namespace warpcsv::cuda;

namespace {

struct Case {
  AggOp op;
  Type type;  // both arguments'
  uint8_t scale;
};

Value random_value(std::mt19937_64& rng, Type type, int trial) {
  if (rng() % 10 == 0) return Value::make_null();
  if (type == Type::Float) {
    const int pick = static_cast<int>(rng() % 50);
    if (trial % 3 == 0 && pick == 0) return Value::of_float(std::numeric_limits<double>::infinity());
    if (trial % 3 == 0 && pick == 1) return Value::of_float(std::nan(""));
    const double mag = std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 120) - 60);
    return Value::of_float(rng() % 2 ? -mag : mag);
  }
  // Mostly small numbers; some past 64 bits so that sums carry into their upper limbs.
  const int64_t small = static_cast<int64_t>(rng() % 2000001) - 1000000;
  if (rng() % 8 != 0) return Value::of_int(small);
  const int128 big = static_cast<int128>(static_cast<int64_t>(rng())) * (int128{1} << 40) + small;
  return Value::of_int(big);
}

bool same_result(const Value& a, const Value& b) {
  if (a.null || b.null) return a.null == b.null;
  return a.i == b.i;  // floats are built with of_float, which zeroes the rest of the union
}

}  // namespace

TEST_CASE("GPU state words: updated in two parts, merged and read back, give the core's results") {
  const Case cases[] = {
      {AggOp::CountStar, Type::Int, 0}, {AggOp::Count, Type::Int, 0},      {AggOp::SumExact, Type::Int, 0},
      {AggOp::MeanExact, Type::Decimal, 2}, {AggOp::VarExact, Type::Int, 0}, {AggOp::StdExact, Type::Decimal, 1},
      {AggOp::CorrExact, Type::Int, 0}, {AggOp::SumFloat, Type::Float, 0},
      {AggOp::MeanFloat, Type::Float, 0}, {AggOp::VarFloat, Type::Float, 0}, {AggOp::StdFloat, Type::Float, 0},
      {AggOp::CorrFloat, Type::Float, 0}};
  std::mt19937_64 rng(7);
  for (const Case& c : cases) {
    for (int trial = 0; trial < 40; ++trial) {
      const AggDesc a{c.op, c.type, c.scale, c.type, c.scale, 0};
      GpuAgg g{};
      g.op = c.op;
      g.in_type = g.in_type2 = c.type;
      g.in_scale = g.in_scale2 = c.scale;
      const int nwords = agg_words(c.op);
      REQUIRE(nwords > 0);
      std::vector<u64> first(static_cast<size_t>(nwords)), second(first.size());
      agg_init_words(c.op, first.data());
      agg_init_words(c.op, second.data());
      alignas(kAggStateAlign) char expected[512], read_back[512];
      REQUIRE(agg_state_size(c.op) <= sizeof expected);
      agg_init(a, expected);
      agg_init(a, read_back);
      const int rows = static_cast<int>(rng() % 200);
      for (int r = 0; r < rows; ++r) {
        const Value x = random_value(rng, c.type, trial), y = random_value(rng, c.type, trial);
        if (agg_update(a, expected, x, y, 0)) FAIL("the core's update failed");
        u64* words = r < rows / 2 ? first.data() : second.data();
        REQUIRE(agg_update_words(g, words, x, y));
      }
      agg_merge_words(g, first.data(), second.data());
      state_from_words(a, first.data(), read_back);
      INFO("op " << static_cast<int>(c.op) << ", trial " << trial << ", " << rows << " rows");
      CHECK(same_result(agg_finalize(a, read_back), agg_finalize(a, expected)));
      CHECK(agg_overflowed(a, read_back) == agg_overflowed(a, expected));
    }
  }
}

// Min and max of integers past 64 bits have no GPU form: the update says so,
// and the batch reruns on the CPU.
TEST_CASE("GPU state words: min and max, merged, as the core keeps them; none past 64 bits") {
  std::mt19937_64 rng(8);
  for (const AggOp op : {AggOp::Min, AggOp::Max}) {
    for (const Type type : {Type::Int, Type::Float}) {
      for (int trial = 0; trial < 60; ++trial) {
        const AggDesc a{op, type, 0, type, 0, 0};
        GpuAgg g{};
        g.op = op;
        g.in_type = g.in_type2 = type;
        u64 first[ExtremeWords::size], second[ExtremeWords::size];
        agg_init_words(op, first);
        agg_init_words(op, second);
        alignas(kAggStateAlign) char expected[128], read_back[128];
        agg_init(a, expected);
        agg_init(a, read_back);
        const int rows = static_cast<int>(rng() % 100);
        for (int r = 0; r < rows; ++r) {
          Value x = random_value(rng, type, 1);  // no NaN: min and max of floats order them apart
          if (type != Type::Float && !x.null) x.i = static_cast<int64_t>(rng()) >> (rng() % 64);
          agg_update(a, expected, x, x, 0);
          REQUIRE(agg_update_words(g, r % 2 ? first : second, x, x));
        }
        agg_merge_words(g, first, second);
        state_from_words(a, first, read_back);
        INFO((op == AggOp::Min ? "min" : "max") << ", trial " << trial << ", " << rows << " rows");
        CHECK(same_result(agg_finalize(a, read_back), agg_finalize(a, expected)));
      }
    }
    GpuAgg g{};
    g.op = op;
    g.in_type = Type::Int;
    u64 w[ExtremeWords::size];
    agg_init_words(op, w);
    CHECK_FALSE(agg_update_words(g, w, Value::of_int(static_cast<int128>(INT64_MAX) + 1), Value::make_null()));
    CHECK(agg_update_words(g, w, Value::of_int(INT64_MIN), Value::make_null()));
  }
}

TEST_CASE("GPU state words: each layout's parts lie within its words, apart") {
  CHECK(SumExactWords::size == SumExactWords::ext + 1);
  CHECK(MomentsExactWords::sum_sq + 4 == MomentsExactWords::n);
  CHECK(CorrExactWords::sxy + 4 == CorrExactWords::n);
  CHECK(FloatWords::n(5) + 1 == agg_words(AggOp::CorrFloat));
  for (const AggOp op : {AggOp::SumFloat, AggOp::VarFloat, AggOp::CorrFloat})
    CHECK(FloatWords::flags(float_sums(op)) == float_sums(op) * 2 * kFloatAccLimbs);
  CHECK(agg_words(AggOp::First) == 0);
  CHECK(agg_words(AggOp::Last) == 0);
}

// A row block's 32-bit state for a short key (cuda/short_key_state.hpp):
// rows split between entries' states (folded in at the end), a batch's state
// of the group, and direct updates of the group's words must leave the words
// that agg_update_words leaves for the same rows, at the limits of 32 bits
// too.
TEST_CASE("GPU state words: a short key's 32-bit block state, folded in, gives the rows' words") {
  std::mt19937_64 rng(9);
  for (const AggOp op : {AggOp::CountStar, AggOp::Count, AggOp::Min, AggOp::Max, AggOp::SumExact, AggOp::MeanExact}) {
    REQUIRE(short_key_words(op) >= 0);
    for (int trial = 0; trial < 200; ++trial) {
      GpuAgg g{};
      g.op = op;
      g.in_type = g.in_type2 = Type::Int;
      const ShortKeyAgg a{op, 1, 0};  // state word 1, after the row count
      const ShortKeyAgg in_batch{op, static_cast<uint8_t>(short_key_words(op) == 2 ? 2 : 1), 0};  // sums at even words
      std::vector<u64> expected(static_cast<size_t>(agg_words(op))), got(expected.size());
      agg_init_words(op, expected.data());
      agg_init_words(op, got.data());
      uint32_t state[2][3] = {};  // two entries of the same group, as two blocks hold them
      for (auto& st : state) short_key_init(a, st);
      uint32_t batch[4] = {};  // the group's state for a batch, in the GPU's memory
      short_key_init(in_batch, batch);
      const int rows = static_cast<int>(rng() % (trial < 20 ? 5 : 3000));
      for (int r = 0; r < rows; ++r) {
        const int pick = static_cast<int>(rng() % 10);
        const int32_t v = pick == 0   ? INT32_MIN
                          : pick == 1 ? INT32_MAX
                          : trial % 2 ? static_cast<int32_t>(rng())
                                      : static_cast<int32_t>(rng() % 2001) - 1000;
        REQUIRE(agg_update_words(g, expected.data(), Value::of_int(v), Value::make_null()));
        const int where = static_cast<int>(rng() % 4);
        if (where == 3) {
          ++batch[kShortKeyRowsWord];
          short_key_update<StateIn::Batch>(in_batch, batch, v);
        } else if (where == 2) {
          short_key_update_words(a, got.data(), v);
        } else {
          ++state[where][kShortKeyRowsWord];
          short_key_update<StateIn::Block>(a, state[where], v);
        }
      }
      for (const auto& st : state)
        if (st[kShortKeyRowsWord]) short_key_fold(a, st, st[kShortKeyRowsWord], got.data());
      if (batch[kShortKeyRowsWord]) short_key_fold(in_batch, batch, batch[kShortKeyRowsWord], got.data());
      INFO("op " << static_cast<int>(op) << ", trial " << trial << ", " << rows << " rows");
      CHECK(got == expected);
    }
  }
  CHECK(short_key_words(AggOp::VarExact) == -1);
  CHECK(short_key_words(AggOp::SumFloat) == -1);
}

// Every aggregate's words lie apart from the row count and from each other,
// sums at even words, within the state's even number of words (two an
// aggregate and two more at most).
TEST_CASE("GPU state words: a short key's state layout keeps its parts apart and its sums aligned") {
  const AggOp kinds[] = {AggOp::CountStar, AggOp::Count, AggOp::Min, AggOp::Max, AggOp::SumExact, AggOp::MeanExact};
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 16);
    AggOp ops[16];
    for (int a = 0; a < n; ++a) ops[a] = kinds[rng() % 6];
    uint8_t states[16];
    int words = 0;
    REQUIRE(short_key_layout(ops, n, states, words));
    INFO("trial " << trial << ", " << n << " aggregates");
    CHECK(words % 2 == 0);
    CHECK(words <= 2 + 2 * n);  // kMaxShortStateWords for kMaxAggs aggregates
    std::vector<int> owner(static_cast<size_t>(words), -1);
    owner[kShortKeyRowsWord] = n;
    for (int a = 0; a < n; ++a) {
      const int w = short_key_words(ops[a]);
      if (w == 2) CHECK(states[a] % 2 == 0);
      for (int k = 0; k < w; ++k) {
        REQUIRE(states[a] + k < words);
        CHECK(owner[static_cast<size_t>(states[a] + k)] == -1);
        owner[static_cast<size_t>(states[a] + k)] = a;
      }
    }
  }
  const AggOp var[] = {AggOp::Min, AggOp::VarExact};
  uint8_t states[2];
  int words = 0;
  CHECK_FALSE(short_key_layout(var, 2, states, words));
}
