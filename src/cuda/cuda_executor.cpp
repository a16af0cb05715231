// The CUDA executor's host side: one thread per GPU pulls batches of whole
// partitions from a shared counter; a pool of host threads copies each batch
// from the mapped window into pinned memory; the copy stream moves it to the
// GPU while the compute stream runs the previous batch. Each GPU keeps its
// group table resident; at the end the tables come back, are converted into
// the core's state structs and merged with GroupTable::merge_from in GPU
// order. A batch that meets anything the GPU does not report itself (a bad
// row or value, an expression error, a limit) makes the whole scan run again
// on the CPU executor, so messages and --rejects are exactly the CPU's.
#include "cuda/cuda_executor.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "cuda/gpu_plan.hpp"
#include "exec/device.hpp"
#include "exec/partitioner.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"

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

void cuda_start_contexts(int n) {
  for (int i = 0; i < n; ++i)
    if (cudaSetDevice(i) == cudaSuccess) (void)cudaFree(nullptr);
  (void)cudaGetLastError();
}

namespace cuda {
namespace {

std::atomic<uint64_t> g_gpu_scans{0}, g_cpu_plans{0}, g_cpu_reruns{0};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

constexpr uint64_t kBatchTarget = 16ull << 20;  // bytes per GPU batch (whole partitions)
constexpr uint64_t kSlack = 1ull << 20;         // room for the row that ends a batch
constexpr int kRing = 3;                        // pinned/device buffer pairs per GPU
constexpr uint64_t kCopyPiece = 1ull << 20;     // host memcpy work unit
constexpr uint64_t kTableBatches = 4;           // batches of new groups a table grows for
constexpr uint64_t kTableBytes = 1ull << 30;    // soft cap on the group table per GPU
constexpr uint64_t kWindowChunks = 32;          // partitions per host window (measured best of 8-64)

// ---- host threads that copy mapped bytes into pinned buffers ---------------

// A persistent pool: copy() splits a memcpy into pieces that the pool's
// threads and the caller share; several callers (one per GPU) may copy at once.
class CopyPool {
 public:
  explicit CopyPool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~CopyPool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  // Copies n bytes from src to dst; returns when every piece is done.
  void copy(char* dst, const char* src, uint64_t n) {
    Job j{dst, src, n, (n + kCopyPiece - 1) / kCopyPiece};
    if (j.pieces <= 1 || threads_.empty()) {
      std::memcpy(dst, src, n);
      return;
    }
    {
      std::lock_guard<std::mutex> l(m_);
      jobs_.push_back(&j);
    }
    cv_.notify_all();
    for (;;) {
      uint64_t i;
      {
        std::lock_guard<std::mutex> l(m_);
        i = j.next < j.pieces ? j.next++ : j.pieces;
      }
      if (i >= j.pieces) break;
      run(j, i);
    }
    std::unique_lock<std::mutex> l(m_);
    done_cv_.wait(l, [&] { return j.done == j.pieces; });
    auto it = std::find(jobs_.begin(), jobs_.end(), &j);
    if (it != jobs_.end()) jobs_.erase(it);
  }

