// The holistic lists of a CPU scan's result (HolisticGroups::lists): each
// fold moves the workers' lists in, their groups renumbered to the result's,
// and past their budget they go to files as sorted runs
// (result/list_spill.hpp), naming their groups by ids that stay fixed while
// later folds renumber the result's groups (HolisticGroups::spilled_ids).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "exec/holistic.hpp"
#include "exec/scan.hpp"
#include "runtime/trace.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

class FoldedLists {
 public:
  // `h`: the scan's holistic groups, whose lists this fills; both must outlive it.
  FoldedLists(const Plan& plan, HolisticGroups& h) : plan_(&plan), h_(&h) {}

  // Takes from[i] (a worker's lists, one per argument; the values move,
  // the lists are left to be replaced), whose groups went where
  // renumbered[i] says, after the result's own groups went where
  // renumbered.back() says (an empty vector: where they were). The result
  // has `result_groups` groups now.
  void fold(const std::vector<std::vector<ArgList>*>& from, const std::vector<std::vector<uint32_t>>& renumbered,
            size_t result_groups, int threads);
  // Every list goes to the files when together they pass `budget` bytes,
  // or (`rest`: the end of the scan) once some went, so that the runs hold
  // all of the values.
  void spill_if_over(uint64_t budget, bool rest, size_t result_groups, int threads, trace::Tracer* tracer);
  // --profile's line for the spills, when there were any.
  std::optional<StageTiming> spill_stage() const;

 private:
  size_t bytes() const;

  const Plan* plan_;
  HolisticGroups* h_;
  uint32_t next_id_ = 0;  // the id the next group with spilled values gets
  double spill_s_ = 0;
};

}  // namespace warpcsv
