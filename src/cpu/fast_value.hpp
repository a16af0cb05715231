// A host fast path for core/field.hpp's field_to_value, the same result: a
// string field is stored as is, and a short decimal (the usual measurement,
// "-12.3") is read in one pass of one loop. The core's parse_decimal checks
// for overflow at every digit and reads the integer and fraction digits in
// loops of their own: about 100 instructions for five bytes, a sixth of a
// narrow row's. Anything else goes to field_to_value.
#pragma once
#include <cstdint>

#include "warpcsv/core/field.hpp"

namespace warpcsv {

// Decimal text [+-]digits[.digits] of at most 17 bytes (so fewer than 18
// digits: no overflow while reading) as parse_decimal reads it, scale in [0, 18].
inline bool parse_short_decimal(const char* p, uint32_t n, int scale, int64_t* out) {
  const bool neg = p[0] == '-';
  uint32_t i = neg || p[0] == '+' ? 1 : 0;
  uint64_t v = 0;
  uint32_t digits = 0;
  int frac = -1;  // fraction digits kept; -1 before the point
  for (; i < n; ++i) {
    const uint32_t d = static_cast<uint32_t>(static_cast<unsigned char>(p[i])) - '0';
    if (d < 10) {
      ++digits;
      if (frac == scale) {  // beyond the scale: only zeros are allowed
        if (d != 0) return false;
        continue;
      }
      v = v * 10 + d;
      frac += frac >= 0;
    } else if (p[i] == '.' && frac < 0) {
      frac = 0;
    } else {
      return false;
    }
  }
  if (digits == 0) return false;
  const uint64_t limit = neg ? 0x8000000000000000ULL : 0x7FFFFFFFFFFFFFFFULL;
  for (frac = frac < 0 ? 0 : frac; frac < scale; ++frac) {
    if (v > limit / 10) return false;
    v *= 10;
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// field_to_value (non-empty text), faster for strings and short decimals.
inline bool field_to_value_fast(ColumnType t, const char* p, uint32_t n, Value* out, bool inferred) {
  if (t.type == Type::String) {
    out->null = false;
    out->i = 0;
    out->s.ptr = p;
    out->s.len = n;
    return true;
  }
  if (t.type == Type::Decimal && n > 0 && n <= 17 && t.scale <= 18) {
    out->null = false;
    out->i = 0;
    if (inferred && has_leading_zero(p, n)) return false;
    int64_t v;
    if (!parse_short_decimal(p, n, t.scale, &v)) return false;
    out->i = v;
    return true;
  }
  return field_to_value(t, p, n, out, inferred);
}

}  // namespace warpcsv
