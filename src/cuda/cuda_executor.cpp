// The CUDA executor's host side: one thread per GPU claims fixed-size batches
// of the input in order (BatchFeed), a few ahead, and the readers move each
// to the GPU piece by piece: a piece is read into a pinned slot and its copy
// queued at once (cuda/pinned.hpp says why). The GPU computes the batch's
// transition vector; a host callback publishes it to the StateChain, which
// composes the vectors in file order, and once a batch's start state is
// known its rows are found, parsed and aggregated. The host never parses the
// bytes itself. Each GPU keeps its group table resident; at the end the
// tables merge into one GPU's, which comes back, is converted into the core's
// state structs and merged with GroupTable::merge_from. A batch that meets
// anything the GPU does not report itself (a bad row or value, an expression
// error, a limit, a row longer than the batch tail) makes the whole scan run
// again on the CPU executor, so messages and --rejects are exactly the CPU's.
#include "cuda/cuda_executor.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "cuda/device_groups.hpp"
#include "cuda/device_lookup.hpp"
#include "cuda/gpu_plan.hpp"
#include "cuda/gpu_states.hpp"
#include "cuda/gpu_support.hpp"
#include "cuda/pinned.hpp"
#include "cuda/run_counters.hpp"
#include "cuda/staging.hpp"
#include "exec/device.hpp"
#include "exec/holistic.hpp"
#include "runtime/parallel.hpp"
#include "cuda/batch_feed.hpp"
#include "runtime/trace.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"
#include "runtime/stopwatch.hpp"

namespace warpcsv {

int cuda_device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

namespace {
// `gpus`, or all `count` GPUs when it is empty.
std::vector<int> listed_or_all(const std::vector<int>& gpus, int count) {
  if (!gpus.empty()) return gpus;
  std::vector<int> all;
  for (int i = 0; i < count; ++i) all.push_back(i);
  return all;
}
}  // namespace

std::vector<GpuFound> cuda_gpus_found(const std::vector<int>& probe) {
  std::vector<GpuFound> found;
  for (int id = 0; id < cuda_device_count(); ++id) {
    GpuFound g;
    g.id = id;
    cudaDeviceProp p;
    WCSV_CUDA_TRY(cudaGetDeviceProperties(&p, id));
    g.name = p.name;
    g.major = p.major;
    g.minor = p.minor;
    if (std::find(probe.begin(), probe.end(), id) != probe.end()) g.loads = cuda::kernels_load_on(id);
    found.push_back(std::move(g));
  }
  return found;
}

void cuda_start_context(int gpu) {
  if (gpu < cuda_device_count() && cudaSetDevice(gpu) == cudaSuccess) (void)cudaFree(nullptr);
  (void)cudaGetLastError();
}

namespace cuda {

void throw_gpu_error(cudaError_t err, const char* call, const char* file, int line) {
  (void)cudaGetLastError();
  int gpu = -1;
  const bool known = cudaGetDevice(&gpu) == cudaSuccess;
  (void)cudaGetLastError();
  const std::string where = known ? "GPU " + std::to_string(gpu) : "the GPU";
  std::string what;
  switch (err) {
    case cudaErrorMemoryAllocation:
      what = where + " ran out of memory; try a smaller --chunk-size, fewer groups, or --device cpu";
      break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
      what = where + " cannot run this warpcsv, which holds " + built_gpu_code().describe() +
             "; rebuild with cmake -DCMAKE_CUDA_ARCHITECTURES=native on this machine, or use --device cpu";
      break;
    default:
      what = std::string("GPU error on ") + where + ": " + cudaGetErrorString(err) +
             "; run with --device cpu to use the CPU instead";
  }
  const std::string path = file;
  const size_t src = path.rfind("/src/");
  ResourceError e(what);
  e.detail = std::string(call) + " failed with " + cudaGetErrorName(err) + " at " +
             (src == std::string::npos ? path : path.substr(src + 1)) + ":" + std::to_string(line);
  throw e;
}

std::atomic<uint64_t> g_gpu_scans{0}, g_cpu_plans{0}, g_cpu_reruns{0}, g_stagings_built{0}, g_table_stops{0},
    g_tables_reused{0};
std::atomic<int> g_slots_in_use{0}, g_slot_capacity{0};
std::atomic<uint64_t> g_table_groups{0}, g_tail_reruns{0};

namespace {

// The plan's GPUs that exist and can run this binary, with a notice (unless
// `quiet`) for each one skipped. Kernels are loaded, to check, on the first
// GPU the run wants (the probe made its context), or on each when the
// binary's code list is not known (a native build).
std::vector<int> usable_gpus(const DevicePlan& plan, int count, bool quiet) {
  if (count == 0) {
    if (plan.required()) throw no_gpu_error(plan.option, "no CUDA device was found");
    return {};
  }
  const std::vector<int> wanted = listed_or_all(plan.gpus, count);
  check_gpu_numbers(plan.option, wanted, count);
  const std::vector<int> probe = built_gpu_code().known ? std::vector<int>{wanted.front()} : wanted;
  const GpuSelection sel = select_gpus(plan, cuda_gpus_found(probe), built_gpu_code());
  if (!quiet)
    for (const auto& n : sel.notices) std::fputs(n.c_str(), stderr);  // best effort, like every notice
  return sel.usable;
}

// Batches of new groups a table grows for: the batches that can be queued
// past the last counter snapshot (a ring's worth) and the next two, so that
// ensure_table need not stop the pipeline at every batch.
constexpr uint64_t kTableBatches = kRing + 2;
// A group table (or key arena) grows ahead of its groups up to the larger of
// these; past that only as far as the next batch needs.
constexpr uint64_t kTableBytes = 1ull << 30;
constexpr uint64_t kTableShareOfFree = 2;  // of the GPU's free memory at the time
// Hash slots (4 bytes each) per group a table has room for, at least. The
// row kernels probe the slots for every row, and a sparse slot array makes
// them faster even at low load (docs/performance.md, "GPU group table"). So
// the room follows the rows in flight and stays small, and the slots do not.
constexpr uint64_t kSlotsPerGroup = 16;

// ---- one GPU ----------------------------------------------------------------

// Device copies of the plan's programs, laid out in one allocation.
struct ProgramBlob {
  std::vector<char> bytes;
  size_t add(const void* p, size_t n) {
    const size_t at = (bytes.size() + 15) / 16 * 16;
    bytes.resize(at + n);
    if (n) std::memcpy(bytes.data() + at, p, n);
    return at;
  }
};

// Arrays being made for a table: freed when the scope ends, by an error too,
// unless handed over (release()). The arena is the owner's when it is kept.
class TableArrays {
 public:
  explicit TableArrays(GpuTable& t, bool owns_arena = true) : t_(t), owns_arena_(owns_arena) {}
  ~TableArrays() {
    if (armed_) free_table_arrays(t_, !owns_arena_);
  }
  TableArrays(const TableArrays&) = delete;
  TableArrays& operator=(const TableArrays&) = delete;
  void release() { armed_ = false; }

 private:
  GpuTable& t_;
  bool owns_arena_;
  bool armed_ = true;
};

// Device allocations that may fail for want of room, which is no error
// there (the caller hands the scan to the CPU): freed when the scope ends
// unless released.
class DeviceAllocs {
 public:
  DeviceAllocs() = default;
  ~DeviceAllocs() {
    for (void* p : held_) cudaFree(p);
  }
  DeviceAllocs(const DeviceAllocs&) = delete;
  DeviceAllocs& operator=(const DeviceAllocs&) = delete;
  // False (the error cleared) when the GPU has no room for `bytes`.
  template <class T>
  bool get(T** p, uint64_t bytes) {
    void* q = nullptr;
    if (cudaMalloc(&q, std::max<uint64_t>(1, bytes)) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    held_.push_back(q);
    *p = static_cast<T*>(q);
    return true;
  }
  void release() { held_.clear(); }

 private:
  std::vector<void*> held_;
};

class Gpu {
 public:
  // `buffer_bytes`: a batch buffer as BatchFeed fills it; `batch`: its own
  // bytes. `slots`: the run's pinned staging, shared with the other GPUs.
  Gpu(int id, const GpuPlan& host_plan, const Plan& plan, int nstring_keys, size_t ncols,
      const std::vector<std::string>& null_tokens, uint64_t batch, uint64_t buffer_bytes, PinnedSlots& slots,
      const LookupTables* lookups)
      : id_(id), nstring_keys_(nstring_keys), ncols_(ncols), null_tokens_(null_tokens), slots_(slots),
        st_(take_staging(id, batch, buffer_bytes, slots.count())), ring_(st_->ring), copy_(st_->copy),
        compute_(st_->compute), counters_(st_->counters) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    for (int i = 0; i < kRing; ++i) ring_[i].dest.slots = &slots_;  // the rest is the staging's
    upload_plan(host_plan, plan, lookups);
    WCSV_CUDA_TRY(cudaMemsetAsync(counters_, 0, sizeof(GpuCounters), compute_));
    adopt_table();
  }

