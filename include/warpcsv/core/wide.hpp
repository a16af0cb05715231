// Fixed-width signed big integers (two's complement, 64-bit limbs, little
// endian) for exact aggregate moments: 256 bits for sums of squares and
// products of integers, 640-bit fixed point for sums of doubles, wider ones
// while finalizing. Merging such states is plain addition, so results do not
// depend on the order rows arrive in (partitions, threads, GPUs).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

template <int N>
struct BigInt {
  uint64_t w[N];

  WCSV_HD static BigInt zero() {
    BigInt r;
    for (int i = 0; i < N; ++i) r.w[i] = 0;
    return r;
  }
  WCSV_HD static BigInt of(int128 x) {
    BigInt r;
    const uint64_t ext = x < 0 ? ~0ull : 0ull;
    for (int i = 0; i < N; ++i) r.w[i] = ext;
    r.w[0] = static_cast<uint64_t>(x);
    if (N > 1) r.w[1] = static_cast<uint64_t>(static_cast<uint128>(x) >> 64);
    return r;
  }
  WCSV_HD bool negative() const { return (w[N - 1] >> 63) != 0; }
  WCSV_HD bool is_zero() const {
    uint64_t o = 0;
    for (int i = 0; i < N; ++i) o |= w[i];
    return o == 0;
  }
};

using Wide256 = BigInt<4>;

template <int N>
WCSV_HD inline BigInt<N> big_add(const BigInt<N>& a, const BigInt<N>& b) {
  BigInt<N> r;
  uint64_t carry = 0;
  for (int i = 0; i < N; ++i) {
    const uint64_t s = a.w[i] + b.w[i];
    const uint64_t c1 = s < a.w[i];
    r.w[i] = s + carry;
    carry = c1 | (r.w[i] < s);
  }
  return r;
}
template <int N>
WCSV_HD inline BigInt<N> big_neg(const BigInt<N>& a) {
  BigInt<N> r;
  uint64_t carry = 1;
  for (int i = 0; i < N; ++i) {
    r.w[i] = ~a.w[i] + carry;
    carry = carry && r.w[i] == 0;
  }
  return r;
}
template <int N>
WCSV_HD inline BigInt<N> big_sub(const BigInt<N>& a, const BigInt<N>& b) {
  return big_add(a, big_neg(b));
}
// Sign-extends (or truncates) to M limbs, shifting left by `limbs` whole limbs.
template <int M, int N>
WCSV_HD inline BigInt<M> big_widen(const BigInt<N>& a, int limbs = 0) {
  BigInt<M> r;
  const uint64_t ext = a.negative() ? ~0ull : 0ull;
  for (int i = 0; i < M; ++i) {
    const int src = i - limbs;
    r.w[i] = src < 0 ? 0 : (src < N ? a.w[src] : ext);
  }
  return r;
}

WCSV_HD inline uint128 mul_64(uint64_t a, uint64_t b) { return static_cast<uint128>(a) * b; }