 private:
  struct Job {
    char* dst;
    const char* src;
    uint64_t n;
    uint64_t pieces;
    uint64_t next = 0;
    uint64_t done = 0;
  };
  void run(Job& j, uint64_t i) {
    const uint64_t b = i * kCopyPiece, len = std::min(kCopyPiece, j.n - b);
    std::memcpy(j.dst + b, j.src + b, len);
    std::lock_guard<std::mutex> l(m_);
    if (++j.done == j.pieces) done_cv_.notify_all();
  }
  void loop() {
    for (;;) {
      Job* j = nullptr;
      uint64_t i = 0;
      {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
        if (stop_) return;
        j = jobs_.front();
        if (j->next >= j->pieces) {
          jobs_.pop_front();
          continue;
        }
        i = j->next++;
      }
      run(*j, i);
    }
  }
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job*> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// ---- which plans run on the GPU ---------------------------------------------

int direct_slot(const Program& p) {
  return p.code.size() == 1 && p.code[0].op == Op::Column ? p.code[0].arg : -1;
}

int words_of(AggOp op) {
  switch (op) {
    case AggOp::CountStar:
    case AggOp::Count: return 1;
    case AggOp::SumExact:
    case AggOp::MeanExact: return 3;
    case AggOp::VarExact:
    case AggOp::StdExact: return 7;
    case AggOp::CorrExact: return 17;
    case AggOp::Min:
    case AggOp::Max: return 2;
    default: return 0;
  }
}

bool gpu_aggregate(const AggDesc& a) {
  if (a.op == AggOp::Min || a.op == AggOp::Max) return is_integral_repr(a.in_type);
  return words_of(a.op) > 0;
}

// Why this plan cannot run on the GPU, or empty when it can.
std::string gpu_unsupported(const Plan& plan, const GroupLayout& layout, size_t ncols) {
  const ScanPlan& s = plan.scan;
  if (!s.aggregate) return "not an aggregate";
  if (layout.float_moments) return "float sums or moments (exact accumulators not on the GPU yet)";
  int words = 0;
  for (const auto& a : layout.aggs) {
    if (!gpu_aggregate(a)) return "aggregate without a GPU form";
    words += words_of(a.op);
  }
  if (s.used_columns.size() > static_cast<size_t>(kMaxSlots) || s.keys.size() > static_cast<size_t>(kMaxKeys) ||
      s.aggs.size() > static_cast<size_t>(kMaxAggs) || words > kMaxWords || ncols > static_cast<size_t>(kMaxColumns))
    return "plan larger than the GPU limits";
  return "";
}

// ---- one GPU ----------------------------------------------------------------

// A batch as the host cuts it from a window.
struct HostBatch {
  uint64_t begin, copy_end, row_end;  // window offsets
  uint8_t state;
  bool first_is_row;
  bool at_eof;
};

struct Buffer {
  char* pinned = nullptr;
  char* dev = nullptr;
  uint64_t cap = 0;
  cudaEvent_t copied = nullptr;   // the H2D copy finished: pinned is free
  cudaEvent_t computed = nullptr; // the kernels finished: dev is free
  bool used = false;
};

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

class Gpu {
 public:
  Gpu(int id, const GpuPlan& host_plan, const Plan& plan, int nstring_keys, size_t ncols,
      const std::vector<std::string>& null_tokens)
      : id_(id), nstring_keys_(nstring_keys), ncols_(ncols), null_tokens_(null_tokens) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    WCSV_CUDA_TRY(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, id_));
    WCSV_CUDA_TRY(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    WCSV_CUDA_TRY(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
    upload_plan(host_plan, plan);
    WCSV_CUDA_TRY(cudaMalloc(&counters_, sizeof(GpuCounters)));
    WCSV_CUDA_TRY(cudaMemset(counters_, 0, sizeof(GpuCounters)));
    for (auto& b : ring_) {
      WCSV_CUDA_TRY(cudaEventCreateWithFlags(&b.copied, cudaEventDisableTiming));
      WCSV_CUDA_TRY(cudaEventCreateWithFlags(&b.computed, cudaEventDisableTiming));
      reserve(b, kBatchTarget + kSlack);
    }
    reserve_scratch(kBatchTarget + kSlack);
    WCSV_CUDA_TRY(cudaMallocHost(&snap_host_, sizeof(GpuCounters) * kRing));
    for (auto& sn : snaps_) WCSV_CUDA_TRY(cudaEventCreateWithFlags(&sn.done, cudaEventDisableTiming));
  }

  ~Gpu() {
    cudaSetDevice(id_);
    cudaDeviceSynchronize();
    for (auto& b : ring_) {
      cudaFreeHost(b.pinned);
      cudaFree(b.dev);
      if (b.copied) cudaEventDestroy(b.copied);
      if (b.computed) cudaEventDestroy(b.computed);
    }
    free_scratch();
    cudaFree(table_.slots);
    cudaFree(table_.hashes);
    cudaFree(table_.keys);
    cudaFree(table_.words);
    cudaFree(table_.arena);
    cudaFree(counters_);
    cudaFreeHost(snap_host_);
    for (auto& sn : snaps_)
      if (sn.done) cudaEventDestroy(sn.done);
    cudaFree(dplan_);
    cudaFree(dblob_);
    if (copy_) cudaStreamDestroy(copy_);
    if (compute_) cudaStreamDestroy(compute_);
  }

  // Copies one batch in and queues its kernels. Returns false when the GPU has
  // already flagged something that needs the host path.
  bool run(const Window& w, const HostBatch& hb, CopyPool& pool) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    const uint64_t n = hb.copy_end - hb.begin;
    Buffer& buf = ring_[next_++ % kRing];
    if (buf.used) WCSV_CUDA_TRY(cudaEventSynchronize(buf.copied));
    if (n > buf.cap) {
      if (buf.used) WCSV_CUDA_TRY(cudaEventSynchronize(buf.computed));
      reserve(buf, n + kSlack);
    }
    if (n > scratch_bytes_) {
      WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
      reserve_scratch(n + kSlack);
    }
    const auto t_copy = std::chrono::steady_clock::now();
    pool.copy(buf.pinned, w.data + hb.begin, n);
    copy_s += seconds_since(t_copy);
    bytes += n;
    const auto t_table = std::chrono::steady_clock::now();
    const bool ok = ensure_table(n);
    wait_s += seconds_since(t_table);
    if (!ok) return false;
    if (buf.used) WCSV_CUDA_TRY(cudaStreamWaitEvent(copy_, buf.computed, 0));
    WCSV_CUDA_TRY(cudaMemcpyAsync(buf.dev, buf.pinned, n, cudaMemcpyHostToDevice, copy_));
    WCSV_CUDA_TRY(cudaEventRecord(buf.copied, copy_));
    WCSV_CUDA_TRY(cudaStreamWaitEvent(compute_, buf.copied, 0));
    GpuBatch b{buf.dev, n, hb.row_end - hb.begin, hb.state, hb.first_is_row, hb.at_eof};
    launch_batch(b, dplan_, hplan_, table(), scratch_, sms_, compute_);
    WCSV_CUDA_TRY(cudaEventRecord(buf.computed, compute_));
    Snapshot& sn = snaps_[seq_ % kRing];
    WCSV_CUDA_TRY(cudaMemcpyAsync(snap_host_ + seq_ % kRing, counters_, sizeof(GpuCounters),
                                  cudaMemcpyDeviceToHost, compute_));
    WCSV_CUDA_TRY(cudaEventRecord(sn.done, compute_));
    sn.seq = seq_++;
    sn.groups_bound_total = groups_bound_total_;
    sn.arena_bound_total = arena_bound_total_;
    buf.used = true;
    return true;
  }

