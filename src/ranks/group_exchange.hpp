// Groups exchanged by hash between ranks: each rank owns a range of the
// groups' hash, receives every rank's groups of that range, merges them on
// its threads and sorts them by key. Rank 0 then merges the ranks' sorted
// parts as it writes (ranks/rank_results.hpp), so no rank, rank 0 included,
// merges or sorts more than its share of the groups.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "exec/group_table.hpp"
#include "result/group_rows.hpp"
#include "result/spill.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// Which of `ranks` ranks owns a group of this hash (bits other than those
// that choose a table's part, so each rank's part spreads over its parts).
inline size_t rank_of_hash(uint64_t hash, size_t ranks) {
  return static_cast<size_t>(((hash * 0xc2b2ae3d27d4eb4full) >> 40) % ranks);
}

// This rank's part of the groups, merged, and in output order.
struct RankPart {
  std::unique_ptr<GroupTable> groups;
  std::unique_ptr<OrderedGroups> ordered;  // over `groups`
  size_t all_groups = 0;                   // the parts of every rank together
};

// Collective, after the scan's agreement: sends every group of `mine` to
// the rank that owns its hash, merges what this rank owns and sorts it.
// `mine` is emptied on the way.
RankPart exchange_groups(GroupTable& mine, const Plan& plan, int threads, size_t run_rows);

// The groups of tables whose records are in `inputs` (each a run of whole
// records), merged on `threads` threads into one table. Exposed for tests.
GroupTable merge_group_records(const GroupLayout& layout, const std::vector<std::pair<const char*, size_t>>& inputs,
                               int threads);

// `part`'s groups as records, in its order: segments written on `threads`
// threads, to be sent or written one after another. Frees the part's table.
std::vector<std::vector<char>> sorted_records(RankPart& part, int threads);

}  // namespace warpcsv
