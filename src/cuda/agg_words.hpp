// A GPU group's aggregate state words: where each part of an aggregate's
// state lies (named offsets, in 64-bit words from the aggregate's first
// word), and the row updates and block-cache merges that keep them, with
// 64-bit atomics on a GPU and plain adds on the host (one thread: tests).
// gpu_support.cpp sizes them, gpu_states.cpp reads them back into the
// core's state structs. Plain C++ without CUDA, so CPU builds test it.
#pragma once
#include <cstdint>

#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/core/program.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {
namespace cuda {

using u64 = unsigned long long;

constexpr int kAccWords = 2 * kFloatAccLimbs;  // an exact float sum: positive and negative magnitudes

// One aggregate's GPU state: `words` 64-bit words at `word` in the group's row
// of the word matrix.
struct GpuAgg {
  AggOp op;
  Type in_type, in_type2;  // argument types (float aggregates convert to double)
  uint8_t in_scale, in_scale2;
  int8_t arg0_direct;  // slot read directly, -1: evaluate arg0, -2: no argument
  int8_t arg1_direct;
  uint16_t word;
  uint16_t words;
  ProgramView arg0, arg1;
};

// ---- the layouts -------------------------------------------------------------
// A 128-bit number takes two words, low first; a 256-bit one four; an exact
// sum's third limb (`ext`) catches a sum past 128 bits (SumExactState).

struct CountWords {  // count(), count(x)
  static constexpr int n = 0, size = 1;
};
struct SumExactWords {  // sum and mean of exact numbers
  static constexpr int sum = 0, n = 2, ext = 3, size = 4;
};
struct MomentsExactWords {  // var and std of exact numbers
  static constexpr int sum = 0, sum_sq = 2, n = 6, ext = 7, size = 8;
};
struct CorrExactWords {
  static constexpr int sx = 0, sy = 2, sxx = 4, syy = 8, sxy = 12, n = 16, ext_x = 17, ext_y = 18, size = 19;
};
struct ExtremeWords {  // min, max: the value's 64-bit key (agg_float_key for floats), and whether any
  static constexpr int key = 0, has = 1, size = 2;
};
// Float sums and moments: `sums` exact accumulators of kAccWords (sum, then
// sum of squares; corr: sx, sy, sxx, syy, sxy), then flags, then the count.
struct FloatWords {
  WCSV_HD static constexpr int acc(int k) { return k * kAccWords; }
  WCSV_HD static constexpr int flags(int sums) { return sums * kAccWords; }
  WCSV_HD static constexpr int n(int sums) { return sums * kAccWords + 1; }
  WCSV_HD static constexpr int size(int sums) { return sums * kAccWords + 2; }
};

// The exact float sums an aggregate keeps (0: not a float aggregate).
WCSV_HD constexpr int float_sums(AggOp op) {
  return op == AggOp::SumFloat || op == AggOp::MeanFloat  ? 1
         : op == AggOp::VarFloat || op == AggOp::StdFloat ? 2
         : op == AggOp::CorrFloat                         ? 5
                                                          : 0;
}

// An aggregate's state words; 0: no GPU form (first, last).
WCSV_HD constexpr int agg_words(AggOp op) {
  switch (op) {
    case AggOp::CountStar:
    case AggOp::Count: return CountWords::size;
    case AggOp::SumExact:
    case AggOp::MeanExact: return SumExactWords::size;
    case AggOp::VarExact:
    case AggOp::StdExact: return MomentsExactWords::size;
    case AggOp::CorrExact: return CorrExactWords::size;
    case AggOp::Min:
    case AggOp::Max: return ExtremeWords::size;
    case AggOp::SumFloat:
    case AggOp::MeanFloat:
    case AggOp::VarFloat:
    case AggOp::StdFloat:
    case AggOp::CorrFloat: return FloatWords::size(float_sums(op));
    default: return 0;
  }
}

// A fresh group's words of aggregate `op`: all zero but a min's or max's key.
WCSV_HD inline void agg_init_words(AggOp op, u64* w) {
  for (int i = 0; i < agg_words(op); ++i) w[i] = 0;
  if (op == AggOp::Min) w[ExtremeWords::key] = static_cast<u64>(INT64_MAX);
  if (op == AggOp::Max) w[ExtremeWords::key] = static_cast<u64>(INT64_MIN);
}

// ---- word updates: atomics on a GPU, plain on the host -----------------------

// Adds v to the word (64 bits, or 32 for a block's short-key states);
// returns the old value.
template <class Word, class V>
WCSV_HD WCSV_FORCEINLINE Word word_add(Word* w, V v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(w, static_cast<Word>(v));
#else
  const Word old = *w;
  *w = static_cast<Word>(old + static_cast<Word>(v));
  return old;
#endif
}
WCSV_HD WCSV_FORCEINLINE void word_or(u64* w, u64 v) {
#if defined(__CUDA_ARCH__)
  atomicOr(w, v);
#else
  *w |= v;
#endif
}
// Sets *w to 1. In shared memory (a block's cache) a word already set is only
// read: nearly every row of a group finds its min's or max's flag set.
// Global words take the atomic, which does not wait for its answer.
WCSV_HD WCSV_FORCEINLINE void word_set_once(u64* w) {
#if defined(__CUDA_ARCH__)
  if (__isShared(w) && *reinterpret_cast<volatile u64*>(w) != 0) return;
  atomicOr(w, 1ull);
#else
  *w = 1;
#endif
}
WCSV_HD WCSV_FORCEINLINE void word_min(u64* w, long long v) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<long long*>(w), v);
#else
  if (v < static_cast<long long>(*w)) *w = static_cast<u64>(v);
