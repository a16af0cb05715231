// One GPU of a CUDA executor's run: its batches (read into its staging's
// ring, vector and row kernels queued as their start states become known),
// its group table (gpu_table.cpp: grown ahead of the rows in flight, merged
// with the other GPUs' and copied back) and its holistic lists
// (gpu_lists.cpp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cuda/batch_feed.hpp"
#include "cuda/device_groups.hpp"
#include "cuda/device_lookup.hpp"
#include "cuda/gpu_plan.hpp"
#include "cuda/gpu_spill.hpp"
#include "cuda/key_ranges.hpp"
#include "cuda/pinned.hpp"
#include "cuda/staging.hpp"
#include "exec/holistic.hpp"
#include "exec/scan.hpp"
#include "runtime/trace.hpp"

namespace warpcsv {
namespace cuda {

// Device memory free on the current GPU (0 when it cannot say).
uint64_t free_gpu_bytes();

class Gpu {
 public:
  // `buffer_bytes`: a batch buffer as BatchFeed fills it; `batch`: its own
  // bytes. `slots`: the run's pinned staging, shared with the other GPUs.
  Gpu(int id, const GpuPlan& host_plan, const Plan& plan, int nstring_keys, size_t ncols,
      const std::vector<std::string>& null_tokens, uint64_t batch, uint64_t buffer_bytes, PinnedSlots& slots,
      const LookupTables* lookups);

  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  enum class Step { Submitted, Exhausted, Flagged };

  // Keeps kReadAhead batches of `feed` being read into free buffers; once the
  // oldest is in, queues its vector phase; then queues the row phases of the
  // batches before it whose start states are known. It waits for a state
  // only when a buffer is needed again: a GPU thread that waited for the
  // state of its last batch (which needs the other GPUs' vectors) before
  // queueing its next vector made each batch wait for a round trip through
  // the other GPUs' threads. Throws
  // StateChain::Aborted when another GPU gave up.
  Step submit(BatchFeed& feed, StateChain& chain);

  // Waits for the batches still being read when the scan stops early (they
  // refer to this GPU's buffers and the feed); errors no longer matter then.
  void drain_reads(BatchFeed& feed) noexcept;

  // Queues the row phases of the batches still waiting for their start
  // states; false when the GPU has flagged something for the host path.
  bool finish_pending();

  // Queues the row phases of the pending batches, in order: the first `wait`
  // of them after waiting for their start states and LF and CR counts, the
  // rest once both are in already. (A batch's count is on the host a little
  // after its vector kernels run: its rows then go in with the next batch.)
  // Stops when the GPU has flagged something for the host path.
  void launch_pending(size_t wait);

  // Whether the LF and CR count of the batch in `buf` is on the host.
  static bool counted(const Buffer& buf);

  // Queues the row phase of the batch in `buf`, which starts in `state`, once
  // the table has room for its rows; false (nothing queued) when the GPU has
  // flagged something for the host path.
  bool launch_rows(Buffer& buf, uint8_t state);

  // Forgets the batches left waiting when the scan stopped early.
  void drop_pending() { pending_.clear(); }

  // Waits until the queued work is done, so no host callback still refers to
  // this source's StateChain (the last batch's vector is published after the
  // loop has stopped waiting for it). Errors are left for finish(); false
  // when the stream failed.
  bool quiesce() noexcept;

  // Waits for the GPU; its counters (flags, groups, rows).
  GpuCounters finish();

  // The flags this GPU's counters showed so far (GpuFlag bits).
  uint32_t flags_seen() const { return flags_seen_; }

  int id() const { return id_; }
  uint64_t table_groups() const { return table_.gcap; }
  // Host time waiting for a batch to be read (helping the readers meanwhile);
  // for a start state (other GPUs' vectors); for the GPU.
  double read_s = 0, state_wait_s = 0, wait_s = 0;
  double grow_s = 0;  // host time growing the group table (part of wait_s when it stopped the GPU)
  double ring_wait_s = 0;  // host time waiting for a ring buffer the GPU still uses
  // GPU time from the first piece's copy to the last one's; busy in the
  // vector kernels and in the row kernels.
  double copy_s = 0, vector_busy_s = 0, rows_busy_s = 0;
  uint64_t copied_bytes = 0;
  uint64_t bytes = 0;             // own bytes of the batches sent to this GPU
  uint64_t batches = 0;
  uint64_t last_own = 0;          // own bytes of the batch submitted last
  uint64_t used_bytes = 0;        // device memory in use at the end

