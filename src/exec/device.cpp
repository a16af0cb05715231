#include "exec/device.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "warpcsv/errors.hpp"
#include "warpcsv/run.hpp"
#ifdef WARPCSV_HAVE_CUDA
#include "cuda/cuda_executor.hpp"
#endif

namespace warpcsv {

namespace {
// CUDA start-up (driver, a context per GPU) running in the background.
std::shared_future<int>& probe() {
  static std::shared_future<int> f;
  return f;
}

// GPUs visible to this process; 0 when built without CUDA.
int gpu_count() {
#ifdef WARPCSV_HAVE_CUDA
  if (probe().valid()) return probe().get();
  return cuda_device_count();
#else
  return 0;
#endif
}

// Asking for a GPU on a machine without one is a resource error (exit 4).
void check_gpus(const DeviceChoice& d, const std::string& s) {
  if (d.kind != DeviceChoice::Gpu) return;
  const int n = gpu_count();
  if (n == 0)
    throw no_gpu_error(s,
#ifdef WARPCSV_HAVE_CUDA
                       "no CUDA device was found"
#else
                       "this warpcsv was built without CUDA"
#endif
    );
  check_gpu_numbers(s, d.gpus, n);
}
}  // namespace

DeviceChoice choose_device(const Options& opts) {
  DeviceChoice d;
  const std::string& s = opts.device;
  if (s == "auto" || s.empty()) return d;
  if (s == "cpu") {
    d.kind = DeviceChoice::Cpu;
    return d;
  }
  d.kind = DeviceChoice::Gpu;
  if (s != "gpu") {
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(',', i);
      if (j == std::string::npos) j = s.size();
      const std::string item = s.substr(i, j - i);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
        throw UsageError(fmt::format("--device '{}': expected auto, cpu, gpu or a list of GPU numbers such as 0,1; "
                                     "found '{}'",
                                     s, item));
      d.gpus.push_back(std::stoi(item));
      i = j + 1;
    }
  }
  return d;
}

int host_threads(const Options& opts) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Each thread holds its own buffers and tables: --threads 100000 took 12.9 GB for a 3-row file.
  const int most = std::max(64, 8 * cores);
  return opts.threads > 0 ? std::min(opts.threads, most) : cores;
}

namespace {
// The first number in `path` (cgroup v2 memory.max, v1 limit_in_bytes); 0
// when it is missing or not a number ("max": no limit).
uint64_t read_limit(const char* path) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  unsigned long long v = 0;
  const bool ok = std::fscanf(f, "%llu", &v) == 1;
  std::fclose(f);
  return ok ? v : 0;
}
}  // namespace

uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  uint64_t mem = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  for (const char* p : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const uint64_t limit = read_limit(p);
    if (limit && (!mem || limit < mem)) mem = limit;
  }
  return mem ? mem : 4ull << 30;  // unknown: assume a small machine
}

uint64_t thread_tables_budget(uint64_t host_memory) { return std::max<uint64_t>(256ull << 20, host_memory / 4); }

uint64_t auto_gpu_bytes(int threads) {
  return std::clamp<uint64_t>((32ull << 20) * static_cast<uint64_t>(std::max(1, threads)), 256ull << 20, 1ull << 30);
}