  // Waits for the GPU; its counters (flags, groups, rows).
  GpuCounters finish() {
    const auto t = std::chrono::steady_clock::now();
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    WCSV_CUDA_TRY(cudaStreamSynchronize(copy_));
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    GpuCounters c;
    WCSV_CUDA_TRY(cudaMemcpy(&c, counters_, sizeof c, cudaMemcpyDeviceToHost));
    wait_s += seconds_since(t);
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) used_bytes = total_b - free_b;
    return c;
  }

  int id() const { return id_; }
  double copy_s = 0, wait_s = 0;  // host time copying to pinned memory; waiting for the GPU
  uint64_t bytes = 0;             // bytes sent to this GPU
  uint64_t used_bytes = 0;        // device memory in use at the end

  // Copies the table back as a host GroupTable of the core's state structs.
  void copy_back(GroupTable& out, const GpuCounters& c) {
    WCSV_CUDA_TRY(cudaSetDevice(id_));
    const uint64_t groups = std::min<uint64_t>(c.groups, table_.gcap);
    if (groups == 0) return;
    const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
    std::vector<Value> keys(groups * static_cast<uint64_t>(nkeys));
    std::vector<uint64_t> words(groups * static_cast<uint64_t>(nwords));
    std::vector<char> arena(c.arena_used);
    if (!keys.empty())
      WCSV_CUDA_TRY(cudaMemcpy(keys.data(), table_.keys, keys.size() * sizeof(Value), cudaMemcpyDeviceToHost));
    WCSV_CUDA_TRY(cudaMemcpy(words.data(), table_.words, words.size() * 8, cudaMemcpyDeviceToHost));
    if (!arena.empty())
      WCSV_CUDA_TRY(cudaMemcpy(arena.data(), table_.arena, arena.size(), cudaMemcpyDeviceToHost));
    const GroupLayout& layout = out.layout();
    out.reserve(out.size() + groups);
    std::vector<char> state(layout.state_bytes + kAggStateAlign);
    char* block = state.data();
    for (uint64_t g = 0; g < groups; ++g) {
      Value* k = keys.data() + g * nkeys;
      for (int i = 0; i < nkeys; ++i)
        if (!k[i].null && layout.key_types[static_cast<size_t>(i)] == Type::String)
          k[i].s.ptr = arena.data() + reinterpret_cast<uintptr_t>(k[i].s.ptr);
      std::memset(block, 0, layout.state_bytes);
      const uint64_t* w = words.data() + g * nwords;
      for (size_t a = 0; a < layout.aggs.size(); ++a)
        to_state(layout.aggs[a], w + hplan_.aggs[a].word, block);
      char* dst = out.find_or_insert(k, out.hash_keys(k));
      for (const auto& a : layout.aggs) agg_merge(a, dst, block);
    }
  }

