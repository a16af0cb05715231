// Rows a scan thread drops from its partition's output before the stage
// after the scan sees them, when that stage would drop them anyway:
// - a distinct keeps a row the first time it comes, so each partition passes
//   on only its first occurrences, in their order;
// - a sort then `limit n` keeps the n rows that sort first (ties in input
//   order), so each partition passes on only its own first n of them, in
//   their input order: every row of the whole's first n is among them;
// - a `groupby KEYS | top n by ORDER` likewise, group by group.
#pragma once
#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "result/order.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/plan.hpp"
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

// The cut of a plan whose scan's rows go to a sort by their columns, then a
// limit; none for any other plan (a computed sort key cannot be cut by).
std::optional<SortedCut> sorted_cut_of(const Plan& plan);

// The rows a sort then `limit keep` holds before it cuts them back to its
// first `keep`: twice that, and a few thousand at least, so that cuts are rare.
inline size_t sorted_cut_at(size_t keep) { return 2 * std::max<size_t>(keep, 4096); }

// The keys of the row that a cut kept last in the sort's order, once a cut
// has kept `keep` rows: a later row whose keys do not sort before them can
// never be among the first `keep` (ties go in input order), so a scan need
// not keep it. Its string keys point into the cut table's strings.
class SortedCutBar {
 public:
  // Whether `row` (of the cut table's columns) may still be among the first.
  bool admits(const Value* row, const SortedCut& cut) {
    if (keys_.empty()) return true;
    for (size_t k = 0; k < cut.columns.size(); ++k) row_keys_[k] = row[cut.columns[k]];
    return compare_sort_keys(row_keys_.data(), keys_.data(), cut.types, cut.desc) < 0;
  }
  void set(const Value* row, const SortedCut& cut) {
    keys_.resize(cut.columns.size());
    row_keys_.resize(cut.columns.size());
    for (size_t k = 0; k < cut.columns.size(); ++k) keys_[k] = row[cut.columns[k]];
  }

 private:
  std::vector<Value> keys_, row_keys_;
};

// Keeps the `cut.keep` rows of `t` that the sort puts first (a stable sort:
// ties in input order), in input order; `positions` as keep_first_rows.
// Returns the rows kept. With `bar`, sets it when `keep` rows are kept.
size_t keep_sorted_first(Table& t, const SortedCut& cut, std::vector<size_t>& positions,
                         SortedCutBar* bar = nullptr);

// A `groupby KEYS | top n by ORDER` of the rows by their columns: the key
// columns, and the order as a SortedCut whose `keep` is n.
struct GroupTopCut {
  std::vector<int> key_columns;
  std::vector<Type> key_types;
  SortedCut order;
};

// The cut of a plan whose scan's rows go to a `groupby KEYS | top n by ORDER`
// of their columns; none for any other plan.
std::optional<GroupTopCut> group_top_cut_of(const Plan& plan);

// `row`'s group key (row_key.hpp) into `key`, its key values gathered in `values`.
void group_key_of(const Value* row, const GroupTopCut& cut, std::vector<Value>& values, std::string& key);

// A SortedCutBar per group: the groups that a cut left holding n rows.
class GroupTopBars {
 public:
  bool admits(const Value* row, const GroupTopCut& cut) {
    if (bars_.empty()) return true;
    group_key_of(row, cut, keys_, key_);
    const auto it = bars_.find(key_);
    return it == bars_.end() || it->second.admits(row, cut.order);
  }
  void clear() { bars_.clear(); }
  void set(const std::string& key, const Value* row, const GroupTopCut& cut) { bars_[key].set(row, cut.order); }

 private:
  std::unordered_map<std::string, SortedCutBar> bars_;
  std::vector<Value> keys_;
  std::string key_;
};

// Keeps each group's `cut.order.keep` rows of `t` that its top puts first
// (ties in input order), in input order; `positions` as keep_first_rows.
// Returns the rows kept. With `bars`, sets them anew.
size_t keep_group_tops(Table& t, const GroupTopCut& cut, std::vector<size_t>& positions,
                       GroupTopBars* bars = nullptr);

}  // namespace warpcsv
