// Holistic aggregates (count_distinct, median, quantile): each group's values
// of an argument, sorted. They come either from lists of (group, value), one
// per argument, that the CPU executor's threads or a GPU fill as they scan
// (the groups are the agg's own), or from scan groups keyed by the agg's keys
// and then by each argument, with a count() of their rows (HolisticSpec in
// plan.hpp; the GPUs' way for string arguments).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/arg_list.hpp"
#include "exec/group_table.hpp"
#include "result/list_spill.hpp"

namespace warpcsv {

// A group that has no values in spilled runs yet (HolisticGroups::spilled_ids).
constexpr uint32_t kNoSpilledId = UINT32_MAX;

struct HolisticGroups {
  std::unique_ptr<GroupLayout> layout;  // the agg's keys, the scan's aggregates
  std::unique_ptr<GroupTable> groups;   // one group per distinct value of the agg's keys
  // groups->size() rows of plan.holistic.size() values; strings point into
  // the scan's table or `lists`, which must outlive them.
  std::vector<Value> values;
  // Set by the executor that listed values: `layout` and `groups` come from
  // its scan, and lists[a] holds the lists of argument a (scan key
  // plan.group_keys + a) with their groups numbered as in `groups`;
  // finish_holistic_lists sets `values`.
  bool from_lists = false;
  std::vector<std::vector<ArgList>> lists;
  // Lists past the memory limit, in files (the CPU executor's): every
  // argument's values are then in them, group g's under the id spilled_ids[g].
  std::unique_ptr<SpilledLists> spilled;
  std::vector<uint32_t> spilled_ids;
  StringArena key_strings;  // the bytes of string values taken from lists of keys or spilled runs

  // Empty lists for each holistic argument of `plan`, of its type.
  static std::vector<ArgList> lists_for(const Plan& plan);
};

// Folds `scan_groups` into groups of the plan's first group_keys keys, their
// aggregate states merged (merges are order-free, so the states are those a
// scan by these keys alone would give), and computes each group's holistic
// aggregates. An agg without keys gets its one group even over no rows.
HolisticGroups regroup_holistic(const Plan& plan, const GroupTable& scan_groups, int threads);
// Each group's holistic aggregates from hg.lists into hg.values.
void finish_holistic_lists(const Plan& plan, HolisticGroups& hg, int threads);

// Where fraction q = units / 10^scale of n sorted values lies: position
// (n - 1) q = lo + rest / one exactly. Numbers interpolate linearly between
// the values at lo and lo + 1; other types take lo's.
struct QuantilePosition {
  uint64_t lo;
  uint64_t rest, one;  // rest < one = 10^scale
};
QuantilePosition quantile_position(uint64_t n, int64_t units, int scale);
// The number at `pos` between a and b (a <= b, of type t with `scale`) as
// the nearest double: exact integers and decimals are interpolated exactly
// and rounded once (when the exact value fits 128 bits); floats in double
// arithmetic, the midpoint rounded once.
double interpolate(const Value& a, const Value& b, Type t, int scale, const QuantilePosition& pos);

}  // namespace warpcsv