 private:
  static int128 to_int128(const uint64_t* w) {
    return static_cast<int128>((static_cast<uint128>(w[1]) << 64) | w[0]);
  }
  static Wide256 to_wide(const uint64_t* w) { return Wide256{{w[0], w[1], w[2], w[3]}}; }

  // The core's state struct for an aggregate's GPU words.
  static void to_state(const AggDesc& a, const uint64_t* w, char* block) {
    char* s = block + a.offset;
    switch (a.op) {
      case AggOp::CountStar:
      case AggOp::Count: reinterpret_cast<CountState*>(s)->n = static_cast<int64_t>(w[0]); return;
      case AggOp::SumExact:
      case AggOp::MeanExact: {
        auto* st = reinterpret_cast<SumExactState*>(s);
        st->sum = to_int128(w);
        st->n = static_cast<int64_t>(w[2]);
        return;
      }
      case AggOp::VarExact:
      case AggOp::StdExact: {
        auto* st = reinterpret_cast<MomentsExactState*>(s);
        st->sum = to_int128(w);
        st->sum_sq = to_wide(w + 2);
        st->n = static_cast<int64_t>(w[6]);
        return;
      }
      case AggOp::CorrExact: {
        auto* st = reinterpret_cast<CorrExactState*>(s);
        st->sx = to_int128(w);
        st->sy = to_int128(w + 2);
        st->sxx = to_wide(w + 4);
        st->syy = to_wide(w + 8);
        st->sxy = to_wide(w + 12);
        st->n = static_cast<int64_t>(w[16]);
        return;
      }
      case AggOp::Min:
      case AggOp::Max: {
        auto* st = reinterpret_cast<ExtremeState*>(s);
        if (!w[1]) return;
        st->v = Value::of_int(static_cast<int64_t>(w[0]));
        st->has = 1;
        return;
      }
      default: throw InternalError("aggregate without a GPU form reached the GPU");
    }
  }

  GpuTable table() const {
    GpuTable t = table_;
    t.counters = counters_;
    return t;
  }

