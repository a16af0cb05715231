// Rows a scan thread drops from its partition's output before the stage
// after the scan sees them, when that stage would drop them anyway:
// - a distinct keeps a row the first time it comes, so each partition passes
//   on only its first occurrences, in their order;
// - a sort then `limit n` keeps the n rows that sort first (ties in input
//   order), so each partition passes on only its own first n of them, in
//   their input order: every row of the whole's first n is among them.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "warpcsv/core/types.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// Keeps the first row of `t` of each set of rows equal as group keys are
// (row_key.hpp; `types` per column), in order. `positions`: row counts into
// the table (a position before a row), ascending, each made the count of
// kept rows before that row. Returns the rows kept.
size_t keep_first_rows(Table& t, const std::vector<Type>& types, std::vector<size_t>& positions);

// A sort by columns of the rows (each of type types[k], descending where
// desc[k], nulls last) and how many rows of that order are wanted.
struct SortedCut {
  std::vector<int> columns;
  std::vector<Type> types;
  std::vector<bool> desc;
  size_t keep = 0;
};

// The rows a sort then `limit keep` holds before it cuts them back to its
// first `keep`: twice that, and a few thousand at least, so that cuts are rare.
inline size_t sorted_cut_at(size_t keep) { return 2 * std::max<size_t>(keep, 4096); }

// Keeps the `cut.keep` rows of `t` that the sort puts first (a stable sort:
// ties in input order), in input order; `positions` as keep_first_rows.
// Returns the rows kept.
size_t keep_sorted_first(Table& t, const SortedCut& cut, std::vector<size_t>& positions);

}  // namespace warpcsv
