// Aggregate operations as init / update / merge / finalize over one plain
// state struct each (DuckDB's aggregate functions; xsv's mergeable stats).
// The same merge serves partitions, threads, GPUs and hosts.
//
// Exactness: over Int, Decimal and Bool inputs every state is a set of exact
// integer moments (count, sum in 128 bits, sums of squares and products in
// 256 bits), so merging in any order gives the same bits; var is the exact
// ratio rounded once, std and corr the sqrt of one (within 1 ulp). Over
// Float inputs the moments are exact too: sums of doubles (and of the exact
// products x*y, by Dekker's TwoProduct) in a 640-bit fixed-point accumulator
// (wide.hpp). This replaces Chan's (count, mean, M2) update, whose rounding
// depends on how the rows were split.
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
  // The position of the group's first row (its order key, as an int in the
  // same order): what orders `distinct` run as groups by first occurrence.
  // No argument.
  FirstRow,
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
// An exact sum is 192 bits: the int128 `sum` and a third limb `ext`, so
// that no order of adds overflows (n < 2^63 values below 2^127); the value
// fits 128 bits (sum_fits) exactly when ext is sum's sign extension.
struct SumExactState {  // also MeanExact
  int128 sum;
  int64_t n;
  int64_t ext;
};
struct SumFloatState {  // also MeanFloat
  FloatAcc sum;
  uint32_t flags;
  int64_t n;
};
// Min, Max: v is null until the first value (agg_init makes it so), which
// keeps the state at 32 bytes: a group of min, mean and max fits 128.
struct ExtremeState {
  Value v;
};
struct OrderedState {  // First, Last: `order` is the row's global position key
  Value v;
  uint64_t order;
  int64_t has;
};
struct FirstRowState {
  uint64_t after;  // the first row's order key + 1; 0 before any row
};
struct MomentsExactState {  // VarExact, StdExact
  int128 sum;
  Wide256 sum_sq;
  int64_t n;
  int64_t ext;  // sum's third limb
};
struct MomentsFloatState {  // VarFloat, StdFloat
  FloatAcc sum, sum_sq;
  uint32_t flags;
  int64_t n;
};
struct CorrExactState {
  int128 sx, sy;
  Wide256 sxx, syy, sxy;
  int64_t n;
  int64_t ext_x, ext_y;  // third limbs of sx and sy
};
struct CorrFloatState {
  FloatAcc sx, sy, sxx, syy, sxy;
  uint32_t flags;
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
    case AggOp::FirstRow: return sizeof(FirstRowState);
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

// (sum, ext) += (x, x_ext) as 192-bit two's complement numbers.
WCSV_HD inline void sum192_add(int128& sum, int64_t& ext, int128 x, int64_t x_ext) {
  const uint128 a = static_cast<uint128>(sum), r = a + static_cast<uint128>(x);
  ext = static_cast<int64_t>(static_cast<uint64_t>(ext) + static_cast<uint64_t>(x_ext) + (r < a ? 1u : 0u));
  sum = static_cast<int128>(r);
}
// Adds one value (sign-extended).
WCSV_HD inline void sum192_add(int128& sum, int64_t& ext, int128 x) { sum192_add(sum, ext, x, x < 0 ? -1 : 0); }
WCSV_HD inline bool sum_fits(int128 sum, int64_t ext) { return ext == (sum < 0 ? -1 : 0); }
// var, std and corr keep sums of squares and products in 256 bits, exact
// while every value fits 64 bits (2^63 squares below 2^126: below 2^189,
// times n below 2^252). A value beyond that adds this to the sum's third
// limb, so that the sum no longer fits and the run fails naming the
// aggregate (it wrapped around to 0.0 before).
constexpr int64_t kExtBeyond64 = int64_t{1} << 48;
WCSV_HD inline int64_t beyond64(int128 x) { return x < INT64_MIN || x > INT64_MAX ? kExtBeyond64 : 0; }

// True when the state holds a string Value the executor must give stable storage.
WCSV_HD inline bool agg_holds_string(const AggDesc& a) {
  return a.in_type == Type::String &&
         (a.op == AggOp::Min || a.op == AggOp::Max || a.op == AggOp::First || a.op == AggOp::Last);
}

WCSV_HD inline void agg_init(const AggDesc& a, char* block) {
  memset(block + a.offset, 0, agg_state_size(a.op));
  if (a.op == AggOp::Min || a.op == AggOp::Max) reinterpret_cast<ExtremeState*>(block + a.offset)->v.null = true;
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

// A double as a signed 64-bit key in agg_compare's order (-0 < +0, every
// NaN equal and above +inf), so min/max can use integer atomics; and back
// (a NaN comes back as the quiet NaN).
WCSV_HD inline int64_t agg_float_key(double x) {
  if (x != x) return INT64_MAX;
  int64_t k;
  memcpy(&k, &x, 8);
  return k < 0 ? k ^ INT64_MAX : k;
}
WCSV_HD inline double agg_float_of_key(int64_t k) {
  if (k == INT64_MAX) return double_of_bits(0x7ff8000000000000ull);
  if (k < 0) k ^= INT64_MAX;
  double x;
  memcpy(&x, &k, 8);
  return x;
}

// Holistic aggregates sort and compare values by an order-preserving 64-bit
// key: an int, decimal, date, timestamp or bool that fits 64 bits as its
// int64 with the sign bit flipped, a float by agg_float_key with -0 as 0 and
// every NaN as the quiet NaN (one value each there), a string of at most 8
// bytes without a NUL by its bytes, big-endian and zero-padded (so keys order
// as the bytes do, a prefix first). The key is the whole value:
// holistic_value_of_key gives it back (a string's as the int
// string_of_holistic_key reads).
// The first 8 bytes of p[0, n), big-endian and zero-padded: keys that order
// as the bytes do (a prefix first).
WCSV_HD inline uint64_t string_prefix8(const char* p, uint32_t n) {
  uint64_t k = 0;
  for (uint32_t i = 0; i < 8; ++i) k = (k << 8) | (i < n ? static_cast<uint8_t>(p[i]) : 0u);
  return k;
}
WCSV_HD inline bool holistic_key_fits(const Value& v, Type t) {
  if (t == Type::String) {
    if (v.s.len > 8) return false;
    for (uint32_t i = 0; i < v.s.len; ++i)
      if (v.s.ptr[i] == 0) return false;
    return true;
  }
  return t == Type::Float || (v.i >= INT64_MIN && v.i <= INT64_MAX);
}
WCSV_HD inline uint64_t holistic_key(const Value& v, Type t) {
  constexpr uint64_t kSign = 1ull << 63;
  if (t == Type::String) return string_prefix8(v.s.ptr, v.s.len);
  if (t == Type::Float) return static_cast<uint64_t>(agg_float_key(v.f == 0 ? 0.0 : v.f)) ^ kSign;
  return static_cast<uint64_t>(static_cast<int64_t>(v.i)) ^ kSign;
}
WCSV_HD inline Value holistic_value_of_key(uint64_t key, Type t) {
  if (t == Type::String) return Value::of_int(static_cast<int128>(key));
  const int64_t k = static_cast<int64_t>(key ^ (1ull << 63));
  return t == Type::Float ? Value::of_float(agg_float_of_key(k)) : Value::of_int(k);
}
// The bytes of a string's holistic key (held as holistic_value_of_key's int)
// into out[0, 8); returns their length.
inline uint32_t string_of_holistic_key(const Value& v, char* out) {
  const uint64_t k = static_cast<uint64_t>(v.i);
  uint32_t n = 0;
  while (n < 8 && ((k >> (56 - 8 * n)) & 0xff) != 0) {
    out[n] = static_cast<char>((k >> (56 - 8 * n)) & 0xff);
    ++n;
  }
  return n;
}

namespace detail {
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
WCSV_HD inline void dd_split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
// The exact product a*b as p + err (Dekker's TwoProduct; builds use no fused
// multiply-add, so host and device agree). err is NaN only when p is infinite.
WCSV_HD inline void two_product(double a, double b, double& p, double& err) {
  p = a * b;
  double ah, al, bh, bl;
  dd_split(a, ah, al);
  dd_split(b, bh, bl);
  err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}
// Adds the exact product a*b.
WCSV_HD inline void acc_add_product(FloatAcc& acc, uint32_t& flags, double a, double b) {
  double p, err;
  two_product(a, b, p, err);
  float_acc_add(acc, flags, p);
  if (err == err) float_acc_add(acc, flags, err);  // NaN only when p is infinite: recorded
}
// Variance-style numerator n*sum_ab - sum_a*sum_b as a double.
WCSV_HD inline double centered(const FloatAcc& ab, const FloatAcc& a, const FloatAcc& b, int64_t n) {
  return big_to_double(float_centered(ab, a, b, n), -2 * kFloatAccFracBits);
}
// The sample variance (n sum(x^2) - sum(x)^2) / (n (n-1) 10^2s), rounded
// once. The numerator is below 2^252 (values within 64 bits, n < 2^63) and
// the denominator below 2^126 10^36 < 2^246 (scale <= 18), so both fit 256 bits.
WCSV_HD inline double exact_variance(const MomentsExactState& st, int scale) {
  const Wide256 num = wide_sub(wide_mul_u64(st.sum_sq, static_cast<uint64_t>(st.n)), wide_mul(st.sum, st.sum));
  if (num.negative()) return 0.0;  // not reached from valid states: the numerator is a sum of squares
  Wide256 den = Wide256::of(static_cast<int128>(static_cast<uint128>(st.n) * static_cast<uint128>(st.n - 1)));
  for (int i = 0; i < 2 * scale; ++i) den = wide_mul_u64(den, 10);
  return big_ratio_to_double(num, den);
}
// cov / sqrt(vx vy) from the exact centered moments (vx, vy > 0). corr^2 =
// cov^2 / (vx vy) is rounded once (each factor below 2^252, so 512 bits
// hold the products); the sqrt of that has relative error below 2^-54
// before its own rounding, so the result is within 1 ulp (and |corr| <= 1).
WCSV_HD inline double exact_corr(const Wide256& cov, const Wide256& vx, const Wide256& vy) {
  const double c = sqrt(big_ratio_to_double(big_mul(cov, cov), big_mul(vx, vy)));
  return cov.negative() ? -c : c;
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
      sum192_add(st->sum, st->ext, x.i);
      st->n += 1;
      return false;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      if (x.null) return false;
      auto* st = reinterpret_cast<SumFloatState*>(s);
      float_acc_add(st->sum, st->flags, x.f);
      st->n += 1;
      return false;
    }
    case AggOp::Min:
    case AggOp::Max: {
      if (x.null) return false;
      auto* st = reinterpret_cast<ExtremeState*>(s);
      const bool has = !st->v.null;
      const int c = has ? agg_compare(x, st->v, a.in_type) : 0;
      if (!has || (a.op == AggOp::Min ? c < 0 : c > 0)) {
        st->v = x;
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
    case AggOp::FirstRow: {
      auto* st = reinterpret_cast<FirstRowState*>(s);
      if (st->after == 0 || order < st->after - 1) st->after = order + 1;
      return false;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      if (x.null) return false;
      auto* st = reinterpret_cast<MomentsExactState*>(s);
      sum192_add(st->sum, st->ext, x.i);
      st->ext += beyond64(x.i);
      wide_add_product(st->sum_sq, x.i, x.i);
      st->n += 1;
      return false;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      if (x.null) return false;
      auto* st = reinterpret_cast<MomentsFloatState*>(s);
      float_acc_add(st->sum, st->flags, x.f);
      detail::acc_add_product(st->sum_sq, st->flags, x.f, x.f);
      st->n += 1;
      return false;
    }
    case AggOp::CorrExact: {
      if (x.null || y.null) return false;
      auto* st = reinterpret_cast<CorrExactState*>(s);
      sum192_add(st->sx, st->ext_x, x.i);
      sum192_add(st->sy, st->ext_y, y.i);
      st->ext_x += beyond64(x.i);
      st->ext_y += beyond64(y.i);
      wide_add_product(st->sxx, x.i, x.i);
      wide_add_product(st->syy, y.i, y.i);
      wide_add_product(st->sxy, x.i, y.i);
      st->n += 1;
      return false;
    }
    case AggOp::CorrFloat: {
      if (x.null || y.null) return false;
      auto* st = reinterpret_cast<CorrFloatState*>(s);
      const double xv = detail::as_double(x, a.in_type, a.in_scale);
      const double yv = detail::as_double(y, a.in_type2, a.in_scale2);
      float_acc_add(st->sx, st->flags, xv);
      float_acc_add(st->sy, st->flags, yv);
      detail::acc_add_product(st->sxx, st->flags, xv, xv);
      detail::acc_add_product(st->syy, st->flags, yv, yv);
      detail::acc_add_product(st->sxy, st->flags, xv, yv);
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
      sum192_add(x->sum, x->ext, y->sum, y->ext);
      x->n += y->n;
      return false;
    }
    case AggOp::SumFloat:
    case AggOp::MeanFloat: {
      auto* x = reinterpret_cast<SumFloatState*>(d);
      auto* y = reinterpret_cast<const SumFloatState*>(s);
      x->sum = big_add(x->sum, y->sum);
      x->flags |= y->flags;
      x->n += y->n;
      return false;
    }
    case AggOp::Min:
    case AggOp::Max: {
      auto* x = reinterpret_cast<ExtremeState*>(d);
      auto* y = reinterpret_cast<const ExtremeState*>(s);
      if (y->v.null) return false;
      const int c = !x->v.null ? agg_compare(y->v, x->v, a.in_type) : 0;
      if (x->v.null || (a.op == AggOp::Min ? c < 0 : c > 0)) {
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
    case AggOp::FirstRow: {
      auto* x = reinterpret_cast<FirstRowState*>(d);
      auto* y = reinterpret_cast<const FirstRowState*>(s);
      if (y->after != 0 && (x->after == 0 || y->after < x->after)) x->after = y->after;
      return false;
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* x = reinterpret_cast<MomentsExactState*>(d);
      auto* y = reinterpret_cast<const MomentsExactState*>(s);
      sum192_add(x->sum, x->ext, y->sum, y->ext);
      x->sum_sq = wide_add(x->sum_sq, y->sum_sq);
      x->n += y->n;
      return false;
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* x = reinterpret_cast<MomentsFloatState*>(d);
      auto* y = reinterpret_cast<const MomentsFloatState*>(s);
      x->sum = big_add(x->sum, y->sum);
      x->sum_sq = big_add(x->sum_sq, y->sum_sq);
      x->flags |= y->flags;
      x->n += y->n;
      return false;
    }
    case AggOp::CorrExact: {
      auto* x = reinterpret_cast<CorrExactState*>(d);
      auto* y = reinterpret_cast<const CorrExactState*>(s);
      sum192_add(x->sx, x->ext_x, y->sx, y->ext_x);
      sum192_add(x->sy, x->ext_y, y->sy, y->ext_y);
      x->sxx = wide_add(x->sxx, y->sxx);
      x->syy = wide_add(x->syy, y->syy);
      x->sxy = wide_add(x->sxy, y->sxy);
      x->n += y->n;
      return false;
    }
    case AggOp::CorrFloat: {
      auto* x = reinterpret_cast<CorrFloatState*>(d);
      auto* y = reinterpret_cast<const CorrFloatState*>(s);
      x->sx = big_add(x->sx, y->sx);
      x->sy = big_add(x->sy, y->sy);
      x->sxx = big_add(x->sxx, y->sxx);
      x->syy = big_add(x->syy, y->syy);
      x->sxy = big_add(x->sxy, y->sxy);
      x->flags |= y->flags;
      x->n += y->n;
      return false;
    }
  }
  return false;
}

WCSV_HD inline bool is_float_op(AggOp op) {
  return op == AggOp::SumFloat || op == AggOp::MeanFloat || op == AggOp::VarFloat || op == AggOp::StdFloat ||
         op == AggOp::CorrFloat;
}
WCSV_HD inline bool agg_out_of_range(uint32_t flags) { return (flags & kAccOutOfRange) && !(flags & kAccSpecial); }

// Whether the aggregate's exact sum passed 128 bits (ints and decimals) or
// its float accumulator's range: its result (the sum, or a mean, variance
// or correlation computed from it) cannot be given, and the run fails
// naming it, rather than wrapping around or printing an infinity.
WCSV_HD inline bool agg_overflowed(const AggDesc& a, const char* block) {
  const char* s = block + a.offset;
  switch (a.op) {
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      auto* st = reinterpret_cast<const SumExactState*>(s);
      return !sum_fits(st->sum, st->ext);
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* st = reinterpret_cast<const MomentsExactState*>(s);
      return !sum_fits(st->sum, st->ext);
    }
    case AggOp::CorrExact: {
      auto* st = reinterpret_cast<const CorrExactState*>(s);
      return !sum_fits(st->sx, st->ext_x) || !sum_fits(st->sy, st->ext_y);
    }
    // A finite float past the accumulator's range (an infinity or NaN among
    // the values decides the result by itself).
    case AggOp::SumFloat:
    case AggOp::MeanFloat: return agg_out_of_range(reinterpret_cast<const SumFloatState*>(s)->flags);
    case AggOp::VarFloat:
    case AggOp::StdFloat: return agg_out_of_range(reinterpret_cast<const MomentsFloatState*>(s)->flags);
    case AggOp::CorrFloat: return agg_out_of_range(reinterpret_cast<const CorrFloatState*>(s)->flags);
    default: return false;
  }
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
      return st->n ? Value::of_float(float_acc_value(st->sum, st->flags)) : Value::make_null();
    }
    case AggOp::MeanExact: {
      auto* st = reinterpret_cast<const SumExactState*>(s);
      if (!st->n) return Value::make_null();
      // sum / (n 10^scale), rounded once; the denominator is below 2^63 10^18 < 2^123.
      const uint128 den = static_cast<uint128>(st->n) * static_cast<uint128>(pow10_i128(a.in_scale));
      return Value::of_float(int128_div_to_double(st->sum, den));
    }
    case AggOp::MeanFloat: {
      auto* st = reinterpret_cast<const SumFloatState*>(s);
      if (!st->n) return Value::make_null();
      return Value::of_float(float_acc_value(st->sum, st->flags) / static_cast<double>(st->n));
    }
    case AggOp::Min:
    case AggOp::Max: {
      return reinterpret_cast<const ExtremeState*>(s)->v;  // null when no value came
    }
    case AggOp::First:
    case AggOp::Last: {
      auto* st = reinterpret_cast<const OrderedState*>(s);
      return st->has ? st->v : Value::make_null();
    }
    case AggOp::FirstRow: {  // an int in the order keys' order (the top bit flipped: a later rank's keys pass 2^63)
      const uint64_t after = reinterpret_cast<const FirstRowState*>(s)->after;
      return after ? Value::of_int(static_cast<int64_t>((after - 1) ^ (uint64_t{1} << 63))) : Value::make_null();
    }
    case AggOp::VarExact:
    case AggOp::StdExact: {
      auto* st = reinterpret_cast<const MomentsExactState*>(s);
      if (st->n < 2) return Value::make_null();
      const double var = detail::exact_variance(*st, a.in_scale);
      // sqrt of the correctly rounded variance: relative error below 2^-54
      // before the sqrt's own rounding, so within 1 ulp of the exact std.
      return Value::of_float(a.op == AggOp::VarExact ? var : sqrt(var));
    }
    case AggOp::VarFloat:
    case AggOp::StdFloat: {
      auto* st = reinterpret_cast<const MomentsFloatState*>(s);
      if (st->n < 2) return Value::make_null();
      const double nn = static_cast<double>(st->n) * static_cast<double>(st->n - 1);
      double var = float_acc_special(st->flags ? static_cast<uint32_t>(kAccNaN) : 0u,
                                     detail::centered(st->sum_sq, st->sum, st->sum, st->n) / nn);
      // Squares below 2^-256 are dropped while the square of the sum is
      // not: values near 1e-40 gave a negative variance.
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
      return Value::of_float(detail::exact_corr(cov, vx, vy));
    }
    case AggOp::CorrFloat: {
      auto* st = reinterpret_cast<const CorrFloatState*>(s);
      if (st->n < 2) return Value::make_null();
      if (st->flags) return Value::of_float(float_acc_special(kAccNaN, 0));
      const double cov = detail::centered(st->sxy, st->sx, st->sy, st->n);
      const double vx = detail::centered(st->sxx, st->sx, st->sx, st->n);
      const double vy = detail::centered(st->syy, st->sy, st->sy, st->n);
      if (!(vx > 0) || !(vy > 0)) return Value::make_null();
      return Value::of_float(cov / sqrt(vx) / sqrt(vy));
    }
  }
  return Value::make_null();
}

}  // namespace warpcsv
