#include "exec/device.hpp"

#include <sched.h>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
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

namespace {
// The CPUs this process may run on: those of its affinity mask (taskset,
// a cpuset, a rank bound by mpirun or srun), else every hardware thread.
int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}
}  // namespace

int host_threads(const Options& opts) {
  const int cores = usable_cpus();
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

GroupBudgets group_budgets(uint64_t memory_limit, uint64_t host_memory) {
  if (memory_limit) return GroupBudgets{memory_limit / 4, memory_limit / 2};
  return GroupBudgets{thread_tables_budget(host_memory), host_memory / 2};
}

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

#ifdef WARPCSV_HAVE_CUDA
constexpr bool kBuiltWithCuda = true;
#else
constexpr bool kBuiltWithCuda = false;
#endif
}  // namespace

DevicePlan plan_devices(const Options& opts) { return plan_devices(opts, input_bytes(opts)); }

DevicePlan plan_devices(const Options& opts, uint64_t bytes) {
  DevicePlan p;
  p.asked = choose_device(opts);
  p.option = opts.device.empty() ? "auto" : opts.device;
  p.gpus = gpus_for_input(p.asked, bytes);
  switch (p.asked.kind) {
    case DeviceChoice::Cpu:
      p.why = "the CPU (--device cpu)";
      break;
    case DeviceChoice::Gpu:
      p.try_gpus = true;
      p.why = kBuiltWithCuda ? "the GPUs (--device " + p.option + ")"
                             : "the GPUs (--device " + p.option + "), but this warpcsv was built without CUDA";
      break;
    case DeviceChoice::Auto: {
      const uint64_t from = auto_gpu_bytes(host_threads(opts));
      p.try_gpus = kBuiltWithCuda && bytes >= from;
      if (!kBuiltWithCuda)
        p.why = "the CPU: this warpcsv was built without CUDA";
      else if (p.try_gpus)
        p.why = fmt::format("the GPUs (the CPU if none can run it): {} bytes of input, at least the {} that pay for "
                            "CUDA start-up",
                            bytes, from);
      else if (bytes == 0)
        p.why = "the CPU: the input is a stream (the GPUs need files they can read again) or empty";
      else
        p.why = fmt::format("the CPU: {} bytes of input, fewer than the {} that pay for CUDA start-up", bytes, from);
      break;
    }
  }
  return p;
}

std::string DevicePlan::name() const {
  switch (asked.kind) {
    case DeviceChoice::Cpu: return "cpu";
    case DeviceChoice::Gpu: return "gpu";
    case DeviceChoice::Auto: return try_gpus ? "auto (gpu)" : "auto (cpu)";
  }
  return "?";
}

namespace {
// "sm_80 and sm_90": `prefix` and each capability, joined for a sentence.
std::string arch_names(const std::vector<int>& ccs, const char* prefix) {
  std::string s;
  for (size_t i = 0; i < ccs.size(); ++i) {
    s += i == 0 ? "" : i + 1 == ccs.size() ? " and " : ", ";
    s += prefix + std::to_string(ccs[i]);
  }
  return s;
}
}  // namespace

GpuCode parse_gpu_code(const std::string& list) {
  GpuCode code;
  code.known = !list.empty();
  size_t i = 0;
  while (code.known && i <= list.size()) {
    size_t j = list.find_first_of(",;", i);
    if (j == std::string::npos) j = list.size();
    const std::string item = list.substr(i, j - i);
    i = j + 1;
    if (item.empty()) continue;
    size_t digits = 0;
    while (digits < item.size() && std::isdigit(static_cast<unsigned char>(item[digits]))) ++digits;
    if (digits == 0) {  // native, all, all-major: decided by nvcc at build time
      code.known = false;
      break;
    }
    const int cc = std::stoi(item.substr(0, digits));
    std::string rest = item.substr(digits);
    // "90a": machine code for exactly that GPU; its PTX too runs only there.
    const bool specific = !rest.empty() && (rest[0] == 'a' || rest[0] == 'f');
    if (specific) rest = rest.substr(1);
    const bool real = rest != "-virtual", virt = rest != "-real";
    if (real) code.sass.push_back(specific ? -cc : cc);
    if (virt && !specific) code.ptx.push_back(cc);
  }
  if (!code.known) code.sass.clear(), code.ptx.clear();
  return code;
}

bool GpuCode::runs_on(int major, int minor) const {
  if (!known) return true;
  const int cc = 10 * major + minor;
  for (int s : sass) {
    if (s < 0 ? -s == cc : (s / 10 == major && s <= cc)) return true;  // machine code: same major, not newer
  }
  for (int p : ptx)
    if (p <= cc) return true;  // PTX: compiled by the driver for this or any newer GPU
  return false;
}

