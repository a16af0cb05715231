// One run of the tool: read the input, execute the plan, write the result.
#pragma once
#include "warpcsv/options.hpp"

namespace warpcsv {

// Runs the pipeline described by `opts` and writes the result to the output.
// Returns the exit code (0, or kExitAssert when an assert stage failed);
// throws warpcsv::Error subclasses for usage/input/resource errors and
// OutputClosed when the reader of stdout went away.
int run_pipeline(const Options& opts);

}  // namespace warpcsv
