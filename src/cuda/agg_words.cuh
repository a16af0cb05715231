// A GPU group's aggregate state words, updated and merged with 64-bit
// atomics (the layouts gpu_support.cpp sizes and gpu_states.cpp reads back):
// exact sums in 128 and 256 bits with carries, float sums in fixed-point
// accumulators, min/max by integer keys. Included by kernels.cu alone.
#pragma once
#include <cstdint>

#include "cuda/gpu_plan.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {
namespace cuda {

using u64 = unsigned long long;

// ---- 128/256-bit sums with 64-bit atomics ---------------------------------

// Adds v to *w; returns the carry out of the word.
__device__ __forceinline__ uint32_t add_word(u64* w, u64 v) {
  if (v == 0) return 0;
  const u64 old = atomicAdd(w, v);
  return old + v < old ? 1u : 0u;
}

// Adds an n-limb little-endian integer to w[0..n) modulo 2^(64n): each limb's
// carry is detected from the old value its atomicAdd returns, then added to
// the next limb, so concurrent adds still total exactly.
__device__ __forceinline__ void add_limbs(u64* w, const u64* x, int n) {
  uint32_t carry = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t c = add_word(w + i, x[i]);
    if (carry) c += add_word(w + i, carry);
    carry = c;
  }
}

// Adds (lo, hi, top) to the 192-bit exact sum (w[0], w[1], *ext) modulo
// 2^192 (SumExactState: the third limb catches a sum past 128 bits).
__device__ __forceinline__ void add_sum192(u64* w, u64* ext, u64 lo, u64 hi, u64 top) {
  const uint32_t c0 = add_word(w, lo);
  uint32_t c1 = add_word(w + 1, hi);
  if (c0) c1 += add_word(w + 1, c0);
  const u64 t = top + c1;
  if (t) atomicAdd(ext, t);
}

__device__ __forceinline__ void add_int128(u64* w, u64* ext, int128 x) {
  add_sum192(w, ext, static_cast<u64>(x), static_cast<u64>(static_cast<uint128>(x) >> 64), x < 0 ? ~0ull : 0ull);
}

__device__ __forceinline__ void add_wide(u64* w, const Wide256& x) {
  const u64 l[4] = {x.w[0], x.w[1], x.w[2], x.w[3]};
  add_limbs(w, l, 4);
}

// Adds lo * 2^(64*limb) + hi * 2^(64*(limb+1)) to the n-limb number at w,
// carrying as far up as needed (modulo 2^(64n), as the host's BigInt adds).
__device__ __forceinline__ void add_at(u64* w, int n, int limb, u64 lo, u64 hi) {
  uint32_t carry = add_word(w + limb, lo);
  for (int i = limb + 1; i < n; ++i) {
    const u64 v = i == limb + 1 ? hi : 0;
    if (!carry && !v) {
      if (i > limb + 1) break;
      continue;
    }
    uint32_t c = add_word(w + i, v);
    if (carry) c += add_word(w + i, carry);
    carry = c;
  }
}

// An exact float sum as two unsigned magnitudes, positive and negative parts
// (kAccWords words; the host takes their difference): an addend touches two
// limbs and rare carries, never the sign extension of all ten.
__device__ __forceinline__ void acc_add(u64* acc, u64* flags_word, double x) {
  uint32_t flags = 0;
  FloatAddend a;
  if (float_acc_addend(x, flags, a)) add_at(acc + (a.neg ? kFloatAccLimbs : 0), kFloatAccLimbs, a.limb, a.lo, a.hi);
  if (flags) atomicOr(flags_word, static_cast<u64>(flags));
}

__device__ __forceinline__ void acc_add_product_words(u64* acc, u64* flags_word, double a, double b) {
  double p, err;
  detail::two_product(a, b, p, err);
  acc_add(acc, flags_word, p);
  if (err == err) acc_add(acc, flags_word, err);
}

__device__ __forceinline__ void extreme_update(AggOp op, u64* w, long long v) {
  if (op == AggOp::Min) atomicMin(reinterpret_cast<long long*>(w), v);
  else atomicMax(reinterpret_cast<long long*>(w), v);
  atomicOr(w + 1, 1ull);
}

