// Which executor runs a pipeline: the CPU threads or the GPUs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/scan.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"

namespace warpcsv {

// Bytes per GPU batch unless --chunk-size is given: batches sit at fixed
// offsets of the input (see exec/batch_feed.hpp).
constexpr uint64_t kGpuBatchBytes = 32ull << 20;

struct DeviceChoice {
  enum Kind { Cpu, Gpu, Auto } kind = Auto;
  std::vector<int> gpus;  // explicit list, or empty for all
};

// Parses --device (auto, cpu, gpu, or a list such as 0,1).
DeviceChoice choose_device(const Options& opts);

// Starts CUDA (driver and contexts, about 0.4 s) on a background thread when
// the run may use a GPU, so it overlaps opening the input and binding.
void start_gpu_probe(const Options& opts);
// Whether start_gpu_probe started CUDA (the process may then skip teardown).
bool gpu_probe_started();

// The executor for a run: auto picks the GPUs only for inputs large enough
// to pay for CUDA start-up. Asking for a GPU on a machine without one is a
// resource error (exit 4).
std::unique_ptr<ScanExecutor> make_executor(const DeviceChoice& d, const InputSet& in, const Options& opts);

std::string device_name(const DeviceChoice& d);

// The error for a GPU asked for with --device `option` where none is usable.
ResourceError no_gpu_error(const std::string& option, const std::string& why);

// Throws a ResourceError (exit 4) naming the first of `gpus` that is not one
// of the machine's `count` GPUs.
void check_gpu_numbers(const std::string& option, const std::vector<int>& gpus, int count);

}  // namespace warpcsv
