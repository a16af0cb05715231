#include "cpu/folded_lists.hpp"

#include <chrono>
#include <fmt/format.h>

#include "runtime/parallel.hpp"
#include "runtime/stopwatch.hpp"

namespace warpcsv {

void FoldedLists::fold(const std::vector<std::vector<ArgList>*>& from,
                       const std::vector<std::vector<uint32_t>>& renumbered, size_t result_groups, int threads) {
  auto renumber = [&](ArgList& l, const std::vector<uint32_t>& to) {
    if (to.empty()) return;
    parallel_ranges(l.size(), threads, [&](size_t b, size_t e) {
      uint32_t* groups = l.groups();
      for (size_t i = b; i < e; ++i) groups[i] = to[groups[i]];
    });
  };
  std::vector<std::vector<ArgList>>& all = h_->lists;
  for (auto& lists : all)
    for (ArgList& l : lists) renumber(l, renumbered.back());  // folded earlier
  std::vector<uint32_t>& ids = h_->spilled_ids;  // spilled values keep their groups' ids
  if (!renumbered.back().empty() && !ids.empty()) {
    std::vector<uint32_t> moved(result_groups, kNoSpilledId);
    for (size_t g = 0; g < ids.size(); ++g) moved[renumbered.back()[g]] = ids[g];
    ids.swap(moved);
  }
  // Sealed first, each on a thread: a list of each group's top values lists them then.
  const size_t nargs = all.size();
  parallel_for(from.size() * nargs, threads, [&](size_t k, int) { (*from[k / nargs])[k % nargs].seal(); });
  for (size_t i = 0; i < from.size(); ++i)
    for (size_t a = 0; a < from[i]->size(); ++a) {
      ArgList& l = (*from[i])[a];
      renumber(l, renumbered[i]);
      if (l.size()) all[a].push_back(std::move(l));
    }
}

size_t FoldedLists::bytes() const {
  size_t n = 0;
  for (const auto& lists : h_->lists)
    for (const ArgList& l : lists) n += l.memory_bytes();
  return n;
}

void FoldedLists::spill_if_over(uint64_t budget, bool rest, size_t result_groups, int threads,
                                trace::Tracer* tracer) {
  HolisticGroups& h = *h_;
  if (!(rest && h.spilled) && bytes() <= budget) return;
  const auto t = std::chrono::steady_clock::now();
  if (!h.spilled) {
    std::vector<Type> types;
    for (size_t k = plan_->group_keys; k < plan_->scan.keys.size(); ++k) types.push_back(plan_->scan.keys[k].result.type);
    h.spilled = std::make_unique<SpilledLists>(std::move(types), budget);
  }
  h.spilled_ids.resize(result_groups, kNoSpilledId);
  for (uint32_t& id : h.spilled_ids)
    if (id == kNoSpilledId) id = next_id_++;
  for (size_t a = 0; a < h.lists.size(); ++a) h.spilled->spill(a, h.lists[a], h.spilled_ids, threads);
  spill_s_ += seconds_since(t);
  if (tracer) tracer->host("spill holistic lists", "stage", t, {{"bytes", int64_t(h.spilled->bytes_written())}});
}

std::optional<StageTiming> FoldedLists::spill_stage() const {
  if (!h_->spilled) return std::nullopt;
  return StageTiming{fmt::format("result: spill holistic lists ({} times, {})", h_->spilled->spills(),
                                 h_->spilled->describe_bytes()),
                     "cpu", spill_s_, h_->spilled->bytes_written(), 0};
}

}  // namespace warpcsv
