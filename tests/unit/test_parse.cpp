// Value parsers of the shared core (core/parse.hpp): edge cases inline, and parse_float against
// std::from_chars on seeded random text.
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "catch.hpp"
#include "cpu/fast_value.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/core/parse.hpp"

using namespace warpcsv;

namespace {

bool int_of(const std::string& s, int64_t* v) {
  return parse_int64(s.data(), static_cast<uint32_t>(s.size()), v);
}
bool dec_of(const std::string& s, int scale, int64_t* v) {
  return parse_decimal(s.data(), static_cast<uint32_t>(s.size()), scale, v);
}
int scale_of(const std::string& s) {
  return decimal_text_scale(s.data(), static_cast<uint32_t>(s.size()));
}
bool flt_of(const std::string& s, double* v) {
  return parse_float(s.data(), static_cast<uint32_t>(s.size()), v);
}
uint64_t bits_of(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
// Reference: std::from_chars (no leading '+'; out-of-range answers as strtod would: +-inf / +-0).
bool reference_float(const std::string& s, double* v) {
  const char* b = s.data();
  const char* e = b + s.size();
  bool plus = b != e && *b == '+';
  if (plus) ++b;
  if (b != e && (*b == '+' || (plus && *b == '-'))) return false;
  auto r = std::from_chars(b, e, *v);
  if (r.ec == std::errc::result_out_of_range) {
    *v = std::strtod(s.c_str(), nullptr);
    return r.ptr == e;
  }
  return r.ec == std::errc() && r.ptr == e;
}
bool date_of(const std::string& s, int64_t* d) {
  return parse_date(s.data(), static_cast<uint32_t>(s.size()), d);
}
bool ts_of(const std::string& s, int64_t* us) {
  return parse_timestamp(s.data(), static_cast<uint32_t>(s.size()), us);
}

}  // namespace

TEST_CASE("parse_int64 accepts signed digits and rejects the rest") {
  int64_t v = 0;
  CHECK((int_of("0", &v) && v == 0));
  CHECK((int_of("-17", &v) && v == -17));
  CHECK((int_of("+42", &v) && v == 42));
  CHECK((int_of("007", &v) && v == 7));
  CHECK((int_of("9223372036854775807", &v) && v == INT64_MAX));
  CHECK((int_of("-9223372036854775808", &v) && v == INT64_MIN));
  CHECK_FALSE(int_of("9223372036854775808", &v));
  CHECK_FALSE(int_of("-9223372036854775809", &v));
  CHECK_FALSE(int_of("99999999999999999999", &v));
  for (const char* bad : {"", "-", "+", "1.0", " 1", "1 ", "1e3", "0x10", "1,000", "--1", "+-1"})
    CHECK_FALSE(int_of(bad, &v));
  // Never reads past n: the digits after the length are not part of the field.
  const char buf[] = "12345";
  CHECK((parse_int64(buf, 2, &v) && v == 12));
}

TEST_CASE("parse_decimal scales exactly") {
  int64_t v = 0;
  CHECK((dec_of("12.34", 2, &v) && v == 1234));
  CHECK((dec_of("12.3", 2, &v) && v == 1230));
  CHECK((dec_of("12", 2, &v) && v == 1200));
  CHECK((dec_of("-0.5", 3, &v) && v == -500));
  CHECK((dec_of(".5", 1, &v) && v == 5));
  CHECK((dec_of("5.", 1, &v) && v == 50));
  CHECK((dec_of("+1.50", 1, &v) && v == 15));  // extra zeros are fine
  CHECK((dec_of("1.2300000", 2, &v) && v == 123));
  CHECK_FALSE(dec_of("1.234", 2, &v));  // would lose a digit
  CHECK((dec_of("922337203685477580.7", 1, &v) && v == INT64_MAX));
  CHECK((dec_of("-922337203685477580.8", 1, &v) && v == INT64_MIN));
  CHECK_FALSE(dec_of("922337203685477580.8", 1, &v));
  CHECK_FALSE(dec_of("92233720368547758", 3, &v));  // overflows while scaling up
  CHECK((dec_of("0.000000000000000001", 18, &v) && v == 1));
  CHECK_FALSE(dec_of("1", 19, &v));
  CHECK_FALSE(dec_of("1", -1, &v));
  for (const char* bad : {"", ".", "-", "-.", "1..2", "1.2.3", "1e2", "abc", " 1.0", "1,5"})
    CHECK_FALSE(dec_of(bad, 2, &v));
}

TEST_CASE("decimal_text_scale counts fraction digits of exact decimal text") {
  CHECK(scale_of("1.50") == 2);
  CHECK(scale_of("42") == 0);
  CHECK(scale_of("-0.001") == 3);
  CHECK(scale_of(".5") == 1);
  CHECK(scale_of("5.") == 0);
  CHECK(scale_of("123456789012345678") == 0);       // 18 significant digits
  CHECK(scale_of("1234567890123456789") == -1);     // 19
  CHECK(scale_of("0.000000000000000001") == 18);    // leading zeros are not significant
  CHECK(scale_of("0.0000000000000000001") == -1);   // scale 19
  CHECK(scale_of("1234567890.12345678") == 8);
  CHECK(scale_of("1234567890.123456789") == -1);
  for (const char* bad : {"", ".", "+", "1e5", "1.2.3", "abc", "1,000", "nan"})
    CHECK(scale_of(bad) == -1);
}

TEST_CASE("parse_float edge cases") {
  double v = 0;
  CHECK((flt_of("0", &v) && v == 0 && !std::signbit(v)));
  CHECK((flt_of("-0.0", &v) && v == 0 && std::signbit(v)));
  CHECK((flt_of("1.5", &v) && v == 1.5));
  CHECK((flt_of(".5", &v) && v == 0.5));
  CHECK((flt_of("5.", &v) && v == 5.0));
  CHECK((flt_of("+2e3", &v) && v == 2000.0));
  CHECK((flt_of("1E-2", &v) && v == 0.01));
  CHECK((flt_of("0.1", &v) && v == 0.1));
  CHECK((flt_of("9007199254740993", &v) && v == 9007199254740992.0));  // halfway: to even
  CHECK((flt_of("9007199254740995", &v) && v == 9007199254740996.0));
  CHECK((flt_of("9007199254740993.0000000000000000000001", &v) && v == 9007199254740994.0));
  CHECK((flt_of("1.7976931348623157e308", &v) && v == std::numeric_limits<double>::max()));
  CHECK((flt_of("1e309", &v) && std::isinf(v) && v > 0));
  CHECK((flt_of("-1e400", &v) && std::isinf(v) && v < 0));
  CHECK((flt_of("4.9406564584124654e-324", &v) && v == std::numeric_limits<double>::denorm_min()));
  CHECK((flt_of("2.4703282292062327e-324", &v) && v == 0.0));  // just below half: to zero
  CHECK((flt_of("2.4703282292062328e-324", &v) && v == std::numeric_limits<double>::denorm_min()));
  CHECK((flt_of("1e-400", &v) && v == 0.0));
  CHECK((flt_of("2.2250738585072011e-308", &v) && bits_of(v) == 0x000FFFFFFFFFFFFFULL));
  CHECK((flt_of("0e999999999999", &v) && v == 0.0));
  CHECK((flt_of("1e999999999999", &v) && std::isinf(v)));
  CHECK((flt_of("1e-999999999999", &v) && v == 0.0));
  CHECK((flt_of("inf", &v) && std::isinf(v) && v > 0));
  CHECK((flt_of("-Infinity", &v) && std::isinf(v) && v < 0));
  CHECK((flt_of("NaN", &v) && std::isnan(v)));
  // 800+ digit input: a value just above the halfway point between 1 and its successor.
  std::string longer = "1.00000000000000011102230246251565404236316680908203125";
  CHECK((flt_of(longer, &v) && v == 1.0));  // exactly halfway: to even
  CHECK((flt_of(longer + std::string(900, '0') + "1", &v) && v == std::nextafter(1.0, 2.0)));
  CHECK((flt_of(longer + std::string(900, '0'), &v) && v == 1.0));
  for (const char* bad : {"", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1,5", " 1", "1 ", "0x1p3",
                          "infinit", "nana", "1e5x", "--1", "1d"})
    CHECK_FALSE(flt_of(bad, &v));
}

TEST_CASE("parse_float matches from_chars on seeded random text") {
  std::mt19937_64 rng(20240601);
  std::string s;
  uint64_t mismatches = 0, checked = 0;
  std::string first_bad;
  auto check = [&](const std::string& text) {
    double want = 0, got = 0;
    bool ok_want = reference_float(text, &want);
    bool ok_got = flt_of(text, &got);
    ++checked;
    if (ok_want != ok_got || (ok_got && bits_of(want) != bits_of(got))) {
      if (mismatches++ == 0) first_bad = text;
    }
  };
  const int kCount = 2000000;
  for (int k = 0; k < kCount; ++k) {
    s.clear();
    if (rng() % 4 == 0) s += (rng() % 2) ? '-' : '+';
    int len = 1 + static_cast<int>(rng() % 25);
    int dot = static_cast<int>(rng() % (len + 2)) - 1;  // -1: no point
    for (int j = 0; j < len; ++j) {
      if (j == dot) s += '.';
      s += static_cast<char>('0' + rng() % 10);
    }
    if (rng() % 3 != 0) {
      s += (rng() % 2) ? 'e' : 'E';
      int e = static_cast<int>(rng() % 701) - 350;
      s += std::to_string(e);
    }
    check(s);
  }
  // Exact halfway points between neighbouring doubles (normal and subnormal), and the values just
  // beside them: the cases where a shortcut would round the wrong way.
  char buf[1200];
  for (int k = 0; k < 20000; ++k) {
    uint64_t b = rng() & 0x7FEFFFFFFFFFFFFFULL;
    if (k % 4 == 0) b &= 0x000FFFFFFFFFFFFFULL;  // subnormals
    double a;
    std::memcpy(&a, &b, sizeof a);
    long double mid = (static_cast<long double>(a) + std::nextafter(a, INFINITY)) / 2;
    std::snprintf(buf, sizeof buf, "%.800Le", mid);
    std::string t = buf;
    size_t epos = t.find('e');
    std::string mant = t.substr(0, epos), ex = t.substr(epos);
    while (mant.back() == '0') mant.pop_back();
    check(mant + ex);
    check(mant + "0000001" + ex);
    // Just below: decrement the last digit (it is 5 for an exact binary midpoint).
    std::string below = mant;
    below.back() = static_cast<char>(below.back() - 1);
    check(below + "9999" + ex);
  }
  // Integers around 2^53 and around powers of ten.
  for (uint64_t x = (1ULL << 53) - 50; x < (1ULL << 53) + 50; ++x) check(std::to_string(x));
  for (int e = -330; e <= 310; ++e) {
    check("1e" + std::to_string(e));
    check("9.999999999999999999e" + std::to_string(e));
    check("5e" + std::to_string(e));
  }
  INFO("first mismatch: " << first_bad);
  CHECK(mismatches == 0);
  CHECK(checked > static_cast<uint64_t>(kCount));
}

TEST_CASE("parse_bool") {
  bool b = false;
  CHECK((parse_bool("TRUE", 4, &b) && b));
  CHECK((parse_bool("False", 5, &b) && !b));
  CHECK_FALSE(parse_bool("1", 1, &b));
  CHECK_FALSE(parse_bool("yes", 3, &b));
  CHECK_FALSE(parse_bool("truex", 5, &b));
  CHECK_FALSE(parse_bool("tru", 3, &b));
}

TEST_CASE("parse_date validates the calendar") {
  int64_t d = 0;
  CHECK((date_of("1970-01-01", &d) && d == 0));
  CHECK((date_of("1969-12-31", &d) && d == -1));
  CHECK((date_of("2000-02-29", &d) && d == 11016));
  CHECK((date_of("2024-03-01", &d) && d == 19783));
  CHECK((date_of("0001-01-01", &d) && d == -719162));
  CHECK((date_of("9999-12-31", &d) && d == 2932896));
  CHECK_FALSE(date_of("1900-02-29", &d));  // not a leap year
  CHECK_FALSE(date_of("2023-02-29", &d));
  CHECK_FALSE(date_of("2023-04-31", &d));
  CHECK_FALSE(date_of("2023-13-01", &d));
  CHECK_FALSE(date_of("2023-00-10", &d));
  CHECK_FALSE(date_of("2023-01-00", &d));
  for (const char* bad : {"", "2023-1-01", "2023/01/01", "23-01-01", "2023-01-011", "2023-01-0a",
                          "2023-01-01 ", "20230101"})
    CHECK_FALSE(date_of(bad, &d));
  // days_to_civil inverts days_from_civil over a wide range.
  for (int64_t k = -800000; k <= 3000000; k += 997) {
    int y;
    unsigned m, dd;
    days_to_civil(k, &y, &m, &dd);
    CHECK(days_from_civil(y, m, dd) == k);
  }
  int y;
  unsigned m, dd;
  days_to_civil(19783, &y, &m, &dd);
  CHECK((y == 2024 && m == 3 && dd == 1));
}

TEST_CASE("parse_timestamp: ISO 8601 to UTC microseconds") {
  int64_t us = 0;
  const int64_t kDay = 86400000000LL;
  CHECK((ts_of("1970-01-01T00:00:00", &us) && us == 0));
  CHECK((ts_of("1970-01-02", &us) && us == kDay));  // a plain date is midnight
  CHECK((ts_of("1970-01-01 00:01", &us) && us == 60000000));
  CHECK((ts_of("1970-01-01T00:00:01.5", &us) && us == 1500000));
  CHECK((ts_of("1970-01-01T00:00:00.123456", &us) && us == 123456));
  CHECK((ts_of("1970-01-01T00:00:00.123456000Z", &us) && us == 123456));
  CHECK_FALSE(ts_of("1970-01-01T00:00:00.1234567", &us));  // would lose precision
  CHECK_FALSE(ts_of("1970-01-01T00:00:00.1234560001", &us));  // 10 digits
  CHECK((ts_of("1970-01-01T01:00:00+01:00", &us) && us == 0));
  CHECK((ts_of("1970-01-01T01:00:00+0100", &us) && us == 0));
  CHECK((ts_of("1970-01-01T01:00:00+01", &us) && us == 0));
  CHECK((ts_of("1969-12-31T23:30:00-00:30", &us) && us == 0));
  CHECK((ts_of("1969-12-31T23:59:59.999999z", &us) && us == -1));
  CHECK((ts_of("2024-02-29T12:34:56Z", &us) && us == 19782 * kDay + (12 * 3600 + 34 * 60 + 56) * 1000000LL));
  for (const char* bad :
       {"1970-01-01T", "1970-01-01T24:00", "1970-01-01T23:60", "1970-01-01T23:59:60",
        "1970-01-01T1:00", "1970-01-01X00:00", "1970-01-01T00:00:00.", "1970-01-01T00:00.5",
        "1970-01-01T00:00:00+1", "1970-01-01T00:00:00+01:", "1970-01-01T00:00:00Zx",
        "1970-01-01T00:00:00 +01:00", "2023-02-29T00:00", "1970-01-01T00:00:00+24:00",
        // An offset that carries the time out of years 0000-9999 (it would print as no timestamp reads back).
        "0000-01-01T00:30:00+01:00", "9999-12-31T23:59:59-01:00"})
    CHECK_FALSE(ts_of(bad, &us));
  CHECK((ts_of("0000-01-01T01:00:00+01:00", &us) && us == -719528 * kDay));
  CHECK((ts_of("9999-12-31T23:59:59.999999Z", &us) && us == 2932897 * kDay - 1));
  int64_t days, rem;
  split_timestamp(-1, &days, &rem);
  CHECK((days == -1 && rem == kDay - 1));
}

// The CPU's batches read fields with field_to_value_fast (cpu/fast_value.hpp): strings and short
// decimals in one pass. It must give field_to_value's answer and value for any text and type.
TEST_CASE("field_to_value_fast equals field_to_value on random short texts, every scale") {
  std::mt19937_64 rng(1204);
  const char alphabet[] = "0123456789000.-+e x";
  std::vector<ColumnType> types;
  for (int scale : {0, 1, 2, 3, 5, 9, 16, 17, 18, 19, 255}) types.push_back(ColumnType{Type::Decimal, static_cast<uint8_t>(scale)});
  types.push_back(ColumnType{Type::String, 0});
  types.push_back(ColumnType{Type::Int, 0});
  types.push_back(ColumnType{Type::Float, 0});
  size_t parsed = 0, refused = 0;
  for (int iter = 0; iter < 200000; ++iter) {
    const size_t n = 1 + rng() % 20;
    std::string text;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % (rng() % 4 ? 11 : sizeof alphabet - 1)];
    if (rng() % 3 == 0) text[rng() % n] = '.';
    const ColumnType t = types[rng() % types.size()];
    const bool inferred = rng() % 2;
    Value want, got;
    const bool ok_want = field_to_value(t, text.data(), static_cast<uint32_t>(n), &want, inferred);
    const bool ok_got = field_to_value_fast(t, text.data(), static_cast<uint32_t>(n), &got, inferred);
    INFO("text '" << text << "' type " << static_cast<int>(t.type) << " scale " << t.scale << " inferred " << inferred);
    REQUIRE(ok_got == ok_want);
    if (!ok_want) {
      ++refused;
      continue;
    }
    ++parsed;
    REQUIRE(got.null == want.null);
    if (t.type == Type::Float) REQUIRE(std::memcmp(&got.f, &want.f, sizeof got.f) == 0);
    else REQUIRE(std::memcmp(&got.i, &want.i, sizeof got.i) == 0);  // the string's pointer and length too
  }
  CHECK(parsed > 30000);
  CHECK(refused > 30000);
  // Edges: signs alone, points alone, digits past the scale, scaling up to the limits.
  int64_t v = 0;
  for (const char* bad : {"-", "+", ".", "-.", "1..2", "1.2.", "1.25"})
    CHECK_FALSE(parse_short_decimal(bad, static_cast<uint32_t>(std::strlen(bad)), 1, &v));
  CHECK((parse_short_decimal("-12.3", 5, 1, &v) && v == -123));
  CHECK((parse_short_decimal("5.", 2, 2, &v) && v == 500));
  CHECK((parse_short_decimal("1.500", 5, 1, &v) && v == 15));
  CHECK((parse_short_decimal("-9.3", 4, 18, &v) == false));  // -9.3e18 is past int64
  CHECK((parse_short_decimal("-9.2", 4, 18, &v) && v == -9200000000000000000));
  CHECK((parse_short_decimal("-9.2", 4, 17, &v) && v == -920000000000000000));
}
