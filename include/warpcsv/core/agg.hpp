// Aggregate operations as init / update / merge / finalize over one plain
// state struct each (DuckDB's aggregate functions; xsv's mergeable stats).
// The same merge serves partitions, threads, GPUs and hosts.
//
// Exactness: over Int, Decimal and Bool inputs every state is a set of exact
// integer moments (count, sum in 128 bits, sums of squares and products in
// 256 bits), so merging in any order gives the same bits and var/std/corr are
// computed from exact numerators with a single rounding at the end. Over
// Float inputs the moments are double-double sums (about 106 bits, Knuth's
// TwoSum and Dekker's TwoProduct): merging in another order changes them far
// below a double's last bit, so results do not depend on partitioning. This
// replaces Chan's (count, mean, M2) update, whose rounding depends on how
// rows were split.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "warpcsv/core/int128.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/core/wide.hpp"

namespace warpcsv {

enum class AggOp : uint8_t {
  CountStar,
  Count,
  SumExact,
  SumFloat,
  Min,
  Max,
  MeanExact,
  MeanFloat,
  VarExact,
  VarFloat,
  StdExact,
  StdFloat,
  First,
  Last,
  CorrExact,
  CorrFloat,
};

// One aggregate as the executors see it: which operation, the input type,
// and where its state lives inside a group's state block.
struct AggDesc {
  AggOp op;
  Type in_type;
  uint8_t in_scale;
  Type in_type2;  // corr's second argument
  uint8_t in_scale2;
  uint32_t offset;  // bytes from the start of the group's state block
};

struct CountState {
  int64_t n;
};
struct SumExactState {  // also MeanExact
  int128 sum;
  int64_t n;
};
struct SumFloatState {  // double-double (Knuth's TwoSum), also MeanFloat
  double hi, lo;
  int64_t n;
};
struct ExtremeState {  // Min, Max
  Value v;
  int64_t has;
};
struct OrderedState {  // First, Last: `order` is the row's global position key
  Value v;
  uint64_t order;
  int64_t has;
};
struct MomentsExactState {  // VarExact, StdExact
  int128 sum;
  Wide256 sum_sq;
  int64_t n;
};
// A double-double: the unevaluated sum hi + lo.
struct DD {
  double hi, lo;
};
struct MomentsFloatState {  // VarFloat, StdFloat
  DD sum, sum_sq;
  int64_t n;
};
struct CorrExactState {
  int128 sx, sy;
  Wide256 sxx, syy, sxy;
  int64_t n;
};
struct CorrFloatState {
  DD sx, sy, sxx, syy, sxy;
  int64_t n;
};

WCSV_HD inline uint32_t agg_state_size(AggOp op) {
  switch (op) {
    case AggOp::CountStar:
    case AggOp::Count: return sizeof(CountState);
    case AggOp::SumExact:
    case AggOp::MeanExact: return sizeof(SumExactState);
    case AggOp::SumFloat:
    case AggOp::MeanFloat: return sizeof(SumFloatState);
    case AggOp::Min:
    case AggOp::Max: return sizeof(ExtremeState);
    case AggOp::First:
    case AggOp::Last: return sizeof(OrderedState);
    case AggOp::VarExact:
    case AggOp::StdExact: return sizeof(MomentsExactState);
    case AggOp::VarFloat:
    case AggOp::StdFloat: return sizeof(MomentsFloatState);
    case AggOp::CorrExact: return sizeof(CorrExactState);
    case AggOp::CorrFloat: return sizeof(CorrFloatState);
  }
  return 0;
}
constexpr uint32_t kAggStateAlign = 16;

// True when the state holds a string Value the executor must give stable storage.
WCSV_HD inline bool agg_holds_string(const AggDesc& a) {
  return a.in_type == Type::String &&
         (a.op == AggOp::Min || a.op == AggOp::Max || a.op == AggOp::First || a.op == AggOp::Last);
}

WCSV_HD inline void agg_init(const AggDesc& a, char* block) {
  memset(block + a.offset, 0, agg_state_size(a.op));
}

// The sign bit of a double, -0.0 included (same code on host and device).
WCSV_HD inline bool agg_sign_bit(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return (b >> 63) != 0;
}

// Ordering of two non-null values of one type: negative, zero, positive.
// Strings bytewise; floats with NaN after everything, -0.0 before 0.0 (so min/max
// do not depend on which of the two a merge saw first).
WCSV_HD inline int agg_compare(const Value& x, const Value& y, Type t) {
  if (t == Type::Float) {
    const bool xn = x.f != x.f, yn = y.f != y.f;
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
    return x.f < y.f ? -1 : x.f > y.f ? 1 : agg_sign_bit(x.f) == agg_sign_bit(y.f) ? 0
                                            : (agg_sign_bit(x.f) ? -1 : 1);
  }
  if (t == Type::String) {
    const uint32_t n = x.s.len < y.s.len ? x.s.len : y.s.len;
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t a = static_cast<uint8_t>(x.s.ptr[i]), b = static_cast<uint8_t>(y.s.ptr[i]);
      if (a != b) return a < b ? -1 : 1;
    }
    return x.s.len < y.s.len ? -1 : (x.s.len > y.s.len ? 1 : 0);
  }
  return x.i < y.i ? -1 : (x.i > y.i ? 1 : 0);
}

