// A field's text as a typed Value: the one conversion both executors use.
#pragma once
#include <cstdint>

#include "warpcsv/core/parse.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

// Parses non-empty text as type t. Returns false when the text does not fit
// the type (the caller widens the type or reports a bad value). `inferred`:
// the type was inferred, so numbers with a leading zero do not fit (the
// column widens to String like inference would have made it); a type given
// with --schema reads "007" as 7.
// Numbers written with a leading zero ("007") are text, as type inference
// decides: a key like a zip code keeps its digits.
WCSV_HD inline bool has_leading_zero(const char* p, uint32_t n) {
  const uint32_t i = n && (p[0] == '-' || p[0] == '+') ? 1 : 0;
  return i + 1 < n && p[i] == '0' && p[i + 1] >= '0' && p[i + 1] <= '9';
}

WCSV_HD inline bool field_to_value(ColumnType t, const char* p, uint32_t n, Value* out, bool inferred) {
  out->null = false;
  if (inferred && (t.type == Type::Int || t.type == Type::Decimal) && has_leading_zero(p, n)) return false;
  out->i = 0;
  switch (t.type) {
    case Type::String: out->s.ptr = p; out->s.len = n; return true;
    case Type::Int: {
      int64_t v;
      if (!parse_int64(p, n, &v)) return false;
      out->i = v;
      return true;
    }
    case Type::Decimal: {
      int64_t v;
      if (!parse_decimal(p, n, t.scale, &v)) return false;
      out->i = v;
      return true;
    }
    case Type::Float: return parse_float(p, n, &out->f);
    case Type::Bool: {
      bool b;
      if (!parse_bool(p, n, &b)) return false;
      out->i = b ? 1 : 0;
      return true;
    }
    case Type::Date: {
      int64_t d;
      if (!parse_date(p, n, &d)) return false;
      out->i = d;
      return true;
    }
    case Type::Timestamp: {
      int64_t us;
      if (!parse_timestamp(p, n, &us)) return false;
      // A zone in a column inferred without one: the column becomes zoned
      // (its values print with Z), as a wider decimal scale would.
      if (inferred && t.scale != kZoned && timestamp_has_zone(p, n)) return false;
      out->i = us;
      return true;
    }
    case Type::Null: return false;
  }
  return false;
}

}  // namespace warpcsv
