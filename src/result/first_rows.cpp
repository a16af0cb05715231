#include "result/first_rows.hpp"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "result/row_key.hpp"

namespace warpcsv {

size_t keep_first_rows(Table& t, const std::vector<Type>& types, std::vector<size_t>& positions) {
  const size_t n = t.rows(), width = t.width();
  if (n < 2 || width == 0) return n;
  std::unordered_set<std::string> seen;
  std::string key;
  size_t kept = 0, moved = 0;  // positions[0, moved) are counts of kept rows already
  for (size_t r = 0; r < n; ++r) {
    for (; moved < positions.size() && positions[moved] <= r; ++moved) positions[moved] = kept;
    key.clear();
    append_row_key(key, t.row(r), types);
    if (!seen.insert(key).second) continue;
    if (kept != r) std::copy_n(t.row(r), width, t.row(kept));
    ++kept;
  }
  for (; moved < positions.size(); ++moved) positions[moved] = kept;
  t.cells.resize(kept * width);
  return kept;
}

}  // namespace warpcsv