namespace detail {
WCSV_HD inline void two_sum_add(double& hi, double& lo, double x) {
  const double s = hi + x;
  const double bp = s - hi;
  const double err = (hi - (s - bp)) + (x - bp);
  hi = s;
  lo += err;
}
WCSV_HD inline double pow10_double(int e) {
  double p = 1.0;
  for (int i = 0; i < e; ++i) p *= 10.0;  // exact up to 1e22
  return p;
}
WCSV_HD inline double as_double(const Value& v, Type t, uint8_t scale) {
  if (t == Type::Float) return v.f;
  const double d = int128_to_double(v.i);
  return scale ? d / pow10_double(scale) : d;
}
// Double-double arithmetic; every step is a plain IEEE operation (builds use
// no fused multiply-add), so host and device give the same bits.
WCSV_HD inline DD dd_add(DD a, DD b) {
  double hi = a.hi, lo = a.lo;
  two_sum_add(hi, lo, b.hi);
  lo += b.lo;
  const double s = hi + lo;  // renormalize
  return DD{s, lo - (s - hi)};
}
WCSV_HD inline DD dd_of(double x) { return DD{x, 0.0}; }
WCSV_HD inline void dd_split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
// Exact product of two doubles as a double-double (Dekker).
WCSV_HD inline DD dd_two_prod(double a, double b) {
  const double p = a * b;
  double ah, al, bh, bl;
  dd_split(a, ah, al);
  dd_split(b, bh, bl);
  const double err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return DD{p, err};
}
WCSV_HD inline DD dd_mul(DD a, DD b) {
  DD p = dd_two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  const double s = p.hi + p.lo;
  return DD{s, p.lo - (s - p.hi)};
}
WCSV_HD inline DD dd_neg(DD a) { return DD{-a.hi, -a.lo}; }
WCSV_HD inline double dd_value(DD a) { return a.hi + a.lo; }
// (sum_sq - sum*sum/n) in double-double: n times the variance numerator / n.
WCSV_HD inline double dd_centered(DD sum_sq, DD sum_a, DD sum_b, int64_t n) {
  const DD prod = dd_mul(sum_a, sum_b);
  const double q = dd_value(prod) / static_cast<double>(n);
  // prod / n as a double-double: q + (prod - q*n)/n
  const DD qn = dd_two_prod(q, static_cast<double>(n));
  const double r = (dd_value(dd_add(prod, dd_neg(qn)))) / static_cast<double>(n);
  return dd_value(dd_add(sum_sq, dd_neg(DD{q, r})));
}
}  // namespace detail