// Exact product of two signed values.
template <int A, int B>
WCSV_HD inline BigInt<A + B> big_mul(const BigInt<A>& a, const BigInt<B>& b) {
  const bool neg = a.negative() != b.negative();
  const BigInt<A> ua = a.negative() ? big_neg(a) : a;
  const BigInt<B> ub = b.negative() ? big_neg(b) : b;
  BigInt<A + B> r = BigInt<A + B>::zero();
  for (int i = 0; i < A; ++i) {
    uint64_t carry = 0;
    for (int j = 0; j < B; ++j) {
      const uint128 t = mul_64(ua.w[i], ub.w[j]) + r.w[i + j] + carry;
      r.w[i + j] = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
    r.w[i + B] += carry;
  }
  return neg ? big_neg(r) : r;
}

// Product with a non-negative 64-bit value (mod 2^(64N)).
template <int N>
WCSV_HD inline BigInt<N> big_mul_u64(const BigInt<N>& a, uint64_t b) {
  const bool neg = a.negative();
  const BigInt<N> u = neg ? big_neg(a) : a;
  BigInt<N> r;
  uint64_t carry = 0;
  for (int i = 0; i < N; ++i) {
    const uint128 t = mul_64(u.w[i], b) + carry;
    r.w[i] = static_cast<uint64_t>(t);
    carry = static_cast<uint64_t>(t >> 64);
  }
  return neg ? big_neg(r) : r;
}

// a * 2^scale as a double, correctly rounded (the same bits on host and
// device) unless the result is subnormal or overflows.
template <int N>
WCSV_HD inline double big_to_double(const BigInt<N>& a, int scale = 0) {
  const bool neg = a.negative();
  const BigInt<N> u = neg ? big_neg(a) : a;
  int top = N - 1;
  while (top > 0 && u.w[top] == 0) --top;
  double d;
  int shift;
  if (top == 0) {
    d = static_cast<double>(u.w[0]);
    shift = 0;
  } else {
    // The leading 64 bits with the rest folded into a sticky bit: 64 > 53 + 2,
    // so the one rounding of the uint64 conversion is the right one.
    const uint64_t hi = u.w[top];
    const int lz = clz64(hi);
    uint64_t lead = lz ? (hi << lz) | (u.w[top - 1] >> (64 - lz)) : hi;
    bool sticky = lz ? (u.w[top - 1] << lz) != 0 : u.w[top - 1] != 0;
    for (int i = top - 2; i >= 0; --i) sticky = sticky || u.w[i] != 0;
    if (sticky) lead |= 1;
    d = static_cast<double>(lead);
    shift = 64 * top - lz;
  }
  shift += scale;
  // Scale by powers of two in steps that stay exact.
  while (shift > 0) {
    const int step = shift > 60 ? 60 : shift;
    d *= static_cast<double>(1ull << step);
    shift -= step;
  }
  while (shift < 0) {
    const int step = -shift > 60 ? 60 : -shift;
    d /= static_cast<double>(1ull << step);
    shift += step;
  }
  return neg ? -d : d;
}

// Unsigned helpers for non-negative values (top bit clear), as the
// correctly rounded division below needs them.

// Bits up to and including the highest set one (0 for zero).
template <int N>
WCSV_HD inline int big_bit_length(const BigInt<N>& a) {
  for (int i = N - 1; i >= 0; --i)
    if (a.w[i]) return 64 * i + 64 - clz64(a.w[i]);
  return 0;
}
// a * 2^s for 0 <= s; bits shifted past the top are lost.
template <int N>
WCSV_HD inline BigInt<N> big_shl(const BigInt<N>& a, int s) {
  const int limbs = s / 64, bits = s % 64;
  BigInt<N> r;
  for (int i = N - 1; i >= 0; --i) {
    const int src = i - limbs;
    const uint64_t hi = src >= 0 ? a.w[src] : 0, lo = src >= 1 ? a.w[src - 1] : 0;
    r.w[i] = bits ? (hi << bits) | (lo >> (64 - bits)) : hi;
  }
  return r;
}
// floor(a / 2^s) mod 2^128, for 0 <= s: the 128 bits of a from bit s up.
template <int N>
WCSV_HD inline uint128 big_window(const BigInt<N>& a, int s) {
  const int limb = s / 64, bits = s % 64;
  uint64_t part[3];
  for (int j = 0; j < 3; ++j) part[j] = limb + j < N ? a.w[limb + j] : 0;
  const uint64_t lo = bits ? (part[0] >> bits) | (part[1] << (64 - bits)) : part[0];
  const uint64_t hi = bits ? (part[1] >> bits) | (part[2] << (64 - bits)) : part[1];
  return (static_cast<uint128>(hi) << 64) | lo;
}

// The double nearest num / den (ties to even), for num >= 0 and den > 0 whose
// quotient is a normal double. Both below 2^53: one IEEE division of exact
// doubles. Else num / den scaled by 2^k to a / b in (2^56, 2^58); its integer
// part q (57 or 58 bits) comes from the leading bits, corrected by the exact
// remainder, which is then the sticky bit of the one rounding (a quotient
// taken in doubles first would round twice).
template <int N>
WCSV_HD inline double big_ratio_to_double(const BigInt<N>& num, const BigInt<N>& den) {
  const int ln = big_bit_length(num), ld = big_bit_length(den);
  if (ln == 0) return 0.0;
  if (ln <= 53 && ld <= 53) return static_cast<double>(num.w[0]) / static_cast<double>(den.w[0]);
  // num / den lies in (2^(ln-ld-1), 2^(ln-ld+1)); one limb more than N holds a < b 2^58.
  const int k = 57 - (ln - ld);
  BigInt<N + 1> a = big_widen<N + 1>(num), b = big_widen<N + 1>(den);
  if (k >= 0) {
    a = big_shl(a, k);
  } else {
    b = big_shl(b, -k);
  }
  // Cut to b's top 64 bits (a's then fit 122), the quotient is q or q + 1:
  // dropping b's low bits raises a / b < 2^58 by under 2^58 / 2^63 < 1.
  const int lb = big_bit_length(b), low = lb > 64 ? lb - 64 : 0;
  uint64_t q = static_cast<uint64_t>(big_window(a, low) / static_cast<uint64_t>(big_window(b, low)));
  BigInt<N + 1> r = big_sub(a, big_mul_u64(b, q));
  if (r.negative()) {
    --q;
    r = big_add(r, b);
  }
  const int drop = 64 - clz64(q) - 53;  // 4 or 5
  uint64_t kept = q >> drop;
  const uint64_t rest = q & ((1ull << drop) - 1), half = 1ull << (drop - 1);
  if (rest > half || (rest == half && (!r.is_zero() || (kept & 1)))) ++kept;
  return ldexp(static_cast<double>(kept), drop - k);  // kept may be 2^53: still exact
}

// The 256-bit forms the integer aggregates use.
WCSV_HD inline Wide256 wide_add(const Wide256& a, const Wide256& b) { return big_add(a, b); }
WCSV_HD inline Wide256 wide_neg(const Wide256& a) { return big_neg(a); }
WCSV_HD inline Wide256 wide_sub(const Wide256& a, const Wide256& b) { return big_sub(a, b); }
WCSV_HD inline Wide256 wide_mul(int128 a, int128 b) {
  return big_mul(BigInt<2>::of(a), BigInt<2>::of(b));
}
WCSV_HD inline Wide256 wide_mul_u64(const Wide256& a, uint64_t b) { return big_mul_u64(a, b); }
// acc += a * b: wide_add(acc, wide_mul(a, b)), with the product of two
// values that fit 64 bits (nearly all, in sums of squares and products) made
// in 128 bits and added limb by limb instead of by schoolbook multiplication.
WCSV_HD inline void wide_add_product(Wide256& acc, int128 a, int128 b) {
  const int64_t a64 = static_cast<int64_t>(a), b64 = static_cast<int64_t>(b);
  if (a64 != a || b64 != b) {
    acc = wide_add(acc, wide_mul(a, b));
    return;
  }
  const uint128 p = static_cast<uint128>(static_cast<int128>(a64) * b64);  // |a * b| <= 2^126
  const uint64_t ext = static_cast<int128>(p) < 0 ? ~0ull : 0ull;
  const uint64_t add[4] = {static_cast<uint64_t>(p), static_cast<uint64_t>(p >> 64), ext, ext};
  uint64_t carry = 0;
  for (int i = 0; i < 4; ++i) {
    const uint128 t = static_cast<uint128>(acc.w[i]) + add[i] + carry;
    acc.w[i] = static_cast<uint64_t>(t);
    carry = static_cast<uint64_t>(t >> 64);
  }
}
WCSV_HD inline double wide_to_double(const Wide256& a) { return big_to_double(a); }

// An exact sum of doubles: a 640-bit fixed-point number with 256 fraction
// bits (a Kulisch-style accumulator cut to the range real data lives in).
// Bits of an addend below 2^-256 are dropped (truncation toward zero, a
// function of the value alone, so still order-independent); infinities and
// NaNs are recorded in flags instead, and so are finite magnitudes from
// 2^318 up (kAccOutOfRange: the run fails rather than print a wrong sum):
// 2^63 addends below 2^318 stay below the accumulator's 2^383, where larger
// ones could wrap it.
constexpr int kFloatAccLimbs = 10;
constexpr int kFloatAccFracBits = 256;
using FloatAcc = BigInt<kFloatAccLimbs>;
enum FloatAccFlags : uint32_t { kAccNaN = 1, kAccPosInf = 2, kAccNegInf = 4, kAccOutOfRange = 8 };
constexpr uint32_t kAccSpecial = kAccNaN | kAccPosInf | kAccNegInf;

// x as an addend of the accumulator: |x| = lo * 2^(64*limb) + hi * 2^(64*(limb+1))
// in units of 2^-256, and its sign. False when nothing is to be added (zero,
// below the range, or an infinity/NaN, which goes into `flags`).
struct FloatAddend {
  int limb;
  uint64_t lo, hi;
  bool neg;
};
WCSV_HD inline bool float_acc_addend(double x, uint32_t& flags, FloatAddend& out) {
  uint64_t bits;
  memcpy(&bits, &x, 8);
  const bool neg = (bits >> 63) != 0;
  const int exp = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t m = bits & ((1ull << 52) - 1);
  if (exp == 0x7ff) {
    flags |= m ? kAccNaN : (neg ? kAccNegInf : kAccPosInf);
    return false;
  }
  if (exp) m |= 1ull << 52;
  if (m == 0) return false;
  int p = (exp ? exp : 1) - 1075 + kFloatAccFracBits;  // x = m * 2^(p - 256)
  if (p < 0) {
    if (-p >= 64) return false;
    m >>= -p;
    p = 0;
    if (m == 0) return false;
  }
  if (p + 53 > 64 * kFloatAccLimbs - 66) {  // 2^318 or more: 2^63 of them could wrap the accumulator
    flags |= kAccOutOfRange;
    return false;
  }
  const int s = p % 64;
  out.limb = p / 64;
  out.lo = m << s;
  out.hi = s && out.limb + 1 < kFloatAccLimbs ? m >> (64 - s) : 0;
  out.neg = neg;
  return true;
}

WCSV_HD inline void float_acc_add(FloatAcc& acc, uint32_t& flags, double x) {
  FloatAddend a;
  if (!float_acc_addend(x, flags, a)) return;
  FloatAcc add = FloatAcc::zero();
  add.w[a.limb] = a.lo;
  if (a.limb + 1 < kFloatAccLimbs) add.w[a.limb + 1] = a.hi;
  acc = big_add(acc, a.neg ? big_neg(add) : add);
}

// The accumulated sum as a double (flags decide infinities and NaN).
WCSV_HD inline double double_of_bits(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  return d;
}
// NaN or an infinity when the flags say so, else `finite`.
WCSV_HD inline double float_acc_special(uint32_t flags, double finite) {
  if ((flags & kAccNaN) || ((flags & kAccPosInf) && (flags & kAccNegInf))) return double_of_bits(0x7ff8000000000000ull);
  if (flags & kAccPosInf) return double_of_bits(0x7ff0000000000000ull);
  if (flags & kAccNegInf) return double_of_bits(0xfff0000000000000ull);
  return finite;
}
WCSV_HD inline double float_acc_value(const FloatAcc& acc, uint32_t flags) {
  return float_acc_special(flags, big_to_double(acc, -kFloatAccFracBits));
}

// n * sum_ab - sum_a * sum_b, exactly, in units of 2^-512: the numerator of
// a (co)variance from exact float moments (sum_ab holds sums of products).
using FloatMoment = BigInt<2 * kFloatAccLimbs + 1>;
WCSV_HD inline FloatMoment float_centered(const FloatAcc& sum_ab, const FloatAcc& sum_a, const FloatAcc& sum_b,
                                          int64_t n) {
  const FloatMoment scaled =
      big_mul_u64(big_widen<2 * kFloatAccLimbs + 1>(sum_ab, kFloatAccFracBits / 64), static_cast<uint64_t>(n));
  return big_sub(scaled, big_widen<2 * kFloatAccLimbs + 1>(big_mul(sum_a, sum_b)));
}

}  // namespace warpcsv
