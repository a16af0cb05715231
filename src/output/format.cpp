// Text of values: exact integers and decimals, shortest round-trip floats,
// ISO 8601 dates and timestamps.
#include "output/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iterator>

#include "warpcsv/output.hpp"

namespace warpcsv {
namespace detail {
namespace {

// Digits of |x| (least significant first) into `buf`; returns the count.
int unsigned_digits(uint128 x, char* buf) {
  int n = 0;
  // 128-bit division is a library call: use it only for the digits above 64 bits.
  while (x > UINT64_MAX) {
    buf[n++] = static_cast<char>('0' + static_cast<int>(x % 10));
    x /= 10;
  }
  uint64_t y = static_cast<uint64_t>(x);
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(y % 10));
    y /= 10;
  } while (y != 0);
  return n;
}

uint128 magnitude(int128 x) {
  // Negate in unsigned arithmetic so INT128_MIN does not overflow.
  return x < 0 ? uint128(0) - static_cast<uint128>(x) : static_cast<uint128>(x);
}

void append_2(std::string& out, int v) {
  out.push_back(static_cast<char>('0' + v / 10));
  out.push_back(static_cast<char>('0' + v % 10));
}

void append_float(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[40];  // the shortest text that reads back as d: at most 24 characters
  const char* end = fmt::format_to(buf, "{}", d);
  out.append(buf, static_cast<size_t>(end - buf));
  // Integral floats keep a ".0" (as DuckDB prints them) so a float column
  // never reads as an int column; exponent forms ("1e+20") are left as they are.
  bool integral_text = true;
  for (const char* p = buf; p < end; ++p)
    if (!(*p == '-' || (*p >= '0' && *p <= '9'))) integral_text = false;
  if (integral_text) out += ".0";
}

}  // namespace

void append_int128(std::string& out, int128 x) {
  char buf[48], text[48];
  int n = unsigned_digits(magnitude(x), buf), m = 0;
  if (x < 0) text[m++] = '-';
  while (n > 0) text[m++] = buf[--n];
  out.append(text, static_cast<size_t>(m));  // one append: a row is mostly numbers
}

void append_date(std::string& out, int64_t days) {
  // civil_from_days (H. Hinnant, "chrono-compatible low-level date algorithms").
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  if (m <= 2) ++y;
  if (y < 0) {
    out.push_back('-');
    y = -y;
  }
  fmt::format_to(std::back_inserter(out), "{:04}-", y);
  append_2(out, m);
  out.push_back('-');
  append_2(out, d);
}

void append_value(std::string& out, const Value& v, ColumnType t) {
  switch (t.type) {
    case Type::Null:
      return;
    case Type::Bool:
      out += v.i != 0 ? "true" : "false";
      return;
    case Type::Int:
      append_int128(out, v.i);
      return;
    case Type::Decimal: {
      if (t.scale == 0) {
        append_int128(out, v.i);
        return;
      }
      char buf[48];
      int n = unsigned_digits(magnitude(v.i), buf);
      while (n <= t.scale) buf[n++] = '0';  // at least one digit before the point
      if (v.i < 0) out.push_back('-');
      while (n > t.scale) out.push_back(buf[--n]);
      out.push_back('.');
      while (n > 0) out.push_back(buf[--n]);
      return;
    }
    case Type::Float:
      append_float(out, v.f);
      return;
    case Type::String:
      out.append(v.s.ptr, v.s.len);
      return;
    case Type::Date:
      append_date(out, static_cast<int64_t>(v.i));
      return;
    case Type::Timestamp: {
      constexpr int64_t kDay = 86400LL * 1000000;
      int64_t us = static_cast<int64_t>(v.i);
      int64_t days = us / kDay, rem = us % kDay;
      if (rem < 0) {  // floor division: times before 1970 count forward from midnight
        rem += kDay;
        --days;
      }
      append_date(out, days);
      int64_t secs = rem / 1000000, frac = rem % 1000000;
      out.push_back('T');
      append_2(out, static_cast<int>(secs / 3600));
      out.push_back(':');
      append_2(out, static_cast<int>(secs / 60 % 60));
      out.push_back(':');
      append_2(out, static_cast<int>(secs % 60));
      if (frac != 0) fmt::format_to(std::back_inserter(out), ".{:06}", frac);
      if (t.scale == kZoned) out.push_back('Z');  // converted to UTC from its zone
      return;
    }
  }
}

}  // namespace detail

std::string format_value(const Value& v, ColumnType t) {
  std::string out;
  if (!v.null) detail::append_value(out, v, t);
  return out;
}

std::string value_text(const Value& v, const OutputColumn& c) {
  if (!v.null && c.as_written && c.type.type != Type::String) return std::string(v.text, v.text_len);
  return format_value(v, c.type);
}

}  // namespace warpcsv