  ~Gpu() {
    cudaSetDevice(id_);
    cudaDeviceSynchronize();
    stop_trace();
    cudaFree(dplan_);
    cudaFree(dblob_);
    free_lists();
    st_->free_table();  // none: adopted or freed at the start
    st_->table = table_;  // for the next run (freed with the staging if the GPU failed)
    st_->table_nkeys = hplan_.nkeys;
    st_->table_nwords = hplan_.nwords;
    shelve_staging(std::move(st_));
  }
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
  Step submit(BatchFeed& feed, StateChain& chain) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    start_reads(feed);
    if (reading_.empty()) {
      feed_done_ = false;  // for the next source
      return Step::Exhausted;
    }
    Buffer& buf = *reading_.front();
    reading_.pop_front();
    const auto t_read = std::chrono::steady_clock::now();
    feed.wait(buf.read);
    read_s += seconds_since(t_read);
    if (trace_)
      trace_->host("wait for batch " + std::to_string(buf.read.span.index), "wait", t_read,
                   {{"batch", int64_t(buf.read.span.index)}});
    const BatchSpan& span = buf.read.span;  // not restarted before the batch's kernels are done
    ++batches;
    bytes += span.own;
    last_own = span.own;
    copied_bytes += std::min(kBatchLead, span.from) + span.n;
    WCSV_CUDA_TRY(cudaEventRecord(buf.copied, buf.copy));  // after the batch's pieces
    WCSV_CUDA_TRY(cudaEventRecord(st_->copy_span[1], buf.copy));
    copy_ended_ = true;
    if (trace_) {
      WCSV_CUDA_TRY(cudaEventRecord(trace_copy_end_[&buf - ring_], buf.copy));
      trace_copied_[&buf - ring_] = true;
    }
    WCSV_CUDA_TRY(cudaStreamWaitEvent(compute_, buf.copied, 0));
    const GpuBatch b = batch_of(buf, kRowStart);
    WCSV_CUDA_TRY(cudaEventRecord(buf.vector_at[0], compute_));
    launch_batch_vector(b, dplan_, hplan_, buf.v, st_->scratch, st_->shape, compute_);
    const uint64_t nseg = segments_of(b.row_end);
    WCSV_CUDA_TRY(cudaMemcpyAsync(&buf.summary_host->tv, buf.v.prefix + nseg, sizeof(TransitionVector),
                                  cudaMemcpyDeviceToHost, compute_));
    WCSV_CUDA_TRY(cudaMemcpyAsync(&buf.summary_host->newlines, buf.v.census + 1, sizeof(uint32_t),
                                  cudaMemcpyDeviceToHost, compute_));
    WCSV_CUDA_TRY(cudaEventRecord(buf.vector_at[1], compute_));
    buf.vector_queued = true;
    buf.chain = &chain;
    WCSV_CUDA_TRY(cudaLaunchHostFunc(compute_, &Gpu::publish, &buf));
    buf.used = true;
    pending_.push_back(&buf);
    launch_pending(0);
    return flagged() ? Step::Flagged : Step::Submitted;
  }

  // Waits for the batches still being read when the scan stops early (they
  // refer to this GPU's buffers and the feed); errors no longer matter then.
  void drain_reads(BatchFeed& feed) noexcept {
    for (Buffer* b : reading_) {
      try {
        feed.wait(b->read);
      } catch (...) {
      }
    }
    reading_.clear();
    feed_done_ = false;
  }

  // Queues the row phases of the batches still waiting for their start
  // states; false when the GPU has flagged something for the host path.
  bool finish_pending() {
    launch_pending(pending_.size());
    return !flagged();
  }

  // Queues the row phases of the pending batches, in order: the first `wait`
  // of them after waiting for their start states and LF and CR counts, the
  // rest once both are in already. (A batch's count is on the host a little
  // after its vector kernels run: its rows then go in with the next batch.)
  // Stops when the GPU has flagged something for the host path.
  void launch_pending(size_t wait) {
    for (size_t done = 0; !pending_.empty() && !flagged(); ++done) {
      Buffer& buf = *pending_.front();
      uint8_t state;
      if (!buf.chain->known_state(buf.read.span.index, &state)) {
        if (done >= wait) return;
        const auto t = std::chrono::steady_clock::now();
        state = buf.chain->wait_state(buf.read.span.index, [this] {
          const cudaError_t e = cudaStreamQuery(compute_);
          if (e != cudaErrorNotReady) WCSV_CUDA_TRY(e);  // a fault: throw instead of waiting for ever
        });
        state_wait_s += seconds_since(t);
      }
      if (!counted(buf)) {
        if (done >= wait) return;
        const auto t = std::chrono::steady_clock::now();
        WCSV_CUDA_TRY(cudaEventSynchronize(buf.vector_at[1]));
        wait_s += seconds_since(t);
      }
      pending_.pop_front();
      if (!launch_rows(buf, state)) return;  // flagged: no more rows go in
    }
  }

  // Whether the LF and CR count of the batch in `buf` is on the host.
  static bool counted(const Buffer& buf) {
    const cudaError_t q = cudaEventQuery(buf.vector_at[1]);
    if (q == cudaErrorNotReady) return false;
    WCSV_CUDA_TRY(q);
    return true;
  }

  // Queues the row phase of the batch in `buf`, which starts in `state`, once
  // the table has room for its rows; false (nothing queued) when the GPU has
  // flagged something for the host path.
  bool launch_rows(Buffer& buf, uint8_t state) {
    const auto t_table = std::chrono::steady_clock::now();
    const bool room = ensure_table(buf);
    wait_s += seconds_since(t_table);
    if (!room) return false;
    const GpuBatch b = batch_of(buf, state);
    WCSV_CUDA_TRY(cudaEventRecord(buf.rows_at[0], compute_));
    launch_batch_rows(b, dplan_, hplan_, buf.v, table(), st_->scratch, st_->shape, compute_);
    WCSV_CUDA_TRY(cudaEventRecord(buf.rows_at[1], compute_));
    buf.rows_queued = true;
    WCSV_CUDA_TRY(cudaEventRecord(buf.computed, compute_));
    Snapshot& sn = snaps_[seq_ % kRing];
    WCSV_CUDA_TRY(cudaMemcpyAsync(st_->snap_host + seq_ % kRing, counters_, sizeof(GpuCounters),
                                  cudaMemcpyDeviceToHost, compute_));
    WCSV_CUDA_TRY(cudaEventRecord(st_->snap_done[seq_ % kRing], compute_));
    sn.seq = seq_++;
    sn.through = buf.through;
    return true;
  }

  // Forgets the batches left waiting when the scan stopped early.
  void drop_pending() { pending_.clear(); }

  // Waits until the queued work is done, so no host callback still refers to
  // this source's StateChain (the last batch's vector is published after the
  // loop has stopped waiting for it). Errors are left for finish(); false
  // when the stream failed.
  bool quiesce() noexcept {
    const bool ok = cudaSetDevice(id_) == cudaSuccess && cudaStreamSynchronize(compute_) == cudaSuccess;
    (void)cudaGetLastError();
    return ok;
  }

