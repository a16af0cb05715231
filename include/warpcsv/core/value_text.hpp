// Text of values, written into a caller's buffer: exact integers and
// decimals, ISO 8601 dates and timestamps, true/false. The output writers and
// the evaluator's cast to string (on the CPU and the GPU) print the same bytes.
// Floats print as the shortest text that reads back: format_float_text (the
// host's formatter) on the host, write_float_text (float_text.hpp, the same
// bytes) on a GPU.
#pragma once
#include <cstdint>

#include "warpcsv/core/float_text.hpp"
#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/parse.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

// The longest text of any non-float value: a 128-bit int (40 bytes) or a
// timestamp with microseconds and a zone (28).
constexpr uint32_t kMaxValueText = 48;

namespace detail {

WCSV_HD inline uint128 magnitude(int128 x) {
  // Negated in unsigned arithmetic so INT128_MIN does not overflow.
  return x < 0 ? uint128(0) - static_cast<uint128>(x) : static_cast<uint128>(x);
}

// Digits of x, least significant first; returns the count.
WCSV_HD inline int reversed_digits(uint128 x, char* buf) {
  int n = 0;
  // 128-bit division is a library call: used only for the digits above 64 bits.
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

// `v` in decimal, zero padded to at least `width` digits; returns the bytes written.
WCSV_HD inline uint32_t write_padded(uint64_t v, uint32_t width, char* out) {
  char digits[20];
  uint32_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n < width) digits[n++] = '0';
  for (uint32_t i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  return n;
}

}  // namespace detail

WCSV_HD inline uint32_t write_int128(int128 x, char* out) {
  char buf[40];
  int n = detail::reversed_digits(detail::magnitude(x), buf);
  uint32_t m = 0;
  if (x < 0) out[m++] = '-';
  while (n > 0) out[m++] = buf[--n];
  return m;
}

// A decimal scaled by 10^scale, with `scale` digits after the point.
WCSV_HD inline uint32_t write_decimal(int128 x, int scale, char* out) {
  if (scale == 0) return write_int128(x, out);
  char buf[48];
  int n = detail::reversed_digits(detail::magnitude(x), buf);
  while (n <= scale) buf[n++] = '0';  // at least one digit before the point
  uint32_t m = 0;
  if (x < 0) out[m++] = '-';
  while (n > scale) out[m++] = buf[--n];
  out[m++] = '.';
  while (n > 0) out[m++] = buf[--n];
  return m;
}

// YYYY-MM-DD of a day count since 1970-01-01 (a year past 9999 gets its digits; before 0, a sign).
WCSV_HD inline uint32_t write_date(int64_t days, char* out) {
  int y;
  unsigned m, d;
  days_to_civil(days, &y, &m, &d);
  uint32_t k = 0;
  if (y < 0) {
    out[k++] = '-';
    y = -y;
  }
  k += detail::write_padded(static_cast<uint64_t>(y), 4, out + k);
  out[k++] = '-';
  k += detail::write_padded(m, 2, out + k);
  out[k++] = '-';
  k += detail::write_padded(d, 2, out + k);
  return k;
}

// YYYY-MM-DDTHH:MM:SS[.ffffff][Z] of microseconds since the epoch, UTC.
WCSV_HD inline uint32_t write_timestamp(int64_t micros, bool zoned, char* out) {
  int64_t days, us;
  split_timestamp(micros, &days, &us);
  uint32_t k = write_date(days, out);
  const int64_t secs = us / 1000000, frac = us % 1000000;
  out[k++] = 'T';
  k += detail::write_padded(static_cast<uint64_t>(secs / 3600), 2, out + k);
  out[k++] = ':';
  k += detail::write_padded(static_cast<uint64_t>(secs / 60 % 60), 2, out + k);
  out[k++] = ':';
  k += detail::write_padded(static_cast<uint64_t>(secs % 60), 2, out + k);
  if (frac != 0) {
    out[k++] = '.';
    k += detail::write_padded(static_cast<uint64_t>(frac), 6, out + k);
  }
  if (zoned) out[k++] = 'Z';  // converted to UTC from its zone
  return k;
}

// The shortest text that reads back as d ("1.0" for integral values, nan, inf). Host only.
uint32_t format_float_text(double d, char* out);

// Text of a non-null value of type t (not a string) into out, kMaxValueText
// bytes; false for a string (its own bytes).
WCSV_HD inline bool write_value_text(const Value& v, ColumnType t, char* out, uint32_t* len) {
  switch (t.type) {
    case Type::Null: *len = 0; return true;
    case Type::Bool: {
      const char* s = v.i != 0 ? "true" : "false";
      uint32_t n = 0;
      for (; s[n]; ++n) out[n] = s[n];
      *len = n;
      return true;
    }
    case Type::Int: *len = write_int128(v.i, out); return true;
    case Type::Decimal: *len = write_decimal(v.i, t.scale, out); return true;
    case Type::Date: *len = write_date(static_cast<int64_t>(v.i), out); return true;
    case Type::Timestamp: *len = write_timestamp(static_cast<int64_t>(v.i), t.scale == kZoned, out); return true;
    case Type::String: return false;  // its own bytes
    case Type::Float:
#ifdef __CUDA_ARCH__
      *len = write_float_text(v.f, out);
#else
      *len = format_float_text(v.f, out);
#endif
      return true;
  }
  return false;
}

}  // namespace warpcsv
