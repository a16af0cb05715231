// The expression evaluator, driven through the binder: bind a spec against a
// small schema, then evaluate its programs on hand-built rows.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;
#ifdef WCSV_CATCH3
using Catch::Approx;
#endif

namespace {

ColumnType T(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

// i int, j int, p decimal(2), q decimal(3), x float, y float, s string, t string,
// b bool, d date, ts timestamp
std::vector<OutputColumn> schema() {
  return {{"i", T(Type::Int)},       {"j", T(Type::Int)},    {"p", T(Type::Decimal, 2)},
          {"q", T(Type::Decimal, 3)}, {"x", T(Type::Float)}, {"y", T(Type::Float)},
          {"s", T(Type::String)},    {"t", T(Type::String)}, {"b", T(Type::Bool)},
          {"d", T(Type::Date)},      {"ts", T(Type::Timestamp)}};
}

Value I(int128 v) { return Value::of_int(v); }
Value F(double v) { return Value::of_float(v); }
Value S(const char* s) { return Value::of_str(s, static_cast<uint32_t>(std::strlen(s))); }
Value N() { return Value::make_null(); }

// A full input row with defaults; tests override the columns they need.
struct Row {
  std::vector<Value> v{I(0), I(0), I(0), I(0), F(0), F(0), S(""), S(""), I(0), I(0), I(0)};
  Row& set(const char* name, Value x) {
    auto sc = schema();
    for (size_t k = 0; k < sc.size(); ++k)
      if (sc[k].name == name) v[k] = x;
    return *this;
  }
};

struct Result {
  Value v;
  EvalStatus status;
  ColumnType type;
  std::string text;  // string results are copied: constants die with the plan
  std::string str() const { return text; }
};

char g_scratch[256];

Result run(const Program& prog, const std::vector<Value>& slots) {
  EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
  Value v = eval_program(prog.view(), slots.data(), ctx);
  std::string text = prog.result.type == Type::String && !v.null ? std::string(v.s.ptr, v.s.len)
                                                                  : std::string();
  return Result{v, ctx.status, prog.result, text};
}

// Evaluates `select EXPR` on `row`: the single scan output program.
Result sel(const std::string& expr, const Row& row = Row()) {
  Plan p = build_plan("select " + expr, schema());
  REQUIRE(p.scan.outputs.size() == 1);
  std::vector<Value> slots;
  for (int c : p.scan.used_columns) slots.push_back(row.v[c]);
  return run(p.scan.outputs[0], slots);
}

// Evaluates `filter EXPR` on `row`: 1 (kept), 0 (false) or -1 (null).
int flt(const std::string& expr, const Row& row = Row()) {
  Plan p = build_plan("filter " + expr, schema());
  std::vector<Value> slots;
  for (int c : p.scan.used_columns) slots.push_back(row.v[c]);
  Result r = run(p.scan.filter, slots);
  REQUIRE(r.status == EvalStatus::Ok);
  return r.v.null ? -1 : static_cast<int>(r.v.i);
}

}  // namespace

TEST_CASE("int128 helpers", "[eval]") {
  int128 r;
  CHECK(checked_add(kInt128Max - 1, 1, &r));
  CHECK(r == kInt128Max);
  CHECK_FALSE(checked_add(kInt128Max, 1, &r));
  CHECK_FALSE(checked_sub(kInt128Min, 1, &r));
  CHECK(checked_sub(-5, 7, &r));
  CHECK(r == -12);
  CHECK_FALSE(checked_mul(pow10_i128(20), pow10_i128(19), &r));
  CHECK(checked_mul(pow10_i128(19), -pow10_i128(18), &r));
  CHECK(r == -pow10_i128(37));
  CHECK_FALSE(checked_neg(kInt128Min, &r));

  char buf[64];
  CHECK(std::string(buf, int128_to_chars(kInt128Min, buf)) ==
        "-170141183460469231731687303715884105728");
  CHECK(std::string(buf, int128_to_chars(0, buf)) == "0");
  CHECK(std::string(buf, decimal_to_chars(-5, 2, buf)) == "-0.05");
  CHECK(std::string(buf, decimal_to_chars(12345, 2, buf)) == "123.45");
  CHECK(std::string(buf, decimal_to_chars(7, 0, buf)) == "7");

  CHECK(parse_int128("-170141183460469231731687303715884105728", 40, &r));
  CHECK(r == kInt128Min);
  CHECK_FALSE(parse_int128("170141183460469231731687303715884105728", 39, &r));
  CHECK(parse_int128("+42", 3, &r));
  CHECK(r == 42);
  CHECK_FALSE(parse_int128("", 0, &r));
  CHECK_FALSE(parse_int128("-", 1, &r));
  CHECK_FALSE(parse_int128("1x", 2, &r));

  CHECK(int128_to_double(pow10_i128(30)) == 1e30);
  CHECK(int128_to_double(-3) == -3.0);
  CHECK(decimal_to_double(-1250, 2) == -12.5);
}

TEST_CASE("compare_values orders every type", "[eval]") {
  CHECK(compare_values(I(1), I(2), Type::Int) < 0);
  CHECK(compare_values(I(-1), I(-1), Type::Decimal) == 0);
  CHECK(compare_values(S("abc"), S("abd"), Type::String) < 0);
  CHECK(compare_values(S("ab"), S("abc"), Type::String) < 0);
  CHECK(compare_values(S("\xc3\xa9"), S("z"), Type::String) > 0);  // bytewise, unsigned
  CHECK(compare_values(S(""), S(""), Type::String) == 0);
  double nan = std::nan("");
  CHECK(compare_values(F(nan), F(1e300), Type::Float) > 0);
  CHECK(compare_values(F(-INFINITY), F(nan), Type::Float) < 0);
  CHECK(compare_values(F(nan), F(nan), Type::Float) == 0);
  CHECK(compare_values(F(-0.0), F(0.0), Type::Float) == 0);
  CHECK(compare_values(F(-1.5), F(2), Type::Float) < 0);
}

TEST_CASE("arithmetic types and values", "[eval]") {
  Row r;
  r.set("i", I(7)).set("j", I(-2)).set("p", I(1250)).set("q", I(3)).set("x", F(0.5));

  SECTION("int op int stays int") {
    Result a = sel("i + j", r);
    CHECK(a.type.type == Type::Int);
    CHECK(a.v.i == 5);
    CHECK(sel("i - j", r).v.i == 9);
    CHECK(sel("i * j", r).v.i == -14);
    CHECK(sel("i % j", r).v.i == 1);  // sign of the dividend, like C and SQL
    CHECK(sel("-i", r).v.i == -7);
    CHECK(sel("2 + 3 * 4", r).v.i == 14);  // precedence
    CHECK(sel("(2 + 3) * 4", r).v.i == 20);
    CHECK(sel("10 - 3 - 2", r).v.i == 5);  // left associative
  }
  SECTION("decimal scales") {
    Result a = sel("p + q", r);  // 12.50 + 0.003
    CHECK(a.type == T(Type::Decimal, 3));
    CHECK(a.v.i == 12503);
    Result m = sel("p * q", r);  // scales add
    CHECK(m.type == T(Type::Decimal, 5));
    CHECK(m.v.i == 3750);
    Result im = sel("i * p", r);
    CHECK(im.type == T(Type::Decimal, 2));
    CHECK(im.v.i == 8750);
    Result ip = sel("i + p", r);
    CHECK(ip.type == T(Type::Decimal, 2));
    CHECK(ip.v.i == 1950);
    Result lit = sel("p - 0.5", r);
    CHECK(lit.type == T(Type::Decimal, 2));
    CHECK(lit.v.i == 1200);
    Result md = sel("p % 1", r);  // 12.50 % 1 = 0.50
    CHECK(md.type == T(Type::Decimal, 2));
    CHECK(md.v.i == 50);
    // 10 + 10 digits after the point would pass 18: the product is a float.
    Result f = sel("0.0000000001 * 0.0000000002", r);
    CHECK(f.type.type == Type::Float);
    CHECK(f.v.f == Approx(2e-20));
  }
  SECTION("float and division") {
    Result a = sel("i + x", r);
    CHECK(a.type.type == Type::Float);
    CHECK(a.v.f == 7.5);
    Result d = sel("i / 2", r);
    CHECK(d.type.type == Type::Float);
    CHECK(d.v.f == 3.5);
    CHECK(sel("p / 5", r).v.f == 2.5);
    CHECK(sel("1e3", r).type.type == Type::Float);
    CHECK(sel("1e3", r).v.f == 1000.0);
    CHECK(sel("x * 4", r).v.f == 2.0);
    CHECK(sel("x % 0.3", r).v.f == Approx(0.2));
  }
  SECTION("division and modulo by zero are null") {
    CHECK(sel("i / 0", r).v.null);
    CHECK(sel("x / 0", r).v.null);
    CHECK(sel("i % 0", r).v.null);
    CHECK(sel("p % 0", r).v.null);
    CHECK(sel("x % 0", r).v.null);
    Result z = sel("i / j", Row(r).set("j", I(0)));
    CHECK(z.v.null);
    CHECK(z.status == EvalStatus::Ok);
  }
  SECTION("nulls propagate") {
    CHECK(sel("i + j", Row(r).set("j", N())).v.null);
    CHECK(sel("p * q", Row(r).set("p", N())).v.null);
    CHECK(sel("-x", Row(r).set("x", N())).v.null);
    CHECK(sel("i + null", r).v.null);
    CHECK(sel("i + null", r).type.type == Type::Int);
  }
  SECTION("integer overflow is reported, not wrapped") {
    Row big;
    big.set("i", I(INT64_MAX)).set("j", I(1));
    Result o = sel("i + j", big);
    CHECK(o.status == EvalStatus::IntegerOverflow);
    CHECK(o.v.null);
    CHECK(sel("i * 2", big).status == EvalStatus::IntegerOverflow);
    CHECK(sel("-i - 2", big).status == EvalStatus::IntegerOverflow);
    CHECK(sel("i - j", big).status == EvalStatus::Ok);
    Row mn;
    mn.set("i", I(INT64_MIN));
    CHECK(sel("-i", mn).status == EvalStatus::IntegerOverflow);
    CHECK(sel("abs(i)", mn).status == EvalStatus::IntegerOverflow);
    CHECK(sel("i % -1", mn).v.i == 0);  // no trap on MIN % -1
    Row dp;
    dp.set("p", I(kInt128Max / 5));
    CHECK(sel("p + q", dp).status == EvalStatus::DecimalOverflow);
    // Int is 64-bit: a sum of two int64 values past it is an overflow too.
    Row w;
    w.set("i", I(INT64_MAX)).set("j", I(INT64_MAX));
    Result s = sel("i + j", w);
    CHECK(s.status == EvalStatus::IntegerOverflow);
    CHECK(s.v.null);
  }
}

namespace {

// `select EXPR` over i and j (ints; null when `nj`).
Result ij(const std::string& expr, int128 i, int128 j = 0, bool nj = false) {
  Row r;
  r.set("i", I(i)).set("j", nj ? N() : I(j));
  return sel(expr, r);
}

constexpr int128 kMax64 = INT64_MAX, kMin64 = INT64_MIN;

}  // namespace

TEST_CASE("int arithmetic is 64-bit: a result past it is an overflow", "[eval]") {
  SECTION("results that just fit") {
    CHECK(ij("i + j", kMax64 - 1, 1).v.i == kMax64);
    CHECK(ij("i + 1", kMax64 - 1).v.i == kMax64);
    CHECK(ij("i + j", kMax64, kMin64).v.i == -1);
    CHECK(ij("i - j", kMin64 + 1, 1).v.i == kMin64);
    CHECK(ij("i - j", -1, kMax64).v.i == kMin64);
    CHECK(ij("i - j", kMax64, kMax64).v.i == 0);
    CHECK(ij("i * j", 3037000499LL, 3037000499LL).v.i == 9223372030926249001LL);  // floor(sqrt(2^63 - 1))^2
    CHECK(ij("i * j", kMin64, 1).v.i == kMin64);
    CHECK(ij("i * j", int128(1) << 62, -2).v.i == kMin64);
    CHECK(ij("i * j", -(int128(1) << 31), int128(1) << 32).v.i == kMin64);
    CHECK(ij("i * -1", kMax64).v.i == -kMax64);
    CHECK(ij("-i", kMax64).v.i == -kMax64);
    CHECK(ij("-i", kMin64 + 1).v.i == kMax64);
    CHECK(ij("abs(i)", kMin64 + 1).v.i == kMax64);
    CHECK(ij("round(i, -1)", 9223372036854775804LL).v.i == 9223372036854775800LL);
    CHECK(ij("round(i, -1)", -9223372036854775804LL).v.i == -9223372036854775800LL);
    CHECK(ij("i % j", kMin64, -1).v.i == 0);
    CHECK(ij("i % j", kMin64, kMax64).v.i == -1);
    for (const char* e : {"i + j", "i * j", "-i", "abs(i)"}) {
      const Result r = ij(e, kMax64 - 1, 1);
      CHECK(r.status == EvalStatus::Ok);
      CHECK(r.type.type == Type::Int);
    }
  }
  SECTION("one past either end") {
    struct Case {
      const char* expr;
      int128 i, j;
    };
    const Case cases[] = {
        {"i + j", kMax64, 1},          // INT64_MAX + 1
        {"i + 1", kMax64, 0},
        {"1 + i", kMax64, 0},
        {"i + j", kMin64, -1},
        {"i + j", kMax64, kMax64},
        {"i + j", kMin64, kMin64},
        {"i - j", kMin64, 1},          // INT64_MIN - 1
        {"i - 1", kMin64, 0},
        {"i - j", kMax64, -1},
        {"i - j", 0, kMin64},          // 0 - INT64_MIN
        {"i - j", kMax64, kMin64},
        {"i * j", kMin64, -1},         // INT64_MIN * -1
        {"i * -1", kMin64, 0},
        {"-1 * i", kMin64, 0},
        {"-i", kMin64, 0},             // -INT64_MIN
        {"-(i)", kMin64, 0},
        {"abs(i)", kMin64, 0},
        {"i * j", 3037000500LL, 3037000500LL},   // just past sqrt(2^63)
        {"i * j", -3037000500LL, 3037000500LL},
        {"i * j", int128(1) << 62, 2},           // 2^63
        {"i * j", kMax64, kMax64},               // fits 128 bits, not 64
        {"i * j", kMin64, kMin64},               // 2^126: fits 128 bits, not 64
        {"i * j", 4294967296LL, 4294967296LL},   // 2^64
        {"i * 2", kMax64 / 2 + 1, 0},
        {"round(i, -1)", kMax64, 0},             // 9223372036854775810
        {"round(i, -1)", kMin64, 0},
        {"round(i, -19)", kMax64, 0},            // 10^19
        {"i + j - j", kMax64, 1},                // an intermediate past 64 bits fails, though the end fits
        {"i * j / 2", kMax64, 2},
        {"coalesce(i + j, 0)", kMax64, 1},
        {"i + 99999999999999999999", -1, 0},     // a literal past 64 bits only fits comparisons
    };
    for (const Case& c : cases) {
      INFO(c.expr << " with i = " << static_cast<long double>(c.i) << ", j = " << static_cast<long double>(c.j));
      const Result r = ij(c.expr, c.i, c.j);
      CHECK(r.status == EvalStatus::IntegerOverflow);
      CHECK(r.v.null);
    }
  }
  SECTION("division gives a float: no overflow; a null operand gives null, no overflow") {
    const Result d = ij("i / j", kMin64, -1);
    CHECK(d.status == EvalStatus::Ok);
    CHECK(d.type.type == Type::Float);
    CHECK(d.v.f == 9223372036854775808.0);
    const Result n = ij("i + j", kMax64, 0, true);
    CHECK(n.status == EvalStatus::Ok);
    CHECK(n.v.null);
    CHECK(ij("i + j > 0", kMax64, 0, true).v.null);
  }
  SECTION("comparisons with values past 64 bits are no arithmetic") {
    CHECK(flt("i < 99999999999999999999", Row().set("i", I(kMax64))) == 1);
    CHECK(flt("i > -99999999999999999999", Row().set("i", I(kMin64))) == 1);
  }
  SECTION("decimal arithmetic goes on past 64 bits, exact to 128") {
    const Result w = ij("i * 1.0 + j", kMax64, 1);  // decimal(1): 9223372036854775808.0
    CHECK(w.status == EvalStatus::Ok);
    CHECK(w.type == T(Type::Decimal, 1));
    CHECK(w.v.i == (kMax64 + 1) * 10);
    const Result p = ij("i * 1.0 * j", kMax64, kMax64);  // 8.5e37 in tenths: 8.5e38 passes 128 bits
    CHECK(p.status == EvalStatus::DecimalOverflow);
    CHECK(p.v.null);
    const Result q = ij("i * 1.0 * j", kMin64, kMax64);
    CHECK(q.status == EvalStatus::DecimalOverflow);
    const Result fits = ij("i * j * 1.0", 3037000499LL, 3037000499LL);
    CHECK(fits.status == EvalStatus::Ok);
    CHECK(fits.v.i == int128(9223372030926249001LL) * 10);
    const Result mp = ij("(i * 1.0) * (j * 1.0)", kMin64, kMin64);  // 2^126 in hundredths: past 128 bits
    CHECK(mp.status == EvalStatus::DecimalOverflow);
    const Result neg = ij("-(i * 1.0)", kMin64);  // a decimal has room for -INT64_MIN
    CHECK(neg.status == EvalStatus::Ok);
    CHECK(neg.v.i == -kMin64 * 10);
    Row dmin;
    dmin.set("p", I(kInt128Min));
    CHECK(sel("-p", dmin).status == EvalStatus::DecimalOverflow);
    CHECK(sel("abs(p)", dmin).status == EvalStatus::DecimalOverflow);
  }
  SECTION("float arithmetic never overflows: it goes to inf") {
    Row r;
    r.set("x", F(1e308));
    const Result f = sel("x * 10", r);
    CHECK(f.status == EvalStatus::Ok);
    CHECK(std::isinf(f.v.f));
  }
}

TEST_CASE("int arithmetic over a sum of ints is exact to 128 bits", "[eval]") {
  // sum over ints is exact in 128 bits: arithmetic on it is checked against
  // 128 bits (Instr::wide); on any other int (max, count, a key) against 64.
  Plan p = build_plan(
      "groupby j | agg sum(i) + 1 as s, max(i) + 1 as m, sum(i) - sum(j) as d, -sum(i) as n, count() * 2 as c, "
      "j + 1 as k, sum(i) * 1.0 as sd | select s * 2 as s2, m, d + 1 as d1, c + 1 as c1, s - s as z",
      schema());
  // The finalize row: the key j, then sum(i), max(i), sum(j), count().
  REQUIRE(p.scan_output.size() == 5);
  CHECK(p.scan_output[1].name == "sum(i)");
  CHECK(p.scan_output[2].name == "max(i)");
  CHECK(p.scan_output[3].name == "sum(j)");
  CHECK(p.scan_output[4].name == "count()");
  auto fin = [&](size_t item, const std::vector<Value>& raw) {
    EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
    Value v = eval_program(p.finalize[item].view(), raw.data(), ctx);
    return Result{v, ctx.status, p.finalize[item].result, ""};
  };
  const int128 big = (kMax64 + 1) * 4;  // a sum past 64 bits
  std::vector<Value> raw = {I(kMax64), I(big), I(kMax64), I(kMin64), I(int128(1) << 62)};
  Result s = fin(0, raw);
  CHECK(s.status == EvalStatus::Ok);
  CHECK(s.v.i == big + 1);
  CHECK(fin(1, raw).status == EvalStatus::IntegerOverflow);  // max(i) + 1 is 64-bit
  Result d = fin(2, raw);
  CHECK(d.status == EvalStatus::Ok);
  CHECK(d.v.i == big - kMin64);
  Result n = fin(3, raw);
  CHECK(n.status == EvalStatus::Ok);
  CHECK(n.v.i == -big);
  CHECK(fin(4, raw).status == EvalStatus::IntegerOverflow);  // count() * 2 = 2^63
  CHECK(fin(5, raw).status == EvalStatus::IntegerOverflow);  // the key j + 1
  CHECK(fin(6, raw).v.i == big * 10);
  raw[1] = I(kInt128Max);
  CHECK(fin(0, raw).status == EvalStatus::IntegerOverflow);  // past 128 bits
  raw[1] = I(kInt128Min);
  CHECK(fin(3, raw).status == EvalStatus::IntegerOverflow);

  // The post select: s is wide, so is s * 2; m, c are not.
  REQUIRE(p.post.size() == 1);
  const auto& ex = p.post[0].exprs;
  std::vector<Value> row = {I(0), I(big + 1), I(kMax64), I(big), I(-5), I(kMax64), I(0), I(0)};
  auto post = [&](size_t k) {
    EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
    Value v = eval_program(ex[k].view(), row.data(), ctx);
    return Result{v, ctx.status, ex[k].result, ""};
  };
  CHECK(post(0).status == EvalStatus::Ok);
  CHECK(post(0).v.i == (big + 1) * 2);
  CHECK(post(1).v.i == kMax64);
  CHECK(post(2).status == EvalStatus::Ok);  // d is wide
  CHECK(post(4).status == EvalStatus::Ok);
  CHECK(post(4).v.i == 0);
  row[5] = I(kMax64);
  CHECK(post(3).status == EvalStatus::IntegerOverflow);  // c + 1, c from count() * 2
  // No scan program is wide.
  for (const Instr& in : p.scan.keys[0].code) CHECK(in.wide == 0);
}

TEST_CASE("comparisons", "[eval]") {
  Row r;
  r.set("i", I(3)).set("p", I(300)).set("q", I(2999)).set("x", F(2.5)).set("s", S("abc"))
      .set("t", S("abd")).set("b", I(1));
  CHECK(flt("i == p", r) == 1);  // 3 == 3.00
  CHECK(flt("i = 3", r) == 1);
  CHECK(flt("i <> 3", r) == 0);
  CHECK(flt("i != 4", r) == 1);
  CHECK(flt("p > q", r) == 1);  // 3.00 > 2.999
  CHECK(flt("i > x", r) == 1);
  CHECK(flt("x >= 2.5", r) == 1);
  CHECK(flt("x < 2.5", r) == 0);
  CHECK(flt("i <= 2.999", r) == 0);
  CHECK(flt("i > 2.999", r) == 1);
  CHECK(flt("s < t", r) == 1);
  CHECK(flt("s == \"abc\"", r) == 1);
  CHECK(flt("s == 'ab'", r) == 0);
  CHECK(flt("b == true", r) == 1);
  CHECK(flt("b", r) == 1);
  CHECK(flt("b != false", r) == 1);
  CHECK(flt("i == null", r) == -1);
  CHECK(flt("s == t", Row(r).set("t", N())) == -1);
  CHECK(flt("x > 1", Row(r).set("x", F(std::nan("")))) == 1);  // NaN sorts last
}

TEST_CASE("dates and timestamps compare with string literals", "[eval]") {
  Row r;
  r.set("d", I(19723)).set("ts", I(int128(19723) * 86400000000LL + 3600000000LL));  // 2024-01-01
  CHECK(flt("d == \"2024-01-01\"", r) == 1);
  CHECK(flt("d > \"2023-12-31\"", r) == 1);
  CHECK(flt("d < \"2023-12-31\"", r) == 0);
  CHECK(flt("ts > \"2024-01-01\"", r) == 1);  // a date literal against a timestamp
  CHECK(flt("ts == \"2024-01-01 01:00:00\"", r) == 1);
  CHECK(flt("d < ts", r) == 1);  // date widened to a timestamp
  CHECK(flt("d < \"2024-01-01 00:00:01\"", r) == 1);
}

TEST_CASE("three-valued logic", "[eval]") {
  Row r;
  r.set("b", I(1)).set("i", N());  // i > 0 is null
  CHECK(flt("b and i > 0", r) == -1);
  CHECK(flt("not b and i > 0", r) == 0);  // false and null = false
  CHECK(flt("b or i > 0", r) == 1);       // true or null = true
  CHECK(flt("not b or i > 0", r) == -1);
  CHECK(flt("not (i > 0)", r) == -1);
  CHECK(flt("i > 0 and i < 0", r) == -1);
  CHECK(flt("i is null", r) == 1);
  CHECK(flt("i is not null", r) == 0);
  CHECK(flt("(i > 0) is null", r) == 1);
  CHECK(flt("null and false") == 0);
  CHECK(flt("null or true") == 1);
  CHECK(flt("null") == -1);
  CHECK(flt("not true or not not true") == 1);  // not binds tighter than or
}

TEST_CASE("in and not in", "[eval]") {
  Row r;
  r.set("i", I(2)).set("s", S("b")).set("p", I(150));
  CHECK(flt("i in (1, 2, 3)", r) == 1);
  CHECK(flt("i in (4, 5)", r) == 0);
  CHECK(flt("i not in (4, 5)", r) == 1);
  CHECK(flt("i not in (2)", r) == 0);
  CHECK(flt("s in ('a', \"b\")", r) == 1);
  CHECK(flt("p in (1.5, 2)", r) == 1);
  CHECK(flt("i in (1, null)", r) == -1);  // like SQL: unknown, not false
  CHECK(flt("i in (2, null)", r) == 1);
  CHECK(flt("i not in (1, null)", r) == -1);
  CHECK(flt("i in (1, 2)", Row(r).set("i", N())) == -1);
}

TEST_CASE("string functions", "[eval]") {
  Row r;
  r.set("s", S("Hello, World")).set("t", S("World"));
  Result lo = sel("lower(s)", r);
  CHECK(lo.type.type == Type::String);
  CHECK(lo.str() == "hello, world");
  CHECK(sel("upper(s)", r).str() == "HELLO, WORLD");
  CHECK(sel("upper(\"\xc3\xa9t\xc3\xa9\")", r).str() == "\xc3\xa9T\xc3\xa9");  // ASCII only
  CHECK(sel("len(s)", r).v.i == 12);
  CHECK(sel("len(\"\xc3\xa9\")", r).v.i == 2);  // bytes
  CHECK(sel("len(s)", Row(r).set("s", N())).v.null);
  CHECK(sel("lower(s)", Row(r).set("s", N())).v.null);
  CHECK(flt("contains(s, t)", r) == 1);
  CHECK(flt("contains(s, \"world\")", r) == 0);
  CHECK(flt("contains(s, \"\")", r) == 1);
  CHECK(flt("starts_with(s, \"Hell\")", r) == 1);
  CHECK(flt("starts_with(s, \"ello\")", r) == 0);
  CHECK(flt("ends_with(s, t)", r) == 1);
  CHECK(flt("ends_with(t, s)", r) == 0);  // needle longer than the haystack
  CHECK(flt("contains(s, t)", Row(r).set("t", N())) == -1);
  CHECK(flt("lower(s) == \"hello, world\"", r) == 1);
  CHECK(flt("contains(s, \"a\\\"b\")", Row(r).set("s", S("xa\"by"))) == 1);  // escapes

  SECTION("scratch overflow is reported") {
    Plan p = build_plan("select upper(s)", schema());
    Value slot = S("abcdef");
    char small[4];
    EvalContext ctx = make_eval_context(small, sizeof small);
    Value v = eval_program(p.scan.outputs[0].view(), &slot, ctx);
    CHECK(ctx.status == EvalStatus::ScratchFull);
    CHECK(v.null);
  }
}

TEST_CASE("abs, round, coalesce", "[eval]") {
  Row r;
  r.set("i", I(-1234)).set("p", I(-1255)).set("q", I(12345)).set("x", F(-2.5));
  CHECK(sel("abs(i)", r).v.i == 1234);
  CHECK(sel("abs(p)", r).type == T(Type::Decimal, 2));
  CHECK(sel("abs(p)", r).v.i == 1255);
  CHECK(sel("abs(x)", r).v.f == 2.5);

  Result a = sel("round(p, 1)", r);  // -12.55 -> -12.6 (half away from zero)
  CHECK(a.type == T(Type::Decimal, 1));
  CHECK(a.v.i == -126);
  Result b = sel("round(p)", r);  // -12.55 -> -13
  CHECK(b.type == T(Type::Decimal, 0));
  CHECK(b.v.i == -13);
  Result c = sel("round(q, 5)", r);  // more digits than the scale: unchanged
  CHECK(c.type == T(Type::Decimal, 3));
  CHECK(c.v.i == 12345);
  Result d = sel("round(q, -1)", r);  // 12.345 -> 10
  CHECK(d.type == T(Type::Decimal, 0));
  CHECK(d.v.i == 10);
  Result e = sel("round(i, -2)", r);  // -1234 -> -1200
  CHECK(e.type.type == Type::Int);
  CHECK(e.v.i == -1200);
  CHECK(sel("round(i, -1)", Row(r).set("i", I(-1235))).v.i == -1240);
  CHECK(sel("round(i, 2)", r).v.i == -1234);
  CHECK(sel("round(x)", r).v.f == -3.0);
  CHECK(sel("round(x, 1)", r).v.f == -2.5);
  CHECK(sel("round(1.25, 1)").v.i == 13);
  CHECK(sel("round(3.14159e0, 2)").v.f == Approx(3.14));
  CHECK(sel("round(x)", Row(r).set("x", N())).v.null);

  Row n;
  n.set("i", N()).set("j", I(5)).set("p", I(250));
  Result co = sel("coalesce(i, j)", n);
  CHECK(co.type.type == Type::Int);
  CHECK(co.v.i == 5);
  Result cd = sel("coalesce(i, p)", n);  // int widened to decimal(2)
  CHECK(cd.type == T(Type::Decimal, 2));
  CHECK(cd.v.i == 250);
  CHECK(sel("coalesce(i, j)", Row(n).set("i", I(3))).v.i == 3);
  CHECK(sel("coalesce(i, null)", n).v.null);
  CHECK(sel("coalesce(i, i, 7)", n).v.i == 7);
  Result cs = sel("coalesce(s, \"none\")", Row(n).set("s", N()));
  CHECK(cs.str() == "none");
}

TEST_CASE("programs built from the plan evaluate every stage", "[eval]") {
  SECTION("select substitutes into later scan programs") {
    Plan p = build_plan("select i * 2 as k, s | filter k > 5 | select s, k + 1 as m",
                        schema());
    REQUIRE(p.scan.used_columns == std::vector<int>{0, 6});
    Value slots[] = {I(3), S("z")};
    EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
    CHECK(eval_program(p.scan.filter.view(), slots, ctx).i == 1);
    REQUIRE(p.scan.outputs.size() == 2);
    CHECK(eval_program(p.scan.outputs[1].view(), slots, ctx).i == 7);
    Value s = eval_program(p.scan.outputs[0].view(), slots, ctx);
    CHECK(std::string(s.s.ptr, s.s.len) == "z");
  }
  SECTION("finalize reads keys then aggregates") {
    Plan p = build_plan("groupby s | agg max(i) - min(j) as range, sum(p) / count() as m, s",
                        schema());
    // scan_output: s, max(i), min(j), sum(p), count()
    REQUIRE(p.scan_output.size() == 5);
    Value row[] = {S("k"), I(10), I(4), I(1000), I(4)};
    EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
    CHECK(eval_program(p.finalize[0].view(), row, ctx).i == 6);
    CHECK(eval_program(p.finalize[1].view(), row, ctx).f == 2.5);
    Value k = eval_program(p.finalize[2].view(), row, ctx);
    CHECK(std::string(k.s.ptr, k.s.len) == "k");
  }
  SECTION("post stages read their input row") {
    Plan p = build_plan("groupby s | agg sum(i) as tot | filter tot > 10 | select tot * 2 as d",
                        schema());
    REQUIRE(p.post.size() == 2);
    Value row[] = {S("a"), I(11)};
    EvalContext ctx = make_eval_context(g_scratch, sizeof g_scratch);
    CHECK(eval_program(p.post[0].exprs[0].view(), row, ctx).i == 1);
    CHECK(eval_program(p.post[1].exprs[0].view(), row, ctx).i == 22);
  }
}

TEST_CASE("hand-built programs", "[eval]") {
  // (slot0 + 1) as a raw program, and a string constant resolved against the pool.
  Instr code[] = {{Op::Column, Type::Int, 0, Type::Int, 0, 0},
                  {Op::Const, Type::Int, 0, Type::Int, 0, 0},
                  {Op::Add, Type::Int, 0, Type::Int, 0, 0}};
  Value consts[] = {I(1)};
  ProgramView pv{code, 3, consts, ""};
  Value slot = I(41);
  EvalContext ctx = make_eval_context(nullptr, 0);
  CHECK(eval_program(pv, &slot, ctx).i == 42);

  Instr scode[] = {{Op::Const, Type::String, 0, Type::String, 0, 0}};
  Value sconst = Value::of_str(reinterpret_cast<const char*>(uintptr_t{3}), 2);
  ProgramView sv{scode, 1, &sconst, "xyzab"};
  Value s = eval_program(sv, nullptr, ctx);
  CHECK(std::string(s.s.ptr, s.s.len) == "ab");

  // Cast decimal(1) -> decimal(3) and date -> timestamp.
  Instr cast[] = {{Op::Column, Type::Decimal, 1, Type::Decimal, 1, 0},
                  {Op::Cast, Type::Decimal, 3, Type::Decimal, 1, 0}};
  ProgramView cv{cast, 2, nullptr, ""};
  Value d = I(-15);
  CHECK(eval_program(cv, &d, ctx).i == -1500);
  Instr dt[] = {{Op::Column, Type::Date, 0, Type::Date, 0, 0},
                {Op::Cast, Type::Timestamp, 0, Type::Date, 0, 0}};
  ProgramView dv{dt, 2, nullptr, ""};
  Value day = I(1);
  CHECK(eval_program(dv, &day, ctx).i == 86400000000LL);
  CHECK(ctx.status == EvalStatus::Ok);
}
