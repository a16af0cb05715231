// A byte string that equals another exactly when two rows of one schema hold
// equal values: the key of `distinct` and of `top`'s groups. Equal as the
// group keys are: -0.0 equals 0.0, a NaN equals a NaN, nulls equal nulls.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

inline void append_row_key(std::string& key, const Value* row, const std::vector<Type>& types) {
  for (size_t c = 0; c < types.size(); ++c) {
    const Value& v = row[c];
    key.push_back(v.null ? 0 : 1);
    if (v.null) continue;
    if (types[c] == Type::String) {
      const uint32_t n = v.s.len;
      key.append(reinterpret_cast<const char*>(&n), sizeof n);
      key.append(v.s.ptr, n);
    } else if (types[c] == Type::Float) {
      const double f = std::isnan(v.f) ? NAN : v.f == 0 ? 0.0 : v.f;
      key.append(reinterpret_cast<const char*>(&f), sizeof f);
    } else {
      key.append(reinterpret_cast<const char*>(&v.i), sizeof v.i);
    }
  }
}

}  // namespace warpcsv
