// The shortest text that reads back as a double, without the host's
// formatter, so a GPU prints the bytes the host prints (format_float_text):
// the fewest significant digits that round back to the value, the closest
// such digits to it (ties to even); fixed notation for decimal exponents in
// [-4, 16), else d.ddde+XX; ".0" after a text of only digits; nan, inf,
// -inf. The digits come from Burger and Dybvig's free-format algorithm in
// exact integer arithmetic (up to 1,152 bits): slow next to the host's
// formatter, fast enough for a GPU thread a value.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {

namespace float_digits {

constexpr int kLimbs = 18;  // r < s <= 2^1076 and m+ <= r; ten times r fits too

// A non-negative integer (its top bit never set here), 64-bit limbs, least
// significant first.
using Nat = BigInt<kLimbs>;

WCSV_HD inline Nat nat(uint64_t x) {
  Nat r = Nat::zero();
  r.w[0] = x;
  return r;
}

WCSV_HD inline int compare(const Nat& a, const Nat& b) {
  for (int i = kLimbs; i-- > 0;)
    if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
  return 0;
}

WCSV_HD inline Nat add(const Nat& a, const Nat& b) { return big_add(a, b); }

// a - b, for a >= b.
WCSV_HD inline void subtract(Nat& a, const Nat& b) {
  uint64_t borrow = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const uint64_t d = a.w[i] - b.w[i];
    const uint64_t b1 = a.w[i] < b.w[i];
    a.w[i] = d - borrow;
    borrow = b1 | (d < borrow);
  }
}

WCSV_HD inline void multiply(Nat& a, uint64_t m) {
  uint64_t carry = 0;
  for (int i = 0; i < kLimbs; ++i) {
    const uint128 t = static_cast<uint128>(a.w[i]) * m + carry;
    a.w[i] = static_cast<uint64_t>(t);
    carry = static_cast<uint64_t>(t >> 64);
  }
}

WCSV_HD inline void multiply_pow10(Nat& a, int k) {
  for (; k >= 19; k -= 19) multiply(a, 10000000000000000000ull);
  uint64_t p = 1;
  while (k-- > 0) p *= 10;
  multiply(a, p);
}

WCSV_HD inline void shift_left(Nat& a, int bits) {
  const int limbs = bits / 64, b = bits % 64;
  for (int i = kLimbs; i-- > 0;) {
    const int src = i - limbs;
    const uint64_t hi = src >= 0 ? a.w[src] : 0, lo = src >= 1 ? a.w[src - 1] : 0;
    a.w[i] = b ? (hi << b) | (lo >> (64 - b)) : hi;
  }
}

// The shortest digits of a finite positive double: value = 0.d1...dn * 10^k.
struct Digits {
  char d[20];
  int n = 0;
  int k = 0;
};

