#include "result/unfold_rows.hpp"

#include <algorithm>

namespace warpcsv {

size_t unfolded_rows(const PostStage& st, const Value* row) {
  const Value& n = row[st.group_keys + static_cast<size_t>(st.limit)];
  if (n.null || n.i <= 0) return 0;
  return static_cast<size_t>(std::min<int128>(n.i, st.limit));
}

void unfold_row(const PostStage& st, const Value* row, size_t i, Value* out) {
  std::copy(row, row + st.group_keys, out);
  out[st.group_keys] = row[st.group_keys + i];
}

}  // namespace warpcsv
