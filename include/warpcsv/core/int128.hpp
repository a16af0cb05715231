// 128-bit integer helpers for the shared core: checked arithmetic, powers of
// ten, conversion to double and to/from decimal text. Host and device alike.
#pragma once
#include <cmath>
#include <cstdint>

#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {

constexpr int128 kInt128Max = static_cast<int128>(~static_cast<uint128>(0) >> 1);
constexpr int128 kInt128Min = -kInt128Max - 1;

// Digits in the longest int128 text ("-170141183460469231731687303715884105728").
constexpr int kInt128MaxChars = 40;

// 10^n for 0 <= n <= 38 (the largest power that fits an int128).
WCSV_HD inline int128 pow10_i128(int n) {
  int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

// a + b; false (and *out unchanged) on overflow.
WCSV_HD inline bool checked_add(int128 a, int128 b, int128* out) {
  int128 r = static_cast<int128>(static_cast<uint128>(a) + static_cast<uint128>(b));
  // Overflow iff both operands have the sign the result lacks.
  if (((a ^ r) & (b ^ r)) < 0) return false;
  *out = r;
  return true;
}

// a - b; false on overflow.
WCSV_HD inline bool checked_sub(int128 a, int128 b, int128* out) {
  int128 r = static_cast<int128>(static_cast<uint128>(a) - static_cast<uint128>(b));
  if (((a ^ b) & (a ^ r)) < 0) return false;
  *out = r;
  return true;
}

// a * b; false on overflow.
WCSV_HD inline bool checked_mul(int128 a, int128 b, int128* out) {
#if defined(__CUDA_ARCH__)
  if (a == 0 || b == 0) {
    *out = 0;
    return true;
  }
  bool neg = (a < 0) != (b < 0);
  uint128 ua = a < 0 ? static_cast<uint128>(0) - static_cast<uint128>(a) : static_cast<uint128>(a);
  uint128 ub = b < 0 ? static_cast<uint128>(0) - static_cast<uint128>(b) : static_cast<uint128>(b);
  uint128 limit = neg ? static_cast<uint128>(kInt128Max) + 1 : static_cast<uint128>(kInt128Max);
  if (ua > limit / ub) return false;
  uint128 m = ua * ub;
  *out = neg ? static_cast<int128>(static_cast<uint128>(0) - m) : static_cast<int128>(m);
  return true;
#else
  int128 r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
#endif
}

// -a; false for the one value with no negation.
WCSV_HD inline bool checked_neg(int128 a, int128* out) {
  if (a == kInt128Min) return false;
  *out = -a;
  return true;
}

// Nearest double, correctly rounded, the same bits on host and device.
WCSV_HD inline double int128_to_double(int128 v) { return wide_to_double(Wide256::of(v)); }

// The double nearest num / den (ties to even), for num > 0 and 0 < den <
// 2^127. Both below 2^53: IEEE division of the two exact doubles, already
// correctly rounded. Else quotient bits by long division until 55 are known
// (up to ~180 steps), then one rounding with the remainder as sticky bit.
WCSV_HD inline double uint128_div_to_double(uint128 num, uint128 den) {
  const uint128 exact = static_cast<uint128>(1) << 53;
  if (num < exact && den < exact) return static_cast<double>(num) / static_cast<double>(den);
  uint128 q = num / den, r = num % den;
  int e = 0;  // num / den = (q + r / den) * 2^e
  const uint128 enough = static_cast<uint128>(1) << 55;
  while (q < enough) {
    q <<= 1;
    r <<= 1;
    --e;
    if (r >= den) {
      r -= den;
      q |= 1;
    }
  }
  const uint64_t hi = static_cast<uint64_t>(q >> 64);
  const int bits = hi ? 128 - clz64(hi) : 64 - clz64(static_cast<uint64_t>(q));
  const int drop = bits - 53;  // >= 3
  uint64_t kept = static_cast<uint64_t>(q >> drop);
  const uint128 rest = q & ((static_cast<uint128>(1) << drop) - 1), half = static_cast<uint128>(1) << (drop - 1);
  if (rest > half || (rest == half && (r != 0 || (kept & 1)))) ++kept;
  return ldexp(static_cast<double>(kept), e + drop);  // kept may be 2^53: still exact
}

// The double nearest num / den, for any num and 0 < den < 2^127.
WCSV_HD inline double int128_div_to_double(int128 num, uint128 den) {
  if (num == 0) return 0.0;
  const uint128 mag = num < 0 ? static_cast<uint128>(0) - static_cast<uint128>(num) : static_cast<uint128>(num);
  const double d = uint128_div_to_double(mag, den);
  return num < 0 ? -d : d;
}

// A scaled decimal (v / 10^scale) as the nearest double: one rounding
// (q + r/10^s rounded twice: 1.14 became 1.1400000000000001).
WCSV_HD inline double decimal_to_double(int128 v, int scale) {
  if (scale == 0) return int128_to_double(v);
  return int128_div_to_double(v, static_cast<uint128>(pow10_i128(scale)));
}

// Writes v in decimal into buf (at least kInt128MaxChars bytes); returns the length.
WCSV_HD inline int int128_to_chars(int128 v, char* buf) {
  char tmp[kInt128MaxChars];
  int n = 0;
  bool neg = v < 0;
  uint128 u = neg ? static_cast<uint128>(0) - static_cast<uint128>(v) : static_cast<uint128>(v);
  do {
    tmp[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  int len = 0;
  if (neg) buf[len++] = '-';
  while (n > 0) buf[len++] = tmp[--n];
  return len;
}

// Writes v / 10^scale with exactly `scale` digits after the point ("-0.05");
// buf needs kInt128MaxChars + 3 bytes. Returns the length.
WCSV_HD inline int decimal_to_chars(int128 v, int scale, char* buf) {
  if (scale <= 0) return int128_to_chars(v, buf);
  char digits[kInt128MaxChars + 2];
  bool neg = v < 0;
  uint128 u = neg ? static_cast<uint128>(0) - static_cast<uint128>(v) : static_cast<uint128>(v);
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u != 0);
  while (n <= scale) digits[n++] = '0';  // at least one digit before the point
  int len = 0;
  if (neg) buf[len++] = '-';
  while (n > scale) buf[len++] = digits[--n];
  buf[len++] = '.';
  while (n > 0) buf[len++] = digits[--n];
  return len;
}

// Parses an optionally signed run of decimal digits (the whole of p[0..n)); false on
// empty input, a stray character or overflow.
WCSV_HD inline bool parse_int128(const char* p, uint32_t n, int128* out) {
  uint32_t i = 0;
  bool neg = false;
  if (i < n && (p[i] == '-' || p[i] == '+')) {
    neg = p[i] == '-';
    ++i;
  }
  if (i == n) return false;
  int128 v = 0;
  for (; i < n; ++i) {
    char c = p[i];
    if (c < '0' || c > '9') return false;
    // Accumulate negatively so that kInt128Min parses too.
    if (!checked_mul(v, 10, &v) || !checked_sub(v, c - '0', &v)) return false;
  }
  if (!neg) {
    if (v == kInt128Min) return false;
    v = -v;
  }
  *out = v;
  return true;
}

}  // namespace warpcsv