// One row's update of an aggregate's words (shared or global memory).
// Returns false when the value cannot be held (min/max beyond 64 bits).
__device__ __forceinline__ bool agg_update_words(const GpuAgg& a, u64* w, const Value& x,
                                                 const Value& y) {
  switch (a.op) {
    case AggOp::CountStar: atomicAdd(w, 1ull); return true;
    case AggOp::Count:
      if (!x.null) atomicAdd(w, 1ull);
      return true;
    case AggOp::SumExact:
    case AggOp::MeanExact:
      if (x.null) return true;
      add_int128(w, w + 3, x.i);
      atomicAdd(w + 2, 1ull);
      return true;
    case AggOp::VarExact:
    case AggOp::StdExact:
      if (x.null) return true;
      add_int128(w, w + 7, x.i);
      if (beyond64(x.i)) atomicAdd(w + 7, static_cast<u64>(kExtBeyond64));
      add_wide(w + 2, wide_mul(x.i, x.i));
      atomicAdd(w + 6, 1ull);
      return true;
    case AggOp::CorrExact:
      if (x.null || y.null) return true;
      add_int128(w, w + 17, x.i);
      add_int128(w + 2, w + 18, y.i);
      if (beyond64(x.i)) atomicAdd(w + 17, static_cast<u64>(kExtBeyond64));
      if (beyond64(y.i)) atomicAdd(w + 18, static_cast<u64>(kExtBeyond64));
      add_wide(w + 4, wide_mul(x.i, x.i));
      add_wide(w + 8, wide_mul(y.i, y.i));
      add_wide(w + 12, wide_mul(x.i, y.i));
      atomicAdd(w + 16, 1ull);
      return true;
    case AggOp::Min:
    case AggOp::Max: {
      if (x.null) return true;
      if (a.in_type == Type::Float) {
        extreme_update(a.op, w, agg_float_key(x.f));
        return true;
      }
      if (x.i < INT64_MIN || x.i > INT64_MAX) return false;
      extreme_update(a.op, w, static_cast<long long>(x.i));
      return true;
    }
    // Float sums and moments: kAccWords per sum, then flags, then the count.
    case AggOp::SumFloat:
    case AggOp::MeanFloat:
      if (x.null) return true;
      acc_add(w, w + kAccWords, x.f);
      atomicAdd(w + kAccWords + 1, 1ull);
      return true;
    case AggOp::VarFloat:
    case AggOp::StdFloat:
      if (x.null) return true;
      acc_add(w, w + 2 * kAccWords, x.f);
      acc_add_product_words(w + kAccWords, w + 2 * kAccWords, x.f, x.f);
      atomicAdd(w + 2 * kAccWords + 1, 1ull);
      return true;
    case AggOp::CorrFloat: {
      if (x.null || y.null) return true;
      const double xv = detail::as_double(x, a.in_type, a.in_scale);
      const double yv = detail::as_double(y, a.in_type2, a.in_scale2);
      u64* flags = w + 5 * kAccWords;
      acc_add(w, flags, xv);
      acc_add(w + kAccWords, flags, yv);
      acc_add_product_words(w + 2 * kAccWords, flags, xv, xv);
      acc_add_product_words(w + 3 * kAccWords, flags, yv, yv);
      acc_add_product_words(w + 4 * kAccWords, flags, xv, yv);
      atomicAdd(w + 5 * kAccWords + 1, 1ull);
      return true;
    }
    default: return false;  // not a GPU aggregate (the host never sends one)
  }
}

// Folds cached words `s` into the group's global words `w`.
__device__ __forceinline__ void agg_merge_words(const GpuAgg& a, u64* w, const u64* s) {
  // Float sums: each magnitude of each sum, then flags, then the count.
  auto merge_float = [&](int sums) {
    for (int k = 0; k < 2 * sums; ++k) add_limbs(w + k * kFloatAccLimbs, s + k * kFloatAccLimbs, kFloatAccLimbs);
    const int at = sums * kAccWords;
    if (s[at]) atomicOr(w + at, s[at]);
    add_word(w + at + 1, s[at + 1]);
  };
  switch (a.op) {
    case AggOp::Min:
    case AggOp::Max:
      if (s[1]) extreme_update(a.op, w, static_cast<long long>(s[0]));
      return;
    case AggOp::CountStar:
    case AggOp::Count: add_word(w, s[0]); return;
    case AggOp::SumExact:
    case AggOp::MeanExact:
      add_sum192(w, w + 3, s[0], s[1], s[3]);
      add_word(w + 2, s[2]);
      return;
    case AggOp::VarExact:
    case AggOp::StdExact:
      add_sum192(w, w + 7, s[0], s[1], s[7]);
      add_limbs(w + 2, s + 2, 4);
      add_word(w + 6, s[6]);
      return;
    case AggOp::CorrExact:
      add_sum192(w, w + 17, s[0], s[1], s[17]);
      add_sum192(w + 2, w + 18, s[2], s[3], s[18]);
      add_limbs(w + 4, s + 4, 4);
      add_limbs(w + 8, s + 8, 4);
      add_limbs(w + 12, s + 12, 4);
      add_word(w + 16, s[16]);
      return;
    case AggOp::SumFloat:
    case AggOp::MeanFloat: merge_float(1); return;
    case AggOp::VarFloat:
    case AggOp::StdFloat: merge_float(2); return;
    case AggOp::CorrFloat: merge_float(5); return;
    default: return;
  }
}

}  // namespace cuda
}  // namespace warpcsv