WCSV_HD inline Digits shortest_digits(double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t frac = bits & ((1ull << 52) - 1);
  const uint64_t f = biased ? frac | (1ull << 52) : frac;
  const int e = (biased ? biased : 1) - 1075;  // v = f * 2^e
  // Round-half-even reading: the interval's ends read back as v when f is even.
  const bool inclusive = (f & 1) == 0;
  // v = r / s; the interval of values reading back as v is (r - m-, r + m+) / s.
  // The gap below a power of two is half the gap above it.
  const bool uneven = frac == 0 && biased > 1;
  Nat r = nat(f), s = nat(1), mp = nat(1), mm = nat(1);
  if (e >= 0) {
    shift_left(r, e + (uneven ? 2 : 1));
    shift_left(s, uneven ? 2 : 1);
    shift_left(mp, e + (uneven ? 1 : 0));
    shift_left(mm, e);
  } else {
    shift_left(r, uneven ? 2 : 1);
    shift_left(s, (uneven ? 2 : 1) - e);
    shift_left(mp, uneven ? 1 : 0);
  }
  // k: the least with (r + m+) / s below 10^k (at most 10^k when inclusive).
  // Estimated from the bit length, then corrected either way.
  const int bitlen = 64 - clz64(f) + e;  // 2^(bitlen-1) <= v < 2^bitlen
  int k = static_cast<int>((static_cast<int64_t>(bitlen) * 78913) >> 18);  // ~ bitlen * log10(2)
  if (k >= 0) multiply_pow10(s, k);
  else {
    multiply_pow10(r, -k);
    multiply_pow10(mp, -k);
    multiply_pow10(mm, -k);
  }
  auto high_reaches = [&](const Nat& bound) {  // r + m+ beyond bound
    const int c = compare(add(r, mp), bound);
    return inclusive ? c >= 0 : c > 0;
  };
  while (high_reaches(s)) {
    multiply(s, 10);
    ++k;
  }
  for (;;) {
    Nat high_tenfold = add(r, mp);
    multiply(high_tenfold, 10);
    const int c = compare(high_tenfold, s);
    if (inclusive ? c >= 0 : c > 0) break;  // (r + m+) * 10 reaches s: k is the least
    multiply(r, 10);
    multiply(mp, 10);
    multiply(mm, 10);
    --k;
  }
  Digits out;
  out.k = k;
  for (;;) {
    multiply(r, 10);
    multiply(mp, 10);
    multiply(mm, 10);
    int d = 0;
    while (compare(r, s) >= 0) {
      subtract(r, s);
      ++d;
    }
    const int low_c = compare(r, mm);
    const bool low = inclusive ? low_c <= 0 : low_c < 0;
    const bool high = high_reaches(s);
    if (!low && !high) {
      out.d[out.n++] = static_cast<char>('0' + d);
      continue;
    }
    if (low && high) {  // both ends allow stopping: the nearer digit, ties to even
      Nat twice = add(r, r);
      const int c = compare(twice, s);
      if (c > 0 || (c == 0 && (d & 1))) ++d;
    } else if (high) {
      ++d;
    }
    out.d[out.n++] = static_cast<char>('0' + d);
    break;
  }
  // A last digit rounded up to ten carries into the digits before it.
  for (int i = out.n - 1; i > 0 && out.d[i] > '9'; --i) {
    out.d[i] = '0';
    ++out.d[i - 1];
  }
  if (out.d[0] > '9') {
    out.d[0] = '1';
    for (int i = 1; i < out.n; ++i) out.d[i] = '0';
    ++out.k;
  }
  while (out.n > 1 && out.d[out.n - 1] == '0') --out.n;
  return out;
}

}  // namespace float_digits

// The text of d into out (at most 25 bytes); returns its length.
WCSV_HD inline uint32_t write_float_text(double d, char* out) {
  uint32_t n = 0;
  uint64_t bits;
  memcpy(&bits, &d, 8);
  const bool special = ((bits >> 52) & 0x7ff) == 0x7ff;
  if (special && (bits & ((1ull << 52) - 1))) {
    out[0] = 'n', out[1] = 'a', out[2] = 'n';
    return 3;
  }
  if (bits >> 63) {
    out[n++] = '-';
    d = -d;
  }
  if (special) {
    out[n] = 'i', out[n + 1] = 'n', out[n + 2] = 'f';
    return n + 3;
  }
  if (d == 0) {
    out[n] = '0', out[n + 1] = '.', out[n + 2] = '0';
    return n + 3;
  }
  const float_digits::Digits g = float_digits::shortest_digits(d);
  const int exp = g.k - 1;  // of the first digit
  if (exp < -4 || exp >= 16) {
    out[n++] = g.d[0];
    if (g.n > 1) {
      out[n++] = '.';
      for (int i = 1; i < g.n; ++i) out[n++] = g.d[i];
    }
    out[n++] = 'e';
    int x = exp;
    out[n++] = x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    if (x >= 100) out[n++] = static_cast<char>('0' + x / 100);
    out[n++] = static_cast<char>('0' + x / 10 % 10);
    out[n++] = static_cast<char>('0' + x % 10);
    return n;
  }
  if (exp < 0) {  // 0.00ddd
    out[n++] = '0';
    out[n++] = '.';
    for (int i = -1; i > exp; --i) out[n++] = '0';
    for (int i = 0; i < g.n; ++i) out[n++] = g.d[i];
    return n;
  }
  // exp + 1 digits before the point (zeros past the digits), then the rest or ".0".
  for (int i = 0; i <= exp; ++i) out[n++] = i < g.n ? g.d[i] : '0';
  out[n++] = '.';
  if (g.n <= exp + 1) {
    out[n++] = '0';
    return n;
  }
  for (int i = exp + 1; i < g.n; ++i) out[n++] = g.d[i];
  return n;
}

}  // namespace warpcsv