  // Merges `other`'s table into this GPU's (peer copies, then a merge kernel
  // here), so only one table comes back. `mine`, `theirs`: the counters
  // finish() returned; `mine` is updated. False when a limit was hit anyway
  // (the table is grown to fit first): the caller then has the CPU executor
  // run the scan.
  bool absorb(Gpu& other, GpuCounters& mine, const GpuCounters& theirs);

  // Key ranges after the scan (key_ranges.cpp), counters `c` from finish().
  // Copies the keys of up to `want` groups spread over the table into `out`;
  // false when the GPU has no room for the copy.
  bool sample_keys(const GpuCounters& c, uint64_t want, KeySample& out);
  // The table's groups gathered on this GPU in a slice per range of
  // `bounds`; empty when the GPU has no room for them. The table is unchanged.
  std::vector<GroupSlice> slice_by_range(const GpuCounters& c, const KeySample& bounds);
  // Empties the table and merges `slices` into it, grown to hold them (from
  // other GPUs by peer copies); `mine` is read back. False when a limit was
  // hit anyway.
  bool take_slices(const std::vector<const GroupSlice*>& slices, GpuCounters& mine);
  // Device bytes growing the table to `groups` groups and `arena` key bytes
  // would allocate.
  uint64_t growth_bytes(uint64_t groups, uint64_t arena) const;
  int words_per_group() const { return hplan_.nwords; }

  // Copies the table back into `out` (empty: the other GPUs' tables were
  // merged here) as the core's state structs, converted on all threads.
  void copy_back(GroupTable& out, const GpuCounters& c, int threads);

  // From now on the group table spills its groups into `spill` when it
  // would outgrow its room, rather than fail (plans without holistic lists).
  void enable_spill(GpuSpill* spill) { spill_ = spill; }
  // Spills the groups the table holds (counters `c`, read after a
  // synchronize) into the run's spill, and empties the table.
  void spill_groups(const GpuCounters& c);
  // Whether this GPU's table has room for `groups` groups and `arena` key
  // bytes, grown if need be (always, when it may not spill).
  bool has_room(uint64_t groups, uint64_t arena) const {
    return !spill_ || room_for(groups, arena, table_bytes_per_group());
  }
  double spill_s = 0;      // host time spilling groups (part of wait_s during the scan)
  uint64_t spills = 0;     // times the table was spilled

  // The table in output order, read back `run_rows` groups at a time
  // (counters `c` from finish()); nullptr when the GPU has no room to order it.
  std::unique_ptr<DeviceGroups> ordered_groups(const GpuCounters& c, const GroupLayout& layout, size_t run_rows);

  // Sorts each holistic list by (group, key) here and copies it into
  // lists[l][0] (counters `c` from finish()). False when the GPU has no room
  // for the sort: the CPU executor then scans.
  bool copy_back_lists(std::vector<std::vector<ArgList>>& lists, const GpuCounters& c, int threads);

 private:
  // Pinned host memory a copy from the GPU goes through, on `stream`.
  struct Bounce {
    char* data;
    uint64_t bytes;
    cudaStream_t stream;
  };
  // The pinned slots, once the scan is over and no reader uses them.
  Bounce slots_bounce() const { return Bounce{slots_.data(), slots_.bytes(), copy_}; }
  // A block of this GPU's own, for spills during the scan (made when first needed).
  Bounce spill_bounce();

  // Copies `bytes` from the GPU into pageable host memory through `via`: the
  // DMA fills one half of it while all host threads copy the other half
  // out. A plain cudaMemcpy to pageable memory goes through the driver's
  // staging on one thread and faults the fresh pages in on that thread too.
  void download(void* dst, const void* src, uint64_t bytes, int threads, const Bounce& via);

