// The Unfold post stage: `groupby KEYS | top N by O` run in the scan
// (spec/bind_top.cpp). Each group's row (keys..., v_1..v_N, n) holds the
// first N values of O in the stage's order, null past the group's non-null
// values, and the group's row count n; it stands for the group's first
// min(N, n) rows (keys..., v_i). Rows whose O is null sort last either way,
// so they are the rows past the non-null values, with v_i null.
#pragma once
#include <cstddef>

#include "warpcsv/plan.hpp"

namespace warpcsv {

// How many rows a group's row of Unfold stage `st` stands for.
size_t unfolded_rows(const PostStage& st, const Value* row);

// Row i (< unfolded_rows) of them into `out`: st.group_keys + 1 values.
void unfold_row(const PostStage& st, const Value* row, size_t i, Value* out);

}  // namespace warpcsv
