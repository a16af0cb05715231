#include "cuda/gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "runtime/stopwatch.hpp"

namespace warpcsv {
namespace cuda {

namespace {

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

}  // namespace

Gpu::Gpu(int id, const GpuPlan& host_plan, const Plan& plan, int nstring_keys, size_t ncols,
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

Gpu::~Gpu() {
  cudaSetDevice(id_);
  cudaDeviceSynchronize();
  stop_trace();
  cudaFree(dplan_);
  cudaFree(dblob_);
  free_lists();
  if (spill_bounce_) cudaFreeHost(spill_bounce_);
  st_->free_table();  // none: adopted or freed at the start
  st_->table = table_;  // for the next run (freed with the staging if the GPU failed)
  st_->table_nkeys = hplan_.nkeys;
  st_->table_nwords = hplan_.nwords;
  shelve_staging(std::move(st_));
}

Gpu::Step Gpu::submit(BatchFeed& feed, StateChain& chain) {
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
  WCSV_CUDA_TRY(cudaMemcpyAsync(&buf.summary_host->newlines, buf.v.census + kCensusNewlines, sizeof(uint32_t),
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

void Gpu::drain_reads(BatchFeed& feed) noexcept {
  for (Buffer* b : reading_) {
    try {
      feed.wait(b->read);
    } catch (...) {
    }
  }
  reading_.clear();
  feed_done_ = false;
}

bool Gpu::finish_pending() {
  launch_pending(pending_.size());
  return !flagged();
}

void Gpu::launch_pending(size_t wait) {
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

bool Gpu::counted(const Buffer& buf) {
  const cudaError_t q = cudaEventQuery(buf.vector_at[1]);
  if (q == cudaErrorNotReady) return false;
  WCSV_CUDA_TRY(q);
  return true;
}

bool Gpu::launch_rows(Buffer& buf, uint8_t state) {
  const auto t_table = std::chrono::steady_clock::now();
  const bool room = ensure_table(buf);
  wait_s += seconds_since(t_table);
  if (!room) return false;
  const GpuBatch b = batch_of(buf, state);
  WCSV_CUDA_TRY(cudaEventRecord(buf.rows_at[0], compute_));
  launch_batch_rows(b, dplan_, hplan_, buf.v, table(), st_->scratch, st_->shape,
                    groups_known_, compute_);
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

bool Gpu::quiesce() noexcept {
  const bool ok = cudaSetDevice(id_) == cudaSuccess && cudaStreamSynchronize(compute_) == cudaSuccess;
  (void)cudaGetLastError();
  return ok;
}

GpuCounters Gpu::finish() {
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

void Gpu::upload_plan(const GpuPlan& host_plan, const Plan& plan, const LookupTables* lookups) {
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
  launch_reset_batch_states(dplan_, hplan_, st_->scratch, st_->shape, compute_);
}

void Gpu::add_busy(Buffer& buf) {
  if (trace_) trace_batch(buf);
  if (buf.vector_queued) vector_busy_s += elapsed_s(buf.vector_at[0], buf.vector_at[1]);
  if (buf.rows_queued) rows_busy_s += elapsed_s(buf.rows_at[0], buf.rows_at[1]);
  buf.vector_queued = buf.rows_queued = false;
}

double Gpu::elapsed_s(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  if (cudaEventElapsedTime(&ms, a, b) == cudaSuccess) return ms / 1e3;
  (void)cudaGetLastError();
  return 0;
}

void Gpu::start_reads(BatchFeed& feed) {
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

GpuBatch Gpu::batch_of(const Buffer& buf, uint8_t state) {
  const BatchSpan& sp = buf.read.span;
  return GpuBatch{buf.dev + kBatchLead, sp.n, sp.own, state, batch_starts_row(sp, state), sp.at_eof};
}

void CUDART_CB Gpu::publish(void* p) {
  const Buffer& buf = *static_cast<const Buffer*>(p);
  buf.chain->publish(buf.read.span.index, buf.summary_host->tv);
}

void Gpu::start_trace(trace::Tracer* t) {
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

void Gpu::trace_batch(Buffer& buf) {
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

void Gpu::stop_trace() noexcept {
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

}  // namespace cuda
}  // namespace warpcsv
