// The first occurrence of each row of a table, as `distinct` keeps it: a scan
// thread drops the repeats within its partition, so the distinct stage after
// the scan, which keeps a row the first time it comes, sees each partition's
// first occurrences only, in their order, and passes the rows it passed.
#pragma once
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

}  // namespace warpcsv
