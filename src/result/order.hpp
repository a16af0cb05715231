// The order of result rows: a stable sort of row indices by typed keys, the
// rows' own values untouched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

// Where row r's key k is: ((const Value*)(row(r)))[k], row r's keys
// being at base + r * stride, or, with `rows` set, at rows[r] (the groups
// of several tables).
struct KeyRows {
  const char* base = nullptr;
  size_t stride = 0;  // bytes from one row's keys to the next's
  const char* const* rows = nullptr;
  const char* row(size_t r) const { return rows ? rows[r] : base + r * stride; }
  const Value& at(size_t r, size_t k) const { return reinterpret_cast<const Value*>(row(r))[k]; }
};

// How sort_order orders: by packed codes where the keys fit 128 bits
// (Auto), else (or always, Comparing) by comparing them. Both give the same
// order; tests compare them.
enum class SortMethod { Auto, Comparing };

// Rows 0..n-1 (n < 2^32) ordered by their keys, most significant first: each
// ascending, or descending where desc[k], nulls last either way; rows whose
// keys are all equal keep their order.
std::vector<uint32_t> sort_order(size_t n, const KeyRows& keys, const std::vector<Type>& types,
                                 const std::vector<bool>& desc, int threads, SortMethod method = SortMethod::Auto);

}  // namespace warpcsv
