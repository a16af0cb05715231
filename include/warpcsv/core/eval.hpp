// The expression evaluator: runs a bound Program (typed postfix bytecode) on
// one row. Written once for the CPU and the GPU: no exceptions, no allocation;
// data-dependent failures (overflow, scratch full) go to EvalContext::status.
//
// Int is 64-bit: arithmetic on ints is computed in 128 bits and its result must
// fit 64 (Instr::wide: over a 128-bit `sum`, it must fit 128). Decimals are
// exact scaled integers of up to 128 bits (about 38 digits). A result out of
// range is IntegerOverflow / DecimalOverflow: a bad row in a scan.
#pragma once
#include <cmath>
#include <cstdint>

#include "warpcsv/core/datetime.hpp"
#include "warpcsv/core/hd.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/core/program.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/core/value_text.hpp"

namespace warpcsv {

// Per-row (or per-batch) evaluation state. Strings made by lower/upper are
// written to scratch; the caller resets scratch_used when they are consumed.
struct EvalContext {
  char* scratch;
  uint32_t scratch_cap;
  uint32_t scratch_used;
  EvalStatus status;
  StrRef file;  // the input file of the row (filename()); ptr null where none is known
  // The first text a cast could not read, and the type it was cast to, for
  // the message (ptr null: none, or a number out of the type's range).
  StrRef failed_cast;
  ColumnType failed_cast_type;
};

// A fresh context over a caller-owned scratch buffer.
WCSV_HD inline EvalContext make_eval_context(char* scratch, uint32_t cap) {
  EvalContext c;
  c.scratch = scratch;
  c.scratch_cap = cap;
  c.scratch_used = 0;
  c.status = EvalStatus::Ok;
  c.file = StrRef{nullptr, 0};
  c.failed_cast = StrRef{nullptr, 0};
  c.failed_cast_type = ColumnType{};
  return c;
}

namespace detail {

WCSV_HD inline int cmp_bytes(StrRef a, StrRef b) {
  uint32_t n = a.len < b.len ? a.len : b.len;
  for (uint32_t i = 0; i < n; ++i) {
    unsigned char x = static_cast<unsigned char>(a.ptr[i]);
    unsigned char y = static_cast<unsigned char>(b.ptr[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.len == b.len ? 0 : (a.len < b.len ? -1 : 1);
}

WCSV_HD inline bool bytes_equal(const char* a, const char* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

constexpr uint32_t kNotFound = 0xFFFFFFFFu;

// Where `needle` first stands in `hay` at or after `from`; kNotFound if nowhere.
WCSV_HD inline uint32_t find_bytes(StrRef hay, StrRef needle, uint32_t from) {
  if (needle.len == 0) return from <= hay.len ? from : kNotFound;
  for (uint32_t i = from; needle.len <= hay.len && i <= hay.len - needle.len; ++i)
    if (hay.ptr[i] == needle.ptr[0] && bytes_equal(hay.ptr + i, needle.ptr, needle.len)) return i;
  return kNotFound;
}

WCSV_HD inline bool str_contains(StrRef hay, StrRef needle) { return find_bytes(hay, needle, 0) != kNotFound; }

// Rounds v / p to the nearest integer, halves away from zero (p > 0).
WCSV_HD inline int128 div_round_half_away(int128 v, int128 p) {
  int128 q = v / p, r = v % p;
  if (r < 0) r = -r;
  if (r >= p - r) q += v < 0 ? -1 : 1;  // r*2 >= p without overflowing
  return q;
}

// Rescales an integral decimal from scale `from` to scale `to`; false on overflow.
WCSV_HD inline bool rescale(int128 v, int from, int to, int128* out) {
  if (to == from) {
    *out = v;
    return true;
  }
  if (to > from) return checked_mul(v, pow10_i128(to - from), out);
  *out = div_round_half_away(v, pow10_i128(from - to));
  return true;
}

WCSV_HD inline double numeric_to_double(const Value& v, Type t, int scale) {
  if (t == Type::Float) return v.f;
  if (t == Type::Decimal) return decimal_to_double(v.i, scale);
  return int128_to_double(v.i);
}

WCSV_HD inline Value make_bool(bool b) { return Value::of_int(b ? 1 : 0); }

// Whether `v`, the result of `in`, is in its type's range: an int fits 64 bits
// (128 when `in` is wide; the 128-bit arithmetic has checked that).
WCSV_HD inline bool int_fits(const Instr& in, int128 v) {
  return in.type != Type::Int || in.wide ||
         (v >= static_cast<int128>(INT64_MIN) && v <= static_cast<int128>(INT64_MAX));
}

WCSV_HD inline Value fail(EvalContext& ctx, EvalStatus s) {
  ctx.status = s;
  return Value::make_null();
}

// The days of years 0000 to 9999, the dates the tool reads and prints.
constexpr int64_t kFirstDay = -719528, kLastDay = 2932896;

WCSV_HD inline bool day_in_range(int128 d) { return d >= kFirstDay && d <= kLastDay; }

// A failed conversion: null under try_cast, else the row fails with `s`.
WCSV_HD inline Value cast_failed(const Instr& in, EvalContext& ctx, EvalStatus s) {
  return (in.arg & kCastTry) ? Value::make_null() : fail(ctx, s);
}

// A float as an int scaled by 10^scale, exactly (the double's own value,
// not a product rounded to a double), rounded half away from zero, or half
// to even (as DuckDB casts a double to an int; to a decimal it rounds away);
// false for nan, inf and past 127 bits.
WCSV_HD inline bool float_to_scaled(double f, int scale, bool half_even, int128* out) {
  if (f != f || f - f != 0) return false;  // nan, inf
  uint64_t bits;
  memcpy(&bits, &f, 8);
  const bool neg = bits >> 63;
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t m = bits & ((uint64_t{1} << 52) - 1);
  if (biased) m |= uint64_t{1} << 52;
  // |f| * 10^scale = m * 5^scale * 2^shift: the product first, in three 64-bit words.
  const int shift = (biased ? biased - 1075 : -1074) + scale;
  const uint128 five = static_cast<uint128>(pow10_i128(scale)) >> scale;
  const uint128 low = static_cast<uint128>(m) * static_cast<uint64_t>(five);
  const uint128 high = static_cast<uint128>(m) * static_cast<uint64_t>(five >> 64) + (low >> 64);
  const uint64_t w[3] = {static_cast<uint64_t>(low), static_cast<uint64_t>(high), static_cast<uint64_t>(high >> 64)};
  const int top = w[2] ? 2 : w[1] ? 1 : 0;
  const int length = w[top] ? 64 * top + 64 - clz64(w[top]) : 0;  // bits of the product
  auto word = [&](int k) { return k >= 0 && k < 3 ? w[k] : uint64_t{0}; };
  uint128 q;
  if (length == 0) {
    q = 0;
  } else if (shift >= 0) {
    if (length + shift > 127) return false;
    q = ((static_cast<uint128>(w[1]) << 64) | w[0]) << shift;
  } else {
    const int d = -shift;  // bits shifted out, rounded
    if (length - d > 127) return false;
    // The product's bits from d up, and whether the bit below d and any under it are set.
    const int k = d / 64, b = d % 64;
    auto shifted = [&](int i) { return b ? (word(k + i) >> b) | (word(k + i + 1) << (64 - b)) : word(k + i); };
    q = d >= 192 ? 0 : (static_cast<uint128>(shifted(1)) << 64) | shifted(0);
    const int h = d - 1;  // the half bit
    const bool half = h < 192 && ((word(h / 64) >> (h % 64)) & 1);
    bool sticky = h < 192 && (word(h / 64) & ((uint64_t{1} << (h % 64)) - 1)) != 0;
    for (int i = 0; i < h / 64 && i < 3 && !sticky; ++i) sticky = w[i] != 0;
    if (half && (!half_even || sticky || (q & 1))) ++q;
    if (q >> 127) return false;
  }
  *out = neg ? -static_cast<int128>(q) : static_cast<int128>(q);
  return true;
}

WCSV_HD inline Value cast_value(const Instr& in, const Value& v, EvalContext& ctx) {
  if (v.null || in.from_type == Type::Null) return Value::make_null();
  Type from = in.from_type, to = in.type;
  if (to == Type::Float) return Value::of_float(numeric_to_double(v, from, in.from_scale));
  if (to == Type::Bool) return make_bool(from == Type::Float ? v.f != 0 : v.i != 0);
  if (to == Type::Decimal || to == Type::Int) {
    const EvalStatus over = to == Type::Decimal ? EvalStatus::DecimalOverflow : EvalStatus::IntegerOverflow;
    const int ts = to == Type::Decimal ? in.scale : 0;
    int128 r;
    if (from == Type::Float) {
      if (!float_to_scaled(v.f, ts, to == Type::Int, &r)) return cast_failed(in, ctx, over);
    } else {
      int fs = from == Type::Decimal ? in.from_scale : 0;
      if (!rescale(v.i, fs, ts, &r)) return cast_failed(in, ctx, over);
    }
    if (!int_fits(in, r)) return cast_failed(in, ctx, over);
    return Value::of_int(r);
  }
  if (to == Type::Timestamp && from == Type::Date) {
    int128 r;
    if (!checked_mul(v.i, static_cast<int128>(86400000000LL), &r))
      return fail(ctx, EvalStatus::IntegerOverflow);
    return Value::of_int(r);
  }
  if (to == Type::Date && from == Type::Timestamp) {
    int64_t days, micros_of_day;
    split_timestamp(static_cast<int64_t>(v.i), &days, &micros_of_day);
    return Value::of_int(days);
  }
  return v;  // same representation (Bool -> Int, identical types)
}

// s without the spaces at its start (sides & kTrimLeft) and end (kTrimRight).
WCSV_HD inline StrRef trim_spaces(StrRef s, int32_t sides) {
  uint32_t b = 0, e = s.len;
  if (sides & kTrimLeft)
    while (b < e && s.ptr[b] == ' ') ++b;
  if (sides & kTrimRight)
    while (e > b && s.ptr[e - 1] == ' ') --e;
  return StrRef{s.ptr + b, e - b};
}

// Number text [+-]digits[.digits][(e|E)[+-]digits] (also ".5" and "5.") as
// an integer scaled by 10^scale, exactly: rounded half away from zero past
// the scale. False for other text, or a magnitude of 10^38 or more.
WCSV_HD inline bool parse_scaled(const char* p, uint32_t n, int scale, int128* out) {
  uint32_t i = 0;
  const bool neg = n > 0 && p[0] == '-';
  if (n > 0 && (p[0] == '+' || p[0] == '-')) i = 1;
  // m * 10^e10 is the text's value but for the digits past the 38th
  // significant one, whose first is `dropped` (-1: none).
  int128 m = 0;
  int sig = 0, dropped = -1;
  int64_t e10 = 0;
  bool digits = false;
  auto take = [&](int d, bool fraction) {
    digits = true;
    if (sig < 38) {
      m = m * 10 + d;
      sig += m != 0;
      e10 -= fraction;
    } else {
      if (dropped < 0) dropped = d;
      e10 += !fraction;
    }
  };
  for (; i < n && p[i] >= '0' && p[i] <= '9'; ++i) take(p[i] - '0', false);
  if (i < n && p[i] == '.')
    for (++i; i < n && p[i] >= '0' && p[i] <= '9'; ++i) take(p[i] - '0', true);
  if (!digits) return false;
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    ++i;
    const bool eneg = i < n && p[i] == '-';
    if (i < n && (p[i] == '+' || p[i] == '-')) ++i;
    if (i == n) return false;
    int64_t e = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; ++i)
      if (e < 1000000) e = e * 10 + (p[i] - '0');  // saturates: past 10^38 or 0 anyway
    e10 += eneg ? -e : e;
  }
  if (i != n) return false;
  const int64_t k = e10 + scale;
  int128 r;
  if (m == 0 || k < -38) {
    r = 0;  // below half a unit of the scale
  } else if (k < 0) {
    r = div_round_half_away(m, pow10_i128(static_cast<int>(-k)));
  } else {
    // k > 0 with 38 digits read is past 10^38; at k == 0 the digits
    // dropped are the fraction that rounds.
    if (k > 38 || m > (pow10_i128(38) - 1) / pow10_i128(static_cast<int>(k))) return false;
    r = m * pow10_i128(static_cast<int>(k)) + (k == 0 && dropped >= 5);
    if (r >= pow10_i128(38)) return false;
  }
  *out = neg ? -r : r;
  return true;
}

// Where a string read as `t` fails: the value, else null with ok false.
// Spaces around the text are ignored; an int or decimal also reads a number
// with more digits or an exponent, exactly, rounded half away from zero.
WCSV_HD inline Value parse_as(ColumnType t, StrRef s, bool* ok) {
  const StrRef text = trim_spaces(s, kTrimLeft | kTrimRight);
  const char* p = text.ptr;
  const uint32_t n = text.len;
  Value v = Value::of_int(0);
  *ok = true;
  switch (t.type) {
    case Type::Int:
    case Type::Decimal: {
      const int scale = t.type == Type::Decimal ? t.scale : 0;
      const int text_scale = decimal_text_scale(p, n);
      int64_t x;
      int128 r;
      if (parse_int64(p, n, &x))
        *ok = rescale(x, 0, scale, &r);
      else if (text_scale >= 0 && parse_decimal(p, n, text_scale, &x))
        *ok = rescale(x, text_scale, scale, &r);
      else
        *ok = parse_scaled(p, n, scale, &r);
      *ok = *ok && (t.type == Type::Decimal ? r < pow10_i128(38) && r > -pow10_i128(38)
                                            : r >= static_cast<int128>(INT64_MIN) && r <= static_cast<int128>(INT64_MAX));
      return *ok ? Value::of_int(r) : Value::make_null();
    }
    case Type::Float:
      *ok = parse_float(p, n, &v.f);
      return v;
    case Type::Bool: {
      static constexpr const char* kWords[] = {"false", "f", "no", "n", "0", "true", "t", "yes", "y", "1"};
      for (int k = 0; k < 10; ++k) {
        uint32_t len = 0;
        while (kWords[k][len]) ++len;
        if (detail::eq_nocase(p, n, kWords[k], len)) return make_bool(k >= 5);
      }
      *ok = false;
      return Value::make_null();
    }
    case Type::Date: {
      int64_t d, us;
      if (parse_date(p, n, &d)) return Value::of_int(d);
      if (parse_timestamp(p, n, &us)) {
        int64_t rest;
        split_timestamp(us, &d, &rest);
        return Value::of_int(d);
      }
      *ok = false;
      return Value::make_null();
    }
    case Type::Timestamp: {
      int64_t us;
      *ok = parse_timestamp(p, n, &us);
      return Value::of_int(us);
    }
    default:  // String
      return Value::of_str(s.ptr, s.len);
  }
}

// Room for `n` more bytes of string results; null when there is none.
WCSV_HD inline char* scratch_for(EvalContext& ctx, uint32_t n) {
  if (ctx.scratch == nullptr || ctx.scratch_cap - ctx.scratch_used < n) return nullptr;
  char* at = ctx.scratch + ctx.scratch_used;
  ctx.scratch_used += n;
  return at;
}

// s with every `from` replaced by `to`, into scratch; false when it is full.
WCSV_HD inline bool replace_all(StrRef s, StrRef from, StrRef to, EvalContext& ctx, StrRef* out) {
  if (ctx.scratch == nullptr) return false;
  char* dst = ctx.scratch + ctx.scratch_used;
  const uint32_t room = ctx.scratch_cap - ctx.scratch_used;
  uint32_t n = 0, at = 0;
  auto put = [&](const char* p, uint32_t len) {
    if (room - n < len) return false;
    for (uint32_t k = 0; k < len; ++k) dst[n + k] = p[k];
    n += len;
    return true;
  };
  while (at <= s.len) {
    const uint32_t hit = from.len == 0 ? kNotFound : find_bytes(s, from, at);
    if (hit == kNotFound) {
      if (!put(s.ptr + at, s.len - at)) return false;
      break;
    }
    if (!put(s.ptr + at, hit - at) || !put(to.ptr, to.len)) return false;
    at = hit + from.len;
  }
  ctx.scratch_used += n;
  *out = StrRef{dst, n};
  return true;
}

WCSV_HD inline uint32_t char_count(StrRef s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s.len; ++i) n += !is_continuation_byte(s.ptr[i]);
  return n;
}

// The byte offset of the character after the first `chars` (s.len past the end).
WCSV_HD inline uint32_t char_offset(StrRef s, int128 chars) {
  uint32_t i = 0;
  for (int128 seen = 0; i < s.len; ++i) {
    if (!is_continuation_byte(s.ptr[i]) && seen++ == chars) return i;
  }
  return s.len;
}

// DuckDB's substring on characters: a 1-based start (0 is before the first
// character, a negative one counts from the end), an optional length
// (negative: the characters before the start), cut to the string.
WCSV_HD inline StrRef substr_chars(StrRef s, int128 start, bool has_length, int128 length) {
  const int128 n = char_count(s);
  const int128 first = start > 0 ? start : start < 0 ? n + start + 1 : 0;
  int128 b = first, e = n + 1;
  if (has_length) {
    if (length >= 0) e = first + length;
    else b = first + length, e = first;
  }
  if (b < 1) b = 1;
  if (e > n + 1) e = n + 1;
  if (e <= b) return StrRef{s.ptr, 0};
  const uint32_t from = n == s.len ? static_cast<uint32_t>(b - 1) : char_offset(s, b - 1);
  const uint32_t to = n == s.len ? static_cast<uint32_t>(e - 1) : char_offset(s, e - 1);
  return StrRef{s.ptr + from, to - from};
}

// The n-th piece of s split at every `sep` (1-based; negative counts from
// the end; an empty separator splits between characters); empty past the pieces.
WCSV_HD inline StrRef split_part(StrRef s, StrRef sep, int128 n) {
  const StrRef none{s.ptr, 0};
  if (n == 0) return none;
  if (sep.len == 0) {
    return substr_chars(s, n, true, 1);
  }
  int128 want = n;
  if (n < 0) {  // counted from the end: count the pieces first
    int128 pieces = 1;
    for (uint32_t at = find_bytes(s, sep, 0); at != kNotFound; at = find_bytes(s, sep, at + sep.len)) ++pieces;
    want = pieces + n + 1;
    if (want < 1) return none;
  }
  uint32_t begin = 0;
  for (int128 piece = 1;; ++piece) {
    const uint32_t at = find_bytes(s, sep, begin);
    if (piece == want) return StrRef{s.ptr + begin, (at == kNotFound ? s.len : at) - begin};
    if (at == kNotFound) return none;
    begin = at + sep.len;
  }
}

// SQL LIKE: `%` matches any run of characters, `_` one UTF-8 character, any
// other byte itself (ASCII letters either case when `fold`). Greedy with
// one backtrack point, the last `%`: linear in practice, at worst s x p.
WCSV_HD inline bool like_match(StrRef s, StrRef p, bool fold) {
  auto same = [&](char a, char b) {
    if (fold) {
      if (a >= 'A' && a <= 'Z') a = static_cast<char>(a + 32);
      if (b >= 'A' && b <= 'Z') b = static_cast<char>(b + 32);
    }
    return a == b;
  };
  auto next_char = [&](uint32_t i) {  // past the UTF-8 character at s[i]
    ++i;
    while (i < s.len && is_continuation_byte(s.ptr[i])) ++i;
    return i;
  };
  uint32_t si = 0, pi = 0, star_p = 0xFFFFFFFFu, star_s = 0;
  while (si < s.len) {
    if (pi < p.len && p.ptr[pi] == '%') {
      star_p = pi++;
      star_s = si;
    } else if (pi < p.len && p.ptr[pi] == '_') {
      si = next_char(si);
      ++pi;
    } else if (pi < p.len && same(s.ptr[si], p.ptr[pi])) {
      ++si;
      ++pi;
    } else if (star_p != 0xFFFFFFFFu) {
      pi = star_p + 1;
      si = star_s = next_char(star_s);
    } else {
      return false;
    }
  }
  while (pi < p.len && p.ptr[pi] == '%') ++pi;
  return pi == p.len;
}
}  // namespace detail

// Ordering and equality of two non-null values of one type: strings bytewise,
// floats in a total order (-0 == +0, NaN equal to itself and after everything).
WCSV_HD inline int compare_values(const Value& a, const Value& b, Type t) {
  if (t == Type::String) return detail::cmp_bytes(a.s, b.s);
  if (t == Type::Float) {
    bool an = a.f != a.f, bn = b.f != b.f;
    if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
    return a.f < b.f ? -1 : (a.f > b.f ? 1 : 0);
  }
  if (t == Type::Null) return 0;
  return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
}

// Evaluates `prog` on one row whose slot values are `slots` (slot i = Op::Column
// arg i). On a data error sets ctx.status and returns null.
WCSV_HD inline Value eval_program(const ProgramView& prog, const Value* slots, EvalContext& ctx) {
  Value st[kMaxProgramStack];
  int sp = 0;
  for (int32_t pc = 0; pc < prog.length; ++pc) {
    const Instr& in = prog.code[pc];
    switch (in.op) {
      case Op::Column:
        if (sp >= kMaxProgramStack) return Value::make_null();
        st[sp++] = slots[in.arg];
        break;
      case Op::Const: {
        if (sp >= kMaxProgramStack) return Value::make_null();
        Value v = prog.consts[in.arg];
        if (in.type == Type::String && !v.null)
          v.s.ptr = prog.strings + reinterpret_cast<uintptr_t>(v.s.ptr);
        st[sp++] = v;
        break;
      }
      case Op::Cast:
        st[sp - 1] = detail::cast_value(in, st[sp - 1], ctx);
        if (ctx.status != EvalStatus::Ok) return st[sp - 1];
        break;
      case Op::Neg: {
        Value& v = st[sp - 1];
        if (v.null) break;
        if (in.type == Type::Float) {
          v.f = -v.f;
        } else if (!checked_neg(v.i, &v.i) || !detail::int_fits(in, v.i)) {  // -INT64_MIN
          return detail::fail(ctx, in.type == Type::Decimal ? EvalStatus::DecimalOverflow
                                                            : EvalStatus::IntegerOverflow);
        }
        break;
      }
      case Op::Not: {
        Value& v = st[sp - 1];
        if (!v.null) v.i = v.i ? 0 : 1;
        break;
      }
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod: {
        Value b = st[--sp];
        Value& a = st[sp - 1];
        if (a.null || b.null) {
          a = Value::make_null();
          break;
        }
        if (in.type == Type::Float) {
          double x = a.f, y = b.f, r = 0;
          switch (in.op) {
            case Op::Add: r = x + y; break;
            case Op::Sub: r = x - y; break;
            case Op::Mul: r = x * y; break;
            case Op::Div:
              if (y == 0) {
                a = Value::make_null();
                continue;
              }
              r = x / y;
              break;
            default:
              if (y == 0) {
                a = Value::make_null();
                continue;
              }
              r = fmod(x, y);
              break;
          }
          a = Value::of_float(r);
          break;
        }
        int128 r = 0;
        bool ok = true;
        switch (in.op) {
          case Op::Add: ok = checked_add(a.i, b.i, &r); break;
          case Op::Sub: ok = checked_sub(a.i, b.i, &r); break;
          case Op::Mul: ok = checked_mul(a.i, b.i, &r); break;
          default:  // Mod (Div is always Float), |r| < |b|: never overflows
            if (b.i == 0) {
              a = Value::make_null();
              continue;
            }
            r = b.i == -1 ? 0 : a.i % b.i;
            break;
        }
        // Int operands of 64 bits cannot overflow 128: only int_fits can fail for them.
        if (!ok || !detail::int_fits(in, r))
          return detail::fail(ctx, in.type == Type::Decimal ? EvalStatus::DecimalOverflow
                                                            : EvalStatus::IntegerOverflow);
        if (in.type == Type::Date && !detail::day_in_range(r)) return detail::fail(ctx, EvalStatus::DateOutOfRange);
        a = Value::of_int(r);
        break;
      }
      case Op::Eq:
      case Op::Ne:
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge: {
        Value b = st[--sp];
        Value& a = st[sp - 1];
        if (a.null || b.null) {
          a = Value::make_null();
          break;
        }
        int c = compare_values(a, b, in.from_type);
        bool r = in.op == Op::Eq   ? c == 0
                 : in.op == Op::Ne ? c != 0
                 : in.op == Op::Lt ? c < 0
                 : in.op == Op::Le ? c <= 0
                 : in.op == Op::Gt ? c > 0
                                   : c >= 0;
        a = detail::make_bool(r);
        break;
      }
      case Op::And:
      case Op::Or: {
        Value b = st[--sp];
        Value& a = st[sp - 1];
        // SQL three-valued logic: a decisive operand wins over null.
        bool decisive = in.op == Op::Or;  // true decides Or, false decides And
        bool a_dec = !a.null && (a.i != 0) == decisive;
        bool b_dec = !b.null && (b.i != 0) == decisive;
        if (a_dec || b_dec)
          a = detail::make_bool(decisive);
        else if (a.null || b.null)
          a = Value::make_null();
        else
          a = detail::make_bool(!decisive);
        break;
      }
      case Op::IsNull:
        st[sp - 1] = detail::make_bool(st[sp - 1].null);
        break;
      case Op::IsNotNull:
        st[sp - 1] = detail::make_bool(!st[sp - 1].null);
        break;
      case Op::Lower:
      case Op::Upper: {
        Value& v = st[sp - 1];
        if (v.null) break;
        char* dst = detail::scratch_for(ctx, v.s.len);
        if (dst == nullptr) return detail::fail(ctx, EvalStatus::ScratchFull);
        for (uint32_t i = 0; i < v.s.len; ++i) {
          char c = v.s.ptr[i];
          if (in.op == Op::Lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
          if (in.op == Op::Upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
          dst[i] = c;
        }
        v.s.ptr = dst;
        break;
      }
      case Op::Len: {
        Value& v = st[sp - 1];
        if (!v.null) v = Value::of_int(v.s.len);
        break;
      }
      case Op::Abs: {
        Value& v = st[sp - 1];
        if (v.null) break;
        if (in.type == Type::Float) {
          v.f = fabs(v.f);
        } else if (v.i < 0 && (!checked_neg(v.i, &v.i) || !detail::int_fits(in, v.i))) {  // abs(INT64_MIN)
          return detail::fail(ctx, in.type == Type::Decimal ? EvalStatus::DecimalOverflow
                                                            : EvalStatus::IntegerOverflow);
        }
        break;
      }
      case Op::Round: {
        Value& v = st[sp - 1];
        if (v.null) break;
        int d = in.arg;
        if (in.type == Type::Float) {
          if (d > 300 || d < -300) break;
          double p = pow(10.0, d < 0 ? -d : d);
          double x = d >= 0 ? round(v.f * p) / p : round(v.f / p) * p;
          if (x == x && (x - x) == 0) v.f = x;  // keep the input when scaling overflowed
          break;
        }
        // Int or Decimal: drop the digits below 10^-d, half away from zero.
        int fs = in.from_type == Type::Decimal ? in.from_scale : 0;
        int drop = fs - d;
        if (drop <= 0) break;
        if (drop > 38) {
          v.i = 0;
          break;
        }
        int128 q = detail::div_round_half_away(v.i, pow10_i128(drop));
        int rs = in.type == Type::Decimal ? in.scale : 0;
        int up = drop - (fs - rs);  // back up to the result scale when d < 0
        // round(9223372036854775807, -1) is 9223372036854775810: past 64 bits.
        if ((up > 0 && !checked_mul(q, pow10_i128(up), &q)) || !detail::int_fits(in, q))
          return detail::fail(ctx, in.type == Type::Decimal ? EvalStatus::DecimalOverflow
                                                            : EvalStatus::IntegerOverflow);
        v.i = q;
        break;
      }
      case Op::Contains:
      case Op::StartsWith:
      case Op::EndsWith: {
        Value b = st[--sp];
        Value& a = st[sp - 1];
        if (a.null || b.null) {
          a = Value::make_null();
          break;
        }
        bool r;
        if (in.op == Op::Contains) {
          r = detail::str_contains(a.s, b.s);
        } else if (b.s.len > a.s.len) {
          r = false;
        } else {
          const char* at = in.op == Op::StartsWith ? a.s.ptr : a.s.ptr + (a.s.len - b.s.len);
          r = detail::bytes_equal(at, b.s.ptr, b.s.len);
        }
        a = detail::make_bool(r);
        break;
      }
      case Op::DatePart: {
        Value& v = st[sp - 1];
        if (v.null) break;
        const bool ts = in.from_type == Type::Timestamp;
        const auto part = static_cast<DatePart>(in.arg);
        v = ts && part == DatePart::Epoch ? Value::of_float(timestamp_epoch(static_cast<int64_t>(v.i)))
                                          : Value::of_int(date_part(static_cast<int64_t>(v.i), ts, part));
        break;
      }
      case Op::DateTrunc: {
        Value& v = st[sp - 1];
        if (v.null) break;
        const bool ts = in.from_type == Type::Timestamp;
        const int64_t r = date_trunc(static_cast<int64_t>(v.i), ts, static_cast<DateUnit>(in.arg));
        // The week of 0000-01-01 starts in the year before: a date there is not.
        int64_t day = r, micros_of_day = 0;
        if (ts) split_timestamp(r, &day, &micros_of_day);
        if (!detail::day_in_range(day)) return detail::fail(ctx, EvalStatus::DateOutOfRange);
        v = Value::of_int(r);
        break;
      }
      case Op::Substr: {
        const int n = in.arg;
        sp -= n - 1;
        Value& s = st[sp - 1];
        const Value& start = st[sp];
        const bool has_length = n == 3;
        if (s.null || start.null || (has_length && st[sp + 1].null)) {
          s = Value::make_null();
          break;
        }
        s.s = detail::substr_chars(s.s, start.i, has_length, has_length ? st[sp + 1].i : 0);
        break;
      }
      case Op::Trim: {
        Value& v = st[sp - 1];
        if (!v.null) v.s = detail::trim_spaces(v.s, in.arg);
        break;
      }
      case Op::SplitPart: {
        sp -= 2;
        Value& s = st[sp - 1];
        if (s.null || st[sp].null || st[sp + 1].null) {
          s = Value::make_null();
          break;
        }
        s.s = detail::split_part(s.s, st[sp].s, st[sp + 1].i);
        break;
      }
      case Op::Greatest:
      case Op::Least: {
        const int base = sp - in.arg;
        Value r = Value::make_null();
        for (int i = 0; i < in.arg; ++i) {
          const Value& x = st[base + i];
          if (x.null) continue;
          const int c = r.null ? 0 : compare_values(x, r, in.type);
          if (r.null || (in.op == Op::Greatest ? c > 0 : c < 0)) r = x;
        }
        sp = base;
        st[sp++] = r;
        break;
      }
      case Op::NullIf: {
        const Value b = st[--sp];
        Value& a = st[sp - 1];
        if (!a.null && !b.null && compare_values(a, b, in.type) == 0) a = Value::make_null();
        break;
      }
      case Op::Like: {
        const Value p = st[--sp];
        Value& s = st[sp - 1];
        s = s.null || p.null ? Value::make_null() : detail::make_bool(detail::like_match(s.s, p.s, in.arg != 0));
        break;
      }
      case Op::Concat: {
        const Value b = st[--sp];
        Value& a = st[sp - 1];
        if (a.null || b.null) {
          a = Value::make_null();
          break;
        }
        char* dst = detail::scratch_for(ctx, a.s.len + b.s.len);
        if (dst == nullptr) return detail::fail(ctx, EvalStatus::ScratchFull);
        for (uint32_t k = 0; k < a.s.len; ++k) dst[k] = a.s.ptr[k];
        for (uint32_t k = 0; k < b.s.len; ++k) dst[a.s.len + k] = b.s.ptr[k];
        a.s = StrRef{dst, a.s.len + b.s.len};
        break;
      }
      case Op::Replace: {
        sp -= 2;
        Value& s = st[sp - 1];
        if (s.null || st[sp].null || st[sp + 1].null) {
          s = Value::make_null();
          break;
        }
        if (!detail::replace_all(s.s, st[sp].s, st[sp + 1].s, ctx, &s.s))
          return detail::fail(ctx, EvalStatus::ScratchFull);
        break;
      }
      case Op::Strftime: {
        const Value f = st[--sp];
        Value& t = st[sp - 1];
        if (t.null || f.null) {
          t = Value::make_null();
          break;
        }
        const uint32_t bound = strftime_length_bound(f.s.ptr, f.s.len);
        char* dst = detail::scratch_for(ctx, bound);
        if (dst == nullptr) return detail::fail(ctx, EvalStatus::ScratchFull);
        const uint32_t n = format_strftime(static_cast<int64_t>(t.i), in.from_type == Type::Timestamp, f.s.ptr,
                                           f.s.len, dst);
        ctx.scratch_used -= bound - n;  // the bytes reserved and not written
        t = Value::of_str(dst, n);
        break;
      }
      case Op::DateDiff: {
        const Value b = st[--sp];
        Value& a = st[sp - 1];
        a = a.null || b.null ? Value::make_null()
                             : Value::of_int(date_diff(static_cast<DateUnit>(in.arg), static_cast<int64_t>(a.i),
                                                       static_cast<int64_t>(b.i), in.from_type == Type::Timestamp));
        break;
      }
      case Op::ToString: {
        Value& v = st[sp - 1];
        if (v.null) break;
        char* dst = detail::scratch_for(ctx, kMaxValueText);
        uint32_t n = 0;
        if (dst == nullptr) return detail::fail(ctx, EvalStatus::ScratchFull);
        if (!write_value_text(v, ColumnType{in.from_type, in.from_scale}, dst, &n))
          return detail::fail(ctx, EvalStatus::CastFailed);  // a float on a GPU: the plan keeps it off
        ctx.scratch_used -= kMaxValueText - n;
        v = Value::of_str(dst, n);
        break;
      }
      case Op::ParseAs: {
        Value& v = st[sp - 1];
        if (v.null) break;
        bool ok;
        ColumnType t;
        t.type = in.type;
        t.scale = in.scale;
        const StrRef text = v.s;
        v = detail::parse_as(t, text, &ok);
        if (!ok) {
          v = detail::cast_failed(in, ctx, EvalStatus::CastFailed);
          if (ctx.status != EvalStatus::Ok) {
#ifndef __CUDA_ARCH__  // messages come from the CPU's scan; on a GPU these stores cost the row kernel spills
            if (ctx.failed_cast.ptr == nullptr) {
              ctx.failed_cast = text;
              ctx.failed_cast_type = t;
            }
#endif
            return v;
          }
        }
        break;
      }
      case Op::JumpUnless: {
        const Value c = st[--sp];
        if (c.null || c.i == 0) pc = in.arg - 1;
        break;
      }
      case Op::Jump:
        pc = in.arg - 1;
        break;
      case Op::FileName:
        if (sp >= kMaxProgramStack) return Value::make_null();
        st[sp++] = ctx.file.ptr ? Value::of_str(ctx.file.ptr, ctx.file.len) : Value::make_null();
        break;
      case Op::Coalesce: {
        int n = in.arg;
        int base = sp - n;
        Value r = Value::make_null();
        for (int i = 0; i < n; ++i) {
          if (!st[base + i].null) {
            r = st[base + i];
            break;
          }
        }
        sp = base;
        st[sp++] = r;
        break;
      }
    }
  }
  return sp > 0 ? st[sp - 1] : Value::make_null();
}

}  // namespace warpcsv