  // Waits for the GPU; its counters (flags, groups, rows).
  GpuCounters finish() {
    const auto t = std::chrono::steady_clock::now();
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    for (int i = 0; i < kRing; ++i) WCSV_CUDA_TRY(cudaStreamSynchronize(ring_[i].copy));
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    GpuCounters c;
    WCSV_CUDA_TRY(cudaMemcpy(&c, counters_, sizeof c, cudaMemcpyDeviceToHost));
    wait_s += seconds_since(t);
    for (int i = 0; i < kRing; ++i) add_busy(ring_[i]);
    if (copy_started_ && copy_ended_) copy_s += elapsed_s(st_->copy_span[0], st_->copy_span[1]);
    copy_started_ = copy_ended_ = false;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) used_bytes = total_b - free_b;
    (void)unflagged(c);
    return c;
  }

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
  bool absorb(Gpu& other, GpuCounters& mine, const GpuCounters& theirs) {
    const uint64_t count = std::min<uint64_t>(theirs.groups, other.table_.gcap);
    if (count == 0) return true;
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    const uint64_t have = std::min<uint64_t>(mine.groups, table_.gcap);
    if (have + count > table_.gcap) grow_groups(have + count, have);
    if (mine.arena_used + theirs.arena_used > table_.arena_cap)
      grow_arena(mine.arena_used + theirs.arena_used + 4096, mine.arena_used);
    int can = 0;  // NVLink / PCIe peer access makes the copies direct
    if (cudaDeviceCanAccessPeer(&can, id_, other.id_) == cudaSuccess && can) {
      const cudaError_t e = cudaDeviceEnablePeerAccess(other.id_, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) WCSV_CUDA_TRY(e);
      (void)cudaGetLastError();
    }
    const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
    GpuTable src{};  // the other GPU's table, copied here
    const TableArrays src_arrays(src);
    WCSV_CUDA_TRY(cudaMalloc(&src.hashes, count * 8));
    WCSV_CUDA_TRY(cudaMalloc(&src.keys, std::max<uint64_t>(1, count * nkeys) * sizeof(Value)));
    WCSV_CUDA_TRY(cudaMalloc(&src.words, count * nwords * 8));
    WCSV_CUDA_TRY(cudaMalloc(&src.arena, std::max<uint64_t>(1, theirs.arena_used)));
    auto peer = [&](void* dst, const void* from, uint64_t n) {
      if (n) WCSV_CUDA_TRY(cudaMemcpyPeerAsync(dst, id_, from, other.id_, n, compute_));
    };
    peer(src.hashes, other.table_.hashes, count * 8);
    peer(src.keys, other.table_.keys, count * nkeys * sizeof(Value));
    peer(src.words, other.table_.words, count * nwords * 8);
    peer(src.arena, other.table_.arena, theirs.arena_used);
    launch_merge_table(table(), dplan_, src, count, st_->shape, compute_);
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    WCSV_CUDA_TRY(cudaMemcpy(&mine, counters_, sizeof mine, cudaMemcpyDeviceToHost));
    mine.rows += theirs.rows;
    return mine.flags == 0;
  }

  // Copies the table back into `out` (empty: the other GPUs' tables were
  // merged here) as the core's state structs, converted on all threads.
  void copy_back(GroupTable& out, const GpuCounters& c, int threads) {
    WCSV_EXPECTS(out.size() == 0, "GPU table copied back into a table with groups");
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    const uint64_t groups = std::min<uint64_t>(c.groups, table_.gcap);
    if (groups == 0) return;
    const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
    UninitVector<Value> keys(groups * static_cast<uint64_t>(nkeys));  // filled by the copies below
    UninitVector<uint64_t> words(groups * static_cast<uint64_t>(nwords)), hashes(groups);
    std::unique_ptr<char[]> arena(new char[std::max<uint64_t>(1, c.arena_used)]);
    download(keys.data(), table_.keys, keys.size() * sizeof(Value), threads);
    download(words.data(), table_.words, words.size() * 8, threads);
    download(hashes.data(), table_.hashes, groups * 8, threads);
    download(arena.get(), table_.arena, c.arena_used, threads);
    const GroupLayout& layout = out.layout();
    const char* strings = arena.get();
    out.append_distinct(groups, hashes.data(), std::move(arena), threads, [&](size_t g, Value* k, char* state) {
      for (int i = 0; i < nkeys; ++i) {
        k[i] = keys[g * nkeys + i];
        if (!k[i].null && layout.key_types[static_cast<size_t>(i)] == Type::String)
          k[i].s.ptr = strings + reinterpret_cast<uintptr_t>(k[i].s.ptr);
      }
      const uint64_t* w = words.data() + g * nwords;
      for (size_t a = 0; a < layout.aggs.size(); ++a) state_from_words(layout.aggs[a], w + hplan_.aggs[a].word, state);
    });
    // The GPU hashed the keys with GroupTable's function; the index uses them.
    std::vector<Value> first(static_cast<size_t>(nkeys) + 1);
    out.keys_of(0, first.data());
    WCSV_EXPECTS(hashes[0] == out.hash_keys(first.data()), "GPU and host group hashes differ");
  }

  // The table in output order, read back `run_rows` groups at a time
  // (counters `c` from finish()); nullptr when the GPU has no room to order it.
  std::unique_ptr<DeviceGroups> ordered_groups(const GpuCounters& c, const GroupLayout& layout, size_t run_rows) {
    DeviceTable t;
    t.device = id_;
    t.table = table_;
    t.groups = std::min<uint64_t>(c.groups, table_.gcap);
    t.nkeys = hplan_.nkeys;
    t.nwords = hplan_.nwords;
    for (size_t a = 0; a < layout.aggs.size(); ++a) t.agg_words.push_back(hplan_.aggs[a].word);
    t.shape = st_->shape;
    t.stream = compute_;
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    return DeviceGroups::order(t, layout, run_rows);
  }

  // Sorts each holistic list by (group, key) here and copies it into
  // lists[l][0] (counters `c` from finish()). False when the GPU has no room
  // for the sort: the CPU executor then scans.
  bool copy_back_lists(std::vector<std::vector<ArgList>>& lists, const GpuCounters& c, int threads) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    int group_bits = 1;
    while (group_bits < 32 && (1ull << group_bits) < c.groups) ++group_bits;
    for (int l = 0; l < hplan_.nlists; ++l) {
      const uint64_t n = c.listed[l];
      WCSV_EXPECTS(n <= list_cap_, "a GPU list holds more values than its room");
      if (n == 0) continue;
      ListSort sort{{list_groups_[l], nullptr}, {list_keys_[l], nullptr}, n, group_bits};
      const size_t temp_bytes = list_sort_temp_bytes(sort);
      void* temp = nullptr;
      DeviceAllocs scratch;  // freed once the list is on the host (download waits for it)
      if (!scratch.get(&sort.groups[1], n * 4) || !scratch.get(&sort.keys[1], n * 8) || !scratch.get(&temp, temp_bytes))
        return false;
      uint32_t* groups = nullptr;
      unsigned long long* keys = nullptr;
      launch_sort_list(sort, temp, temp_bytes, &groups, &keys, compute_);
      uint32_t* host_groups;
      uint64_t* host_keys;
      lists[static_cast<size_t>(l)][0].fill_sorted(n, &host_groups, &host_keys);
      download(host_groups, groups, n * 4, threads);
      download(host_keys, keys, n * 8, threads);
    }
    return true;
  }