  // Copies groups [first, first + count) of the table back into `out`
  // (empty) as the core's state structs, with the key arena's bytes they use
  // (`arena_used` in all).
  void copy_back_range(GroupTable& out, uint64_t first, uint64_t count, uint64_t arena_used, int threads,
                       const Bounce& via);

  // Whether the table, grown if need be, can hold `groups` groups of
  // `per_group` bytes and `arena` key bytes within its room: the spill's
  // limit, and the GPU's free memory while the old arrays are still held.
  bool room_for(uint64_t groups, uint64_t arena, uint64_t per_group) const;

  // Empties the table, keeping its arrays (after a synchronize).
  void empty_table();

  // Merges the groups of `s` into the table, which has room for them: in
  // place when they are on this GPU, else through a copy here.
  void merge_slice(const GroupSlice& s);

  GpuTable table() const;

  // The most values any holistic list holds, by counters read from the GPU.
  uint64_t most_listed(const GpuCounters& c) const;

  void free_lists() noexcept;

  // Holistic lists of `cap` values each, holding the values listed so far
  // (counters `c`, read after a synchronize). False, with the capacity flag
  // noted, when the GPU has no room for them: the CPU executor then scans.
  bool grow_lists(uint64_t cap, const GpuCounters& c);

  void upload_plan(const GpuPlan& host_plan, const Plan& plan, const LookupTables* lookups);

  // Takes the group table the last run on this GPU left, cleared, when it has
  // this plan's key and word counts; else frees it.
  void adopt_table();

  // Adds the GPU times of the batch last queued in `buf`, whose work is done,
  // to the busy totals (once).
  void add_busy(Buffer& buf);

  // Seconds between two completed timing events (0 when they cannot say).
  static double elapsed_s(cudaEvent_t a, cudaEvent_t b);

  // Starts reading the next batches of `feed` into free ring buffers until
  // kReadAhead are being read (or the feed has no more).
  void start_reads(BatchFeed& feed);

  // The batch in `buf` as the kernels see it.
  static GpuBatch batch_of(const Buffer& buf, uint8_t state);

  // Host callback after a batch's vector reached pinned memory (no CUDA calls here).
  static void CUDART_CB publish(void* p);

  // At most the rows that start in the batch in `buf` (each adds at most one
  // group): one more than its LF and CR bytes, which launch_pending waited
  // for, and never more than its own bytes over the columns (a row that
  // reaches the table has all its fields, so at least ncols bytes). q1's 9
  // columns in rows of 52 bytes: the count is 5.8 times tighter, and the
  // table that much smaller.
  uint64_t rows_bound(const Buffer& buf) const;

  // Makes sure the table cannot fill during the rows of the batch in `buf`.
  // The upper bounds count every batch whose rows are queued: the exact
  // counts of the last snapshot (or of a synchronize) plus the bounds of the
  // batches whose rows it does not include yet.
  bool ensure_table(Buffer& buf);

  // The size a table of `cap` (groups, or key-arena bytes) grows to when the
  // batches in flight may not fit: `upper` (its bound now) plus kTableBatches
  // batch bounds, and at least double, within room() unless the next batch
  // needs more; `cap` when it need not grow. (Growing only to fit the next
  // batch made a table whose batches in flight never fit: a stop at every
  // batch.)
  template <class Room>
  static uint64_t grown_size(uint64_t cap, uint64_t upper, uint64_t bound, const Room& room);

  // Device bytes a group takes: hash, keys, words, and the slots (a power
  // of two: up to twice as many).
  uint64_t table_bytes_per_group() const;

  // Bytes the group table (or the key arena) may grow to for room ahead,
  // within the spill's limit less `other_bytes` (the other's size).
  uint64_t table_room(uint64_t other_bytes) const;

  // Tightens the bounds from the newest snapshot the GPU has written (exact
  // counts then, plus the bounds of batches queued after it). False when the
  // GPU has flagged something for the host path.
  bool refresh_bounds();

