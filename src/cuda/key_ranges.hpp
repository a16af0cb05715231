// Several GPUs' group tables exchanged by key range after the scan, so that
// no GPU holds, merges or orders more than its share of the groups: bounds
// from a sample of every table's keys cut the key order into one range per
// GPU; each GPU splits its table into slices by range (result_order.cu),
// every slice goes to its range's GPU, which empties its table and merges
// the slices into it. Each GPU then orders its range alone, and the ranges,
// in the GPUs' order, are the whole result in output order: nothing is
// merged on the host.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/gpu_plan.hpp"
#include "exec/scan.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {
namespace cuda {

class Gpu;

// Rows of group keys copied to the host: `keys` holds a row of nkeys values
// after another, string keys with their StrRef::ptr an offset into `arena`.
struct KeySample {
  std::vector<Value> keys;
  std::vector<char> arena;
};

// Groups in one GPU's memory, laid out as a table's dense arrays: hashes,
// keys (string keys as offsets into the arena) and state words. A slice
// gathered for the exchange owns its arrays; a view of a table does not.
class GroupSlice {
 public:
  GroupSlice() = default;
  static GroupSlice view(int device, const GpuTable& arrays, uint64_t count, uint64_t arena_bytes);
  // Arrays of its own on `device`; false (nothing held) when the GPU has no room.
  bool allocate(int device, uint64_t count, int nkeys, int nwords, uint64_t arena_bytes);
  ~GroupSlice() { release(); }
  GroupSlice(GroupSlice&& o) noexcept { *this = std::move(o); }
  GroupSlice& operator=(GroupSlice&& o) noexcept;
  GroupSlice(const GroupSlice&) = delete;
  GroupSlice& operator=(const GroupSlice&) = delete;

  int device = 0;
  GpuTable arrays{};  // hashes, keys, words and arena only
  uint64_t count = 0, arena_bytes = 0;

  // Device bytes the arrays take.
  uint64_t bytes(int nkeys, int nwords) const {
    return count * (8 + sizeof(Value) * static_cast<uint64_t>(nkeys) + 8 * static_cast<uint64_t>(nwords)) +
           arena_bytes;
  }

 private:
  void release() noexcept;
  bool owned_ = false;
};

// The bounds of `ranges` key ranges with about as many sampled keys in each:
// every ranges-th of the samples in key order (ranges - 1 rows).
KeySample choose_key_bounds(const std::vector<KeySample>& samples, const std::vector<Type>& key_types,
                            size_t ranges);

struct KeyRangeExchange {
  bool exchanged = false;  // GPU i's table holds key range i of every GPU's groups
  uint32_t flags = 0;      // a merge met a limit after all (GpuFlag): the CPU executor scans
  std::vector<StageTiming> stages;  // --profile: per GPU, and the bounds on the host
};

// Exchanges the tables of `gpus` (their counters from finish(), updated) by
// key range. Not exchanged, every table as it was, when a table has more
// groups than 32-bit numbers hold, or a GPU has no room for its slices, or
// for its range and then ordering it.
KeyRangeExchange exchange_key_ranges(const std::vector<std::unique_ptr<Gpu>>& gpus,
                                     std::vector<GpuCounters>& counters, const std::vector<Type>& key_types);

}  // namespace cuda
}  // namespace warpcsv