 private:
  // Copies `bytes` from the GPU into pageable host memory through the pinned
  // slots (no reader uses them now): the DMA fills one half of the block
  // while all host threads copy the other half out. A plain cudaMemcpy to
  // pageable memory goes through the driver's staging on one thread and
  // faults the fresh pages in on that thread too.
  void download(void* dst, const void* src, uint64_t bytes, int threads) {
    if (bytes == 0) return;
    constexpr uint64_t kPiece = 1ull << 20;
    const uint64_t half = std::max<uint64_t>(kPiece, slots_.bytes() / 2 / kPiece * kPiece);
    char* const pinned[2] = {slots_.data(), slots_.data() + half};
    const cudaEvent_t* filled = st_->download_filled;
    const uint64_t rounds = (bytes + half - 1) / half;
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));  // the table's last kernels are done
    auto start_round = [&](uint64_t r) {
      const uint64_t at = r * half;
      WCSV_CUDA_TRY(cudaMemcpyAsync(pinned[r % 2], static_cast<const char*>(src) + at, std::min(half, bytes - at),
                                    cudaMemcpyDeviceToHost, copy_));
      WCSV_CUDA_TRY(cudaEventRecord(filled[r % 2], copy_));
    };
    start_round(0);
    for (uint64_t r = 0; r < rounds; ++r) {
      WCSV_CUDA_TRY(cudaEventSynchronize(filled[r % 2]));
      if (r + 1 < rounds) start_round(r + 1);  // into the other half, copied out in round r - 1
      const uint64_t n = std::min(half, bytes - r * half);
      const uint64_t pieces = (n + kPiece - 1) / kPiece;
      const int workers = static_cast<int>(std::min<uint64_t>(threads, pieces));
      char* out = static_cast<char*>(dst) + r * half;
      parallel_for(pieces, workers, [&](size_t i, int) {
        const uint64_t at = i * kPiece;
        std::memcpy(out + at, pinned[r % 2] + at, std::min(kPiece, n - at));
      });
    }
  }

  GpuTable table() const {
    GpuTable t = table_;
    t.counters = counters_;
    for (int l = 0; l < kMaxLists; ++l) {
      t.list_groups[l] = list_groups_[l];
      t.list_keys[l] = list_keys_[l];
    }
    t.list_cap = list_cap_;
    return t;
  }

  // The most values any holistic list holds, by counters read from the GPU.
  uint64_t most_listed(const GpuCounters& c) const {
    uint64_t n = 0;
    for (int l = 0; l < hplan_.nlists; ++l) n = std::max<uint64_t>(n, c.listed[l]);
    return n;
  }

  void free_lists() noexcept {
    for (int l = 0; l < kMaxLists; ++l) {
      cudaFree(list_groups_[l]);
      cudaFree(list_keys_[l]);
      list_groups_[l] = nullptr;
      list_keys_[l] = nullptr;
    }
    list_cap_ = 0;
  }

  // Holistic lists of `cap` values each, holding the values listed so far
  // (counters `c`, read after a synchronize). False, with the capacity flag
  // noted, when the GPU has no room for them: the CPU executor then scans.
  bool grow_lists(uint64_t cap, const GpuCounters& c) {
    const auto t_grow = std::chrono::steady_clock::now();
    DeviceAllocs grown;
    uint32_t* groups[kMaxLists] = {};
    unsigned long long* keys[kMaxLists] = {};
    for (int l = 0; l < hplan_.nlists; ++l)
      if (!grown.get(&groups[l], cap * 4) || !grown.get(&keys[l], cap * 8)) {
        flags_seen_ |= kFlagCapacity;
        grow_s += seconds_since(t_grow);
        return false;
      }
    for (int l = 0; l < hplan_.nlists; ++l) {
      const uint64_t n = std::min<uint64_t>(c.listed[l], list_cap_);
      if (!n) continue;
      WCSV_CUDA_TRY(cudaMemcpyAsync(groups[l], list_groups_[l], n * 4, cudaMemcpyDeviceToDevice, compute_));
      WCSV_CUDA_TRY(cudaMemcpyAsync(keys[l], list_keys_[l], n * 8, cudaMemcpyDeviceToDevice, compute_));
    }
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    free_lists();
    grown.release();
    for (int l = 0; l < hplan_.nlists; ++l) {
      list_groups_[l] = groups[l];
      list_keys_[l] = keys[l];
    }
    list_cap_ = cap;
    grow_s += seconds_since(t_grow);
    return true;
  }

  void upload_plan(const GpuPlan& host_plan, const Plan& plan, const LookupTables* lookups) {
    hplan_ = host_plan;
    // Programs: code, constants and strings of each in one device allocation.
    ProgramBlob blob;
    struct Fix {
      ProgramView* view;
      int32_t length;
      size_t code, consts, strings;
    };
    std::vector<Fix> fixes;
    auto add = [&](ProgramView* v, const Program& p) {
      if (p.empty()) return;
      Fix f{v, static_cast<int32_t>(p.code.size()), blob.add(p.code.data(), p.code.size() * sizeof(Instr)),
            blob.add(p.consts.data(), p.consts.size() * sizeof(Value)),
            blob.add(p.strings.data(), p.strings.size() + 1)};
      fixes.push_back(f);
    };
    const ScanPlan& s = plan.scan;
    add(&hplan_.filter, s.filter);
    for (int k = 0; k < hplan_.nkeys; ++k) add(&hplan_.keys[k], s.keys[static_cast<size_t>(k)]);
    for (int l = 0; l < hplan_.nlists; ++l) add(&hplan_.lists[l], s.keys[static_cast<size_t>(hplan_.nkeys + l)]);
    for (size_t a = 0; a < s.aggs.size(); ++a) {
      add(&hplan_.aggs[a].arg0, s.aggs[a].arg0);
      add(&hplan_.aggs[a].arg1, s.aggs[a].arg1);
    }
    // Each join's lookup table, copied to this GPU once for the run through
    // the pinned slots, as batches are (other GPUs' readers may hold some).
    const PutBytes put = [&](char* dev, uint64_t len, const std::function<void(char*)>& fill) {
      GpuDestination to_gpu;
      to_gpu.slots = &slots_;
      to_gpu.piece_copied = st_->piece_copied.data();
      to_gpu.copy = copy_;
      to_gpu.gpu = id_;
      to_gpu.dev = dev;
      to_gpu.put(0, len, fill);
    };
    for (size_t j = 0; j < s.joins.size(); ++j) {
      for (size_t k = 0; k < s.joins[j].keys.size(); ++k) add(&hplan_.joins[j].keys[k], s.joins[j].keys[k]);
      lookups_.push_back(
          std::make_unique<DeviceLookup>((*lookups)[static_cast<size_t>(s.joins[j].join)], put, slots_.slot_bytes()));
      hplan_.joins[j].table = lookups_.back()->view();
    }
    WCSV_CUDA_TRY(cudaStreamSynchronize(copy_));
    std::vector<uint32_t> null_offsets{0};
    std::string null_bytes;
    for (const auto& t : null_tokens_) {
      null_bytes += t;
      null_offsets.push_back(static_cast<uint32_t>(null_bytes.size()));
    }
    const size_t null_off = blob.add(null_offsets.data(), null_offsets.size() * 4);
    const size_t null_bytes_off = blob.add(null_bytes.data(), null_bytes.size() + 1);
    WCSV_CUDA_TRY(cudaMalloc(&dblob_, blob.bytes.size()));
    WCSV_CUDA_TRY(cudaMemcpy(dblob_, blob.bytes.data(), blob.bytes.size(), cudaMemcpyHostToDevice));
    for (const Fix& f : fixes) {
      f.view->length = f.length;
      f.view->code = reinterpret_cast<const Instr*>(dblob_ + f.code);
      f.view->consts = reinterpret_cast<const Value*>(dblob_ + f.consts);
      f.view->strings = dblob_ + f.strings;
    }
    hplan_.null_offsets = reinterpret_cast<const uint32_t*>(dblob_ + null_off);
    hplan_.null_bytes = dblob_ + null_bytes_off;
    WCSV_CUDA_TRY(cudaMalloc(&dplan_, sizeof(GpuPlan)));
    WCSV_CUDA_TRY(cudaMemcpy(dplan_, &hplan_, sizeof(GpuPlan), cudaMemcpyHostToDevice));
  }

  // Takes the group table the last run on this GPU left, cleared, when it has
  // this plan's key and word counts; else frees it.
  void adopt_table() {
    if (!st_->table.gcap || st_->table_nkeys != hplan_.nkeys || st_->table_nwords != hplan_.nwords) {
      st_->free_table();
      return;
    }
    // Cleared while the staging still owns it (freed with it if this throws).
    const GpuTable& kept = st_->table;
    WCSV_CUDA_TRY(cudaMemsetAsync(kept.slots, 0, (kept.mask + 1) * 4, compute_));
    launch_init_words(kept, dplan_, hplan_.nwords, 0, kept.gcap, st_->shape, compute_);
    table_ = kept;
    table_.counters = counters_;
    st_->table = GpuTable{};
    ++g_tables_reused;
  }

  // Adds the GPU times of the batch last queued in `buf`, whose work is done,
  // to the busy totals (once).
  void add_busy(Buffer& buf) {
    if (trace_) trace_batch(buf);
    if (buf.vector_queued) vector_busy_s += elapsed_s(buf.vector_at[0], buf.vector_at[1]);
    if (buf.rows_queued) rows_busy_s += elapsed_s(buf.rows_at[0], buf.rows_at[1]);
    buf.vector_queued = buf.rows_queued = false;
  }

  // Seconds between two completed timing events (0 when they cannot say).
  static double elapsed_s(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) == cudaSuccess) return ms / 1e3;
    (void)cudaGetLastError();
    return 0;
  }

  // Starts reading the next batches of `feed` into free ring buffers until
  // kReadAhead are being read (or the feed has no more).
  void start_reads(BatchFeed& feed) {
    while (!feed_done_ && reading_.size() < static_cast<size_t>(kReadAhead)) {
      Buffer& buf = ring_[next_ % kRing];
      // A batch whose rows still wait for its state keeps its buffer until
      // they are queued.
      const auto waiting = std::find(pending_.begin(), pending_.end(), &buf);
      if (waiting != pending_.end()) launch_pending(static_cast<size_t>(waiting - pending_.begin()) + 1);
      if (buf.used) {
        const auto t_ring = std::chrono::steady_clock::now();
        WCSV_CUDA_TRY(cudaEventSynchronize(buf.computed));
        ring_wait_s += seconds_since(t_ring);
        add_busy(buf);
      }
      buf.used = false;
      if (!copy_started_) {
        WCSV_CUDA_TRY(cudaEventRecord(st_->copy_span[0], buf.copy));
        copy_started_ = true;
      }
      if (trace_) buf.dest.copy_begun = false;
      reading_.push_back(&buf);  // before its read starts: drain_reads must see every read
      if (!feed.start(buf.read, buf.dest)) {
        reading_.pop_back();
        feed_done_ = true;
        return;
      }
      ++next_;
    }
  }

  // The batch in `buf` as the kernels see it.
  static GpuBatch batch_of(const Buffer& buf, uint8_t state) {
    const BatchSpan& sp = buf.read.span;
    return GpuBatch{buf.dev + kBatchLead, sp.n, sp.own, state, batch_starts_row(sp, state), sp.at_eof};
  }

  // Host callback after a batch's vector reached pinned memory (no CUDA calls here).
  static void CUDART_CB publish(void* p) {
    const Buffer& buf = *static_cast<const Buffer*>(p);
    buf.chain->publish(buf.read.span.index, buf.summary_host->tv);
  }

  // At most the rows that start in the batch in `buf` (each adds at most one
  // group): one more than its LF and CR bytes, which launch_pending waited
  // for, and never more than its own bytes over the columns (a row that
  // reaches the table has all its fields, so at least ncols bytes). q1's 9
  // columns in rows of 52 bytes: the count is 5.8 times tighter, and the
  // table that much smaller.
  uint64_t rows_bound(const Buffer& buf) const {
    const uint64_t by_bytes = buf.read.span.own / std::max<size_t>(1, ncols_);
    return std::min<uint64_t>(by_bytes, uint64_t{buf.summary_host->newlines} + 1);
  }

  // Makes sure the table cannot fill during the rows of the batch in `buf`.
  // The upper bounds count every batch whose rows are queued: the exact
  // counts of the last snapshot (or of a synchronize) plus the bounds of the
  // batches whose rows it does not include yet.
  bool ensure_table(Buffer& buf) {
    const uint64_t n = buf.read.span.own;
    const uint64_t bound_groups = rows_bound(buf) + 2;
    const uint64_t bound_arena = nstring_keys_ ? static_cast<uint64_t>(nstring_keys_) * 2 * n + 4096 : 0;
    const uint64_t bound_rows = hplan_.nlists ? rows_bound(buf) + 1 : 0;
    if (!refresh_bounds()) return false;
    if (groups_upper_ + bound_groups > table_.gcap || arena_upper_ + bound_arena > table_.arena_cap ||
        lists_upper_ + bound_rows > list_cap_) {
      ++g_table_stops;
      WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
      GpuCounters c;
      WCSV_CUDA_TRY(cudaMemcpy(&c, counters_, sizeof c, cudaMemcpyDeviceToHost));
      if (!unflagged(c)) return false;
      groups_upper_ = c.groups;  // every batch given room has its rows queued, so done now
      arena_upper_ = c.arena_used;
      lists_upper_ = most_listed(c);
      // Hash, keys, words, and the slots (a power of two: up to twice as many).
      const uint64_t per_group = 8 + sizeof(Value) * hplan_.nkeys + 8 * hplan_.nwords + 2 * 4 * kSlotsPerGroup;
      const uint64_t gcap =
          grown_size(table_.gcap, groups_upper_, bound_groups, [&] { return table_room() / per_group; });
      if (gcap > table_.gcap) grow_groups(gcap, c.groups);
      const uint64_t arena_cap = grown_size(table_.arena_cap, arena_upper_, bound_arena, [&] { return table_room(); });
      if (arena_cap > table_.arena_cap) grow_arena(arena_cap, c.arena_used);
      if (hplan_.nlists) {
        const uint64_t per_value = 12 * static_cast<uint64_t>(hplan_.nlists);
        const uint64_t list_cap =
            grown_size(list_cap_, lists_upper_, bound_rows, [&] { return table_room() / per_value; });
        if (list_cap > list_cap_ && !grow_lists(list_cap, c)) return false;
      }
    }
    queued_.groups += bound_groups;
    queued_.arena += bound_arena;
    queued_.rows += bound_rows;
    groups_upper_ += bound_groups;
    arena_upper_ += bound_arena;
    lists_upper_ += bound_rows;
    buf.through = queued_;
    return true;
  }

  // The size a table of `cap` (groups, or key-arena bytes) grows to when the
  // batches in flight may not fit: `upper` (its bound now) plus kTableBatches
  // batch bounds, and at least double, within room() unless the next batch
  // needs more; `cap` when it need not grow. (Growing only to fit the next
  // batch made a table whose batches in flight never fit: a stop at every
  // batch.)
  template <class Room>
  static uint64_t grown_size(uint64_t cap, uint64_t upper, uint64_t bound, const Room& room) {
    const uint64_t ahead = upper + kTableBatches * bound;
    if (ahead <= cap) return cap;
    uint64_t want = std::max<uint64_t>(2 * cap, ahead);
    const uint64_t limit = room();
    if (want > limit) want = std::max<uint64_t>(upper + bound, limit);
    return std::max(want, cap);
  }

  // Bytes the group table (or the key arena) may grow to for room ahead.
  uint64_t table_room() const {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      (void)cudaGetLastError();
      free_b = 0;
    }
    return std::max<uint64_t>(kTableBytes, free_b / kTableShareOfFree);
  }

  // Tightens the bounds from the newest snapshot the GPU has written (exact
  // counts then, plus the bounds of batches queued after it). False when the
  // GPU has flagged something for the host path.
  bool refresh_bounds() {
    for (uint64_t back = 1; back <= kRing && back <= seq_; ++back) {
      const uint64_t s = seq_ - back;
      const Snapshot& sn = snaps_[s % kRing];
      if (sn.seq != s) continue;
      const cudaError_t q = cudaEventQuery(st_->snap_done[s % kRing]);
      if (q == cudaErrorNotReady) continue;
      WCSV_CUDA_TRY(q);
      const GpuCounters& c = st_->snap_host[s % kRing];
      if (!unflagged(c)) return false;
      groups_upper_ = std::min<uint64_t>(groups_upper_, c.groups + (queued_.groups - sn.through.groups));
      arena_upper_ = std::min<uint64_t>(arena_upper_, c.arena_used + (queued_.arena - sn.through.arena));
      lists_upper_ = std::min<uint64_t>(lists_upper_, most_listed(c) + (queued_.rows - sn.through.rows));
      return true;
    }
    return true;
  }

  // A table of `gcap` groups holding the `groups` exact ones there are now
  // (read after a synchronize).
  void grow_groups(uint64_t gcap, uint64_t groups) {
    const auto t_grow = std::chrono::steady_clock::now();
    if (gcap > 0xfff00000ull) gcap = 0xfff00000ull;
    const uint64_t count = std::min(groups, table_.gcap);  // never past the old arrays
    const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
    uint64_t nslots = 64;
    while (nslots < kSlotsPerGroup * gcap) nslots *= 2;
    GpuTable t = table_;  // new arrays, the same arena
    clear_table_arrays(t);
    TableArrays new_arrays(t, /*owns_arena=*/false);
    WCSV_CUDA_TRY(cudaMalloc(&t.slots, nslots * 4));
    WCSV_CUDA_TRY(cudaMalloc(&t.hashes, gcap * 8));
    WCSV_CUDA_TRY(cudaMalloc(&t.keys, std::max<uint64_t>(1, gcap * nkeys) * sizeof(Value)));
    WCSV_CUDA_TRY(cudaMalloc(&t.words, gcap * nwords * 8));
    t.mask = nslots - 1;
    t.gcap = gcap;
    if (count) {
      WCSV_CUDA_TRY(cudaMemcpyAsync(t.hashes, table_.hashes, count * 8, cudaMemcpyDeviceToDevice, compute_));
      if (nkeys)
        WCSV_CUDA_TRY(cudaMemcpyAsync(t.keys, table_.keys, count * nkeys * sizeof(Value),
                                      cudaMemcpyDeviceToDevice, compute_));
      WCSV_CUDA_TRY(cudaMemcpyAsync(t.words, table_.words, count * nwords * 8, cudaMemcpyDeviceToDevice, compute_));
    }
    WCSV_CUDA_TRY(cudaMemsetAsync(t.slots, 0, nslots * 4, compute_));
    t.counters = counters_;
    launch_init_words(t, dplan_, nwords, count, gcap, st_->shape, compute_);
    launch_rehash(t, count, st_->shape, compute_);
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    free_table_arrays(table_, /*keep_arena=*/true);
    new_arrays.release();
    table_ = t;
    grow_s += seconds_since(t_grow);
  }

  // A key arena of `cap` bytes holding the `used_now` bytes in use (exact).
  void grow_arena(uint64_t cap, uint64_t used_now) {
    const auto t_grow = std::chrono::steady_clock::now();
    char* a = nullptr;
    WCSV_CUDA_TRY(cudaMalloc(&a, cap));
    const uint64_t used = std::min(used_now, table_.arena_cap);  // never past the old arena
    try {
      if (used) WCSV_CUDA_TRY(cudaMemcpyAsync(a, table_.arena, used, cudaMemcpyDeviceToDevice, compute_));
      WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    } catch (...) {
      cudaFree(a);
      throw;
    }
    cudaFree(table_.arena);
    table_.arena = a;
    table_.arena_cap = cap;
    grow_s += seconds_since(t_grow);
  }

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
  void start_trace(trace::Tracer* t) {
    if (trace_ || !t) return;
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    WCSV_CUDA_TRY(cudaEventCreate(&trace_ref_));
    for (int i = 0; i < kRing; ++i) {
      WCSV_CUDA_TRY(cudaEventCreate(&trace_copy_end_[i]));
      WCSV_CUDA_TRY(cudaEventCreate(&ring_[i].dest.copy_begin));
    }
    const auto before = trace::Clock::now();
    WCSV_CUDA_TRY(cudaEventRecord(trace_ref_, copy_));
    WCSV_CUDA_TRY(cudaEventSynchronize(trace_ref_));
    trace_ref_us_ = (t->us(before) + t->us(trace::Clock::now())) / 2;
    const int pid = trace::gpu_pid(id_);
    t->name_process(pid, "gpu" + std::to_string(id_));
    t->name_thread(pid, 0, "compute stream");
    for (int i = 0; i < kRing; ++i)
      t->name_thread(pid, 1 + i, "copy stream " + std::to_string(i) + " (host to device)");
    t->name_thread(pid, 1 + kRing, "copy stream (device to host)");
    for (int i = 0; i < kRing; ++i) {
      ring_[i].dest.span = &ring_[i].read.span;
      ring_[i].dest.copy_begun = false;
      ring_[i].dest.tracer = t;
    }
    trace_ = t;
  }
  // The tids of this GPU's streams in the trace.
  static constexpr int kTraceComputeTid = 0, kTraceDownloadTid = 1 + kRing;

 private:
  // Records the copy and kernels of the batch in `buf`, whose work is done.
  void trace_batch(Buffer& buf) {
    const size_t i = static_cast<size_t>(&buf - ring_);
    const BatchSpan& sp = buf.read.span;
    const int pid = trace::gpu_pid(id_);
    auto record = [&](const char* what, const char* cat, int tid, cudaEvent_t a, cudaEvent_t b) {
      float from_ref = 0, ms = 0;
      if (cudaEventElapsedTime(&from_ref, trace_ref_, a) != cudaSuccess ||
          cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();  // not recorded, or not done: no event
        return;
      }
      trace_->complete_us(std::string(what) + " batch " + std::to_string(sp.index), cat, pid, tid,
                          trace_ref_us_ + 1e3 * from_ref, 1e3 * ms,
                          {{"batch", int64_t(sp.index)}, {"bytes", int64_t(sp.own)}});
    };
    if (trace_copied_[i] && buf.dest.copy_begun)
      record("copy", "copy", 1 + static_cast<int>(i), buf.dest.copy_begin, trace_copy_end_[i]);
    if (buf.vector_queued) record("vectors", "kernel", kTraceComputeTid, buf.vector_at[0], buf.vector_at[1]);
    if (buf.rows_queued) record("rows", "kernel", kTraceComputeTid, buf.rows_at[0], buf.rows_at[1]);
    trace_copied_[i] = false;
  }

  // Ends tracing: the events go, the staging's buffers forget the tracer.
  void stop_trace() noexcept {
    if (!trace_) return;
    for (int i = 0; i < kRing; ++i) {
      cudaEventDestroy(trace_copy_end_[i]);
      cudaEventDestroy(ring_[i].dest.copy_begin);
      ring_[i].dest.copy_begin = nullptr;
      ring_[i].dest.tracer = nullptr;
      ring_[i].dest.span = nullptr;
    }
    cudaEventDestroy(trace_ref_);
    (void)cudaGetLastError();
    trace_ = nullptr;
  }

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
  // Holistic lists (GpuTable's): list_cap_ values each, at most lists_upper_ used.
  uint32_t* list_groups_[kMaxLists] = {};
  unsigned long long* list_keys_[kMaxLists] = {};
  uint64_t list_cap_ = 0, lists_upper_ = 0;
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

