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
// offsets of the input (see exec/batch_feed.hpp).
constexpr uint64_t kGpuBatchBytes = 32ull << 20;

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

struct DeviceChoice {
  enum Kind { Cpu, Gpu, Auto } kind = Auto;
  std::vector<int> gpus;  // explicit list, or empty for all
};

// Parses --device (auto, cpu, gpu, or a list such as 0,1).
DeviceChoice choose_device(const Options& opts);

// Host threads of a run: --threads, else one per hardware thread.
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

// Under --device auto, inputs of at least this many bytes go to the GPUs:
// 32 MiB per host thread, from 256 MiB to 1 GiB. CUDA start-up costs about
// 0.3 s, which the CPU executor's threads spend scanning instead. Measured on
// the 1 x H200 host (16 threads), whole process: 0.52 GB q3 (1M groups) CPU
// 0.32-0.34 s, GPU 0.37-0.42 s; 1.03 GB q3 CPU 0.66-0.68 s, GPU 0.40-0.43 s;
// q1 CPU 0.30 s and GPU 0.36-0.38 s even at 1.03 GB.
uint64_t auto_gpu_bytes(int threads);

// Inputs smaller than this run on GPU 0 alone under --device gpu or auto.
// Measured on 2 x H200 (32 cores, file in the page cache): each visible GPU
// adds about 0.1 s to CUDA driver start-up, its context 0.1 s more and the
// process exit 0.05-0.1 s, while pread fills two GPUs at most ~10 GB/s
// faster than one. A list (--device 0,1) always uses the GPUs it names.
constexpr uint64_t kAllGpusBytes = 32ull << 30;

// The GPUs a run uses: the listed ones, {0} for an input of fewer than
// kAllGpusBytes bytes (`input_bytes` 0: a stream or unknown), else all (empty).
std::vector<int> gpus_for_input(const DeviceChoice& d, uint64_t input_bytes);

// The GPUs a run uses, in words for --explain.
std::string describe_run_gpus(const DeviceChoice& d, const Options& opts);

// The CUDA_VISIBLE_DEVICES value that shows the driver only GPUs 0..k-1 of
// `current` (the variable's value, or null when unset), keeping their
// numbers; nullopt to leave it as it is (all GPUs, or another list).
std::optional<std::string> visible_devices_for(const std::vector<int>& gpus, const char* current);

// Starts CUDA (driver and the first GPU's context, 0.2-0.4 s) on a background
// thread when the run may use a GPU, so it overlaps opening the input and binding.
void start_gpu_probe(const Options& opts);
// Whether start_gpu_probe started CUDA (the process may then skip teardown).
bool gpu_probe_started();

// The executor for a run: auto picks the GPUs only for inputs large enough
// to pay for CUDA start-up. Asking for a GPU on a machine without one is a
// resource error (exit 4).
std::unique_ptr<ScanExecutor> make_executor(const DeviceChoice& d, const InputSet& in, const Options& opts);

// Whether --device auto gives this run's input to the GPUs (when there are
// any): input files of auto_gpu_bytes or more.
bool auto_uses_gpus(const Options& opts);

// Why --device auto picks what it picks for this run's input, in words.
std::string describe_auto_choice(const Options& opts);

// The device choice in words: cpu, gpu, or auto and what it picked for this
// input ("auto (gpu)": the GPUs, or the CPU if none is found).
std::string device_name(const DeviceChoice& d, const Options& opts);

// The error for a GPU asked for with --device `option` where none is usable.
ResourceError no_gpu_error(const std::string& option, const std::string& why);

// Throws a ResourceError (exit 4) naming the first of `gpus` that is not one
// of the machine's `count` GPUs.
void check_gpu_numbers(const std::string& option, const std::vector<int>& gpus, int count);

}  // namespace warpcsv
