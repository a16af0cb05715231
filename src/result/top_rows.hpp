// `groupby KEYS | top N by ORDER`: the N rows of each group that sort first
// by ORDER (ties in input order), whole rows, groups in key order (as a
// groupby's output). Rows arrive in input order; a group holds at most 2N
// of them at any time, so memory grows with the groups, not the input.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

class TopRowsPerGroup {
 public:
  // `columns`: the rows' schema; the stage's exprs: its group keys, then its order.
  // The table of rows is compacted once its dropped rows outnumber its kept
  // ones by `compact_slack` (tests make it small, to compact often).
  TopRowsPerGroup(const PostStage& stage, const std::vector<OutputColumn>& columns, size_t compact_slack = 4096);
  // Takes one row with its keys and order values (evaluated by the caller).
  void add(const Value* row, const Value* keys, const Value* order);
  // Every kept row, groups in key order, each group's rows in top order.
  Table take_sorted();

 private:
  struct Group {
    std::vector<uint32_t> rows;  // indices into rows_
    // Its first N rows are its first N in order (rows come after them as
    // they pass): a later row that does not sort before the Nth can never be
    // kept, and is not stored. (A position, not a row's index: compact()
    // renumbers the rows.)
    bool full = false;
  };
  // Orders a group's rows by the order values, then input order; keeps n.
  void keep_first(Group& g, size_t n);
  bool before(uint32_t a, uint32_t b) const;
  // Whether order values `a` (of input position seq_a) sort before those of row b.
  bool order_before(const Value* a, uint64_t seq_a, uint32_t b) const;
  void compact();

  const PostStage& stage_;
  size_t nkeys_, norder_, width_;
  std::vector<Type> key_types_, order_types_;
  // Each row: its columns, its keys, its order values, in one table.
  Table rows_;
  std::vector<uint64_t> seq_;  // per row of rows_: input order
  uint64_t next_seq_ = 0;
  size_t live_ = 0;
  size_t compact_slack_;
  std::unordered_map<std::string, Group> groups_;
  std::string key_;
  std::vector<Value> cells_;
};

}  // namespace warpcsv
