// The core's aggregate state structs from a GPU group's state words (the
// layouts of agg_words.hpp): for the groups that come back to the host, and
// for a GPU finalizing the result's rows itself. Plain C++ without CUDA, so
// CPU builds test it.
#pragma once
#include <cstdint>

#include "cuda/agg_words.hpp"
#include "warpcsv/core/agg.hpp"

namespace warpcsv {
namespace cuda {

WCSV_HD inline int128 int128_of_words(const u64* w) {
  return static_cast<int128>((static_cast<uint128>(w[1]) << 64) | w[0]);
}
WCSV_HD inline Wide256 wide_of_words(const u64* w) { return Wide256{{w[0], w[1], w[2], w[3]}}; }
// An exact float sum from its positive and negative magnitudes.
WCSV_HD inline FloatAcc float_acc_of_words(const u64* w) {
  FloatAcc pos, neg;
  for (int i = 0; i < kFloatAccLimbs; ++i) {
    pos.w[i] = w[i];
    neg.w[i] = w[kFloatAccLimbs + i];
  }
  return big_sub(pos, neg);
}

// Writes aggregate `a`'s state into `block` (at a.offset) from its GPU
// words `w`; the state was agg_init'ed or is overwritten whole. False for an
// aggregate without GPU words (first, last). The words are read as the
// type they are written as (u64), so no alias rule lets a compiler that
// inlines this read them before they are written.
WCSV_HD inline bool state_from_words(const AggDesc& a, const u64* w, char* block) {
  char* s = block + a.offset;
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count: reinterpret_cast<CountState*>(s)->n = static_cast<int64_t>(w[CountWords::n]); return true;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      using L = SumExactWords;
      auto* st = reinterpret_cast<SumExactState*>(s);
      st->sum = int128_of_words(w + L::sum);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext = static_cast<int64_t>(w[L::ext]);
      return true;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      using L = MomentsExactWords;
      auto* st = reinterpret_cast<MomentsExactState*>(s);
      st->sum = int128_of_words(w + L::sum);
      st->sum_sq = wide_of_words(w + L::sum_sq);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext = static_cast<int64_t>(w[L::ext]);
      return true;
    }
    case AggOp::CorrExact: {
      using L = CorrExactWords;
      auto* st = reinterpret_cast<CorrExactState*>(s);
      st->sx = int128_of_words(w + L::sx);
      st->sy = int128_of_words(w + L::sy);
      st->sxx = wide_of_words(w + L::sxx);
      st->syy = wide_of_words(w + L::syy);
      st->sxy = wide_of_words(w + L::sxy);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext_x = static_cast<int64_t>(w[L::ext_x]);
      st->ext_y = static_cast<int64_t>(w[L::ext_y]);
      return true;
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* st = reinterpret_cast<ExtremeState*>(s);
      if (!w[ExtremeWords::has]) return true;
      const int64_t k = static_cast<int64_t>(w[ExtremeWords::key]);
      st->v = a.in_type == Type::Float ? Value::of_float(agg_float_of_key(k)) : Value::of_int(k);
      return true;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      auto* st = reinterpret_cast<SumFloatState*>(s);
      st->sum = float_acc_of_words(w + FloatWords::acc(0));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(1)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(1)]);
      return true;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* st = reinterpret_cast<MomentsFloatState*>(s);
      st->sum = float_acc_of_words(w + FloatWords::acc(0));
      st->sum_sq = float_acc_of_words(w + FloatWords::acc(1));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(2)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(2)]);
      return true;
    }
    case AggOp::CorrFloat: {
      auto* st = reinterpret_cast<CorrFloatState*>(s);
      st->sx = float_acc_of_words(w + FloatWords::acc(0));
      st->sy = float_acc_of_words(w + FloatWords::acc(1));
      st->sxx = float_acc_of_words(w + FloatWords::acc(2));
      st->syy = float_acc_of_words(w + FloatWords::acc(3));
      st->sxy = float_acc_of_words(w + FloatWords::acc(4));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(5)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(5)]);
      return true;
    }
    default: return false;
  }
}

}  // namespace cuda
}  // namespace warpcsv