  void upload_plan(const GpuPlan& host_plan, const Plan& plan) {
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
    for (size_t k = 0; k < s.keys.size(); ++k) add(&hplan_.keys[k], s.keys[k]);
    for (size_t a = 0; a < s.aggs.size(); ++a) {
      add(&hplan_.aggs[a].arg0, s.aggs[a].arg0);
      add(&hplan_.aggs[a].arg1, s.aggs[a].arg1);
    }
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

  void reserve(Buffer& b, uint64_t cap) {
    cudaFreeHost(b.pinned);
    cudaFree(b.dev);
    b.pinned = nullptr;
    b.dev = nullptr;
    WCSV_CUDA_TRY(cudaMallocHost(&b.pinned, cap));
    WCSV_CUDA_TRY(cudaMalloc(&b.dev, cap + kSegBytes));  // whole-segment loads past the end
    b.cap = cap;
  }

  void free_scratch() {
    cudaFree(scratch_.tv);
    cudaFree(scratch_.prefix);
    cudaFree(scratch_.counts);
    cudaFree(scratch_.offsets);
    cudaFree(scratch_.rows);
    cudaFree(scratch_.cub_temp);
    scratch_ = GpuScratch{};
  }

  void reserve_scratch(uint64_t bytes) {
    free_scratch();
    const uint64_t nseg = (bytes + kSegBytes - 1) / kSegBytes + 1;
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.tv, nseg * 4));
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.prefix, nseg * 4));
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.counts, nseg * 4));
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.offsets, (nseg + 1) * 4));
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.rows, (bytes + 1) * 4));
    scratch_.cub_bytes = scan_temp_bytes(nseg);
    WCSV_CUDA_TRY(cudaMalloc(&scratch_.cub_temp, scratch_.cub_bytes));
    scratch_.seg_cap = nseg;
    scratch_.row_cap = bytes;
    scratch_bytes_ = bytes;
  }

  // Makes sure the table cannot fill during a batch of n bytes: a row that
  // reaches the table has all its fields, so at least ncols bytes.
  bool ensure_table(uint64_t n) {
    const uint64_t bound_groups = n / std::max<size_t>(1, ncols_) + 2;
    const uint64_t bound_arena = nstring_keys_ ? static_cast<uint64_t>(nstring_keys_) * 2 * n + 4096 : 0;
    if (!refresh_bounds()) return false;
    groups_bound_total_ += bound_groups;
    arena_bound_total_ += bound_arena;
    if (groups_upper_ + bound_groups > table_.gcap || arena_upper_ + bound_arena > table_.arena_cap) {
      WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
      GpuCounters c;
      WCSV_CUDA_TRY(cudaMemcpy(&c, counters_, sizeof c, cudaMemcpyDeviceToHost));
      if (c.flags) return false;
      groups_upper_ = c.groups;
      arena_upper_ = c.arena_used;
      if (groups_upper_ + bound_groups > table_.gcap) {
        // Room for many batches, so the host rarely has to wait for the GPU
        // here; at most about kTableBytes unless the groups need more.
        const uint64_t per_group = 8 + sizeof(Value) * hplan_.nkeys + 8 * hplan_.nwords + 16;
        uint64_t want = groups_upper_ + kTableBatches * bound_groups;
        if (want * per_group > kTableBytes)
          want = std::max<uint64_t>(groups_upper_ + 2 * bound_groups, kTableBytes / per_group);
        grow_groups(std::max<uint64_t>(2 * table_.gcap, want));
      }
      if (arena_upper_ + bound_arena > table_.arena_cap)
        grow_arena(std::max<uint64_t>(2 * table_.arena_cap, arena_upper_ + kTableBatches * bound_arena));
    }
    groups_upper_ += bound_groups;
    arena_upper_ += bound_arena;
    return true;
  }

  // Tightens the bounds from the newest snapshot the GPU has written (exact
  // counts then, plus the bounds of batches queued after it). False when the
  // GPU has flagged something for the host path.
  bool refresh_bounds() {
    for (uint64_t back = 1; back <= kRing && back <= seq_; ++back) {
      const uint64_t s = seq_ - back;
      const Snapshot& sn = snaps_[s % kRing];
      if (sn.seq != s) continue;
      const cudaError_t q = cudaEventQuery(sn.done);
      if (q == cudaErrorNotReady) continue;
      WCSV_CUDA_TRY(q);
      const GpuCounters& c = snap_host_[s % kRing];
      if (c.flags) return false;
      groups_upper_ = std::min<uint64_t>(groups_upper_, c.groups + (groups_bound_total_ - sn.groups_bound_total));
      arena_upper_ = std::min<uint64_t>(arena_upper_, c.arena_used + (arena_bound_total_ - sn.arena_bound_total));
      return true;
    }
    return true;
  }

  void grow_groups(uint64_t gcap) {
    if (gcap > 0xfff00000ull) gcap = 0xfff00000ull;
    const uint64_t count = groups_upper_;  // exact here: just synchronized
    const int nkeys = hplan_.nkeys, nwords = hplan_.nwords;
    uint64_t nslots = 64;
    while (nslots < 2 * gcap) nslots *= 2;
    GpuTable t = table_;
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
    launch_init_words(t, dplan_, nwords, count, gcap, compute_);
    launch_rehash(t, count, compute_);
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    cudaFree(table_.slots);
    cudaFree(table_.hashes);
    cudaFree(table_.keys);
    cudaFree(table_.words);
    t.arena = table_.arena;
    t.arena_cap = table_.arena_cap;
    table_ = t;
  }

  void grow_arena(uint64_t cap) {
    char* a = nullptr;
    WCSV_CUDA_TRY(cudaMalloc(&a, cap));
    if (arena_upper_)
      WCSV_CUDA_TRY(cudaMemcpyAsync(a, table_.arena, arena_upper_, cudaMemcpyDeviceToDevice, compute_));
    WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
    cudaFree(table_.arena);
    table_.arena = a;
    table_.arena_cap = cap;
  }

  int id_;
  int nstring_keys_;
  size_t ncols_;
  std::vector<std::string> null_tokens_;  // --null tokens, uploaded with the plan
  int sms_ = 1;
  cudaStream_t copy_ = nullptr, compute_ = nullptr;
  Buffer ring_[kRing];
  uint64_t next_ = 0;
  GpuScratch scratch_{};
  uint64_t scratch_bytes_ = 0;
  GpuPlan hplan_{};
  GpuPlan* dplan_ = nullptr;
  char* dblob_ = nullptr;
  GpuTable table_{};
  GpuCounters* counters_ = nullptr;
  uint64_t groups_upper_ = 0, arena_upper_ = 0;
  // Counter snapshots copied back after each batch without waiting, so the
  // bounds above can be tightened to exact counts with a lag of a few batches
  // instead of stopping the pipeline to read the counters.
  struct Snapshot {
    cudaEvent_t done = nullptr;
    uint64_t seq = ~0ull;
    uint64_t groups_bound_total = 0, arena_bound_total = 0;  // bounds queued up to this batch
  };
  GpuCounters* snap_host_ = nullptr;  // pinned, one per ring slot
  Snapshot snaps_[kRing];
  uint64_t seq_ = 0, groups_bound_total_ = 0, arena_bound_total_ = 0;
};