// Adds one row. `x` (and `y` for corr) are the argument values; `order` is
// the row's global position key (first/last). Returns true when a string
// Value was stored that still points into the row's bytes: the caller must
// copy it into stable storage.
WCSV_HD inline bool agg_update(const AggDesc& a, char* block, const Value& x, const Value& y,
                               uint64_t order) {
  char* s = block + a.offset;
  switch (a.op) {
    case AggOp::CountStar: reinterpret_cast<CountState*>(s)->n += 1; return false;
    case AggOp::Count:
      if (!x.null) reinterpret_cast<CountState*>(s)->n += 1;
      return false;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      if (x.null) return false;
      auto* st = reinterpret_cast<SumExactState*>(s);
      st->sum += x.i;
      st->n += 1;
      return false;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      if (x.null) return false;
      auto* st = reinterpret_cast<SumFloatState*>(s);
      const DD t = detail::dd_add(DD{st->hi, st->lo}, detail::dd_of(x.f));
      st->hi = t.hi;
      st->lo = t.lo;
      st->n += 1;
      return false;
    }
    case AggOp::Min:
    case AggOp::Max: {
      if (x.null) return false;
      auto* st = reinterpret_cast<ExtremeState*>(s);
      const int c = st->has ? agg_compare(x, st->v, a.in_type) : 0;
      if (!st->has || (a.op == AggOp::Min ? c < 0 : c > 0)) {
        st->v = x;
        st->has = 1;
        return a.in_type == Type::String;
      }
      return false;
    }
    case AggOp::First:
    case AggOp::Last: {
      if (x.null) return false;  // first/last skip nulls (see README)
      auto* st = reinterpret_cast<OrderedState*>(s);
      if (!st->has || (a.op == AggOp::First ? order < st->order : order > st->order)) {
        st->v = x;
        st->order = order;
        st->has = 1;
        return a.in_type == Type::String;
      }
      return false;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      if (x.null) return false;
      auto* st = reinterpret_cast<MomentsExactState*>(s);
      st->sum += x.i;
      st->sum_sq = wide_add(st->sum_sq, wide_mul(x.i, x.i));
      st->n += 1;
      return false;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      if (x.null) return false;
      auto* st = reinterpret_cast<MomentsFloatState*>(s);
      st->sum = detail::dd_add(st->sum, detail::dd_of(x.f));
      st->sum_sq = detail::dd_add(st->sum_sq, detail::dd_two_prod(x.f, x.f));
      st->n += 1;
      return false;
    }
    case AggOp::CorrExact: {
      if (x.null || y.null) return false;
      auto* st = reinterpret_cast<CorrExactState*>(s);
      st->sx += x.i;
      st->sy += y.i;
      st->sxx = wide_add(st->sxx, wide_mul(x.i, x.i));
      st->syy = wide_add(st->syy, wide_mul(y.i, y.i));
      st->sxy = wide_add(st->sxy, wide_mul(x.i, y.i));
      st->n += 1;
      return false;
    }
    case AggOp::CorrFloat: {
      if (x.null || y.null) return false;
      auto* st = reinterpret_cast<CorrFloatState*>(s);
      const double xv = detail::as_double(x, a.in_type, a.in_scale);
      const double yv = detail::as_double(y, a.in_type2, a.in_scale2);
      st->sx = detail::dd_add(st->sx, detail::dd_of(xv));
      st->sy = detail::dd_add(st->sy, detail::dd_of(yv));
      st->sxx = detail::dd_add(st->sxx, detail::dd_two_prod(xv, xv));
      st->syy = detail::dd_add(st->syy, detail::dd_two_prod(yv, yv));
      st->sxy = detail::dd_add(st->sxy, detail::dd_two_prod(xv, yv));
      st->n += 1;
      return false;
    }
  }
  return false;
}

// Folds state `src` into `dst` (same AggDesc). For first/last/min/max the
// string in `src` must stay alive as long as `dst` (the caller copies).
// Returns true when dst now holds src's string Value.
WCSV_HD inline bool agg_merge(const AggDesc& a, char* dst_block, const char* src_block) {
  char* d = dst_block + a.offset;
  const char* s = src_block + a.offset;
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count:
      reinterpret_cast<CountState*>(d)->n += reinterpret_cast<const CountState*>(s)->n;
      return false;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      auto* x = reinterpret_cast<SumExactState*>(d);
      auto* y = reinterpret_cast<const SumExactState*>(s);
      x->sum += y->sum;
      x->n += y->n;
      return false;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      auto* x = reinterpret_cast<SumFloatState*>(d);
      auto* y = reinterpret_cast<const SumFloatState*>(s);
      const DD t = detail::dd_add(DD{x->hi, x->lo}, DD{y->hi, y->lo});
      x->hi = t.hi;
      x->lo = t.lo;
      x->n += y->n;
      return false;
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* x = reinterpret_cast<ExtremeState*>(d);
      auto* y = reinterpret_cast<const ExtremeState*>(s);
      if (!y->has) return false;
      const int c = x->has ? agg_compare(y->v, x->v, a.in_type) : 0;
      if (!x->has || (a.op == AggOp::Min ? c < 0 : c > 0)) {
        *x = *y;
        return a.in_type == Type::String;
      }
      return false;
    }
    case AggOp::First:
    case AggOp::Last: {
      auto* x = reinterpret_cast<OrderedState*>(d);
      auto* y = reinterpret_cast<const OrderedState*>(s);
      if (!y->has) return false;
      if (!x->has || (a.op == AggOp::First ? y->order < x->order : y->order > x->order)) {
        *x = *y;
        return a.in_type == Type::String;
      }
      return false;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* x = reinterpret_cast<MomentsExactState*>(d);
      auto* y = reinterpret_cast<const MomentsExactState*>(s);
      x->sum += y->sum;
      x->sum_sq = wide_add(x->sum_sq, y->sum_sq);
      x->n += y->n;
      return false;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* x = reinterpret_cast<MomentsFloatState*>(d);
      auto* y = reinterpret_cast<const MomentsFloatState*>(s);
      x->sum = detail::dd_add(x->sum, y->sum);
      x->sum_sq = detail::dd_add(x->sum_sq, y->sum_sq);
      x->n += y->n;
      return false;
    }
    case AggOp::CorrExact: {
      auto* x = reinterpret_cast<CorrExactState*>(d);
      auto* y = reinterpret_cast<const CorrExactState*>(s);
      x->sx += y->sx;
      x->sy += y->sy;
      x->sxx = wide_add(x->sxx, y->sxx);
      x->syy = wide_add(x->syy, y->syy);
      x->sxy = wide_add(x->sxy, y->sxy);
      x->n += y->n;
      return false;
    }
    case AggOp::CorrFloat: {
      auto* x = reinterpret_cast<CorrFloatState*>(d);
      auto* y = reinterpret_cast<const CorrFloatState*>(s);
      x->sx = detail::dd_add(x->sx, y->sx);
      x->sy = detail::dd_add(x->sy, y->sy);
      x->sxx = detail::dd_add(x->sxx, y->sxx);
      x->syy = detail::dd_add(x->syy, y->syy);
      x->sxy = detail::dd_add(x->sxy, y->sxy);
      x->n += y->n;
      return false;
    }
  }
  return false;
}

