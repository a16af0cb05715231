// Value types of the pipeline language and the scalar value used by the
// expression evaluator. Plain structs only: this header compiles for devices.
#pragma once
#include <cstdint>

#include "warpcsv/core/hd.hpp"

namespace warpcsv {

using int128 = __int128;
using uint128 = unsigned __int128;

// Column and expression types. Int and Decimal hold a 128-bit integer in a
// Value (columns store 64 bits; sums widen); Decimal is scaled by 10^scale.
// Date is days since 1970-01-01, Timestamp microseconds since the epoch.
enum class Type : uint8_t { Null, Bool, Int, Decimal, Float, String, Date, Timestamp };

struct ColumnType {
  Type type = Type::String;
  // Decimal: digits after the point. Timestamp: kZoned when the column's
  // values carry a zone (`Z`, `+05:00`), converted to UTC: they print with Z.
  uint8_t scale = 0;
  WCSV_HD bool operator==(const ColumnType& o) const {
    return type == o.type && (type != Type::Decimal || scale == o.scale);
  }
  WCSV_HD bool operator!=(const ColumnType& o) const { return !(*this == o); }
};

constexpr int kMaxDecimalScale = 18;
constexpr uint8_t kZoned = 1;  // ColumnType::scale of a Timestamp whose values carry a zone

// A byte string that lives elsewhere (input buffer, key arena, scratch).
struct StrRef {
  const char* ptr;
  uint32_t len;
};

// One scalar during evaluation. The type is static (known from the plan), so
// a Value carries only its payload and a null flag. A field of a column that
// the output passes through (OutputColumn::as_written) also carries the text
// it was read from, in what would be padding: set only there (the row output
// prints it), left unset everywhere else.
struct Value {
  union {
    int128 i;  // Bool (0/1), Int, Decimal (scaled), Date, Timestamp
    double f;  // Float
    StrRef s;  // String
  };
  bool null;
  uint32_t text_len;
  const char* text;

  WCSV_HD static Value make_null() {
    Value v;
    v.i = 0;
    v.null = true;
    return v;
  }
  WCSV_HD static Value of_int(int128 x) {
    Value v;
    v.i = x;
    v.null = false;
    return v;
  }
  WCSV_HD static Value of_float(double x) {
    Value v;
    v.i = 0;
    v.f = x;
    v.null = false;
    return v;
  }
  WCSV_HD static Value of_str(const char* p, uint32_t n) {
    Value v;
    v.i = 0;
    v.s.ptr = p;
    v.s.len = n;
    v.null = false;
    return v;
  }
};

static_assert(sizeof(Value) == 32, "the text fields of a Value live in its padding");

WCSV_HD inline bool is_integral_repr(Type t) {
  return t == Type::Bool || t == Type::Int || t == Type::Decimal || t == Type::Date ||
         t == Type::Timestamp;
}
WCSV_HD inline bool is_numeric(Type t) {
  return t == Type::Int || t == Type::Decimal || t == Type::Float;
}

}  // namespace warpcsv