// The GpuPlan of a run (device pointers are filled in per GPU).
GpuPlan make_host_plan(const Plan& plan, const GroupLayout& layout, const Dialect& d, size_t ncols,
                       size_t nnull, const std::vector<bool>& type_from_schema) {
  GpuPlan p{};
  const ScanPlan& s = plan.scan;
  p.dialect = d;
  p.ncols = static_cast<int32_t>(ncols);
  p.nslots = static_cast<int32_t>(s.used_columns.size());
  p.nkeys = static_cast<int32_t>(s.keys.size());
  p.naggs = static_cast<int32_t>(s.aggs.size());
  p.n_null = static_cast<int32_t>(nnull);
  for (int c = 0; c < kMaxColumns; ++c) p.col_to_slot[c] = -1;
  for (size_t i = 0; i < s.used_columns.size(); ++i) {
    p.col_to_slot[s.used_columns[i]] = static_cast<int8_t>(i);
    p.slot_types[i] = s.slot_types[i];
    const size_t col = static_cast<size_t>(s.used_columns[i]);
    p.slot_inferred[i] = !(col < type_from_schema.size() && type_from_schema[col]);
  }
  p.has_filter = !s.filter.empty();
  for (size_t k = 0; k < s.keys.size(); ++k) {
    p.key_direct[k] = static_cast<int8_t>(direct_slot(s.keys[k]));
    p.key_types[k] = layout.key_types[k];
  }
  int word = 0;
  for (size_t a = 0; a < s.aggs.size(); ++a) {
    GpuAgg& g = p.aggs[a];
    g.op = layout.aggs[a].op;
    g.arg0_direct = static_cast<int8_t>(s.aggs[a].arg0.empty() ? -2 : direct_slot(s.aggs[a].arg0));
    g.arg1_direct = static_cast<int8_t>(s.aggs[a].arg1.empty() ? -2 : direct_slot(s.aggs[a].arg1));
    g.word = static_cast<uint16_t>(word);
    g.words = static_cast<uint16_t>(words_of(g.op));
    if (g.op == AggOp::Min) p.init_words[word] = static_cast<uint64_t>(INT64_MAX);
    if (g.op == AggOp::Max) p.init_words[word] = static_cast<uint64_t>(INT64_MIN);
    word += g.words;
  }
  p.nwords = std::max(1, word);
  return p;
}

