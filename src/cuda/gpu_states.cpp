#include "cuda/gpu_states.hpp"

#include "cuda/agg_words.hpp"
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
    case AggOp::Count: reinterpret_cast<CountState*>(s)->n = static_cast<int64_t>(w[CountWords::n]); return;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      using L = SumExactWords;
      auto* st = reinterpret_cast<SumExactState*>(s);
      st->sum = to_int128(w + L::sum);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext = static_cast<int64_t>(w[L::ext]);
      return;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      using L = MomentsExactWords;
      auto* st = reinterpret_cast<MomentsExactState*>(s);
      st->sum = to_int128(w + L::sum);
      st->sum_sq = to_wide(w + L::sum_sq);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext = static_cast<int64_t>(w[L::ext]);
      return;
    }
    case AggOp::CorrExact: {
      using L = CorrExactWords;
      auto* st = reinterpret_cast<CorrExactState*>(s);
      st->sx = to_int128(w + L::sx);
      st->sy = to_int128(w + L::sy);
      st->sxx = to_wide(w + L::sxx);
      st->syy = to_wide(w + L::syy);
      st->sxy = to_wide(w + L::sxy);
      st->n = static_cast<int64_t>(w[L::n]);
      st->ext_x = static_cast<int64_t>(w[L::ext_x]);
      st->ext_y = static_cast<int64_t>(w[L::ext_y]);
      return;
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* st = reinterpret_cast<ExtremeState*>(s);
      if (!w[ExtremeWords::has]) return;
      const int64_t k = static_cast<int64_t>(w[ExtremeWords::key]);
      st->v = a.in_type == Type::Float ? Value::of_float(agg_float_of_key(k)) : Value::of_int(k);
      st->has = 1;
      return;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      auto* st = reinterpret_cast<SumFloatState*>(s);
      st->sum = to_acc(w + FloatWords::acc(0));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(1)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(1)]);
      return;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* st = reinterpret_cast<MomentsFloatState*>(s);
      st->sum = to_acc(w + FloatWords::acc(0));
      st->sum_sq = to_acc(w + FloatWords::acc(1));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(2)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(2)]);
      return;
    }
    case AggOp::CorrFloat: {
      auto* st = reinterpret_cast<CorrFloatState*>(s);
      st->sx = to_acc(w + FloatWords::acc(0));
      st->sy = to_acc(w + FloatWords::acc(1));
      st->sxx = to_acc(w + FloatWords::acc(2));
      st->syy = to_acc(w + FloatWords::acc(3));
      st->sxy = to_acc(w + FloatWords::acc(4));
      st->flags = static_cast<uint32_t>(w[FloatWords::flags(5)]);
      st->n = static_cast<int64_t>(w[FloatWords::n(5)]);
      return;
    }
    default: throw InternalError("aggregate without a GPU form reached the GPU");
  }
}

}  // namespace cuda
}  // namespace warpcsv
