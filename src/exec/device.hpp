// Which executor runs a pipeline: the CPU threads or the GPUs.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/scan.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"

namespace warpcsv {

// Bytes per GPU batch unless --chunk-size is given: batches sit at fixed
// offsets of the input (see cuda/batch_feed.hpp).
constexpr uint64_t kGpuBatchBytes = 32ull << 20;

// Hash parts of the groups GPUs spill to the host: a part is aggregated
// whole in host memory, so many parts keep each small (1e9 groups: ~4M a part).
constexpr size_t kGpuSpillParts = 256;

// Bytes read after a GPU batch so that the row starting last in it can be
// finished there (every batch's tail is read again as the next batch's head).
// A GPU run reads kGpuRowSlack times the longest row of the inference sample,
// from kGpuMinTail up to kGpuMaxTail (unknown: kGpuMaxTail). A row longer than
// its tail makes the GPUs scan again with kGpuMaxTail, and one longer than
// that makes the CPU executor scan.
constexpr uint64_t kGpuMinTail = 64ull << 10;
constexpr uint64_t kGpuMaxTail = 1ull << 20;
constexpr uint64_t kGpuRowSlack = 64;
// `longest_sampled_row`: bytes, or 0 when unknown.
uint64_t gpu_batch_tail(uint64_t longest_sampled_row);

// --device parsed: auto, cpu, gpu, or a list such as 0,1 (kind Gpu, `gpus` the list).
struct DeviceChoice {
  enum Kind { Cpu, Gpu, Auto } kind = Auto;
  std::vector<int> gpus;  // explicit list, or empty for all
};

// Parses --device (auto, cpu, gpu, or a list such as 0,1).
DeviceChoice choose_device(const Options& opts);

// Host threads of a run: --threads, else one per CPU this process may run on
// (its affinity mask: taskset, a cpuset, a rank bound by its launcher).
int host_threads(const Options& opts);

// Host memory this process may use: physical memory, or the cgroup's limit
// when that is lower (a container or a systemd unit).
uint64_t host_memory_bytes();

// The CPU executor folds its threads' group tables into the result whenever
// together they hold more than this: a quarter of host memory, at least
// 256 MiB. Each thread's table can hold nearly every group, so without a cap
// memory grows as threads x groups (2.5 GiB for 1M groups on 16 threads).
// Below the cap nothing changes: folding early costs a merge each time.
uint64_t thread_tables_budget(uint64_t host_memory);

// What the CPU executor's groups may hold under a memory limit (--memory-limit,
// else the host's memory): the threads' tables a quarter of it (at least
// 256 MiB without a limit given), the folded groups half before they spill
// to files; the rest is left to input windows, sorting and output.
struct GroupBudgets {
  uint64_t thread_tables;
  uint64_t folded;
};
GroupBudgets group_budgets(uint64_t memory_limit, uint64_t host_memory);

// Under --device auto, inputs of at least this many bytes go to the GPUs:
// 32 MiB per host thread, from 256 MiB to 1 GiB: below that the CPU's
// threads finish before CUDA has started (docs/performance.md, "Device choice").
uint64_t auto_gpu_bytes(int threads);

// Inputs smaller than this run on GPU 0 alone under --device gpu or auto:
// each further GPU costs more start-up and exit time than it saves (see
// docs/performance.md, "GPU start-up and how many GPUs"). A list
// (--device 0,1) always uses the GPUs it names.
constexpr uint64_t kAllGpusBytes = 32ull << 30;

// The GPUs a run uses: the listed ones, {0} for an input of fewer than
// kAllGpusBytes bytes (`input_bytes` 0: a stream or unknown), else all (empty).
std::vector<int> gpus_for_input(const DeviceChoice& d, uint64_t input_bytes);

// The devices of one run, decided once from --device and the input's size,
// then passed to the executor and shown by --explain. Whether the GPUs it
// names exist and can run this binary is learnt when CUDA starts (select_gpus).
struct DevicePlan {
  DeviceChoice asked;
  std::string option = "auto";  // --device as given, for messages
  bool try_gpus = false;        // the scan starts on the GPUs
  std::vector<int> gpus;        // the GPUs it tries (empty: all)
  std::string why;              // the choice in words