// Runs fn(i) on one thread per i and rethrows the first exception.
template <class Fn>
void on_threads(size_t n, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

class CudaExecutor : public ScanExecutor {
 public:
  explicit CudaExecutor(DevicePlan plan) : plan_(std::move(plan)) {}

  void scan(InputSet& in, const ScanSettings& settings, GroupTable* groups, const RowBatchSink& sink,
            const std::function<void(const RowIssue&)>& on_skip, ScanStats& stats) override {
    const Plan& plan = *settings.plan;
    const size_t ncols = in.column_names.size();
    const bool lists_holistic = settings.holistic && gpu_lists_holistic(plan);
    if (!plan.scan.aggregate || !gpu_unsupported(plan, groups->layout(), ncols, lists_holistic).empty() ||
        !in.rereadable() || lookup_bytes(settings) > kMaxGpuLookupBytes) {
      if (plan_.required() && cuda_device_count() == 0) throw no_gpu_error(plan_.option, "no CUDA device was found");
      ++g_cpu_plans;
      make_cpu_executor()->scan(in, settings, groups, sink, on_skip, stats);
      return;
    }
    // Holistic arguments are listed per row on one GPU (the first of the
    // run's): its table is keyed by the agg's keys alone, and the lists come
    // back sorted. Several GPUs' lists would need their groups renumbered to
    // merge; grouping by the arguments too (every GPU) costs a host group per
    // distinct value.
    HolisticGroups* const listed = lists_holistic ? settings.holistic : nullptr;
    if (listed) {
      *listed = HolisticGroups{};
      listed->layout = std::make_unique<GroupLayout>(groups->layout());
      listed->layout->key_types.resize(plan.group_keys);
      listed->groups = std::make_unique<GroupTable>(listed->layout.get());
      listed->from_lists = true;
    }
    auto reset_lists = [&] {  // empty lists, one per argument (the GPU's)
      if (!listed) return;
      *listed->groups = GroupTable(listed->layout.get());
      std::vector<ArgList> one = HolisticGroups::lists_for(plan);
      listed->lists.clear();
      listed->lists.resize(one.size());
      for (size_t a = 0; a < one.size(); ++a) listed->lists[a].push_back(std::move(one[a]));
    };
    reset_lists();
    GroupTable& table = listed ? *listed->groups : *groups;
    // Before a scan from the start: `tried` names the scan given up, which
    // --profile keeps with its time beside those of earlier tries.
    auto start_over = [&](const std::string& tried, double tried_s) {
      *groups = GroupTable(&groups->layout());
      reset_lists();
      const uint64_t chunk = stats.chunk_size;
      std::vector<StageTiming> tries = std::move(stats.stages);
      stats = ScanStats{};
      stats.chunk_size = chunk;
      stats.stages = std::move(tries);
      stats.stages.push_back(StageTiming{tried, "all", tried_s, 0, 0});
      in = InputSet::open(*settings.opts);
      settings.progress->restart();
    };
    // Batch tails sized from the sample's rows: most are far shorter than
    // the longest tail, which every batch would read and copy again (3% of
    // the input with 32 MiB batches).
    uint64_t tail = gpu_batch_tail(settings.longest_sampled_row);
    for (;;) {
      // CUDA start-up (driver and contexts when not yet up, streams, pinned
      // buffers) runs on its own thread while the read pool starts. (Scanning
      // the first windows on the CPU meanwhile did not pay: docs/performance.md.)
      const auto t_setup = std::chrono::steady_clock::now();
      bool done, no_gpu;
      uint32_t flags = 0;
      std::chrono::steady_clock::time_point t_teardown;
      {
        Startup startup(*this, settings, plan, table.layout(), in.dialect, ncols, listed != nullptr);
        done = scan_gpu(in, settings, table, listed, stats, startup, t_setup, tail, &flags);
        no_gpu = startup.no_gpu;
        t_teardown = std::chrono::steady_clock::now();
      }
      if (interrupted()) throw Interrupted();  // a GPU scan cut short by a signal: no scan again on the CPU
      if (done) {
        // The GPUs' stagings (with their group tables) and the slots kept for the next run.
        stats.stages.push_back(StageTiming{"gpu: end of run", "cpu", seconds_since(t_teardown), 0, 0});
        ++g_gpu_scans;
        stats.executor = "gpu";
        return;
      }
      if (!no_gpu && flags == kFlagLongRow && tail < kGpuMaxTail) {
        // A row longer than the sample's rows promised: the GPUs scan again
        // with the longest tail.
        ++g_tail_reruns;
        start_over("gpu: scan with " + std::to_string(tail >> 10) + " KiB tails, a row longer", seconds_since(t_setup));
        tail = kGpuMaxTail;
        continue;
      }
      // No usable GPU under --device auto, or the GPUs met a bad row, a bad
      // value or a limit: the CPU executor scans from the start and reports
      // exactly what the user must see.
      ++(no_gpu ? g_cpu_plans : g_cpu_reruns);
      start_over(no_gpu ? "gpu: none found" : "gpu: scan handed to the cpu", seconds_since(t_setup));
      if (listed) *listed = HolisticGroups{};  // the CPU executor sets its own up
      make_cpu_executor()->scan(in, settings, groups, sink, on_skip, stats);
      return;
    }
  }

 private:
  struct NoGpu {};

  // The GPUs of a run, started one after another on a background thread so
  // that GPU 0 scans while the next GPUs start (creating contexts at the same
  // time is no faster than one by one). A GPU
  // joins the scan when it is ready; one ready after the input is used up
  // does no work.
  struct Startup {
    std::unique_ptr<PinnedSlots> slots;      // the GPUs' staging, shared (made before them)
    std::vector<std::unique_ptr<Gpu>> gpus;  // sized once the GPUs are known; filled as they start
    std::exception_ptr error;
    bool no_gpu = false;

    uint64_t batch = 0, buffer_bytes = 0;  // per GPU batch: own bytes; buffer bytes
    double driver_s = 0, first_s = 0, all_s = 0;  // CUDA driver; GPU 0 ready; all ready

    // `one_gpu`: the run uses the first of the GPUs alone.
    Startup(const CudaExecutor& x, const ScanSettings& settings, const Plan& plan, const GroupLayout& layout,
            const Dialect& dialect, size_t ncols, bool one_gpu) {
      // --chunk-size sets the batch size (tiny ones test every boundary).
      batch = settings.opts->chunk_size ? settings.chunk_size : kGpuBatchBytes;
      buffer_bytes = kBatchLead + batch + kGpuMaxTail;  // any tail a scan reads
      const auto& nulls = settings.opts->dialect.null_tokens;
      const GpuPlan host_plan = make_host_plan(plan, layout, dialect, ncols, nulls.size(), settings.type_from_schema);
      int nstring_keys = 0;
      for (Type t : layout.key_types) nstring_keys += t == Type::String;
      const int threads = settings.threads;
      thread_ = std::thread([this, &x, &settings, &plan, host_plan, nstring_keys, ncols, nulls, threads, one_gpu] {
        try {
          // The slots' memory is faulted in while the driver starts (the
          // probe thread started it), unless an earlier run left slots: room
          // for any GPU count, as that count is not known yet, and faulted
          // in for the GPUs listed (all of the room when all are used).
          const int likely = one_gpu                ? pin_count(1, threads)
                             : x.plan_.gpus.empty() ? slot_capacity(threads)
                                                    : pin_count(x.plan_.gpus.size(), threads);
          slots = take_slots(slot_capacity(threads), likely);
          const auto t0 = std::chrono::steady_clock::now();
          const int count = cuda_device_count();
          driver_s = seconds_since(t0);
          std::vector<int> chosen = usable_gpus(x.plan_, count, settings.opts->quiet);
          if (chosen.empty()) throw NoGpu{};
          if (one_gpu) chosen.resize(1);
          publish([&] { gpus.resize(chosen.size()); });
          const auto t1 = std::chrono::steady_clock::now();
          for (size_t i = 0; i < chosen.size(); ++i) {
            if (interrupted()) throw Interrupted();  // start no more GPUs after a signal
            WCSV_CUDA_TRY(cudaSetDevice(chosen[i]));
            if (i == 0) {
              slots->pin(pin_count(chosen.size(), threads));  // portable: every GPU copies from them
              g_slots_in_use = slots->count();
              g_slot_capacity = slots->capacity();
            }
            auto gpu = std::make_unique<Gpu>(chosen[i], host_plan, plan, nstring_keys, ncols, nulls, batch,
                                             buffer_bytes, *slots, settings.lookups);
            if (i == 0) first_s = seconds_since(t1);
            publish([&] {
              gpus[i] = std::move(gpu);
              ready_ = i + 1;
            });
          }
          all_s = seconds_since(t1);
        } catch (const NoGpu&) {
          no_gpu = true;
        } catch (...) {
          error = std::current_exception();
        }
        publish([&] { done_ = true; });
      });
    }
    // How many GPUs the run uses, once known; 0 when start-up failed or there
    // is no GPU (see error and no_gpu after join()).
    // A signal ends the wait (0 when the count is not known yet).
    size_t wait_ids() {
      std::unique_lock<std::mutex> l(m_);
      while (!cv_.wait_for(l, std::chrono::milliseconds(20), [&] { return !gpus.empty() || done_; }))
        if (interrupted()) break;
      return gpus.size();
    }
    // GPU i once it is ready, or nullptr when start-up ended without it or
    // give_up() turned true first (checked every millisecond).
    Gpu* wait_gpu(size_t i, const std::function<bool()>& give_up) {
      std::unique_lock<std::mutex> l(m_);
      for (;;) {
        if (ready_ > i) return gpus[i].get();
        if (done_ || give_up()) return nullptr;
        cv_.wait_for(l, std::chrono::milliseconds(1));
      }
    }
    void join() {
      if (thread_.joinable()) thread_.join();
    }
    ~Startup() {
      join();
      gpus.clear();  // each waits for its streams: no copy reads the slots now
      if (!slots) return;
      slots->forget_copies();  // their events belong to the GPUs' stagings
      shelve_slots(std::move(slots));
    }

   private:
    template <class Fn>
    void publish(Fn&& fn) {
      {
        std::lock_guard<std::mutex> l(m_);
        fn();
      }
      cv_.notify_all();
    }
    std::mutex m_;
    std::condition_variable cv_;
    size_t ready_ = 0;  // gpus[0, ready_) are usable
    bool done_ = false;
    std::thread thread_;
  };

  // False when the GPUs flagged something for the host path, or there are
  // none (startup.no_gpu) under --device auto.
  // `t_setup`: when the run's set-up began (for --profile).
  // `listed`: the holistic lists come back there (groups is its table).
  bool scan_gpu(InputSet& in, const ScanSettings& settings, GroupTable& groups, HolisticGroups* listed,
                ScanStats& stats, Startup& startup, std::chrono::steady_clock::time_point t_setup, uint64_t tail,
                uint32_t* flags) {
    const auto t_wait = std::chrono::steady_clock::now();
    const size_t ngpus = startup.wait_ids();
    // The read helpers are lent by the host's thread pool until the input is
    // read: the result side after the scan needs every thread back.
    std::optional<PiecePool> pool;
    pool.emplace(read_helpers(ngpus, settings.threads));
    if (!ngpus || !startup.wait_gpu(0, [] { return interrupted(); })) {
      if (interrupted()) throw Interrupted();  // ~Startup waits for the CUDA call under way, no more
      startup.join();
      if (startup.error) std::rethrow_exception(startup.error);
      return false;  // no GPU under --device auto
    }
    if (settings.opts->gpus_start_together)
      for (size_t g = 1; g < ngpus; ++g) startup.wait_gpu(g, [] { return interrupted(); });
    const double startup_wait_s = seconds_since(t_wait);
    const auto t_scan = std::chrono::steady_clock::now();
    const double setup_s = std::chrono::duration<double>(t_scan - t_setup).count() - startup_wait_s;
    for (auto& src : in.sources) {
      if (src->header().empty() && in.column_names.empty()) continue;
      BatchFeed feed(*src, startup.batch, tail, *pool);
      StateChain chain(kRowStart);
      std::atomic<bool> flagged{false};
      std::atomic<uint32_t> flags_seen{0};
      on_threads(ngpus, [&](size_t g) {
        Gpu* ready = startup.wait_gpu(g, [&] { return feed.exhausted(); });
        if (!ready) return;  // the input was used up first (or start-up failed: rethrown below)
        Gpu& gpu = *ready;
        if (settings.tracer) {
          gpu.start_trace(settings.tracer);
          settings.tracer->name_this_thread("gpu" + std::to_string(gpu.id()) + " host");
        }
        // This GPU gives up: the others stop at their next batch.
        auto stop_all = [&] {
          gpu.drop_pending();
          feed.stop();
          chain.abort();  // before the drain, so the other GPUs stop waiting for states now
          gpu.drain_reads(feed);
          (void)gpu.quiesce();
        };
        try {
          for (;;) {
            if (interrupted()) throw Interrupted();
            const Gpu::Step step = gpu.submit(feed, chain);
            if (step == Gpu::Step::Exhausted) break;
            settings.progress->add(gpu.last_own);
            if (step == Gpu::Step::Flagged) {
              flagged = true;
              throw StateChain::Aborted{};
            }
          }
          if (!gpu.finish_pending()) {
            flagged = true;
            throw StateChain::Aborted{};
          }
          // A failed stream published none of its last vectors: the other
          // GPUs must not wait for them (finish() reports the error).
          if (!gpu.quiesce()) chain.abort();
        } catch (const StateChain::Aborted&) {
          stop_all();
        } catch (...) {
          stop_all();
          throw;
        }
        flags_seen |= gpu.flags_seen();
      });
      if (flagged) {
        *flags = flags_seen;
        return false;
      }
    }
    pool.reset();
    startup.join();
    if (startup.error) std::rethrow_exception(startup.error);
    std::vector<std::unique_ptr<Gpu>>& gpus = startup.gpus;
    std::vector<GpuCounters> counters(gpus.size());
    on_threads(gpus.size(), [&](size_t g) { counters[g] = gpus[g]->finish(); });
    for (const auto& c : counters) *flags |= c.flags;
    if (*flags) return false;
    uint64_t most_groups = 0;
    for (const auto& g : gpus) most_groups = std::max(most_groups, g->table_groups());
    g_table_groups = most_groups;
    const double scan_s = seconds_since(t_scan);
    for (const auto& g : gpus) {
      stats.bytes += g->bytes;
      stats.partitions += g->batches;
    }
    // The other GPUs' tables merge into GPU 0's on GPU 0 (exact aggregates:
    // any order gives the same bits); then one table comes back.
    const auto t_merge = std::chrono::steady_clock::now();
    size_t merged = 1;
    while (merged < gpus.size() && gpus[0]->absorb(*gpus[merged], counters[0], counters[merged])) ++merged;
    const double device_merge_s = seconds_since(t_merge);
    trace::Tracer* const tr = settings.tracer;
    if (tr && gpus.size() > 1)
      tr->complete("merge tables", "merge", trace::gpu_pid(gpus[0]->id()), Gpu::kTraceComputeTid, t_merge,
                   trace::Clock::now(), {{"gpus", int64_t(merged)}});
    // GPU 0's table was grown to fit first, so this is not expected; if a
    // limit was hit anyway, the CPU executor runs the scan.
    if (merged < gpus.size()) {
      *flags = counters[0].flags;
      return false;
    }
    // The result's groups stay on GPU 0 when the driver takes them from there
    // (and the GPU has room to order them); else the table comes back.
    std::unique_ptr<DeviceGroups> ordered;
    if (settings.device_result && !listed && std::min<uint64_t>(counters[0].groups, gpus[0]->table_groups()) > 0)
      ordered = gpus[0]->ordered_groups(counters[0], groups.layout(), result_run_rows(*settings.opts));
    const auto t_back = std::chrono::steady_clock::now();
    if (!ordered) gpus[0]->copy_back(groups, counters[0], settings.threads);
    stats.rows += counters[0].rows;
    const double back_s = seconds_since(t_back);
    if (tr)
      tr->complete("copy back table", "copy", trace::gpu_pid(gpus[0]->id()), Gpu::kTraceDownloadTid, t_back,
                   trace::Clock::now(), {{"groups", int64_t(groups.size())}});
    const auto t_lists = std::chrono::steady_clock::now();
    if (listed && !gpus[0]->copy_back_lists(listed->lists, counters[0], settings.threads)) {
      *flags = kFlagCapacity;
      return false;
    }
    const double lists_s = seconds_since(t_lists);
    if (tr && listed)
      tr->complete("sort+copy back lists", "sort", trace::gpu_pid(gpus[0]->id()), Gpu::kTraceComputeTid, t_lists,
                   trace::Clock::now());
    stats.chunk_size = startup.batch;
    stats.stages.push_back(StageTiming{"gpu: start driver", "cpu", startup.driver_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: start gpu0+buffers", "gpu0", startup.first_s, 0, 0});
    if (gpus.size() > 1) stats.stages.push_back(StageTiming{"gpu: start all gpus", "all", startup.all_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: scan waited for gpu0", "cpu", startup_wait_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: set-up, not waiting", "cpu", setup_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: read+copy+kernels", "all", scan_s, stats.bytes, 0});
    if (gpus.size() > 1) stats.stages.push_back(StageTiming{"gpu: merge on gpu0", "gpu0", device_merge_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: copy back", "cpu", back_s, 0, 0});
    if (listed) stats.stages.push_back(StageTiming{"gpu: sort+copy back lists", "gpu0", lists_s, 0, 0});
    for (const auto& g : gpus) {
      const std::string dev = "gpu" + std::to_string(g->id());
      stats.stages.push_back(StageTiming{"gpu: wait for reads", dev, g->read_s, g->bytes, 0});
      stats.stages.push_back(StageTiming{"gpu: wait for start states", dev, g->state_wait_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: wait (table, end)", dev, g->wait_s, g->bytes, g->used_bytes});
      stats.stages.push_back(StageTiming{"gpu: wait for a buffer", dev, g->ring_wait_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: grow group table", dev, g->grow_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: copy in, start to end", dev, g->copy_s, g->copied_bytes, 0});
      stats.stages.push_back(StageTiming{"gpu busy: quote vectors", dev, g->vector_busy_s, g->bytes, 0});
      stats.stages.push_back(StageTiming{"gpu busy: rows+aggregate", dev, g->rows_busy_s, g->bytes, 0});
    }
    if (ordered) {
      (*settings.device_result)(*ordered);
      ordered->add_stages(stats.stages);
    }
    return true;
  }

  DevicePlan plan_;
};

}  // namespace
}  // namespace cuda

CudaRunInfo cuda_run_info() {
  CudaRunInfo r;
  r.gpu_scans = cuda::g_gpu_scans;
  r.cpu_plans = cuda::g_cpu_plans;
  r.cpu_reruns = cuda::g_cpu_reruns;
  r.stagings_built = cuda::g_stagings_built;
  r.table_stops = cuda::g_table_stops;
  r.tables_reused = cuda::g_tables_reused;
  r.slots_in_use = cuda::g_slots_in_use;
  r.slot_capacity = cuda::g_slot_capacity;
  r.table_groups = cuda::g_table_groups;
  r.tail_reruns = cuda::g_tail_reruns;
  return r;
}

std::unique_ptr<ScanExecutor> make_cuda_executor(const DevicePlan& plan) {
  return std::make_unique<cuda::CudaExecutor>(plan);
}

}  // namespace warpcsv
