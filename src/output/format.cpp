// Text of values: exact integers and decimals, shortest round-trip floats,
// ISO 8601 dates and timestamps.
#include "output/format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "warpcsv/core/value_text.hpp"
#include "warpcsv/output.hpp"

namespace warpcsv {
namespace detail {

void append_int128(std::string& out, int128 x) {
  char buf[kMaxValueText];
  out.append(buf, write_int128(x, buf));  // one append: a row is mostly numbers
}

void append_date(std::string& out, int64_t days) {
  char buf[kMaxValueText];
  out.append(buf, write_date(days, buf));
}

void append_value(std::string& out, const Value& v, ColumnType t) {
  if (t.type == Type::String) {
    out.append(v.s.ptr, v.s.len);
    return;
  }
  char buf[kMaxValueText];
  uint32_t n = 0;
  write_value_text(v, t, buf, &n);
  out.append(buf, n);
}

}  // namespace detail

uint32_t format_float_text(double d, char* out) {
  if (std::isnan(d)) {
    std::memcpy(out, "nan", 3);
    return 3;
  }
  if (std::isinf(d)) {
    std::memcpy(out, d < 0 ? "-inf" : "inf", d < 0 ? 4 : 3);
    return d < 0 ? 4 : 3;
  }
  char* end = fmt::format_to(out, "{}", d);  // the shortest text that reads back: at most 24 bytes
  // Integral floats keep a ".0" (as DuckDB prints them) so a float column
  // never reads as an int column; exponent forms ("1e+20") are left as they are.
  bool integral_text = true;
  for (const char* p = out; p < end; ++p)
    if (!(*p == '-' || (*p >= '0' && *p <= '9'))) integral_text = false;
  if (integral_text) {
    *end++ = '.';
    *end++ = '0';
  }
  return static_cast<uint32_t>(end - out);
}

std::string format_value(const Value& v, ColumnType t) {
  std::string out;
  if (!v.null) detail::append_value(out, v, t);
  return out;
}

std::string value_text(const Value& v, const OutputColumn& c) {
  if (!v.null && c.as_written && c.type.type != Type::String) return std::string(v.text, v.text_len);
  return format_value(v, c.type);
}

}  // namespace warpcsv
