// The order of result rows: a stable sort of row indices by typed keys, the
// rows' own values untouched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/packed_keys.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

// Where row r's keys are: at base + r * stride, or, with `rows` set, at
// rows[r] (the groups of several tables); as Values, or packed as `packed`
// says (a host table's groups).
struct KeyRows {
  const char* base = nullptr;
  size_t stride = 0;  // bytes from one row's keys to the next's
  const char* const* rows = nullptr;
  const PackedKeys* packed = nullptr;
  const char* row(size_t r) const { return rows ? rows[r] : base + r * stride; }
  Value at(size_t r, size_t k) const {
    return packed ? packed->unpack(row(r), k) : reinterpret_cast<const Value*>(row(r))[k];
  }
};

// How sort_order orders: by packed codes where the keys fit 128 bits
// (Auto), else (or always, Comparing) by comparing them. Both give the same
// order; tests compare them.
enum class SortMethod { Auto, Comparing };

// A key reduced for comparing in ascending order: nulls last (rank 2),
// floats by value (rank 1), others by a 128-bit prefix (rank 0) that is the
// whole value for numbers and for strings of up to 16 bytes.
struct KeyRank {
  uint64_t p0, p1;
  uint32_t len;   // strings: byte length (ties of complete prefixes)
  uint8_t rank;
  bool complete;  // the prefix is the whole value
};
KeyRank key_rank(const Value& v, Type t);
// <0, 0 or >0 as key a (ranked ra) sorts before, with or after key b.
int compare_ranked(const KeyRank& ra, const Value& a, const KeyRank& rb, const Value& b, Type t);

// <0, 0 or >0 as keys a[0..n) sort before, with or after keys b[0..n) in
// sort_order's order (types[k], descending where desc[k], nulls last).
int compare_sort_keys(const Value* a, const Value* b, const std::vector<Type>& types, const std::vector<bool>& desc);

// Rows 0..n-1 (n < 2^32) ordered by their keys, most significant first: each
// ascending, or descending where desc[k], nulls last either way; rows whose
// keys are all equal keep their order.
std::vector<uint32_t> sort_order(size_t n, const KeyRows& keys, const std::vector<Type>& types,
                                 const std::vector<bool>& desc, int threads, SortMethod method = SortMethod::Auto);

}  // namespace warpcsv
