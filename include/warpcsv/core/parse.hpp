// Value parsing for the shared core: integers, exact decimals, correctly rounded doubles, bools,
// dates and timestamps. One implementation for CPU threads and CUDA kernels: no exceptions, no
// allocation, never reads past p[n-1]. Every parser is strict: the whole field must match (no
// surrounding spaces) or the function returns false.
//
// parse_float is correctly rounded (round-to-nearest-even) for any length of input and gives the
// same bits on host and device: the Clinger fast path, then Eisel-Lemire with a table of 128-bit
// powers of ten (core/pow10_table.hpp; Lemire, "Number Parsing at a Gigabyte per Second", 2021;
// as in Go's strconv), then, for the rare ambiguous case, exact "simple decimal conversion" over
// at most 800 digits (Go's strconv/decimal.go). Magnitudes beyond the double range give +-inf
// like strtod; magnitudes below the smallest subnormal round to +-0.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/pow10_table.hpp"

#if defined(__CUDACC__)
#define WCSV_NOINLINE __noinline__
#else
#define WCSV_NOINLINE __attribute__((noinline))
#endif

namespace warpcsv {
namespace detail {

WCSV_HD WCSV_FORCEINLINE bool is_digit(char c) { return c >= '0' && c <= '9'; }

WCSV_HD WCSV_FORCEINLINE char lower_ascii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// Case-insensitive comparison of p[0..n) with a lowercase literal of length n.
WCSV_HD inline bool eq_nocase(const char* p, uint32_t n, const char* lit, uint32_t lit_n) {
  if (n != lit_n) return false;
  for (uint32_t i = 0; i < n; ++i)
    if (lower_ascii(p[i]) != lit[i]) return false;
  return true;
}

// Full 64x64 -> 128-bit product.
WCSV_HD WCSV_FORCEINLINE void mul64(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
#if defined(__CUDA_ARCH__)
  *hi = __umul64hi(a, b);
  *lo = a * b;
#else
  unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  *hi = static_cast<uint64_t>(r >> 64);
  *lo = static_cast<uint64_t>(r);
#endif
}

WCSV_HD WCSV_FORCEINLINE double bits_to_double(uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

// 10^k as a double, exact for 0 <= k <= 22 (every intermediate product is exact).
WCSV_HD inline double exact_pow10(int k) {
  double r = 1.0;
  if (k & 1) r *= 1e1;
  if (k & 2) r *= 1e2;
  if (k & 4) r *= 1e4;
  if (k & 8) r *= 1e8;
  if (k & 16) r *= 1e16;
  return r;
}

// Eisel-Lemire: man * 10^e10 correctly rounded, or false when the 128-bit product cannot decide
// the rounding (or the result is subnormal, zero-after-rounding or infinite).
WCSV_HD inline bool eisel_lemire(uint64_t man, int64_t e10, bool neg, double* out) {
  if (man == 0) {
    *out = bits_to_double(neg ? 0x8000000000000000ULL : 0);
    return true;
  }
  if (e10 < kPow10TableMin || e10 > kPow10TableMax) return false;
  int clz = clz64(man);
  man <<= clz;
  uint64_t ret_exp2 =
      static_cast<uint64_t>(((217706 * e10) >> 16) + 64 + 1023) - static_cast<uint64_t>(clz);
  const uint64_t* t = pow10_mant128(static_cast<int>(e10));
  uint64_t x_hi, x_lo;
  mul64(man, t[0], &x_hi, &x_lo);
  if ((x_hi & 0x1FF) == 0x1FF && x_lo + man < man) {
    // The low bits might carry: widen to the full 192-bit product.
    uint64_t y_hi, y_lo;
    mul64(man, t[1], &y_hi, &y_lo);
    uint64_t merged_hi = x_hi, merged_lo = x_lo + y_hi;
    if (merged_lo < x_lo) merged_hi++;
    if ((merged_hi & 0x1FF) == 0x1FF && merged_lo + 1 == 0 && y_lo + man < man) return false;
    x_hi = merged_hi;
    x_lo = merged_lo;
  }
  uint64_t msb = x_hi >> 63;
  uint64_t ret_man = x_hi >> (msb + 9);
  ret_exp2 -= 1 ^ msb;
  if (x_lo == 0 && (x_hi & 0x1FF) == 0 && (ret_man & 3) == 1) return false;  // maybe halfway
  ret_man += ret_man & 1;
  ret_man >>= 1;
  if (ret_man >> 53 > 0) {
    ret_man >>= 1;
    ret_exp2 += 1;
  }
  if (ret_exp2 - 1 >= 0x7FF - 1) return false;  // subnormal or infinite: slow path decides
  uint64_t bits = ret_exp2 << 52 | (ret_man & 0x000FFFFFFFFFFFFFULL);
  if (neg) bits |= 0x8000000000000000ULL;
  *out = bits_to_double(bits);
  return true;
}

// Arbitrary-precision decimal 0.d[0]d[1]...d[nd-1] * 10^dp for the exact slow path.
struct SlowDecimal {
  static constexpr int kCap = 800;  // enough digits to decide any double rounding
  static constexpr unsigned kMaxShift = 60;
  uint8_t d[kCap];  // digit values 0..9, no leading zeros, trailing zeros trimmed
  int nd;
  int dp;
  bool trunc;  // nonzero digits were dropped beyond kCap

  WCSV_HD void trim() {
    while (nd > 0 && d[nd - 1] == 0) nd--;
    if (nd == 0) dp = 0;
  }

  // Multiplies by 2^k, k <= kMaxShift, from the last digit to the first, in place.
  WCSV_HD void left_shift(unsigned k) {
    int extra = static_cast<int>((k * 1233) >> 12) + 1;  // >= digits that 2^k can add
    int r = nd - 1, w = nd - 1 + extra;
    uint64_t n = 0;
    for (; r >= 0; --r, --w) {
      n += static_cast<uint64_t>(d[r]) << k;
      uint64_t q = n / 10, rem = n - 10 * q;
      if (w < kCap) d[w] = static_cast<uint8_t>(rem);
      else if (rem != 0) trunc = true;
      n = q;
    }
    while (n > 0) {
      uint64_t q = n / 10, rem = n - 10 * q;
      if (w < kCap) d[w] = static_cast<uint8_t>(rem);
      else if (rem != 0) trunc = true;
      --w;
      n = q;
    }
    int first = w + 1;
    int end = nd + extra < kCap ? nd + extra : kCap;
    if (first > 0)
      for (int i = first; i < end; ++i) d[i - first] = d[i];
    dp += extra - first;
    nd = end - first;
    trim();
  }

  // Divides by 2^k, k <= kMaxShift (Go strconv rightShift).
  WCSV_HD void right_shift(unsigned k) {
    int r = 0, w = 0;
    uint64_t n = 0;
    for (; (n >> k) == 0; r++) {
      if (r >= nd) {
        if (n == 0) {
          nd = 0;
          dp = 0;
          return;
        }
        while ((n >> k) == 0) {
          n *= 10;
          r++;
        }
        break;
      }
      n = n * 10 + d[r];
    }
    dp -= r - 1;
    uint64_t mask = (1ULL << k) - 1;
    for (; r < nd; r++) {
      uint64_t dig = n >> k;
      n &= mask;
      d[w++] = static_cast<uint8_t>(dig);
      n = n * 10 + d[r];
    }
    while (n > 0) {
      uint64_t dig = n >> k;
      n &= mask;
      if (w < kCap) d[w++] = static_cast<uint8_t>(dig);
      else if (dig > 0) trunc = true;
      n *= 10;
    }
    nd = w;
    trim();
  }

  WCSV_HD void shift(int k) {
    if (nd == 0) return;
    if (k > 0) {
      while (k > static_cast<int>(kMaxShift)) {
        left_shift(kMaxShift);
        k -= kMaxShift;
      }
      left_shift(static_cast<unsigned>(k));
    } else if (k < 0) {
      while (k < -static_cast<int>(kMaxShift)) {
        right_shift(kMaxShift);
        k += kMaxShift;
      }
      right_shift(static_cast<unsigned>(-k));
    }
  }

  WCSV_HD bool should_round_up(int i) const {
    if (i < 0 || i >= nd) return false;
    if (d[i] == 5 && i + 1 == nd) {  // exactly halfway (unless digits were dropped): to even
      if (trunc) return true;
      return i > 0 && (d[i - 1] & 1) == 1;
    }
    return d[i] >= 5;
  }

  WCSV_HD uint64_t rounded_integer() const {
    if (dp > 20) return ~0ULL;
    int i = 0;
    uint64_t v = 0;
    for (; i < dp && i < nd; ++i) v = v * 10 + d[i];
    for (; i < dp; ++i) v *= 10;
    if (should_round_up(dp)) v++;
    return v;
  }

  // IEEE binary64 bits of the (positive) value, rounded to nearest even; overflow gives inf.
  WCSV_HD uint64_t to_double_bits() {
    if (nd == 0 || dp < -330) return 0;
    const uint64_t kInf = 0x7FF0000000000000ULL;
    if (dp > 310) return kInf;
    const int powtab[9] = {1, 3, 6, 9, 13, 16, 19, 23, 26};
    int exp = 0;
    while (dp > 0) {  // scale into [0.5, 1)
      int n = dp >= 9 ? 27 : powtab[dp];
      shift(-n);
      exp += n;
    }
    while (dp < 0 || (dp == 0 && d[0] < 5)) {
      int n = -dp >= 9 ? 27 : powtab[-dp];
      shift(n);
      exp -= n;
    }
    exp--;  // [0.5, 1) -> [1, 2)
    if (exp < -1022) {  // subnormal: denormalize before rounding
      int n = -1022 - exp;
      shift(-n);
      exp += n;
    }
    if (exp + 1023 >= 0x7FF) return kInf;
    shift(53);
    uint64_t mant = rounded_integer();
    if (mant == (2ULL << 52)) {  // rounding carried into a new bit
      mant >>= 1;
      exp++;
      if (exp + 1023 >= 0x7FF) return kInf;
    }
    if ((mant & (1ULL << 52)) == 0) exp = -1023;
    return (mant & ((1ULL << 52) - 1)) | (static_cast<uint64_t>(exp + 1023) & 0x7FF) << 52;
  }
};

// Exact conversion of validated float text (digits of the integer and fraction parts, decimal
// exponent) for the cases the fast paths cannot decide.
WCSV_HD WCSV_NOINLINE inline double slow_float(const char* p, uint32_t int_b, uint32_t int_e,
                                               uint32_t frac_b, uint32_t frac_e, int64_t exp10,
                                               bool neg) {
  SlowDecimal a;
  a.nd = 0;
  a.trunc = false;
  int64_t sig = 0;  // significant digits (after leading zeros)
  for (int part = 0; part < 2; ++part) {
    uint32_t b = part == 0 ? int_b : frac_b, e = part == 0 ? int_e : frac_e;
    for (uint32_t i = b; i < e; ++i) {
      uint8_t v = static_cast<uint8_t>(p[i] - '0');
      if (sig == 0 && v == 0) continue;
      if (a.nd < SlowDecimal::kCap) a.d[a.nd++] = v;
      else if (v != 0) a.trunc = true;
      sig++;
    }
  }
  int64_t dp = sig + exp10 - static_cast<int64_t>(frac_e - frac_b);
  if (dp > 100000) dp = 100000;  // far outside the double range either way
  if (dp < -100000) dp = -100000;
  a.dp = static_cast<int>(dp);
  a.trim();
  uint64_t bits = a.to_double_bits();
  if (neg) bits |= 0x8000000000000000ULL;
  return bits_to_double(bits);
}

// Civil date -> days since 1970-01-01 (proleptic Gregorian; H. Hinnant's days_from_civil).
WCSV_HD inline int64_t days_from_civil_impl(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

WCSV_HD inline bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

WCSV_HD inline unsigned days_in_month(int64_t y, unsigned m) {
  const unsigned char kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29u : kDays[m - 1];
}

// Reads exactly `k` digits at p[i..i+k) as an unsigned number.
WCSV_HD inline bool fixed_digits(const char* p, uint32_t n, uint32_t i, uint32_t k, unsigned* v) {
  if (i + k > n) return false;
  unsigned r = 0;
  for (uint32_t j = i; j < i + k; ++j) {
    if (!is_digit(p[j])) return false;
    r = r * 10 + static_cast<unsigned>(p[j] - '0');
  }
  *v = r;
  return true;
}

// YYYY-MM-DD at the start of p (exactly 10 bytes used).
WCSV_HD inline bool parse_date_prefix(const char* p, uint32_t n, int64_t* days) {
  unsigned y, m, d;
  if (n < 10 || p[4] != '-' || p[7] != '-') return false;
  if (!fixed_digits(p, n, 0, 4, &y) || !fixed_digits(p, n, 5, 2, &m) ||
      !fixed_digits(p, n, 8, 2, &d))
    return false;
  if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return false;
  *days = days_from_civil_impl(y, m, d);
  return true;
}

}  // namespace detail

// [+-]digits as int64; false on overflow, empty text or any other byte. Leading zeros are
// accepted here (type inference is what keeps "007" a string; see io.hpp).
WCSV_HD inline bool parse_int64(const char* p, uint32_t n, int64_t* out) {
  uint32_t i = 0;
  bool neg = false;
  if (n > 0 && (p[0] == '+' || p[0] == '-')) {
    neg = p[0] == '-';
    i = 1;
  }
  if (i == n) return false;
  uint64_t v = 0;
  const uint64_t limit = neg ? 0x8000000000000000ULL : 0x7FFFFFFFFFFFFFFFULL;
  for (const uint32_t first = i; i < n; ++i) {
    if (!detail::is_digit(p[i])) return false;
    uint64_t dig = static_cast<uint64_t>(p[i] - '0');
    if (i - first >= 17 && v > (limit - dig) / 10) return false;  // fewer digits cannot overflow
    v = v * 10 + dig;
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// Decimal text [+-]digits[.digits] (also ".5" and "5.") as an integer scaled by 10^scale, exact.
// False when it has more fraction digits than `scale` (unless the extra ones are all zeros), when
// the scaled value does not fit int64, or when scale is outside [0, 18].
WCSV_HD inline bool parse_decimal(const char* p, uint32_t n, int scale, int64_t* out) {
  if (scale < 0 || scale > 18) return false;
  uint32_t i = 0;
  bool neg = false;
  if (n > 0 && (p[0] == '+' || p[0] == '-')) {
    neg = p[0] == '-';
    i = 1;
  }
  const uint64_t limit = neg ? 0x8000000000000000ULL : 0x7FFFFFFFFFFFFFFFULL;
  uint64_t v = 0;
  uint32_t digits = 0;
  // With fewer than 17 digits read v < 10^17, so v * 10 + digit cannot overflow: no check.
  for (; i < n && detail::is_digit(p[i]); ++i, ++digits) {
    uint64_t dig = static_cast<uint64_t>(p[i] - '0');
    if (digits >= 17 && v > (limit - dig) / 10) return false;
    v = v * 10 + dig;
  }
  int frac = 0;
  if (i < n && p[i] == '.') {
    for (++i; i < n && detail::is_digit(p[i]); ++i, ++digits) {
      uint64_t dig = static_cast<uint64_t>(p[i] - '0');
      if (frac == scale) {  // beyond the scale: only zeros are allowed
        if (dig != 0) return false;
        continue;
      }
      if (digits >= 17 && v > (limit - dig) / 10) return false;
      v = v * 10 + dig;
      frac++;
    }
  }
  if (i != n || digits == 0) return false;
  for (; frac < scale; ++frac) {
    if (v > limit / 10) return false;
    v *= 10;
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// Number of fraction digits of decimal text [+-]digits[.digits] whose significant digits (all
// digits after leading zeros, trailing zeros included) number at most 18, so that it fits int64 at
// that scale; -1 for anything else (exponents, more digits, scale > 18, not a number).
WCSV_HD inline int decimal_text_scale(const char* p, uint32_t n) {
  uint32_t i = 0;
  if (n > 0 && (p[0] == '+' || p[0] == '-')) i = 1;
  int sig = 0, digits = 0, frac = -1;
  for (; i < n; ++i) {
    char c = p[i];
    if (detail::is_digit(c)) {
      digits++;
      if (sig > 0 || c != '0') sig++;
      if (frac >= 0) frac++;
    } else if (c == '.' && frac < 0) {
      frac = 0;
    } else {
      return -1;
    }
  }
  if (digits == 0 || sig > 18) return -1;
  if (frac < 0) frac = 0;
  return frac <= 18 ? frac : -1;
}

// [+-]digits[.digits][(e|E)[+-]digits] (also ".5" and "5."), or inf / infinity / nan in any
// case, as the correctly rounded double. Out-of-range magnitudes give +-inf (like strtod),
// tiny ones +-0 or the nearest subnormal.
WCSV_HD inline bool parse_float(const char* p, uint32_t n, double* out) {
  uint32_t i = 0;
  bool neg = false;
  if (n > 0 && (p[0] == '+' || p[0] == '-')) {
    neg = p[0] == '-';
    i = 1;
  }
  if (i == n) return false;
  if (!detail::is_digit(p[i]) && p[i] != '.') {
    const char* s = p + i;
    uint32_t m = n - i;
    if (detail::eq_nocase(s, m, "inf", 3) || detail::eq_nocase(s, m, "infinity", 8)) {
      *out = detail::bits_to_double(neg ? 0xFFF0000000000000ULL : 0x7FF0000000000000ULL);
      return true;
    }
    if (detail::eq_nocase(s, m, "nan", 3)) {
      *out = detail::bits_to_double(neg ? 0xFFF8000000000000ULL : 0x7FF8000000000000ULL);
      return true;
    }
    return false;
  }
  // Significand: the first 19 significant digits in `man`, the rest only counted.
  uint64_t man = 0;
  int64_t sig = 0;       // significant digits seen
  bool dropped = false;  // a nonzero digit beyond the 19th
  const uint32_t int_b = i;
  for (; i < n && detail::is_digit(p[i]); ++i) {
    unsigned dig = static_cast<unsigned>(p[i] - '0');
    if (sig == 0 && dig == 0) continue;
    if (sig < 19) man = man * 10 + dig;
    else if (dig != 0) dropped = true;
    sig++;
  }
  const uint32_t int_e = i;
  uint32_t frac_b = i, frac_e = i;
  if (i < n && p[i] == '.') {
    frac_b = ++i;
    for (; i < n && detail::is_digit(p[i]); ++i) {
      unsigned dig = static_cast<unsigned>(p[i] - '0');
      if (sig == 0 && dig == 0) continue;
      if (sig < 19) man = man * 10 + dig;
      else if (dig != 0) dropped = true;
      sig++;
    }
    frac_e = i;
  }
  if (int_e == int_b && frac_e == frac_b) return false;  // no digits at all
  int64_t exp10 = 0;
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) {
      eneg = p[i] == '-';
      ++i;
    }
    if (i == n) return false;
    for (; i < n && detail::is_digit(p[i]); ++i)
      if (exp10 < 1000000) exp10 = exp10 * 10 + (p[i] - '0');  // saturates: inf or 0 anyway
    if (eneg) exp10 = -exp10;
  }
  if (i != n) return false;
  if (man == 0) {
    *out = detail::bits_to_double(neg ? 0x8000000000000000ULL : 0);
    return true;
  }
  int64_t e10 = exp10 - static_cast<int64_t>(frac_e - frac_b) + (sig > 19 ? sig - 19 : 0);
  if (!dropped && sig <= 19 && e10 >= -22 && e10 <= 22 && man <= (1ULL << 53)) {
    // Clinger: both operands exact, so one IEEE operation rounds correctly.
    double d = static_cast<double>(man);
    d = e10 < 0 ? d / detail::exact_pow10(static_cast<int>(-e10))
                : d * detail::exact_pow10(static_cast<int>(e10));
    *out = neg ? -d : d;
    return true;
  }
  double r;
  if (detail::eisel_lemire(man, e10, neg, &r)) {
    // With truncated digits the value lies in (man, man+1) * 10^e10: both ends must agree.
    double r2;
    if (!dropped || (detail::eisel_lemire(man + 1, e10, neg, &r2) && r2 == r)) {
      *out = r;
      return true;
    }
  }
  *out = detail::slow_float(p, int_b, int_e, frac_b, frac_e, exp10, neg);
  return true;
}

// true / false in any case.
WCSV_HD inline bool parse_bool(const char* p, uint32_t n, bool* out) {
  if (detail::eq_nocase(p, n, "true", 4)) {
    *out = true;
    return true;
  }
  if (detail::eq_nocase(p, n, "false", 5)) {
    *out = false;
    return true;
  }
  return false;
}

// Days since 1970-01-01 of a civil (proleptic Gregorian) date; m in 1..12, d in 1..31.
WCSV_HD inline int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  return detail::days_from_civil_impl(y, m, d);
}

// The civil date of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
WCSV_HD inline void days_to_civil(int64_t days, int* y, unsigned* m, unsigned* d) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(static_cast<int64_t>(yoe) + era * 400 + (*m <= 2));
}

// Splits microseconds since the epoch into whole days (floored) and microseconds into that day.
WCSV_HD inline void split_timestamp(int64_t micros, int64_t* days, int64_t* micros_of_day) {
  const int64_t kDay = 86400000000LL;
  int64_t q = micros / kDay, r = micros % kDay;
  if (r < 0) {
    r += kDay;
    q -= 1;
  }
  *days = q;
  *micros_of_day = r;
}

// YYYY-MM-DD with a real calendar date (leap years checked), as days since 1970-01-01.
WCSV_HD inline bool parse_date(const char* p, uint32_t n, int64_t* days) {
  return n == 10 && detail::parse_date_prefix(p, n, days);
}

// Whether timestamp text (one parse_timestamp takes) carries a zone: `Z` or an
// offset after the time (the date part holds its only other '-').
WCSV_HD inline bool timestamp_has_zone(const char* p, uint32_t n) {
  for (uint32_t i = 16; i < n; ++i)
    if (p[i] == 'Z' || p[i] == 'z' || p[i] == '+' || p[i] == '-') return true;
  return false;
}

// ISO 8601 timestamp as microseconds since the epoch, UTC:
//   YYYY-MM-DD[(T|t| )HH:MM[:SS[.fffffffff]]][Z|z|+HH:MM|-HH:MM|+HHMM|-HHMM|+HH|-HH]
// A plain date is midnight (so dates widen to timestamps). Up to 9 fraction digits; digits beyond
// microseconds must be zeros (no silent truncation), else false. An offset is converted to UTC.
WCSV_HD inline bool parse_timestamp(const char* p, uint32_t n, int64_t* micros) {
  int64_t days;
  if (!detail::parse_date_prefix(p, n, &days)) return false;
  int64_t us = days * 86400000000LL;
  if (n == 10) {
    *micros = us;
    return true;
  }
  if (p[10] != 'T' && p[10] != 't' && p[10] != ' ') return false;
  unsigned hh, mm, ss = 0;
  if (!detail::fixed_digits(p, n, 11, 2, &hh) || 13 >= n || p[13] != ':' ||
      !detail::fixed_digits(p, n, 14, 2, &mm) || hh > 23 || mm > 59)
    return false;
  uint32_t i = 16;
  int64_t frac_us = 0;
  if (i < n && p[i] == ':') {
    if (!detail::fixed_digits(p, n, i + 1, 2, &ss) || ss > 59) return false;
    i += 3;
    if (i < n && p[i] == '.') {
      ++i;
      uint32_t k = 0;
      for (; i < n && detail::is_digit(p[i]); ++i, ++k) {
        if (k >= 9) return false;
        if (k < 6) frac_us = frac_us * 10 + (p[i] - '0');
        else if (p[i] != '0') return false;  // sub-microsecond precision would be lost
      }
      if (k == 0) return false;
      for (; k < 6; ++k) frac_us *= 10;
    }
  }
  int64_t offset_min = 0;
  if (i < n) {
    char c = p[i];
    if ((c == 'Z' || c == 'z') && i + 1 == n) {
      i = n;
    } else if (c == '+' || c == '-') {
      unsigned oh, om = 0;
      if (!detail::fixed_digits(p, n, i + 1, 2, &oh)) return false;
      uint32_t j = i + 3;
      if (j < n) {
        if (p[j] == ':') ++j;
        if (!detail::fixed_digits(p, n, j, 2, &om)) return false;
        j += 2;
      }
      if (j != n || oh > 23 || om > 59) return false;
      offset_min = (c == '-' ? -1 : 1) * static_cast<int64_t>(oh * 60 + om);
      i = n;
    } else {
      return false;
    }
  }
  us += (static_cast<int64_t>(hh) * 3600 + mm * 60 + ss) * 1000000LL + frac_us;
  us -= offset_min * 60000000LL;  // local time minus its offset is UTC
  // An offset must not carry the time out of years 0000-9999 (it would print as no timestamp reads back).
  constexpr int64_t kDayUs = 86400000000LL;
  if (us < -719528 * kDayUs || us >= 2932897 * kDayUs) return false;
  *micros = us;
  return true;
}

}  // namespace warpcsv
