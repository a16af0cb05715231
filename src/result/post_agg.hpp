// A groupby/agg after an earlier agg (PostStage::Agg): the rows that reach
// it are grouped in a host table by the stage's keys and aggregated with the
// scan's own machinery (its aggregate states, holistic lists, group order and
// finalize), so its result reads as the scan's agg would over those rows.
// Memory grows with its groups, not with the rows; a holistic argument's
// values are listed, as the scan lists them (equal ones merged when that pays).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "exec/holistic.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

class PostAggregate {
 public:
  // `agg`: the stage's plan (PostStage::agg), which must outlive this.
  PostAggregate(const Plan& agg, int threads);
  // Adds one row of the stage's input; false when a key or an argument
  // failed to evaluate.
  bool add(const Value* row);
  // Finalizes every group, in key order, a run of rows at a time: `emit`
  // takes each run (valid until it returns) and returns false to stop.
  // Throws InputError as the scan's agg does for a group that cannot be
  // finalized (an overflowed sum, an item that fails).
  void finish(size_t run_rows, const std::function<bool(const Table&)>& emit);

 private:
  const Plan& plan_;
  int threads_;
  // The groups of the agg's own keys, and (from_lists) each holistic
  // argument's values with their groups, as the CPU executor keeps them.
  HolisticGroups groups_;
  std::vector<Value> values_;  // a row's keys and holistic arguments (scan.keys), reused
  std::vector<Value> x_, y_;   // a row's aggregate arguments, reused
  std::vector<char> scratch_;
  uint64_t rows_ = 0;  // input order, for first() and last()
};

}  // namespace warpcsv
