// A 256-bit signed integer for exact moments (sums of squares and products)
// that var, std and corr finalize from, so those results do not depend on the
// order rows arrive in: merging partitions, threads or GPUs is plain addition.
#pragma once
#include <cstdint>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

struct Wide256 {
  uint64_t w[4];  // little-endian limbs, two's complement

  WCSV_HD static Wide256 zero() { return Wide256{{0, 0, 0, 0}}; }
  WCSV_HD static Wide256 of(int128 x) {
    const uint64_t ext = x < 0 ? ~0ull : 0ull;
    return Wide256{{static_cast<uint64_t>(x), static_cast<uint64_t>(static_cast<uint128>(x) >> 64),
                    ext, ext}};
  }
  WCSV_HD bool negative() const { return (w[3] >> 63) != 0; }
  WCSV_HD bool is_zero() const { return (w[0] | w[1] | w[2] | w[3]) == 0; }
};

WCSV_HD inline Wide256 wide_add(const Wide256& a, const Wide256& b) {
  Wide256 r;
  uint64_t carry = 0;
  for (int i = 0; i < 4; ++i) {
    const uint64_t s = a.w[i] + b.w[i];
    const uint64_t c1 = s < a.w[i];
    r.w[i] = s + carry;
    carry = c1 | (r.w[i] < s);
  }
  return r;
}
WCSV_HD inline Wide256 wide_neg(const Wide256& a) {
  Wide256 r;
  uint64_t carry = 1;
  for (int i = 0; i < 4; ++i) {
    r.w[i] = ~a.w[i] + carry;
    carry = carry && r.w[i] == 0;
  }
  return r;
}
WCSV_HD inline Wide256 wide_sub(const Wide256& a, const Wide256& b) {
  return wide_add(a, wide_neg(b));
}

// Unsigned 64x64 -> 128.
WCSV_HD inline uint128 mul_64(uint64_t a, uint64_t b) { return static_cast<uint128>(a) * b; }

// Exact product of two signed 128-bit values.
WCSV_HD inline Wide256 wide_mul(int128 a, int128 b) {
  const bool neg = (a < 0) != (b < 0);
  const uint128 ua = a < 0 ? static_cast<uint128>(0) - static_cast<uint128>(a) : static_cast<uint128>(a);
  const uint128 ub = b < 0 ? static_cast<uint128>(0) - static_cast<uint128>(b) : static_cast<uint128>(b);
  const uint64_t a0 = static_cast<uint64_t>(ua), a1 = static_cast<uint64_t>(ua >> 64);
  const uint64_t b0 = static_cast<uint64_t>(ub), b1 = static_cast<uint64_t>(ub >> 64);
  uint64_t r[4] = {0, 0, 0, 0};
  const uint64_t as[2] = {a0, a1}, bs[2] = {b0, b1};
  for (int i = 0; i < 2; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < 2; ++j) {
      const uint128 t = mul_64(as[i], bs[j]) + r[i + j] + carry;
      r[i + j] = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
    r[i + 2] += carry;
  }
  Wide256 out{{r[0], r[1], r[2], r[3]}};
  return neg ? wide_neg(out) : out;
}

// Product of a 256-bit value and a non-negative 64-bit value (mod 2^256).
WCSV_HD inline Wide256 wide_mul_u64(const Wide256& a, uint64_t b) {
  const bool neg = a.negative();
  const Wide256 u = neg ? wide_neg(a) : a;
  Wide256 r = Wide256::zero();
  uint64_t carry = 0;
  for (int i = 0; i < 4; ++i) {
    const uint128 t = mul_64(u.w[i], b) + carry;
    r.w[i] = static_cast<uint64_t>(t);
    carry = static_cast<uint64_t>(t >> 64);
  }
  return neg ? wide_neg(r) : r;
}

// Correctly rounded conversion to double (the same bits on host and device).
WCSV_HD inline double wide_to_double(const Wide256& a) {
  const bool neg = a.negative();
  const Wide256 u = neg ? wide_neg(a) : a;
  int top = 3;
  while (top > 0 && u.w[top] == 0) --top;
  if (top == 0) {
    const double d = static_cast<double>(u.w[0]);
    return neg ? -d : d;
  }
  // Take the leading 64 bits; fold the rest into a sticky bit so that the
  // single rounding of the uint64 conversion is the right one.
  const uint64_t hi = u.w[top];
  const int lz = clz64(hi);
  uint64_t lead = lz ? (hi << lz) | (u.w[top - 1] >> (64 - lz)) : hi;
  bool sticky = lz ? (u.w[top - 1] << lz) != 0 : u.w[top - 1] != 0;
  for (int i = top - 2; i >= 0; --i) sticky = sticky || u.w[i] != 0;
  if (sticky) lead |= 1;  // 64 > 53 + 2 bits, so OR-ing the sticky bit in is exact
  double d = static_cast<double>(lead);
  const int shift = 64 * top - lz;  // value = lead * 2^shift
  for (int s = shift; s > 0;) {
    const int step = s > 60 ? 60 : s;
    d *= static_cast<double>(1ull << step);
    s -= step;
  }
  return neg ? -d : d;
}

}  // namespace warpcsv
