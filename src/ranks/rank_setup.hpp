// What differs on a rank: which GPUs of its host it takes, and the options
// of a rank other than 0, which writes nothing of its own.
#pragma once
#include <string>
#include <vector>

#include "warpcsv/options.hpp"

namespace warpcsv {

// The GPUs (of `gpus` on the host) for local rank `local_rank` of
// `local_size`: an even block each when there are at least as many GPUs as
// ranks, else one GPU shared in turn (rank i takes GPU i mod gpus).
std::vector<int> gpus_for_local_rank(int local_rank, int local_size, int gpus);

// On a host with several ranks, shows each rank only its GPUs
// (CUDA_VISIBLE_DEVICES), unless the launcher set that already (srun
// --gpus-per-task). Before CUDA starts.
void assign_rank_gpus();

// A rank other than 0: no output, rejects, trace, progress or notices of
// its own (rank 0 writes them all).
Options options_of_other_rank(const Options& opts);

}  // namespace warpcsv
