// Value formatting shared by the writers (private to src/output).
#pragma once
#include <string>

#include "warpcsv/core/types.hpp"

namespace warpcsv {
namespace detail {

// Appends the text of a non-null value (see format_value) to `out`.
void append_value(std::string& out, const Value& v, ColumnType t);

// Appends a 128-bit integer in decimal.
void append_int128(std::string& out, int128 x);

// Appends days since 1970-01-01 as YYYY-MM-DD (proleptic Gregorian; years
// before 1 print as -YYYY, years after 9999 with all their digits).
void append_date(std::string& out, int64_t days);

}  // namespace detail
}  // namespace warpcsv
