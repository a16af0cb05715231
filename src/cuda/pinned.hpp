// Page-locked host memory for feeding GPUs: a block made in two steps, and the
// staging slots that all GPUs of a run share.
#pragma once
#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

namespace warpcsv {
namespace cuda {

// Page-locked host memory in one block, made in two steps: the constructor
// maps it and faults in the bytes likely used (as huge pages where THP
// allows; no CUDA, so it can run while the driver starts), pin() registers
// them with CUDA (registering faults in any others). Huge pages
// registered with CUDA pin in about half the time of cudaMallocHost, which is
// start-up the user waits for; without them (no THP, or registering fails) it falls back to
// cudaMallocHost.
class PinnedBlock {
 public:
  // `bytes` of room, the first `fault_bytes` of them faulted in now.
  PinnedBlock(uint64_t bytes, uint64_t fault_bytes);
  ~PinnedBlock();
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  // Page-locks the block's first `bytes` (for all GPUs) and gives the rest of
  // a mapping back to the system; later, with more bytes, registers those
  // instead (with fewer, keeps what is pinned). When registering fails,
  // allocates the whole block with cudaMallocHost.
  void pin(uint64_t bytes);
  char* data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t pinned_bytes() const { return pinned_bytes_; }

 private:
  char* data_ = nullptr;
  uint64_t bytes_ = 0;
  uint64_t pinned_bytes_ = 0;  // 0: not pinned
  bool mapped_ = false;        // pinned by registering the mapping, else cudaMallocHost
};

// Staging slots of `slot_bytes` in one pinned block. A reader takes a slot,
// reads a piece of the input into it, queues the piece's copy to its GPU and
// gives the slot back with an event that marks the copy done; the next taker
// waits for that event. The copy engine then reads the piece while it is
// still in the host's cache; reading whole batches into a large ring and
// copying them after makes each byte cross memory three times (read,
// written, read by the copy) and was half as fast (docs/performance.md).
class PinnedSlots {
 public:
  // Room for `capacity` slots, the first `likely` of them faulted in; pin()
  // says how many a run uses.
  PinnedSlots(int capacity, uint64_t slot_bytes, int likely);
  // Page-locks the first `count` slots (at most the capacity) and hands out
  // only those: the fewer slots, the more of them stay in the host's cache
  // (see pin_count in staging.cpp). Called before a run's readers
  // start, with no copy reading a slot.
  void pin(int count);
  int capacity() const { return capacity_; }
  int count() const { return count_; }
  // Page-locked bytes from data() on: at least count() slots.
  uint64_t pinned_bytes() const { return block_.pinned_bytes(); }
  uint64_t slot_bytes() const { return slot_bytes_; }
  // The slots in use, for a copy back from a GPU when no reader runs.
  char* data() const { return block_.data(); }
  uint64_t bytes() const { return static_cast<uint64_t>(count_) * slot_bytes_; }

  struct Slot {
    int index;
    char* mem;
  };
  // A free slot whose last copy is done, else the one given back longest ago
  // once its copy is done (waits for one to be given back when all are
  // taken).
  Slot take();
  // Gives slot `index` back; `copied` (or null) completes when the copy that
  // reads it is done.
  void give(int index, cudaEvent_t copied);
  // Drops the slots' copy events once every copy is known to be done (the
  // run's GPUs are synchronized), before the stagings that own them go.
  void forget_copies();

 private:
  PinnedBlock block_;
  const int capacity_;
  int count_ = 0;  // slots in use (pinned), the first ones
  const uint64_t slot_bytes_;
  std::mutex m_;
  std::condition_variable cv_;
  static constexpr size_t kLookAhead = 8;  // free slots take() checks for a finished copy
  std::deque<int> free_;
  std::vector<cudaEvent_t> copied_;  // per slot: its last copy's event, or null
};

}  // namespace cuda
}  // namespace warpcsv
