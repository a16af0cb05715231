// Holistic aggregates (count_distinct, median, quantile) from the scan's
// groups, which are keyed by the agg stage's keys and then by each holistic
// argument, with a count() of their rows (see HolisticSpec in plan.hpp).
#pragma once
#include <memory>
#include <vector>

#include "exec/group_table.hpp"

namespace warpcsv {

struct HolisticGroups {
  std::unique_ptr<GroupLayout> layout;  // the agg's keys, the scan's aggregates
  std::unique_ptr<GroupTable> groups;   // one group per distinct value of the agg's keys
  // groups->size() rows of plan.holistic.size() values; strings point into
  // the scan's table, which must outlive them.
  std::vector<Value> values;
};

// Folds `scan_groups` into groups of the plan's first group_keys keys, their
// aggregate states merged (merges are order-free, so the states are those a
// scan by these keys alone would give), and computes each group's holistic
// aggregates. An agg without keys gets its one group even over no rows.
HolisticGroups regroup_holistic(const Plan& plan, const GroupTable& scan_groups, int threads);

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
