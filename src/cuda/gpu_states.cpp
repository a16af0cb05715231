#include "cuda/gpu_states.hpp"

#include "cuda/gpu_plan.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace cuda {

namespace {

int128 to_int128(const uint64_t* w) {
  return static_cast<int128>((static_cast<uint128>(w[1]) << 64) | w[0]);
}
Wide256 to_wide(const uint64_t* w) { return Wide256{{w[0], w[1], w[2], w[3]}}; }
// An exact float sum from its positive and negative magnitudes.
FloatAcc to_acc(const uint64_t* w) {
  FloatAcc pos, neg;
  for (int i = 0; i < kFloatAccLimbs; ++i) {
    pos.w[i] = w[i];
    neg.w[i] = w[kFloatAccLimbs + i];
  }
  return big_sub(pos, neg);
}

}  // namespace

void state_from_words(const AggDesc& a, const uint64_t* w, char* block) {
  char* s = block + a.offset;
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count: reinterpret_cast<CountState*>(s)->n = static_cast<int64_t>(w[0]); return;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      auto* st = reinterpret_cast<SumExactState*>(s);
      st->sum = to_int128(w);
      st->n = static_cast<int64_t>(w[2]);
      st->ext = static_cast<int64_t>(w[3]);
      return;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* st = reinterpret_cast<MomentsExactState*>(s);
      st->sum = to_int128(w);
      st->sum_sq = to_wide(w + 2);
      st->n = static_cast<int64_t>(w[6]);
      st->ext = static_cast<int64_t>(w[7]);
      return;
    }
    case AggOp::CorrExact: {
      auto* st = reinterpret_cast<CorrExactState*>(s);
      st->sx = to_int128(w);
      st->sy = to_int128(w + 2);
      st->sxx = to_wide(w + 4);
      st->syy = to_wide(w + 8);
      st->sxy = to_wide(w + 12);
      st->n = static_cast<int64_t>(w[16]);
      st->ext_x = static_cast<int64_t>(w[17]);
      st->ext_y = static_cast<int64_t>(w[18]);
      return;
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* st = reinterpret_cast<ExtremeState*>(s);
      if (!w[1]) return;
      const int64_t k = static_cast<int64_t>(w[0]);
      st->v = a.in_type == Type::Float ? Value::of_float(agg_float_of_key(k)) : Value::of_int(k);
      st->has = 1;
      return;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      auto* st = reinterpret_cast<SumFloatState*>(s);
      st->sum = to_acc(w);
      st->flags = static_cast<uint32_t>(w[kAccWords]);
      st->n = static_cast<int64_t>(w[kAccWords + 1]);
      return;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* st = reinterpret_cast<MomentsFloatState*>(s);
      st->sum = to_acc(w);
      st->sum_sq = to_acc(w + kAccWords);
      st->flags = static_cast<uint32_t>(w[2 * kAccWords]);
      st->n = static_cast<int64_t>(w[2 * kAccWords + 1]);
      return;
    }
    case AggOp::CorrFloat: {
      auto* st = reinterpret_cast<CorrFloatState*>(s);
      st->sx = to_acc(w);
      st->sy = to_acc(w + kAccWords);
      st->sxx = to_acc(w + 2 * kAccWords);
      st->syy = to_acc(w + 3 * kAccWords);
      st->sxy = to_acc(w + 4 * kAccWords);
      st->flags = static_cast<uint32_t>(w[5 * kAccWords]);
      st->n = static_cast<int64_t>(w[5 * kAccWords + 1]);
      return;
    }
    default: throw InternalError("aggregate without a GPU form reached the GPU");
  }
}

}  // namespace cuda
}  // namespace warpcsv