// Cuts a window's ready partitions into batches of about kBatchTarget bytes.
std::vector<HostBatch> make_batches(const PartitionedWindow& pw, const Window& w) {
  std::vector<HostBatch> out;
  const size_t n = pw.begin.size();
  for (size_t j = 0; j < pw.ready;) {
    const size_t j0 = j;
    const uint64_t b = pw.begin[j0];
    size_t j1 = j0 + 1;
    while (j1 < pw.ready && pw.end(j1) - b <= kBatchTarget) ++j1;
    j = j1;
    bool rows = false;
    for (size_t k = j0; k < j1 && !rows; ++k) rows = pw.first_row[k] != kNoRow;
    if (!rows) continue;
    size_t k = j1;
    while (k < n && pw.first_row[k] == kNoRow) ++k;
    const uint64_t next_row = k < n ? pw.first_row[k] : w.size;
    HostBatch hb;
    hb.begin = b;
    hb.row_end = pw.end(j1 - 1);
    hb.copy_end = std::min<uint64_t>(next_row + 1, w.size);
    hb.state = pw.state[j0];
    hb.first_is_row = pw.first_row[j0] == b;
    hb.at_eof = w.at_eof && hb.copy_end == w.size;
    out.push_back(hb);
  }
  return out;
}

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
  CudaExecutor(std::vector<int> gpus, bool required) : gpus_(std::move(gpus)), required_(required) {}

  void scan(InputSet& in, const ScanSettings& settings, GroupTable* groups, const RowBatchSink& sink,
            const std::function<void(const RowIssue&)>& on_skip, ScanStats& stats) override {
    const Plan& plan = *settings.plan;
    const size_t ncols = in.column_names.size();
    if (!plan.scan.aggregate || !gpu_unsupported(plan, groups->layout(), ncols).empty() || !in.rereadable()) {
      if (required_ && cuda_device_count() == 0) throw no_gpu_error(settings.opts->device, "no CUDA device was found");
      ++g_cpu_plans;
      make_cpu_executor()->scan(in, settings, groups, sink, on_skip, stats);
      return;
    }
    // CUDA start-up (driver and contexts when not yet up, streams, pinned
    // buffers) runs on its own thread while scan_gpu maps and cuts the first
    // window. (Scanning the first windows on the CPU meanwhile was measured on
    // 2 x H200 and did not pay: see the notes of issue 4.)
    Startup startup(*this, settings, plan, groups->layout(), in.dialect, ncols);
    if (scan_gpu(in, settings, *groups, stats, startup)) {
      ++g_gpu_scans;
      return;
    }
    // No usable GPU under --device auto, or the GPUs met a bad row, a bad
    // value or a limit: the CPU executor scans from the start and reports
    // exactly what the user must see.
    ++(startup.no_gpu ? g_cpu_plans : g_cpu_reruns);
    *groups = GroupTable(&groups->layout());
    stats = ScanStats{};
    in = InputSet::open(*settings.opts);
    make_cpu_executor()->scan(in, settings, groups, sink, on_skip, stats);
  }

 private:
  struct NoGpu {};

  // The GPUs of a run, started on a background thread.
  struct Startup {
    std::vector<int> ids;
    std::vector<std::unique_ptr<Gpu>> gpus;
    std::exception_ptr error;
    bool no_gpu = false;
    std::thread thread;

    Startup(const CudaExecutor& x, const ScanSettings& settings, const Plan& plan, const GroupLayout& layout,
            const Dialect& dialect, size_t ncols) {
      const auto& nulls = settings.opts->dialect.null_tokens;
      const GpuPlan host_plan = make_host_plan(plan, layout, dialect, ncols, nulls.size(), settings.type_from_schema);
      int nstring_keys = 0;
      for (Type t : layout.key_types) nstring_keys += t == Type::String;
      thread = std::thread([this, &x, &settings, &plan, host_plan, nstring_keys, ncols, nulls] {
        try {
          const int count = cuda_device_count();
          if (count == 0) {
            if (!x.required_) throw NoGpu{};
            throw no_gpu_error(settings.opts->device, "no CUDA device was found");
          }
          ids = x.gpus_;
          if (ids.empty())
            for (int i = 0; i < count; ++i) ids.push_back(i);
          for (int g : ids)
            if (g >= count)
              throw ResourceError("--device " + settings.opts->device + ": GPU " + std::to_string(g) +
                                  " does not exist; this machine has " + std::to_string(count) +
                                  " GPU(s), numbered from 0");
          gpus.resize(ids.size());
          on_threads(ids.size(), [&](size_t i) {
            WCSV_CUDA_TRY(cudaSetDevice(ids[i]));
            gpus[i] = std::make_unique<Gpu>(ids[i], host_plan, plan, nstring_keys, ncols, nulls);
          });
        } catch (const NoGpu&) {
          no_gpu = true;
        } catch (...) {
          error = std::current_exception();
        }
      });
    }
    void join() {
      if (thread.joinable()) thread.join();
    }
    ~Startup() { join(); }
  };

  // False when the GPUs flagged something for the host path, or there are
  // none (startup.no_gpu) under --device auto.
  bool scan_gpu(InputSet& in, const ScanSettings& settings, GroupTable& groups, ScanStats& stats,
                Startup& startup) {
    std::vector<std::unique_ptr<Gpu>>& gpus = startup.gpus;
    bool started = false;
    auto wait_startup = [&] {
      if (started) return;
      startup.join();
      started = true;
      if (startup.error) std::rethrow_exception(startup.error);
    };
    const int helpers = std::max(0, std::min(settings.threads, 32) - 1);
    CopyPool pool(helpers);
    std::atomic<bool> abort{false};
    const uint64_t chunk = settings.chunk_size;
    double host_s = 0;  // mapping windows and cutting partitions
    // Windows of kWindowChunks partitions: mapping and cutting the next one
    // overlaps copying this one (WARPCSV_GPU_WINDOW_CHUNKS overrides, for tuning).
    uint64_t window_chunks = kWindowChunks;
    if (const char* e = std::getenv("WARPCSV_GPU_WINDOW_CHUNKS")) window_chunks = std::max(4ull, std::strtoull(e, nullptr, 10));
    const uint64_t window0 = std::max<uint64_t>(
        4 * chunk, std::min<uint64_t>(std::max<uint64_t>(window_chunks * chunk, 1ull << 20), 1ull << 30));
    // Two openings of the input, used for alternate windows: while the GPU
    // threads copy window k out of one mapping, this thread maps and cuts
    // window k+1 in the other (a source keeps one mapping at a time).
    InputSet second = InputSet::open(*settings.opts);
    InputSet* sets[2] = {&in, &second};
    // The window whose batches the GPU threads are working on.
    struct InFlight {
      Window w;
      std::vector<HostBatch> batches;
      std::atomic<size_t> next{0};
      std::exception_ptr error;
      std::thread thread;
    };
    std::unique_ptr<InFlight> flight;
    auto join_flight = [&] {
      if (!flight) return;
      flight->thread.join();
      std::exception_ptr e = flight->error;
      flight.reset();
      if (e) std::rethrow_exception(e);
    };
    struct FlightGuard {
      std::unique_ptr<InFlight>& f;
      ~FlightGuard() {
        if (f && f->thread.joinable()) f->thread.join();
      }
    } flight_guard{flight};
    for (size_t si = 0; si < in.sources.size(); ++si) {
      if (in.sources[si]->header().empty() && in.column_names.empty()) continue;
      uint64_t from = 0, window = window0;
      int parity = 0;
      for (;;) {
        if (interrupted()) {
          join_flight();
          throw Interrupted();
        }
        const auto t_window = std::chrono::steady_clock::now();
        Window w = sets[parity]->sources[si]->window(from, window);
        if (w.size == 0) break;
        PartitionedWindow pw = partition_window(in.dialect, w, chunk, settings.threads);
        if (pw.ready == 0) {
          window *= 2;
          continue;
        }
        std::vector<HostBatch> batches = make_batches(pw, w);
        host_s += seconds_since(t_window);
        wait_startup();
        if (startup.no_gpu) return false;
        join_flight();
        if (abort) return false;
        flight = std::make_unique<InFlight>();
        flight->w = w;
        flight->batches = std::move(batches);
        InFlight* f = flight.get();
        f->thread = std::thread([&, f] {
          try {
            on_threads(gpus.size(), [&](size_t g) {
              for (size_t i; !abort && (i = f->next.fetch_add(1)) < f->batches.size();)
                if (!gpus[g]->run(f->w, f->batches[i], pool)) abort = true;
            });
          } catch (...) {
            f->error = std::current_exception();
          }
        });
        stats.partitions += pw.ready;
        stats.bytes += pw.consumed;
        if (w.at_eof && pw.consumed == w.size) break;
        from = w.offset + pw.consumed;
        parity ^= 1;
      }
      join_flight();  // the next source's windows must not unmap this one's early
      if (abort) return false;
    }
    wait_startup();
    if (startup.no_gpu) return false;
    std::vector<GpuCounters> counters(gpus.size());
    on_threads(gpus.size(), [&](size_t g) { counters[g] = gpus[g]->finish(); });
    for (const auto& c : counters)
      if (c.flags) return false;
    // Per-GPU tables merge in GPU order (exact aggregates: any order gives the same bits).
    const auto t_merge = std::chrono::steady_clock::now();
    for (size_t g = 0; g < gpus.size(); ++g) {
      gpus[g]->copy_back(groups, counters[g]);  // merges into what earlier GPUs gave
      stats.rows += counters[g].rows;
    }
    const double merge_s = seconds_since(t_merge);
    stats.stages.push_back(StageTiming{"gpu: map+partition", "cpu", host_s, stats.bytes, 0});
    stats.stages.push_back(StageTiming{"gpu: copy back+merge", "cpu", merge_s, 0, 0});
    for (const auto& g : gpus) {
      const std::string dev = "gpu" + std::to_string(g->id());
      stats.stages.push_back(StageTiming{"gpu: copy to pinned", dev, g->copy_s, g->bytes, 0});
      stats.stages.push_back(StageTiming{"gpu: wait for kernels", dev, g->wait_s, g->bytes, g->used_bytes});
    }
    return true;
  }

  std::vector<int> gpus_;
  bool required_;  // --device gpu or a list: no GPU is an error, not the CPU
};

}  // namespace
}  // namespace cuda

CudaRunInfo cuda_run_info() {
  CudaRunInfo r;
  r.gpu_scans = cuda::g_gpu_scans;
  r.cpu_plans = cuda::g_cpu_plans;
  r.cpu_reruns = cuda::g_cpu_reruns;
  return r;
}

std::unique_ptr<ScanExecutor> make_cuda_executor(const std::vector<int>& gpus, bool required) {
  return std::make_unique<cuda::CudaExecutor>(gpus, required);
}

}  // namespace warpcsv