namespace {
// Total size of the input files; 0 when any is standard input or not a regular file.
uint64_t input_bytes(const Options& opts) {
  uint64_t total = 0;
  for (const auto& f : opts.files) {
    struct stat st;
    if (f == "-" || ::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

// The GPUs of a run as the CUDA executor sees them: the listed ones, or all
// (empty), or {0} for an input too small to keep more than one busy.
std::vector<int> run_gpus(const DeviceChoice& d, const Options& opts) {
  return gpus_for_input(d, input_bytes(opts));
}
}  // namespace

bool auto_uses_gpus(const Options& opts) {
#ifdef WARPCSV_HAVE_CUDA
  return input_bytes(opts) >= auto_gpu_bytes(host_threads(opts));
#else
  (void)opts;
  return false;
#endif
}

uint64_t gpu_batch_tail(uint64_t longest_sampled_row) {
  if (longest_sampled_row == 0 || longest_sampled_row > kGpuMaxTail / kGpuRowSlack) return kGpuMaxTail;
  return std::max(kGpuMinTail, longest_sampled_row * kGpuRowSlack);
}

std::vector<int> gpus_for_input(const DeviceChoice& d, uint64_t input_bytes) {
  if (!d.gpus.empty()) return d.gpus;
  if (input_bytes < kAllGpusBytes) return {0};
  return {};
}

std::optional<std::string> visible_devices_for(const std::vector<int>& gpus, const char* current) {
  if (gpus.empty()) return std::nullopt;
  for (size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i] != static_cast<int>(i)) return std::nullopt;  // not 0..k-1: keep the numbering
  std::vector<std::string> entries;
  if (current) {
    std::string s = current;
    size_t i = 0;
    while (i <= s.size()) {
      size_t j = s.find(',', i);
      if (j == std::string::npos) j = s.size();
      if (j > i) entries.push_back(s.substr(i, j - i));
      i = j + 1;
    }
  } else {
    for (size_t i = 0; i < gpus.size(); ++i) entries.push_back(std::to_string(i));
  }
  if (entries.size() < gpus.size()) return std::nullopt;  // the count check will name the missing GPU
  std::string out;
  for (size_t i = 0; i < gpus.size(); ++i) out += (i ? "," : "") + entries[i];
  return out;
}

std::string describe_run_gpus(const DeviceChoice& d, const Options& opts) {
  const std::vector<int> gpus = run_gpus(d, opts);
  if (gpus.empty()) return "all visible GPUs";
  if (d.gpus.empty())
    return fmt::format("GPU 0 (an input under {} GiB; --device 0,1 lists more)", kAllGpusBytes >> 30);
  std::string list;
  for (int g : gpus) list += (list.empty() ? "" : ",") + std::to_string(g);
  return "GPUs " + list;
}

void limit_visible_gpus(const Options& opts) {
#ifdef WARPCSV_HAVE_CUDA
  const DeviceChoice d = choose_device(opts);
  if (d.kind == DeviceChoice::Cpu) return;
  if (const auto v = visible_devices_for(run_gpus(d, opts), std::getenv("CUDA_VISIBLE_DEVICES")))
    ::setenv("CUDA_VISIBLE_DEVICES", v->c_str(), 1);
#else
  (void)opts;
#endif
}

void start_gpu_probe(const Options& opts) {
#ifdef WARPCSV_HAVE_CUDA
  if (opts.device == "cpu" || (opts.device == "auto" && !auto_uses_gpus(opts))) return;
  // Only the context of the GPU the scan starts on: the executor builds the
  // GPUs one after another, and a second context created here at the same
  // time would hold the driver while the executor pins GPU 0's buffers.
  const std::vector<int> gpus = run_gpus(choose_device(opts), opts);
  const int first = gpus.empty() ? 0 : gpus.front();
  probe() = std::async(std::launch::async, [first] {
              cuda_start_context(first);
              return cuda_device_count();
            }).share();
#else
  (void)opts;
#endif
}

bool gpu_probe_started() { return probe().valid(); }

std::unique_ptr<ScanExecutor> make_executor(const DeviceChoice& d, const InputSet& in, const Options& opts) {
#ifdef WARPCSV_HAVE_CUDA
  // Whether GPUs exist is learnt by the CUDA executor while it starts (CUDA
  // start-up overlaps the first window). It needs an input it can read again
  // (a bad row makes the CPU executor rescan it); plans the GPU does not run
  // go to the CPU inside the executor.
  const bool gpu = d.kind == DeviceChoice::Gpu || (d.kind == DeviceChoice::Auto && auto_uses_gpus(opts));
  if (gpu && in.rereadable()) return make_cuda_executor(run_gpus(d, opts), d.kind == DeviceChoice::Gpu);
#else
  (void)in;
  (void)opts;
#endif
  check_gpus(d, opts.device);  // a GPU asked for but not usable: exit 4
  return make_cpu_executor();
}

ResourceError no_gpu_error(const std::string& option, const std::string& why) {
  return ResourceError(fmt::format("--device {}: no usable GPU here ({}); use --device cpu or auto", option, why));
}

void check_gpu_numbers(const std::string& option, const std::vector<int>& gpus, int count) {
  for (int g : gpus)
    if (g >= count)
      throw ResourceError(fmt::format("--device {}: GPU {} does not exist; this machine has {} GPU(s), numbered from 0",
                                      option, g, count));
}

std::string describe_auto_choice(const Options& opts) {
  const uint64_t bytes = input_bytes(opts), from = auto_gpu_bytes(host_threads(opts));
#ifdef WARPCSV_HAVE_CUDA
  if (bytes >= from)
    return fmt::format("the GPUs (the CPU if none is found): {} bytes of input, at least the {} that pay for CUDA "
                       "start-up",
                       bytes, from);
  if (bytes == 0) return "the CPU: the input is a stream (the GPUs need files they can read again) or empty";
  return fmt::format("the CPU: {} bytes of input, fewer than the {} that pay for CUDA start-up", bytes, from);
#else
  (void)bytes;
  (void)from;
  return "the CPU: this warpcsv was built without CUDA";
#endif
}

std::string device_name(const DeviceChoice& d, const Options& opts) {
  switch (d.kind) {
    case DeviceChoice::Cpu: return "cpu";
    case DeviceChoice::Gpu: return "gpu";
    case DeviceChoice::Auto: return auto_uses_gpus(opts) ? "auto (gpu)" : "auto (cpu)";
  }
  return "?";
}

}  // namespace warpcsv
