// Which executor runs a pipeline: the CPU threads or the GPUs.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "exec/scan.hpp"
#include "warpcsv/options.hpp"

namespace warpcsv {

struct DeviceChoice {
  enum Kind { Cpu, Gpu, Auto } kind = Auto;
  std::vector<int> gpus;  // explicit list, or empty for all
};

// Parses --device (auto, cpu, gpu, or a list such as 0,1); asking for a GPU
// on a machine without one is a resource error (exit 4).
DeviceChoice choose_device(const Options& opts);

// The executor for a run: auto picks the GPUs only for inputs large enough
// to pay for CUDA start-up.
std::unique_ptr<ScanExecutor> make_executor(const DeviceChoice& d, const InputSet& in, const Options& opts);

std::string device_name(const DeviceChoice& d);

}  // namespace warpcsv
