// A GPU's staging for the CUDA executor: the ring of device batch buffers
// that BatchFeed fills through the pinned slots, with their streams, events
// and counters. The process keeps each GPU's staging (with the group table
// the last run left) and the pinned slots for the next run.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "cuda/batch_feed.hpp"
#include "cuda/gpu_plan.hpp"
#include "cuda/pinned.hpp"
#include "runtime/trace.hpp"

namespace warpcsv {
namespace cuda {

constexpr int kRing = 8;       // device batch buffers per GPU
constexpr int kReadAhead = 3;  // batches being read into them at once

// The others: batches whose row kernels wait for their start states (from
// other GPUs' vectors) or their LF and CR counts, and ones with kernels
// queued (start_reads queues a waiting batch's rows before its buffer is read
// into again).
static_assert(kRing >= kReadAhead + 2, "room for a waiting batch and one with kernels queued");

// Running totals of the batches' upper bounds on new groups, key-arena
// bytes and rows (values in each holistic list), up to and including some batch.
struct Bounds {
  uint64_t groups = 0, arena = 0, rows = 0;
};

// A batch buffer on a GPU, filled piece by piece through the run's pinned
// slots: each piece's copy is queued on the GPU's copy stream as soon as the
// piece is read.
class GpuDestination : public BatchDestination {
 public:
  void put(uint64_t at, uint64_t len, const std::function<void(char*)>& fill) override;

  PinnedSlots* slots = nullptr;
  const cudaEvent_t* piece_copied = nullptr;  // the GPU's event for each slot
  cudaStream_t copy = nullptr;  // the buffer's
  int gpu = 0;
  char* dev = nullptr;  // the buffer
  // --trace (set by Gpu::start_trace for a run): each piece's read, and
  // copy_begin recorded on `copy` before the batch's first piece's copy.
  trace::Tracer* tracer = nullptr;
  const BatchSpan* span = nullptr;  // the batch being read
  cudaEvent_t copy_begin = nullptr;
  std::atomic<bool> copy_begun{false};
};

// What the host reads of a batch's first phase.
struct BatchSummary {
  TransitionVector tv;  // the vector of the batch's own bytes
  uint32_t newlines;    // its LF and CR bytes
};

struct Buffer {
  char* dev = nullptr;  // kBatchLead + batch + tail bytes, as BatchFeed fills a buffer
  GpuDestination dest;  // fills dev
  // The pieces' copies into dev, on a stream of this buffer's own: `copied`
  // then marks this batch's pieces, not the next batches' (read at the same
  // time). (More streams per buffer, pieces taking turns, were no
  // faster.)
  cudaStream_t copy = nullptr;
  BatchRead read;       // the batch read into it; its span stays until the next read starts
  BatchVectors v{};
  cudaEvent_t computed = nullptr;  // the batch's kernels finished: the buffer is free
  cudaEvent_t copied = nullptr;
  bool used = false;
  Bounds through;  // bound totals up to this batch
  // Timing events around the batch's vector kernels and row kernels, for
  // --profile's GPU busy times; `*_queued`: recorded for this batch.
  cudaEvent_t vector_at[2] = {}, rows_at[2] = {};
  bool vector_queued = false, rows_queued = false;
  // Pinned: the batch's vector, read by the host callback that publishes it,
  // and its LF and CR count (rows_bound), on the host once vector_at[1] is done.
  BatchSummary* summary_host = nullptr;
  StateChain* chain = nullptr;
};

// Forgets a group table's device arrays, all but the key arena (they are not
// freed here).
void clear_table_arrays(GpuTable& t) noexcept;

// Frees a group table's device arrays on the current device (null ones are
// skipped), the key arena too unless `keep_arena`, and empties them.
void free_table_arrays(GpuTable& t, bool keep_arena = false) noexcept;

// A GPU's staging for batches of one size: the device buffers of its ring,
// the batches' vectors, the row scratch, streams, events and counters.
// Building it is much of a GPU's start-up once its context is up, so the
// process keeps the last one of each GPU for the next run there (see
// take_staging), as it keeps the pinned slots (take_slots).
struct Staging {
  int id;
  uint64_t batch, buffer_bytes;  // own bytes of a batch; bytes of a ring buffer
  GpuShape shape;  // what its launches are sized by
  cudaStream_t copy = nullptr, compute = nullptr;  // copy: tables back to the host
  Buffer ring[kRing];
  BatchSummary* summary_host = nullptr;  // pinned, one per ring buffer
  GpuScratch scratch{};
  GpuCounters* counters = nullptr;   // on the GPU; zeroed for each run
  GpuCounters* snap_host = nullptr;  // pinned, one per ring slot
  cudaEvent_t snap_done[kRing] = {};
  std::vector<cudaEvent_t> piece_copied;  // one per pinned slot, recorded after its piece's copy
  cudaEvent_t download_filled[2] = {};    // on `copy`: a half of the slots holds a piece of a table
  // On `copy` before the first piece of a run and after each batch's last:
  // --profile's copy time, start to end.
  cudaEvent_t copy_span[2] = {};
  // The group table the last run left, for the next run with as many key
  // and aggregate words (gcap 0: none): clearing a kept table costs a
  // fraction of allocating and freeing one of tens of millions of groups.
  GpuTable table{};
  int table_nkeys = 0, table_nwords = 0;

  Staging(int gpu, uint64_t batch_bytes, uint64_t buffer, int slots)
      : id(gpu), batch(batch_bytes), buffer_bytes(buffer) {
    try {
      allocate(slots);
    } catch (...) {
      release();  // what was made before the failure
      throw;
    }
  }
  ~Staging() { release(); }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  bool fits(uint64_t batch_bytes, uint64_t buffer) const { return batch == batch_bytes && buffer_bytes == buffer; }

  // Frees the kept group table.
  void free_table() noexcept {
    cudaSetDevice(id);
    free_table_arrays(table);
    table = GpuTable{};
  }

 private:
  void allocate(int slots);

 public:
  // An event per pinned slot (another run may use another slot count), to
  // which the ring's destinations refer.
  void make_piece_events(int slots);

 private:

  // Frees what allocate() made (members it did not reach are null).
  void release() noexcept;
};

// Host threads that read for `ngpus` GPUs (the pool's helpers; the GPU
// threads read too while they wait), within the run's `threads`.
int read_helpers(size_t ngpus, int threads);

// Room for pinned slots with any GPU count on `threads` threads: two per
// thread and a few. pin_count picks how many a run uses.
int slot_capacity(int threads);
int pin_count(size_t ngpus, int threads);

// Room for `capacity` pinned slots: the kept ones when they fit, else new
// ones (the first `likely` faulted in, none pinned yet).
std::unique_ptr<PinnedSlots> take_slots(int capacity, int likely);

void shelve_slots(std::unique_ptr<PinnedSlots> s);

// GPU `id`'s staging for batches of `batch` bytes in buffers of `buffer_bytes`
// with events for `slots` pinned slots: the one kept from an earlier run when
// it fits, else a new one.
std::unique_ptr<Staging> take_staging(int id, uint64_t batch, uint64_t buffer_bytes, int slots);

// Keeps `s` for the next run on its GPU (in place of one another run there
// left), unless the GPU reports an error: then it is freed.
void shelve_staging(std::unique_ptr<Staging> s);

}  // namespace cuda
}  // namespace warpcsv