#endif
}
WCSV_HD WCSV_FORCEINLINE void word_max(u64* w, long long v) {
#if defined(__CUDA_ARCH__)
  atomicMax(reinterpret_cast<long long*>(w), v);
#else
  if (v > static_cast<long long>(*w)) *w = static_cast<u64>(v);
#endif
}

// ---- 128/256-bit sums with 64-bit atomics ---------------------------------

// Adds v to *w; returns the carry out of the word.
WCSV_HD WCSV_FORCEINLINE uint32_t add_word(u64* w, u64 v) {
  if (v == 0) return 0;
  const u64 old = word_add(w, v);
  return old + v < old ? 1u : 0u;
}

// Adds an n-limb little-endian integer to w[0..n) modulo 2^(64n): each limb's
// carry is detected from the old value its word_add returns, then added to
// the next limb, so concurrent adds still total exactly.
WCSV_HD WCSV_FORCEINLINE void add_limbs(u64* w, const u64* x, int n) {
  uint32_t carry = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t c = add_word(w + i, x[i]);
    if (carry) c += add_word(w + i, carry);
    carry = c;
  }
}

// Adds (lo, hi, top) to the 192-bit exact sum (w[0], w[1], *ext) modulo
// 2^192 (SumExactState: the third limb catches a sum past 128 bits).
WCSV_HD WCSV_FORCEINLINE void add_sum192(u64* w, u64* ext, u64 lo, u64 hi, u64 top) {
  const uint32_t c0 = add_word(w, lo);
  uint32_t c1 = add_word(w + 1, hi);
  if (c0) c1 += add_word(w + 1, c0);
  const u64 t = top + c1;
  if (t) word_add(ext, t);
}

