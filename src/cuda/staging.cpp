#include "cuda/staging.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "cuda/run_counters.hpp"

namespace warpcsv {
namespace cuda {

namespace {

constexpr int kMaxReaders = 64;                 // host threads reading the input
// Readers per GPU: more threads than that only compete for the cores and the
// memory the copies use (docs/performance.md, "GPU feed").
constexpr int kReadersPerGpu = 13;
// Pinned slots per GPU besides one per reading thread: the pieces whose
// copies are queued. Fewer slots stay in the host's cache between a piece's
// read and its copy (docs/performance.md, "GPU feed").
constexpr int kSlotsInFlightPerGpu = 6;

// What the process keeps for its next run: the staging each GPU used last,
// by GPU, and the pinned slots. Never destroyed at exit (CUDA may already be
// torn down by then; the driver frees them with the process). One of each
// per GPU, and one set of slots, so memory stays bounded.
struct Shelf {
  std::mutex m;
  std::map<int, std::unique_ptr<Staging>> stagings;
  std::unique_ptr<PinnedSlots> slots;
};
Shelf& shelf() {
  static auto* kept = new Shelf();
  return *kept;
}

}  // namespace

void GpuDestination::put(uint64_t at, uint64_t len, const std::function<void(char*)>& fill) {
  const PinnedSlots::Slot s = slots->take();
  cudaEvent_t copied = nullptr;
  try {
    const auto t_fill = trace::now_if(tracer);
    fill(s.mem);
    if (tracer)
      tracer->host("read batch " + std::to_string(span->index), "read", t_fill,
                   {{"batch", int64_t(span->index)}, {"gpu", gpu}, {"at", int64_t(at)}, {"bytes", int64_t(len)}});
    WCSV_CUDA_TRY(cudaSetDevice(gpu));
    // (Another reader's piece may be queued between the exchange and the
    // record: the copy's start is then a piece late.)
    if (tracer && !copy_begun.exchange(true)) WCSV_CUDA_TRY(cudaEventRecord(copy_begin, copy));
    WCSV_CUDA_TRY(cudaMemcpyAsync(dev + at, s.mem, len, cudaMemcpyHostToDevice, copy));
    copied = piece_copied[s.index];
    WCSV_CUDA_TRY(cudaEventRecord(copied, copy));
  } catch (...) {
    (void)cudaStreamSynchronize(copy);  // a queued copy may still read the slot
    slots->give(s.index, nullptr);
    throw;
  }
  slots->give(s.index, copied);
}

void clear_table_arrays(GpuTable& t) noexcept {
  t.slots = nullptr;
  t.hashes = nullptr;
  t.keys = nullptr;
  t.words = nullptr;
}

void free_table_arrays(GpuTable& t, bool keep_arena) noexcept {
  for (void* p : {static_cast<void*>(t.slots), static_cast<void*>(t.hashes), static_cast<void*>(t.keys),
                  static_cast<void*>(t.words)})
    cudaFree(p);
  clear_table_arrays(t);
  if (!keep_arena) {
    cudaFree(t.arena);
    t.arena = nullptr;
  }
}

void Staging::allocate(int slots) {
  WCSV_CUDA_TRY(cudaSetDevice(id));
  shape = gpu_shape(id);
  WCSV_CUDA_TRY(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  WCSV_CUDA_TRY(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  WCSV_CUDA_TRY(cudaMalloc(&counters, sizeof(GpuCounters)));
  const uint64_t nseg = segments_of(batch) + 1;
  WCSV_CUDA_TRY(cudaMallocHost(&summary_host, sizeof(BatchSummary) * kRing));
  for (int i = 0; i < kRing; ++i) {
    Buffer& b = ring[i];
    WCSV_CUDA_TRY(cudaStreamCreateWithFlags(&b.copy, cudaStreamNonBlocking));
    WCSV_CUDA_TRY(cudaEventCreateWithFlags(&b.copied, cudaEventDisableTiming));
    WCSV_CUDA_TRY(cudaEventCreateWithFlags(&b.computed, cudaEventDisableTiming));
    for (cudaEvent_t* e : {b.vector_at, b.vector_at + 1, b.rows_at, b.rows_at + 1}) WCSV_CUDA_TRY(cudaEventCreate(e));
    WCSV_CUDA_TRY(cudaMalloc(&b.dev, buffer_bytes + kSegBytes));  // whole-segment loads past the end
    WCSV_CUDA_TRY(cudaMalloc(&b.v.tv, nseg * sizeof(TransitionVector)));
    WCSV_CUDA_TRY(cudaMalloc(&b.v.prefix, nseg * sizeof(TransitionVector)));
    WCSV_CUDA_TRY(cudaMalloc(&b.v.census, kCensusWords * sizeof(uint32_t)));
    b.summary_host = summary_host + i;
    b.dest.copy = b.copy;
    b.dest.gpu = id;
    b.dest.dev = b.dev;
  }
  WCSV_CUDA_TRY(cudaMalloc(&scratch.counts, nseg * 4));
  WCSV_CUDA_TRY(cudaMalloc(&scratch.offsets, (nseg + 1) * 4));
  WCSV_CUDA_TRY(cudaMalloc(&scratch.rows, (batch + 1) * 4));
  WCSV_CUDA_TRY(cudaMalloc(&scratch.grabbed, sizeof(uint32_t)));
  WCSV_CUDA_TRY(cudaMalloc(&scratch.key_dir, kKeyDirEntries * sizeof(KeyDirEntry)));
  WCSV_CUDA_TRY(cudaMalloc(&scratch.batch_states, size_t{kBatchStateGroups} * kMaxShortStateWords * sizeof(uint32_t)));
  scratch.cub_bytes = scan_temp_bytes(nseg);
  WCSV_CUDA_TRY(cudaMalloc(&scratch.cub_temp, scratch.cub_bytes));
  scratch.seg_cap = nseg;
  scratch.row_cap = batch;
  WCSV_CUDA_TRY(cudaMallocHost(&snap_host, sizeof(GpuCounters) * kRing));
  for (auto& e : snap_done) WCSV_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (auto& e : copy_span) WCSV_CUDA_TRY(cudaEventCreate(&e));
  for (auto& e : download_filled) WCSV_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  make_piece_events(slots);
}

void Staging::make_piece_events(int slots) {
  WCSV_CUDA_TRY(cudaSetDevice(id));
  for (cudaEvent_t e : piece_copied)
    if (e) cudaEventDestroy(e);
  piece_copied.assign(static_cast<size_t>(slots), nullptr);
  for (auto& e : piece_copied) WCSV_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (Buffer& b : ring) b.dest.piece_copied = piece_copied.data();
}

void Staging::release() noexcept {
  cudaSetDevice(id);
  cudaDeviceSynchronize();
  free_table();
  for (auto& b : ring) {
    cudaFree(b.dev);
    cudaFree(b.v.tv);
    cudaFree(b.v.prefix);
    cudaFree(b.v.census);
    for (cudaEvent_t e : {b.copied, b.computed, b.vector_at[0], b.vector_at[1], b.rows_at[0], b.rows_at[1]})
      if (e) cudaEventDestroy(e);
    if (b.copy) cudaStreamDestroy(b.copy);
  }
  cudaFreeHost(summary_host);
  cudaFree(scratch.counts);
  cudaFree(scratch.offsets);
  cudaFree(scratch.rows);
  cudaFree(scratch.grabbed);
  cudaFree(scratch.key_dir);
  cudaFree(scratch.batch_states);
  cudaFree(scratch.cub_temp);
  cudaFree(counters);
  cudaFreeHost(snap_host);
  for (cudaEvent_t e : snap_done)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : copy_span)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : piece_copied)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : download_filled)
    if (e) cudaEventDestroy(e);
  if (copy) cudaStreamDestroy(copy);
  if (compute) cudaStreamDestroy(compute);
  (void)cudaGetLastError();
}

int read_helpers(size_t ngpus, int threads) {
  return std::max(0, std::min({threads - 1, kReadersPerGpu * static_cast<int>(ngpus), kMaxReaders}));
}

int slot_capacity(int threads) { return 2 * std::min(threads, kMaxReaders) + 4; }
int pin_count(size_t ngpus, int threads) {
  return read_helpers(ngpus, threads) + static_cast<int>(ngpus) * (1 + kSlotsInFlightPerGpu);
}

std::unique_ptr<PinnedSlots> take_slots(int capacity, int likely) {
  std::unique_ptr<PinnedSlots> kept;
  {
    std::lock_guard<std::mutex> l(shelf().m);
    kept = std::move(shelf().slots);
  }
  if (kept && kept->capacity() == capacity && kept->slot_bytes() == kReadPiece) return kept;
  kept.reset();  // another size: its memory goes before the new one is made
  ++g_stagings_built;
  return std::make_unique<PinnedSlots>(capacity, kReadPiece, likely);
}

void shelve_slots(std::unique_ptr<PinnedSlots> s) {
  std::lock_guard<std::mutex> l(shelf().m);
  shelf().slots.swap(s);  // ones another run left, if any, are freed after the lock
}

std::unique_ptr<Staging> take_staging(int id, uint64_t batch, uint64_t buffer_bytes, int slots) {
  std::unique_ptr<Staging> kept;
  {
    std::lock_guard<std::mutex> l(shelf().m);
    const auto it = shelf().stagings.find(id);
    if (it != shelf().stagings.end()) {
      kept = std::move(it->second);
      shelf().stagings.erase(it);
    }
  }
  if (kept && kept->fits(batch, buffer_bytes)) {
    if (kept->piece_copied.size() != static_cast<size_t>(slots)) kept->make_piece_events(slots);
    return kept;
  }
  kept.reset();  // another batch size: its memory goes before the new one is made
  ++g_stagings_built;
  return std::make_unique<Staging>(id, batch, buffer_bytes, slots);
}

void shelve_staging(std::unique_ptr<Staging> s) {
  if (cudaSetDevice(s->id) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    (void)cudaGetLastError();
    return;  // a failed GPU: freed (as far as it can be) here, not kept
  }
  for (Buffer& b : s->ring) {
    b.used = b.vector_queued = b.rows_queued = false;
    b.chain = nullptr;
  }
  std::lock_guard<std::mutex> l(shelf().m);
  shelf().stagings[s->id].swap(s);  // one another run left there, if any, is freed after the lock
}

}  // namespace cuda
}  // namespace warpcsv
