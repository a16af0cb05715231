// Holistic aggregates (count_distinct, median, quantile) from the scan's
// groups, which are keyed by the agg stage's keys and then by each holistic
// argument, with a count() of their rows (see HolisticSpec in plan.hpp).
#pragma once
#include <memory>
#include <vector>

#include "exec/group_table.hpp"

namespace warpcsv {

// The CPU executor's way: each row's agg group and holistic arguments
// (the scan keys past the agg's own; strings copied), 36 bytes a row for one
// argument where a group per distinct (keys, argument) took some 400.
struct HolisticRows {
  size_t stride = 0;            // arguments per row
  std::vector<uint32_t> group;  // per row: its agg group
  std::vector<Value> args;      // per row: `stride` values; strings in `strings`
  std::vector<uint64_t> weight;  // per row: the rows it stands for (empty: 1 each)
  StringArena strings;
  size_t next_compaction = kFirstCompaction;
  static constexpr size_t kFirstCompaction = 1 << 20;

  void add(uint32_t g, const Value* values, const std::vector<Type>& types) {
    group.push_back(g);
    if (!weight.empty()) weight.push_back(1);
    for (size_t a = 0; a < stride; ++a) {
      Value v = values[a];
      if (!v.null && types[a] == Type::String) v.s = strings.add(v.s);
      args.push_back(v);
    }
    if (group.size() >= next_compaction) compact(types);
  }
  void absorb(HolisticRows&& other);  // appends other's rows (group numbers as they are)
  // Rows of one group with equal arguments become one row of their summed
  // weight (sorted, then merged). Worth it while it halves the rows at least
  // (few distinct values: a million rows became 7500); then again at twice
  // the size, else never (nearly every value distinct).
  void compact(const std::vector<Type>& types);
};

struct HolisticGroups {
  std::unique_ptr<GroupLayout> layout;  // the agg's keys, the scan's aggregates
  std::unique_ptr<GroupTable> groups;   // one group per distinct value of the agg's keys
  // groups->size() rows of plan.holistic.size() values; strings point into
  // the scan's table or `rows`, which must outlive them.
  std::vector<Value> values;
  // Filled by the CPU executor (ScanSettings::holistic): layout, groups and
  // rows come from the scan itself, and finish_holistic_rows sets values.
  bool from_rows = false;
  HolisticRows rows;
};

// Folds `scan_groups` into groups of the plan's first group_keys keys, their
// aggregate states merged (merges are order-free, so the states are those a
// scan by these keys alone would give), and computes each group's holistic
// aggregates. An agg without keys gets its one group even over no rows.
HolisticGroups regroup_holistic(const Plan& plan, const GroupTable& scan_groups, int threads);
// The CPU executor's rows: each group's holistic aggregates into hg.values.
void finish_holistic_rows(const Plan& plan, HolisticGroups& hg, int threads);

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