  // A table of `gcap` groups holding the `groups` exact ones there are now
  // (read after a synchronize).
  void grow_groups(uint64_t gcap, uint64_t groups);

  // A key arena of `cap` bytes holding the `used_now` bytes in use (exact).
  void grow_arena(uint64_t cap, uint64_t used_now);

  // --trace: the GPU's timing events on the run's timeline. trace_ref_ was
  // recorded on the idle copy_ stream at a known host time; an event's time
  // is that plus cudaEventElapsedTime from it.
  trace::Tracer* trace_ = nullptr;
  cudaEvent_t trace_ref_ = nullptr;
  double trace_ref_us_ = 0;
  cudaEvent_t trace_copy_end_[kRing] = {};  // after each buffer's batch's last piece
  bool trace_copied_[kRing] = {};           // recorded for the batch in that buffer

 public:
  // Traces this GPU's batches into `t` from now on (its process and stream
  // names, and the reference event); once per run.
  void start_trace(trace::Tracer* t);
  // The tids of this GPU's streams in the trace.
  static constexpr int kTraceComputeTid = 0, kTraceDownloadTid = 1 + kRing;

 private:
  // Records the copy and kernels of the batch in `buf`, whose work is done.
  void trace_batch(Buffer& buf);

  // Ends tracing: the events go, the staging's buffers forget the tracer.
  void stop_trace() noexcept;

  int id_;
  int nstring_keys_;
  size_t ncols_;
  std::vector<std::string> null_tokens_;  // --null tokens, uploaded with the plan
  PinnedSlots& slots_;                    // the run's, shared with the other GPUs
  std::unique_ptr<Staging> st_;           // back on the shelf when this run ends
  Buffer* const ring_;                    // st_'s
  const cudaStream_t copy_, compute_;
  GpuCounters* const counters_;
  uint64_t next_ = 0;
  std::deque<Buffer*> reading_;  // batches being read, oldest first
  bool feed_done_ = false;       // the source has no batch left to start
  bool copy_started_ = false;    // st_->copy_span[0] recorded for this run
  bool copy_ended_ = false;      // st_->copy_span[1] too
  std::deque<Buffer*> pending_;  // vector phase queued, row phase not yet, oldest first
  GpuPlan hplan_{};
  GpuPlan* dplan_ = nullptr;
  std::vector<std::unique_ptr<DeviceLookup>> lookups_;  // the joins' tables on this GPU
  char* dblob_ = nullptr;
  GpuTable table_{};
  uint64_t groups_upper_ = 0, arena_upper_ = 0;
  uint64_t groups_known_ = 0;  // groups in the table by the latest counters read
  // Holistic lists (GpuTable's): list_cap_ values each, at most lists_upper_ used.
  uint32_t* list_groups_[kMaxLists] = {};
  unsigned long long* list_keys_[kMaxLists] = {};
  uint64_t list_cap_ = 0, lists_upper_ = 0;
  GpuSpill* spill_ = nullptr;       // the run's, when the table may spill
  char* spill_bounce_ = nullptr;    // pinned, kSpillBounceBytes
  // Counter snapshots copied back after each batch without waiting (into
  // st_->snap_host, st_->snap_done marks each), so the bounds above can be
  // tightened to exact counts with a lag of a few batches instead of stopping
  // the pipeline to read the counters.
  struct Snapshot {
    uint64_t seq = ~0ull;
    Bounds through;  // of the batches it includes
  };
  Snapshot snaps_[kRing];
  uint64_t seq_ = 0;
  Bounds queued_;  // bound totals of the batches whose rows are queued
  uint32_t flags_seen_ = 0;  // GpuFlag bits of the counters read so far
  // A flag seen stops the rows going in: launch_rows fails exactly when one is.
  bool flagged() const { return flags_seen_ != 0; }

  // Whether counters read from the GPU hold no flags; notes those they hold.
  bool unflagged(const GpuCounters& c) {
    flags_seen_ |= c.flags;
    return c.flags == 0;
  }
};

}  // namespace cuda
}  // namespace warpcsv
