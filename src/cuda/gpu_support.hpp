// Which plans the CUDA executor runs on the GPU (the rest go to the CPU
// executor), and the GpuPlan a run's kernels read, made from the plan.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda/gpu_plan.hpp"
#include "exec/scan.hpp"

namespace warpcsv {
namespace cuda {

// Why this plan cannot run on the GPU, or empty when it can.
std::string gpu_unsupported(const Plan& plan, const GroupLayout& layout, size_t ncols, bool lists_holistic);

// The bytes the joins' tables take on each GPU (cells, index, strings).
uint64_t lookup_bytes(const ScanSettings& settings);

// Whether the CUDA executor lists the plan's holistic arguments per row on
// one GPU (as the CPU executor does) instead of grouping by them, as their
// holistic keys: at most kMaxLists arguments, not all of them strings.
// Strings alone group well whatever their length; listed, a string past 8
// bytes hands the scan to the CPU.
bool gpu_lists_holistic(const Plan& plan);

// The GpuPlan of a run (device pointers are filled in per GPU).
GpuPlan make_host_plan(const Plan& plan, const GroupLayout& layout, const Dialect& d, size_t ncols,
                       size_t nnull, const std::vector<bool>& type_from_schema);

}  // namespace cuda
}  // namespace warpcsv