  // No usable GPU is an error (--device gpu or a list), not the CPU.
  bool required() const { return asked.kind == DeviceChoice::Gpu; }
  // cpu, gpu, or auto and what it picked: "auto (gpu)", "auto (cpu)".
  std::string name() const;
};

// `input_bytes`: the input files' total size, 0 for a stream.
DevicePlan plan_devices(const Options& opts, uint64_t input_bytes);
// The same for the files of `opts` (sizes from stat).
DevicePlan plan_devices(const Options& opts);

// The GPU code a binary holds, from CMake's CUDA architecture list such as
// "75-virtual,80-real,90-real" (a bare "80" is both; "native" and "all" are
// not known until a GPU runs it).
struct GpuCode {
  std::vector<int> sass;  // machine code, compute capability x 10 (80: sm_80)
  std::vector<int> ptx;   // PTX the driver compiles for its GPU (this or newer)
  bool known = false;
  std::string describe() const;  // "sm_80 and sm_90 machine code, compute_75 PTX"
  // Whether a GPU of compute capability major.minor runs it (true when not known).
  bool runs_on(int major, int minor) const;
};
GpuCode parse_gpu_code(const std::string& cmake_architectures);
// This binary's (an empty GpuCode when built without CUDA).
const GpuCode& built_gpu_code();

// A GPU as the CUDA runtime reports it.
struct GpuFound {
  int id = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  bool loads = true;         // its kernels loaded there (false: no image for it)
};

// The GPUs of `plan` a run may use among `found` (every GPU the process
// sees), and a notice for each one skipped because `code` cannot run there.
// A GPU listed by number that cannot run is an error, and so is none usable
// under --device gpu (ResourceError naming the GPU, its capability and the
// cmake option to rebuild with); under auto none usable means the CPU.
struct GpuSelection {
  std::vector<int> usable;
  std::vector<std::string> notices;
};
GpuSelection select_gpus(const DevicePlan& plan, const std::vector<GpuFound>& found, const GpuCode& code);

// The GPUs a run uses, in words for --explain.
std::string describe_run_gpus(const DevicePlan& plan);

// The CUDA_VISIBLE_DEVICES value that shows the driver only GPUs 0..k-1 of
// `current` (the variable's value, or null when unset), keeping their
// numbers; nullopt to leave it as it is (all GPUs, or another list).
std::optional<std::string> visible_devices_for(const std::vector<int>& gpus, const char* current);

// Hides the GPUs the run will not use from the CUDA driver (see
// run_process_pipeline); before CUDA starts.
void limit_visible_gpus(const DevicePlan& plan);

// Starts CUDA (driver and the first GPU's context, 0.2-0.4 s) on a background
// thread when the run may use a GPU, so it overlaps opening the input and binding.
void start_gpu_probe(const DevicePlan& plan);
// Whether start_gpu_probe started CUDA (the process may then skip teardown).
bool gpu_probe_started();

// The executor for a run: the CUDA executor when the plan tries the GPUs and
// the input can be read again (it hands plans it cannot run to the CPU),
// else the CPU executor. Asking for a GPU on a machine without one is a
// resource error (exit 4).
std::unique_ptr<ScanExecutor> make_executor(const DevicePlan& plan, const InputSet& in);

// The error for a GPU asked for with --device `option` where none is usable.
ResourceError no_gpu_error(const std::string& option, const std::string& why);

// Throws a ResourceError (exit 4) naming the first of `gpus` that is not one
// of the machine's `count` GPUs.
void check_gpu_numbers(const std::string& option, const std::vector<int>& gpus, int count);

}  // namespace warpcsv
