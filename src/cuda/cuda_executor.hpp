// The CUDA executor's public face: launchers and kernels stay in src/cuda/*.cu.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/device.hpp"
#include "exec/scan.hpp"

namespace warpcsv {

// Number of CUDA devices usable by this process (0 when none or no driver).
int cuda_device_count();

// Starts the CUDA driver and creates GPU `gpu`'s primary context (the costly
// part of start-up, a tenth of a second or so per context).
void cuda_start_context(int gpu);

// The GPUs this process sees, with their names and compute capabilities.
// `probe` lists the GPUs whose kernels are loaded to check that this binary
// runs there (it creates their contexts); the others keep loads = true.
std::vector<GpuFound> cuda_gpus_found(const std::vector<int>& probe);

// An executor that scans on the plan's GPUs, one host thread per GPU, with
// output byte-identical to the CPU executor's. It learns which GPUs exist and
// can run this binary while it starts scanning (select_gpus): none usable is
// a ResourceError when the plan requires a GPU, else the CPU executor runs.
std::unique_ptr<ScanExecutor> make_cuda_executor(const DevicePlan& plan);

// What the CUDA executors of this process did, for tests and --profile:
// scans finished on the GPU, scans handed to the CPU executor because the plan
// has no GPU form, and scans run again on the CPU because the GPU met a bad
// row, a bad value or a limit; GPU stagings (device buffers, and the pinned slots)
// built, as a run reuses the one the run before it left on the same GPU; and
// times a GPU thread stopped to read the exact group count because the group
// table might not hold the next batch; group tables a run took over; and
// the pinned slots of the last run that started its GPUs.
struct CudaRunInfo {
  uint64_t gpu_scans = 0;
  uint64_t cpu_plans = 0;
  uint64_t cpu_reruns = 0;
  uint64_t stagings_built = 0;
  uint64_t table_stops = 0;
  uint64_t tables_reused = 0;  // GPU tables a run took over (cleared) from the run before
  int slots_in_use = 0;        // (its readers and GPUs set how many)
  int slot_capacity = 0;       // room the slots of that run were made with
  uint64_t table_groups = 0;   // room of the largest GPU group table at the end of that run's scan
  uint64_t tail_reruns = 0;    // GPU scans begun again with longer batch tails (a row longer than the first)
  uint64_t table_spills = 0;   // times a GPU group table spilled its groups to the host
  uint64_t plain_rows = 0;     // rows the GPUs split at their delimiters alone (no quote in their batch)
  uint64_t key_exchanges = 0;  // results whose GPUs exchanged their groups by key range
  uint64_t text_runs = 0;      // runs of result rows a GPU finalized and formatted as text
};
CudaRunInfo cuda_run_info();

}  // namespace warpcsv