// The aggregate's result. Strings in the result point into the state.
WCSV_HD inline Value agg_finalize(const AggDesc& a, const char* block) {
  const char* s = block + a.offset;
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count: return Value::of_int(reinterpret_cast<const CountState*>(s)->n);
    case AggOp::SumExact: {
      auto* st = reinterpret_cast<const SumExactState*>(s);
      return st->n ? Value::of_int(st->sum) : Value::make_null();
    }
    case AggOp::SumFloat: {
      auto* st = reinterpret_cast<const SumFloatState*>(s);
      return st->n ? Value::of_float(st->hi + st->lo) : Value::make_null();
    }
    case AggOp::MeanExact: {
      auto* st = reinterpret_cast<const SumExactState*>(s);
      if (!st->n) return Value::make_null();
      const double den = static_cast<double>(st->n) * detail::pow10_double(a.in_scale);
      return Value::of_float(int128_to_double(st->sum) / den);
    }
    case AggOp::MeanFloat: {
      auto* st = reinterpret_cast<const SumFloatState*>(s);
      if (!st->n) return Value::make_null();
      return Value::of_float((st->hi + st->lo) / static_cast<double>(st->n));
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* st = reinterpret_cast<const ExtremeState*>(s);
      return st->has ? st->v : Value::make_null();
    }
    case AggOp::First:
    case AggOp::Last: {
      auto* st = reinterpret_cast<const OrderedState*>(s);
      return st->has ? st->v : Value::make_null();
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* st = reinterpret_cast<const MomentsExactState*>(s);
      if (st->n < 2) return Value::make_null();
      // n * sum(x^2) - sum(x)^2, exact; then one division.
      const Wide256 num =
          wide_sub(wide_mul_u64(st->sum_sq, static_cast<uint64_t>(st->n)), wide_mul(st->sum, st->sum));
      const double p = detail::pow10_double(a.in_scale);
      const double nn = static_cast<double>(st->n) * static_cast<double>(st->n - 1);
      double var = wide_to_double(num) / nn / (p * p);
      if (var < 0) var = 0;
      return Value::of_float(a.op == AggOp::VarExact ? var : sqrt(var));
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* st = reinterpret_cast<const MomentsFloatState*>(s);
      if (st->n < 2) return Value::make_null();
      double var = detail::dd_centered(st->sum_sq, st->sum, st->sum, st->n) / static_cast<double>(st->n - 1);
      if (var < 0) var = 0;
      return Value::of_float(a.op == AggOp::VarFloat ? var : sqrt(var));
    }
    case AggOp::CorrExact: {
      auto* st = reinterpret_cast<const CorrExactState*>(s);
      if (st->n < 2) return Value::make_null();
      const uint64_t n = static_cast<uint64_t>(st->n);
      const Wide256 cov = wide_sub(wide_mul_u64(st->sxy, n), wide_mul(st->sx, st->sy));
      const Wide256 vx = wide_sub(wide_mul_u64(st->sxx, n), wide_mul(st->sx, st->sx));
      const Wide256 vy = wide_sub(wide_mul_u64(st->syy, n), wide_mul(st->sy, st->sy));
      if (vx.is_zero() || vy.is_zero()) return Value::make_null();
      const double c = wide_to_double(cov) / sqrt(wide_to_double(vx)) / sqrt(wide_to_double(vy));
      return Value::of_float(c);
    }
    case AggOp::CorrFloat: {
      auto* st = reinterpret_cast<const CorrFloatState*>(s);
      if (st->n < 2) return Value::make_null();
      const double cov = detail::dd_centered(st->sxy, st->sx, st->sy, st->n);
      const double vx = detail::dd_centered(st->sxx, st->sx, st->sx, st->n);
      const double vy = detail::dd_centered(st->syy, st->sy, st->sy, st->n);
      if (!(vx > 0) || !(vy > 0)) return Value::make_null();
      return Value::of_float(cov / sqrt(vx) / sqrt(vy));
    }
  }
  return Value::make_null();
}

}  // namespace warpcsv
