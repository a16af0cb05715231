// The CUDA executor's host side: one thread per GPU claims fixed-size batches
// of the input in order (BatchFeed), a few ahead, and the readers move each
// to the GPU piece by piece: a piece is read into a pinned slot and its copy
// queued at once (cuda/pinned.hpp says why). The GPU computes the batch's
// transition vector; a host callback publishes it to the StateChain, which
// composes the vectors in file order, and once a batch's start state is
// known its rows are found, parsed and aggregated. The host never parses the
// bytes itself. Each GPU keeps its group table resident; at the end the
// GPUs exchange their groups by key range and each orders its range where
// the result is taken from the GPUs (key_ranges.*), else the tables merge
// into one GPU's, which is ordered there or comes back. A batch that meets
// anything the GPU does not report itself (a bad row or value, an expression
// error, a limit, a row longer than the batch tail) makes the whole scan run
// again on the CPU executor, so messages and --rejects are exactly the CPU's.
//
// The pieces: which plans run on the GPU and their GpuPlan (gpu_support.*);
// a GPU's staging and the pinned slots, kept between runs (staging.*); one
// GPU of a run (gpu.*: its batches; gpu_table.cpp: its group table;
// gpu_lists.cpp: its holistic lists; key_ranges.cpp: its part of the
// exchange). Here: the GPUs' start-up, the scan
// loop, and the plans handed to the CPU executor.
#include "cuda/cuda_executor.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cuda/batch_feed.hpp"
#include "cuda/device_groups.hpp"
#include "cuda/gpu.hpp"
#include "cuda/gpu_plan.hpp"
#include "cuda/gpu_spill.hpp"
#include "cuda/gpu_support.hpp"
#include "cuda/pinned.hpp"
#include "cuda/run_counters.hpp"
#include "cuda/staging.hpp"
#include "exec/device.hpp"
#include "exec/holistic.hpp"
#include "cuda/key_ranges.hpp"
#include "runtime/parallel.hpp"
#include "runtime/stopwatch.hpp"
#include "runtime/trace.hpp"
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
std::atomic<uint64_t> g_table_groups{0}, g_tail_reruns{0}, g_table_spills{0}, g_plain_rows{0},
    g_key_exchanges{0}, g_text_runs{0};

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
        // Groups may spill to the host when the result is taken from where
        // it is (the spill's parts give it) and no holistic lists refer to them.
        std::optional<GpuSpill> spill;
        if (settings.device_result && !listed && plan.group_keys > 0)
          spill.emplace(table.layout(), settings.opts->gpu_memory_limit, settings.groups_budget, settings.threads);
        Startup startup(*this, settings, plan, table.layout(), in.dialect, ncols, listed != nullptr);
        done = scan_gpu(in, settings, table, listed, stats, startup, t_setup, tail, &flags, spill ? &*spill : nullptr);
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
  // `spill`: where the GPUs' groups go when their tables outgrow their room
  // (nullptr: they may not).
  bool scan_gpu(InputSet& in, const ScanSettings& settings, GroupTable& groups, HolisticGroups* listed,
                ScanStats& stats, Startup& startup, std::chrono::steady_clock::time_point t_setup, uint64_t tail,
                uint32_t* flags, GpuSpill* spill) {
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
        gpu.enable_spill(spill);
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
    for (const auto& c : counters) {
      *flags |= c.flags;
      g_plain_rows += c.plain_rows;
    }
    if (*flags) return false;
    uint64_t most_groups = 0;
    for (const auto& g : gpus) most_groups = std::max(most_groups, g->table_groups());
    g_table_groups = most_groups;
    const ScanTimes times{startup_wait_s, setup_s, seconds_since(t_scan)};
    for (const auto& g : gpus) {
      stats.bytes += g->bytes;
      stats.partitions += g->batches;
    }
    trace::Tracer* const tr = settings.tracer;
    // The groups left on GPUs [0, n) follow those spilled, and the parts give the result.
    auto result_through_spill = [&](size_t n) {
      on_threads(n, [&](size_t g) { gpus[g]->spill_groups(counters[g]); });
      for (size_t g = 0; g < n; ++g) stats.rows += counters[g].rows;
      add_scan_stages(startup, times, stats);
      add_gpu_stages(gpus, stats);
      return result_from_spill(*spill, settings, stats);
    };
    if (spill && spill->any()) return result_through_spill(gpus.size());
    if (gpus.size() > 1 && settings.device_result && !listed) {
      // Each GPU takes a range of the keys and orders it: the ranges in turn
      // are the result. Where that cannot be, the tables merge below.
      const auto t_exchange = std::chrono::steady_clock::now();
      KeyRangeExchange ex = exchange_key_ranges(gpus, counters, groups.layout().key_types);
      if (ex.flags) {
        *flags = ex.flags;
        return false;
      }
      if (ex.exchanged) {
        ++g_key_exchanges;
        if (tr)
          tr->complete("exchange key ranges", "merge", trace::gpu_pid(gpus[0]->id()), Gpu::kTraceComputeTid, t_exchange,
                       trace::Clock::now(), {{"gpus", int64_t(gpus.size())}});
        std::vector<std::unique_ptr<DeviceGroups>> ranges(gpus.size());
        on_threads(gpus.size(), [&](size_t g) {
          if (std::min<uint64_t>(counters[g].groups, gpus[g]->table_groups()) > 0)
            ranges[g] = gpus[g]->ordered_groups(counters[g], groups.layout(), result_run_rows(*settings.opts));
        });
        bool all_ordered = true;
        std::vector<OrderedGroups*> parts;
        for (size_t g = 0; g < gpus.size(); ++g) {
          if (ranges[g]) parts.push_back(ranges[g].get());
          else if (std::min<uint64_t>(counters[g].groups, gpus[g]->table_groups()) > 0) all_ordered = false;
        }
        if (all_ordered) {
          for (const auto& c : counters) stats.rows += c.rows;
          add_scan_stages(startup, times, stats);
          stats.stages.insert(stats.stages.end(), ex.stages.begin(), ex.stages.end());
          add_gpu_stages(gpus, stats);
          ChainedGroups result(parts);
          (*settings.device_result)(result);
          for (const auto& r : ranges)
            if (r) r->add_stages(stats.stages);
          return true;
        }
        // A GPU without room to order its range: the ranges merge below as any tables.
      }
    }
    // Tables that would not fit in GPU 0's together spill instead of merging there.
    uint64_t all_groups = 0, all_arena = 0;
    for (const auto& c : counters) {
      all_groups += c.groups;
      all_arena += c.arena_used;
    }
    if (gpus.size() > 1 && !gpus[0]->has_room(all_groups, all_arena)) return result_through_spill(gpus.size());
    // The other GPUs' tables merge into GPU 0's on GPU 0 (exact aggregates:
    // any order gives the same bits); then one table comes back.
    const auto t_merge = std::chrono::steady_clock::now();
    size_t merged = 1;
    while (merged < gpus.size() && gpus[0]->absorb(*gpus[merged], counters[0], counters[merged])) ++merged;
    const double device_merge_s = seconds_since(t_merge);
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
    // (and the GPU has room to order them); else the table comes back, or
    // goes through the host's parts when it may spill.
    std::unique_ptr<DeviceGroups> ordered;
    if (settings.device_result && !listed && std::min<uint64_t>(counters[0].groups, gpus[0]->table_groups()) > 0)
      ordered = gpus[0]->ordered_groups(counters[0], groups.layout(), result_run_rows(*settings.opts));
    if (!ordered && spill && counters[0].groups > 0) return result_through_spill(1);
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
    add_scan_stages(startup, times, stats);
    if (gpus.size() > 1) stats.stages.push_back(StageTiming{"gpu: merge on gpu0", "gpu0", device_merge_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: copy back", "cpu", back_s, 0, 0});
    if (listed) stats.stages.push_back(StageTiming{"gpu: sort+copy back lists", "gpu0", lists_s, 0, 0});
    add_gpu_stages(gpus, stats);
    if (ordered) {
      (*settings.device_result)(*ordered);
      ordered->add_stages(stats.stages);
    }
    return true;
  }

  struct ScanTimes {
    double startup_wait_s, setup_s, scan_s;
  };

  // --profile: the run's start-up and scan.
  static void add_scan_stages(const Startup& startup, const ScanTimes& t, ScanStats& stats) {
    stats.chunk_size = startup.batch;
    stats.stages.push_back(StageTiming{"gpu: start driver", "cpu", startup.driver_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: start gpu0+buffers", "gpu0", startup.first_s, 0, 0});
    if (startup.gpus.size() > 1) stats.stages.push_back(StageTiming{"gpu: start all gpus", "all", startup.all_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: scan waited for gpu0", "cpu", t.startup_wait_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: set-up, not waiting", "cpu", t.setup_s, 0, 0});
    stats.stages.push_back(StageTiming{"gpu: read+copy+kernels", "all", t.scan_s, stats.bytes, 0});
  }

  // --profile: each GPU's share of the scan.
  static void add_gpu_stages(const std::vector<std::unique_ptr<Gpu>>& gpus, ScanStats& stats) {
    for (const auto& g : gpus) {
      const std::string dev = "gpu" + std::to_string(g->id());
      stats.stages.push_back(StageTiming{"gpu: wait for reads", dev, g->read_s, g->bytes, 0});
      stats.stages.push_back(StageTiming{"gpu: wait for start states", dev, g->state_wait_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: wait (table, end)", dev, g->wait_s, g->bytes, g->used_bytes});
      stats.stages.push_back(StageTiming{"gpu: wait for a buffer", dev, g->ring_wait_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: grow group table", dev, g->grow_s, 0, 0});
      if (g->spills)
        stats.stages.push_back(
            StageTiming{fmt::format("gpu: spill groups to the host ({} times)", g->spills), dev, g->spill_s, 0, 0});
      stats.stages.push_back(StageTiming{"gpu: copy in, start to end", dev, g->copy_s, g->copied_bytes, 0});
      stats.stages.push_back(StageTiming{"gpu busy: quote vectors", dev, g->vector_busy_s, g->bytes, 0});
      stats.stages.push_back(StageTiming{"gpu busy: rows+aggregate", dev, g->rows_busy_s, g->bytes, 0});
    }
  }

  // The result from the spilled parts: each aggregated and sorted on the
  // host, then merged as it is written.
  static bool result_from_spill(GpuSpill& spill, const ScanSettings& settings, ScanStats& stats) {
    const auto t = std::chrono::steady_clock::now();
    std::unique_ptr<OrderedGroups> ordered =
        spill.groups().sorted(*settings.plan, settings.threads, result_run_rows(*settings.opts));
    const double sort_s = seconds_since(t);
    const SpilledGroups& parts = spill.groups();
    stats.stages.push_back(StageTiming{
        fmt::format("result: spill ({} groups, {})", spill.spilled_groups(), parts.describe_bytes()),
        "cpu", 0, parts.bytes_written(), 0});
    stats.stages.push_back(StageTiming{"result: aggregate and sort parts", "cpu", sort_s, 0, 0});
    if (settings.tracer)
      settings.tracer->host("result: aggregate and sort parts", "stage", t, {{"groups", int64_t(ordered->size())}});
    (*settings.device_result)(*ordered);
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
  r.table_spills = cuda::g_table_spills;
  r.plain_rows = cuda::g_plain_rows;
  r.key_exchanges = cuda::g_key_exchanges;
  r.text_runs = cuda::g_text_runs;
  return r;
}

std::unique_ptr<ScanExecutor> make_cuda_executor(const DevicePlan& plan) {
  return std::make_unique<cuda::CudaExecutor>(plan);
}

}  // namespace warpcsv