// Adds x to the 192-bit exact sum (w[0], w[1], *ext). A value of 64 bits is
// added to the low word, or subtracted from it when negative, and carries or
// borrows go up only when they happen: the same sum modulo 2^192 as adding
// its 192-bit two's complement, whose negative values carry through every
// word.
WCSV_HD WCSV_FORCEINLINE void add_int128(u64* w, u64* ext, int128 x) {
  if (x >= 0 && x <= INT64_MAX) {
    if (add_word(w, static_cast<u64>(x)) && add_word(w + 1, 1ull)) word_add(ext, 1ull);
    return;
  }
  if (x < 0 && x >= INT64_MIN) {
    const u64 magnitude = 0ull - static_cast<u64>(static_cast<int64_t>(x));
    if (word_add(w, 0ull - magnitude) < magnitude && word_add(w + 1, ~0ull) == 0) word_add(ext, ~0ull);
    return;
  }
  add_sum192(w, ext, static_cast<u64>(x), static_cast<u64>(static_cast<uint128>(x) >> 64), x < 0 ? ~0ull : 0ull);
}

WCSV_HD WCSV_FORCEINLINE void add_wide(u64* w, const Wide256& x) {
  const u64 l[4] = {x.w[0], x.w[1], x.w[2], x.w[3]};
  add_limbs(w, l, 4);
}

