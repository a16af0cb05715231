// case / if (lazy: only the chosen value is evaluated), between, casts and
// try_cast (DuckDB's answers where they agree with the tool's reading of
// values), ||, replace, and day arithmetic on dates, with their usage errors.
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "eval_select.hpp"
#include "plan_error.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;
using testing::eval_select;

namespace {

ColumnType type_of(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

const std::vector<OutputColumn> kSchema = {
    {"a", type_of(Type::Int)},   {"b", type_of(Type::Int)},       {"s", type_of(Type::String)},
    {"f", type_of(Type::Float)}, {"d", type_of(Type::Date)},      {"t", type_of(Type::Timestamp)},
    {"m", type_of(Type::Decimal, 2)}};

struct Row {
  std::vector<Value> values = std::vector<Value>(kSchema.size(), Value::make_null());
  std::string s;
};

// The text of `expr` on a row of a, b and s ("null" for null, "!" for a failed row).
std::string text_of(const std::string& expr, const Row& r) {
  const testing::Evaluated e = eval_select(expr, kSchema, r.values);
  if (e.status != EvalStatus::Ok) return "!";
  return e.value.null ? "null" : e.text;
}

Row row_of(const Value& a, const Value& b, const std::string* s = nullptr) {
  Row r;
  r.values[0] = a;
  r.values[1] = b;
  if (s) {
    r.s = *s;
    r.values[2] = Value::of_str(r.s.data(), static_cast<uint32_t>(r.s.size()));
  }
  return r;
}

std::string one(const std::string& expr) { return text_of(expr, Row{}); }

}  // namespace

TEST_CASE("case and if choose the first true branch, null without else, and evaluate only it", "[conditions]") {
  std::mt19937_64 rng(11);
  const Value n = Value::make_null();
  for (int iter = 0; iter < 3000; ++iter) {
    const bool an = rng() % 5 == 0, bn = rng() % 5 == 0;
    const int64_t a = static_cast<int64_t>(rng() % 9) - 4, b = static_cast<int64_t>(rng() % 9) - 4;
    const Row r = row_of(an ? n : Value::of_int(a), bn ? n : Value::of_int(b));
    INFO("a " << (an ? "null" : std::to_string(a)) << ", b " << (bn ? "null" : std::to_string(b)));
    // A null condition is not true: it falls through, as in SQL.
    const std::string expect = !an && !bn && a > b ? std::to_string(a) : !an && !bn && a < b ? std::to_string(b) : "0";
    REQUIRE(text_of("case when a > b then a when a < b then b else 0 end", r) == expect);
    REQUIRE(text_of("case when a > b then a end", r) == (!an && !bn && a > b ? std::to_string(a) : "null"));
    REQUIRE(text_of("if(a >= 0, a, -a)", r) == (an ? "null" : std::to_string(a < 0 ? -a : a)));
    const std::string word = an ? "many" : a == 1 ? "one" : a == 2 ? "two" : "many";
    REQUIRE(text_of("case a when 1 then 'one' when 2 then 'two' else 'many' end", r) == word);
    REQUIRE(text_of("a between b and 3", r) == (an || bn ? (!an && a > 3 ? "false" : "null")
                                                         : (a >= b && a <= 3 ? "true" : "false")));
  }
  // The branch not taken is not evaluated: its overflow does not fail the row.
  CHECK(text_of("if(a > 1, 0, a * 9223372036854775807)", row_of(Value::of_int(2), n)) == "0");
  CHECK(text_of("if(a > 1, 0, a * 9223372036854775807)", row_of(Value::of_int(-2), n)) == "!");
  CHECK(text_of("case when a > 1 then 1.5 else a end", row_of(Value::of_int(0), n)) == "0.0");  // one type
  CHECK(one("case when null then 1 else 2 end") == "2");
  CHECK(one("10 not between 1 and 9") == "true");
}

TEST_CASE("int results of case pass 64 bits only where a branch may", "[conditions]") {
  const std::vector<OutputColumn> schema = {{"k", type_of(Type::Int)}, {"a", type_of(Type::Int)}};
  const Plan plan = build_plan("groupby k | agg if(k > 0, sum(a), 0) * 2 as x, if(k > 0, 1, 0) * 2 as y", schema);
  REQUIRE(plan.finalize.size() == 2);
  CHECK(plan.finalize[0].code.back().wide == 1);  // the sum of ints is exact in 128 bits
  CHECK(plan.finalize[1].code.back().wide == 0);
}

TEST_CASE("casts read strings as the type's values, round numbers, and fail or give null", "[casts]") {
  // DuckDB 1.5 gives the same.
  CHECK(one("cast(' 12' as int)") == "12");
  CHECK(one("cast('1e3' as int)") == "1000");
  CHECK(one("cast('12.7' as int)") == "13");
  CHECK(one("cast('-12.5' as bigint)") == "-13");
  CHECK(one("cast(2.5 as int)") == "3");
  CHECK(one("cast(-2.5 as int)") == "-3");
  CHECK(one("cast(3.5e0 as int)") == "4");
  CHECK(one("cast(12.345 as decimal(1))") == "12.3");
  CHECK(one("cast('12.35' as decimal(10, 1))") == "12.4");
  CHECK(one("cast('1e3' as float)") == "1000.0");
  CHECK(one("cast('true' as bool)") == "true");
  CHECK(one("cast('yes' as boolean)") == "true");
  CHECK(one("cast('0' as bool)") == "false");
  CHECK(one("cast(' 2020-01-02 03:04:05' as date)") == "2020-01-02");
  CHECK(one("cast('2020-01-02' as timestamp)") == "2020-01-02T00:00:00");
  CHECK(one("cast(cast('2020-01-02 23:59:59' as timestamp) as date)") == "2020-01-02");
  CHECK(one("cast(1.25 as string)") == "1.25");
  CHECK(one("cast(1e0 as varchar)") == "1.0");
  CHECK(one("cast(true as text)") == "true");
  CHECK(one("cast(7 as float)") == "7.0");
  CHECK(one("cast(0 as bool)") == "false");
  CHECK(one("cast(null as int)") == "null");
  // A value that does not convert fails the row; try_cast gives null.
  CHECK(one("cast('12x' as int)") == "!");
  CHECK(one("try_cast('12x' as int)") == "null");
  CHECK(one("cast('' as date)") == "!");
  CHECK(one("try_cast('2020-02-30' as date)") == "null");
  CHECK(one("cast(1e20 as int)") == "!");
  CHECK(one("try_cast(1e20 as int)") == "null");
  CHECK(one("try_cast('9223372036854775808' as int)") == "null");
  CHECK(one("cast('9223372036854775807' as int)") == "9223372036854775807");
  CHECK(one("try_cast('maybe' as bool)") == "null");
  // Column values.
  Row r;
  r.values[4] = Value::of_int(18263);  // 2020-01-02
  r.values[5] = Value::of_int(int128(18262) * 86400000000LL + 1500000);
  r.values[6] = Value::of_int(-1250);  // decimal(2): -12.50
  r.values[3] = Value::of_float(-0.5);
  CHECK(text_of("cast(d as string)", r) == "2020-01-02");
  CHECK(text_of("cast(t as string)", r) == "2020-01-01T00:00:01.500000");
  CHECK(text_of("cast(m as string)", r) == "-12.50");
  CHECK(text_of("cast(m as int)", r) == "-13");
  CHECK(text_of("cast(f as int)", r) == "0");  // a double rounds half to even, as DuckDB's
  CHECK(text_of("cast(d as timestamp)", r) == "2020-01-02T00:00:00");
  CHECK(text_of("cast(t as date)", r) == "2020-01-01");
}

// Text as a decimal of scale s by moving its point on the digits themselves
// and rounding half away from zero: "[-]digits.digits" alone, at most 37 digits.
std::string shifted_text(const std::string& text, int s) {
  const bool neg = text[0] == '-';
  const std::string body = neg ? text.substr(1) : text;
  const size_t dot = body.find('.');
  std::string whole = body.substr(0, dot), frac = dot == std::string::npos ? "" : body.substr(dot + 1);
  while (frac.size() < static_cast<size_t>(s) + 1) frac += '0';
  std::string digits = whole + frac.substr(0, static_cast<size_t>(s));
  if (frac[static_cast<size_t>(s)] >= '5') {  // add one unit, carrying
    size_t i = digits.size();
    while (i > 0 && digits[i - 1] == '9') digits[--i] = '0';
    if (i == 0) digits.insert(digits.begin(), '1');
    else ++digits[i - 1];
  }
  const size_t lead = digits.find_first_not_of('0');
  digits = lead == std::string::npos ? "0" : digits.substr(lead);
  if (s > 0) {
    while (digits.size() <= static_cast<size_t>(s)) digits.insert(digits.begin(), '0');
    digits.insert(digits.size() - static_cast<size_t>(s), ".");
  }
  return (neg && digits.find_first_not_of("0.") != std::string::npos ? "-" : "") + digits;
}

TEST_CASE("casts of text to decimals and ints are exact past a double's digits", "[casts]") {
  CHECK(one("cast('-857351952225.88829913' as decimal(6))") == "-857351952225.888299");
  CHECK(one("cast('12345678901234567.89' as decimal(2))") == "12345678901234567.89");
  CHECK(one("cast('1e30' as decimal(2))") == "1000000000000000000000000000000.00");
  CHECK(one("cast('1.2345678901234567890123e20' as decimal(1))") == "123456789012345678901.2");
  CHECK(one("cast('9223372036854775807.4' as int)") == "9223372036854775807");
  CHECK(one("try_cast('-9223372036854775808.5' as int)") == "null");  // rounds away, past int64
  CHECK(one("cast('-9223372036854775808.4' as int)") == "-9223372036854775808");
  CHECK(one("cast('2.5e-1' as decimal(1))") == "0.3");
  CHECK(one("cast('-0.05' as decimal(1))") == "-0.1");
  CHECK(one("cast('0.000000000000000000000000000000000000000000049' as decimal(2))") == "0.00");
  CHECK(one("cast('1e-400' as decimal(2))") == "0.00");
  CHECK(one("try_cast('1e400' as decimal(2))") == "null");
  CHECK(one("cast('12345678901234567890123456789012345678.5' as decimal(0))") ==
        "12345678901234567890123456789012345679");  // the 39th digit rounds
  CHECK(one("try_cast('99999999999999999999999999999999999999.5' as decimal(0))") == "null");
  CHECK(one("try_cast('1e38' as decimal(0))") == "null");
  for (const char* bad : {"inf", "nan", ".", "1e", "1e+", "--1", "1.2.3", "e5"})
    CHECK(one(std::string("try_cast('") + bad + "' as decimal(2))") == "null");
  // Random numbers of up to 37 digits against the digits moved by hand.
  std::mt19937_64 rng(7);
  for (int k = 0; k < 3000; ++k) {
    const int whole = static_cast<int>(rng() % 20), frac = static_cast<int>(rng() % 18);
    std::string text = rng() % 2 ? "-" : "";
    text += std::to_string(1 + rng() % 9);
    for (int i = 0; i < whole; ++i) text += static_cast<char>('0' + rng() % 10);
    if (frac) text += ".";
    for (int i = 0; i < frac; ++i) text += static_cast<char>('0' + rng() % 10);
    const int s = static_cast<int>(rng() % 17);
    INFO(text << " as decimal(" << s << ")");
    CHECK(one("cast('" + text + "' as decimal(" + std::to_string(s) + "))") == shifted_text(text, s));
  }
}

TEST_CASE("casts of floats to decimals and ints take the double's exact value", "[casts]") {
  CHECK(one("cast(1e5 as decimal(18))") == "100000.000000000000000000");
  CHECK(one("cast(123456789e0 as decimal(12))") == "123456789.000000000000");
  CHECK(one("cast(1e-1 as decimal(18))") == "0.100000000000000006");  // 0.1 is 0.10000000000000000555111...
  CHECK(one("cast(-2.675e0 as decimal(2))") == "-2.67");  // -2.67499999999999982236431605997495353221893310546875
  CHECK(one("cast(5e-1 as int)") == "0");   // half to even, as DuckDB casts a double to an int
  CHECK(one("cast(1.5e0 as int)") == "2");
  CHECK(one("cast(-2.5e0 as int)") == "-2");
  CHECK(one("cast(1.25e0 as decimal(1))") == "1.3");  // half away from zero to a decimal
  CHECK(one("cast(1e300 as decimal(2))") == "!");
  CHECK(one("try_cast(1e300 as int)") == "null");
  CHECK(one("cast(4.9e-324 as decimal(18))") == "0.000000000000000000");
  CHECK(one("try_cast(cast('nan' as float) as int)") == "null");
  // Dyadic values k / 2^j, whose value at scale s is k * 10^s / 2^j exactly in 128 bits.
  std::mt19937_64 rng(11);
  for (int n = 0; n < 3000; ++n) {
    const int64_t k = static_cast<int64_t>(rng() % (1 << 20)) - (1 << 19);
    const int j = static_cast<int>(rng() % 21), s = static_cast<int>(rng() % 19);
    const double x = static_cast<double>(k) / static_cast<double>(int64_t{1} << j);
    int128 scaled = k;
    for (int i = 0; i < s; ++i) scaled *= 10;
    const int128 den = int128{1} << j;
    int128 q = scaled / den, r = scaled % den;
    if (r < 0) r = -r;
    if (2 * r >= den) q += scaled < 0 ? -1 : 1;
    int128 got = 0;
    REQUIRE(detail::float_to_scaled(x, s, false, &got));
    INFO(k << " / 2^" << j << " at scale " << s);
    CHECK(got == q);
  }
}

TEST_CASE("cast usage errors name the types", "[casts]") {
  auto error_of = [](const std::string& p) { return testing::plan_error(p, kSchema); };
  CHECK(error_of("select cast(a as int), try_cast(s as decimal(4)), cast(d as timestamp)").empty());
  CHECK(error_of("select cast(d as int)").find("cannot cast date column 'd' to int") != std::string::npos);
  CHECK(error_of("select cast(a as decimal)").find("like cast(x as decimal(2))") != std::string::npos);
  CHECK(error_of("select cast(a as long)").find("unknown type 'long'") != std::string::npos);
  CHECK(error_of("select cast(a int)").find("expected 'as' and a type") != std::string::npos);
  CHECK(error_of("select cast(a as int(3))").find("the type int takes no digits") != std::string::npos);
  CHECK(error_of("select cast(a as decimal(1, 2, 3))").find("expected ')'") != std::string::npos);
}

TEST_CASE("|| joins text of any value; replace replaces every match", "[strings]") {
  CHECK(one("'a' || 'b' || 'c'") == "abc");
  CHECK(one("'a' || null") == "null");
  CHECK(one("1 || 'x'") == "1x");
  CHECK(one("'v' || 1.50 || '/' || 2e0") == "v1.50/2.0");
  CHECK(one("'a' || 1 + 2") == "a3");  // + binds tighter
  CHECK(one("'ab' || 'c' == 'abc'") == "true");  // and || tighter than ==
  CHECK(one("replace('aaa', 'a', 'bb')") == "bbbbbb");
  CHECK(one("replace('abc', '', 'x')") == "abc");
  CHECK(one("replace('abcabc', 'bc', '')") == "aa");
  CHECK(one("replace(null, 'a', 'b')") == "null");
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 5000; ++iter) {
    std::string s(rng() % 10, ' '), from(1 + rng() % 2, ' '), to(rng() % 3, ' ');
    for (std::string* x : {&s, &from, &to})
      for (char& c : *x) c = "ab"[rng() % 2];
    std::string expect;
    for (size_t i = 0; i < s.size();) {
      if (s.compare(i, from.size(), from) == 0) {
        expect += to;
        i += from.size();
      } else {
        expect += s[i++];
      }
    }
    const Row r = row_of(Value::make_null(), Value::make_null(), &s);
    INFO("replace('" << s << "', '" << from << "', '" << to << "')");
    REQUIRE(text_of("replace(s, '" + from + "', '" + to + "')", r) == (expect.empty() ? "" : expect));
  }
}

TEST_CASE("dates add and subtract days; two dates subtract to days", "[dates]") {
  CHECK(one("cast('2020-01-31' as date) + 1") == "2020-02-01");
  CHECK(one("1 + cast('2020-02-28' as date)") == "2020-02-29");
  CHECK(one("cast('2020-03-01' as date) - 1") == "2020-02-29");
  CHECK(one("cast('2020-03-01' as date) - cast('2020-01-01' as date)") == "60");
  CHECK(one("cast('1969-12-31' as date) - 365") == "1968-12-31");
  CHECK(one("cast('9999-12-31' as date) + 1") == "!");
  CHECK(one("cast('0000-01-01' as date) - 1") == "!");
  auto error_of = [](const std::string& p) { return testing::plan_error(p, kSchema); };
  CHECK(error_of("select d + a, a + d, d - a, d - d").empty());
  CHECK(error_of("select t + 1").find("takes a date and a whole number of days") != std::string::npos);
  CHECK(error_of("select 1 - d").find("cannot subtract date column 'd' from") != std::string::npos);
  CHECK(error_of("select d + 1.5").find("takes a date and a whole number of days") != std::string::npos);
  CHECK(error_of("select d + d").find("cannot add") != std::string::npos);
}