std::string GpuCode::describe() const {
  if (!known) return "GPU code chosen by nvcc at build time";
  std::vector<int> plain;
  for (int s : sass) plain.push_back(s < 0 ? -s : s);
  std::string s;
  if (!plain.empty()) s = arch_names(plain, "sm_") + " machine code";
  if (!ptx.empty()) s += (s.empty() ? "" : ", ") + arch_names(ptx, "compute_") + " PTX";
  return s.empty() ? "no GPU code" : s;
}

const GpuCode& built_gpu_code() {
#if defined(WARPCSV_HAVE_CUDA) && defined(WARPCSV_CUDA_ARCHS)
  static const GpuCode code = parse_gpu_code(WARPCSV_CUDA_ARCHS);
#else
  static const GpuCode code;
#endif
  return code;
}

GpuSelection select_gpus(const DevicePlan& plan, const std::vector<GpuFound>& found, const GpuCode& code) {
  if (found.empty()) {
    if (plan.required()) throw no_gpu_error(plan.option, "no CUDA device was found");
    return {};
  }
  std::vector<int> wanted = plan.gpus;
  if (wanted.empty())
    for (const auto& g : found) wanted.push_back(g.id);
  check_gpu_numbers(plan.option, wanted, static_cast<int>(found.size()));
  GpuSelection sel;
  std::string first_refusal;
  for (int id : wanted) {
    const GpuFound& g = found[static_cast<size_t>(id)];
    if (code.runs_on(g.major, g.minor) && g.loads) {
      sel.usable.push_back(id);
      continue;
    }
    const std::string refusal =
        fmt::format("GPU {} ({}, compute capability {}.{}) cannot run this warpcsv, which holds {}; rebuild with "
                    "cmake -DCMAKE_CUDA_ARCHITECTURES={}{} (or native, on that machine)",
                    id, g.name, g.major, g.minor, code.describe(), g.major, g.minor);
    // A GPU named in --device 0,1 is wanted: it cannot be left out.
    if (!plan.asked.gpus.empty()) throw ResourceError("--device " + plan.option + ": " + refusal);
    if (first_refusal.empty()) first_refusal = refusal;
    sel.notices.push_back("warpcsv: note: " + refusal + "; skipping it\n");
  }
  if (sel.usable.empty() && plan.required())
    throw ResourceError("--device " + plan.option + ": " + first_refusal + "; or use --device cpu");
  if (sel.usable.empty() && !sel.notices.empty())
    sel.notices.back() = "warpcsv: note: " + first_refusal + "; answering on the CPU\n";
  return sel;
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

std::string describe_run_gpus(const DevicePlan& plan) {
  if (plan.gpus.empty()) return "all visible GPUs";
  if (plan.asked.gpus.empty())
    return fmt::format("GPU 0 (an input under {} GiB; --device 0,1 lists more)", kAllGpusBytes >> 30);
  std::string list;
  for (int g : plan.gpus) list += (list.empty() ? "" : ",") + std::to_string(g);
  return "GPUs " + list;
}

void limit_visible_gpus(const DevicePlan& plan) {
  if (!kBuiltWithCuda || !plan.try_gpus) return;
  if (const auto v = visible_devices_for(plan.gpus, std::getenv("CUDA_VISIBLE_DEVICES")))
    ::setenv("CUDA_VISIBLE_DEVICES", v->c_str(), 1);
}

void start_gpu_probe(const DevicePlan& plan) {
#ifdef WARPCSV_HAVE_CUDA
  if (!plan.try_gpus) return;
  // Only the context of the GPU the scan starts on: the executor builds the
  // GPUs one after another, and a second context created here at the same
  // time would hold the driver while the executor pins GPU 0's buffers.
  const int first = plan.gpus.empty() ? 0 : plan.gpus.front();
  probe() = std::async(std::launch::async, [first] {
              cuda_start_context(first);
              return cuda_device_count();
            }).share();
#else
  (void)plan;
#endif
}

bool gpu_probe_started() { return probe().valid(); }

std::unique_ptr<ScanExecutor> make_executor(const DevicePlan& plan, const InputSet& in) {
#ifdef WARPCSV_HAVE_CUDA
  // Whether usable GPUs exist is learnt by the CUDA executor while it starts
  // (CUDA start-up overlaps the first window). It needs an input it can read
  // again (a bad row makes the CPU executor rescan it); plans the GPU does
  // not run go to the CPU inside the executor.
  if (plan.try_gpus && in.rereadable()) return make_cuda_executor(plan);
#else
  (void)in;
#endif
  if (plan.required()) {  // a GPU asked for but not usable: exit 4
    if (!kBuiltWithCuda) throw no_gpu_error(plan.option, "this warpcsv was built without CUDA");
    if (gpu_count() == 0) throw no_gpu_error(plan.option, "no CUDA device was found");
    check_gpu_numbers(plan.option, plan.asked.gpus, gpu_count());
  }
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

}  // namespace warpcsv