// Adds lo * 2^(64*limb) + hi * 2^(64*(limb+1)) to the n-limb number at w,
// carrying as far up as needed (modulo 2^(64n), as the host's BigInt adds).
WCSV_HD WCSV_FORCEINLINE void add_at(u64* w, int n, int limb, u64 lo, u64 hi) {
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
WCSV_HD WCSV_FORCEINLINE void acc_add(u64* acc, u64* flags_word, double x) {
  uint32_t flags = 0;
  FloatAddend a;
  if (float_acc_addend(x, flags, a)) add_at(acc + (a.neg ? kFloatAccLimbs : 0), kFloatAccLimbs, a.limb, a.lo, a.hi);
  if (flags) word_or(flags_word, static_cast<u64>(flags));
}

WCSV_HD WCSV_FORCEINLINE void acc_add_product_words(u64* acc, u64* flags_word, double a, double b) {
  double p, err;
  detail::two_product(a, b, p, err);
  acc_add(acc, flags_word, p);
  if (err == err) acc_add(acc, flags_word, err);
}

WCSV_HD WCSV_FORCEINLINE void extreme_update(AggOp op, u64* w, long long v) {
  if (op == AggOp::Min) word_min(w + ExtremeWords::key, v);
  else word_max(w + ExtremeWords::key, v);
  word_set_once(w + ExtremeWords::has);
}

// One row's update of an aggregate's words (shared or global memory).
// Returns false when the value cannot be held (min/max beyond 64 bits).
WCSV_HD WCSV_FORCEINLINE bool agg_update_words(const GpuAgg& a, u64* w, const Value& x, const Value& y) {
  switch (a.op) {
    case AggOp::CountStar: word_add(w + CountWords::n, 1ull); return true;
    case AggOp::Count:
      if (!x.null) word_add(w + CountWords::n, 1ull);
      return true;
    case AggOp::SumExact:
    case AggOp::MeanExact:
      if (x.null) return true;
      add_int128(w + SumExactWords::sum, w + SumExactWords::ext, x.i);
      word_add(w + SumExactWords::n, 1ull);
      return true;
    case AggOp::VarExact:
    case AggOp::StdExact: {
      using L = MomentsExactWords;
      if (x.null) return true;
      add_int128(w + L::sum, w + L::ext, x.i);
      if (beyond64(x.i)) word_add(w + L::ext, static_cast<u64>(kExtBeyond64));
      add_wide(w + L::sum_sq, wide_mul(x.i, x.i));
      word_add(w + L::n, 1ull);
      return true;
    }
    case AggOp::CorrExact: {
      using L = CorrExactWords;
      if (x.null || y.null) return true;
      add_int128(w + L::sx, w + L::ext_x, x.i);
      add_int128(w + L::sy, w + L::ext_y, y.i);
      if (beyond64(x.i)) word_add(w + L::ext_x, static_cast<u64>(kExtBeyond64));
      if (beyond64(y.i)) word_add(w + L::ext_y, static_cast<u64>(kExtBeyond64));
      add_wide(w + L::sxx, wide_mul(x.i, x.i));
      add_wide(w + L::syy, wide_mul(y.i, y.i));
      add_wide(w + L::sxy, wide_mul(x.i, y.i));
      word_add(w + L::n, 1ull);
      return true;
    }
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
    case AggOp::SumFloat:
    case AggOp::MeanFloat:
      if (x.null) return true;
      acc_add(w + FloatWords::acc(0), w + FloatWords::flags(1), x.f);
      word_add(w + FloatWords::n(1), 1ull);
      return true;
    case AggOp::VarFloat:
    case AggOp::StdFloat:
      if (x.null) return true;
      acc_add(w + FloatWords::acc(0), w + FloatWords::flags(2), x.f);
      acc_add_product_words(w + FloatWords::acc(1), w + FloatWords::flags(2), x.f, x.f);
      word_add(w + FloatWords::n(2), 1ull);
      return true;
    case AggOp::CorrFloat: {
      if (x.null || y.null) return true;
      const double xv = detail::as_double(x, a.in_type, a.in_scale);
      const double yv = detail::as_double(y, a.in_type2, a.in_scale2);
      u64* flags = w + FloatWords::flags(5);
      acc_add(w + FloatWords::acc(0), flags, xv);
      acc_add(w + FloatWords::acc(1), flags, yv);
      acc_add_product_words(w + FloatWords::acc(2), flags, xv, xv);
      acc_add_product_words(w + FloatWords::acc(3), flags, yv, yv);
      acc_add_product_words(w + FloatWords::acc(4), flags, xv, yv);
      word_add(w + FloatWords::n(5), 1ull);
      return true;
    }
    default: return false;  // not a GPU aggregate (the host never sends one)
  }
}

// Folds words `s` (a block cache's, or another table's) into the words `w`.
WCSV_HD WCSV_FORCEINLINE void agg_merge_words(const GpuAgg& a, u64* w, const u64* s) {
  switch (a.op) {
    case AggOp::Min:
    case AggOp::Max:
      if (s[ExtremeWords::has]) extreme_update(a.op, w, static_cast<long long>(s[ExtremeWords::key]));
      return;
    case AggOp::CountStar:
    case AggOp::Count: add_word(w + CountWords::n, s[CountWords::n]); return;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      using L = SumExactWords;
      add_sum192(w + L::sum, w + L::ext, s[L::sum], s[L::sum + 1], s[L::ext]);
      add_word(w + L::n, s[L::n]);
      return;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      using L = MomentsExactWords;
      add_sum192(w + L::sum, w + L::ext, s[L::sum], s[L::sum + 1], s[L::ext]);
      add_limbs(w + L::sum_sq, s + L::sum_sq, 4);
      add_word(w + L::n, s[L::n]);
      return;
    }
    case AggOp::CorrExact: {
      using L = CorrExactWords;
      add_sum192(w + L::sx, w + L::ext_x, s[L::sx], s[L::sx + 1], s[L::ext_x]);
      add_sum192(w + L::sy, w + L::ext_y, s[L::sy], s[L::sy + 1], s[L::ext_y]);
      add_limbs(w + L::sxx, s + L::sxx, 4);
      add_limbs(w + L::syy, s + L::syy, 4);
      add_limbs(w + L::sxy, s + L::sxy, 4);
      add_word(w + L::n, s[L::n]);
      return;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat:
    case AggOp::VarFloat:
    case AggOp::StdFloat:
    case AggOp::CorrFloat: {
      // Each magnitude of each sum, then flags, then the count.
      const int sums = float_sums(a.op);
      for (int k = 0; k < 2 * sums; ++k) add_limbs(w + k * kFloatAccLimbs, s + k * kFloatAccLimbs, kFloatAccLimbs);
      const int flags = FloatWords::flags(sums);
      if (s[flags]) word_or(w + flags, s[flags]);
      add_word(w + FloatWords::n(sums), s[FloatWords::n(sums)]);
      return;
    }
    default: return;
  }
}

}  // namespace cuda
}  // namespace warpcsv
