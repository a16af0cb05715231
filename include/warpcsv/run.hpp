// One run of the tool: read the input, execute the plan, write the result.
#pragma once
#include "warpcsv/options.hpp"

namespace warpcsv {

// Runs the pipeline described by `opts` and writes the result to the output.
// Returns the exit code (0, or kExitAssert when an assert stage failed);
// throws warpcsv::Error subclasses for usage/input/resource errors and
// OutputClosed when the reader of stdout went away.
int run_pipeline(const Options& opts);

// The same on the devices decided once for this run (src/exec/device.hpp).
struct DevicePlan;
int run_pipeline(const Options& opts, const DevicePlan& devices);

// run_pipeline for a process that runs one pipeline: first hides the GPUs
// the run will not use from the CUDA driver (CUDA_VISIBLE_DEVICES), whose
// start-up costs time per visible GPU. Not for a process that runs pipelines
// on different GPUs later: the driver reads the variable once.
int run_process_pipeline(const Options& opts);

// Whether the run started CUDA: the process may then end with _Exit after
// flushing, skipping the GPU teardown (a few tenths of a second).
bool run_started_gpu();

}  // namespace warpcsv
