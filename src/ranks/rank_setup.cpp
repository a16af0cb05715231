#include "ranks/rank_setup.hpp"

#include <dirent.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "ranks/ranks.hpp"

namespace warpcsv {

std::vector<int> gpus_for_local_rank(int local_rank, int local_size, int gpus) {
  if (gpus <= 0 || local_size <= 0) return {};
  if (gpus < local_size) return {local_rank % gpus};
  std::vector<int> mine;
  for (int g = local_rank * gpus / local_size; g < (local_rank + 1) * gpus / local_size; ++g) mine.push_back(g);
  return mine;
}

namespace {
// NVIDIA GPUs on this host, as the driver's device files show them (CUDA
// has not started yet, and must not before CUDA_VISIBLE_DEVICES is set).
int host_gpu_count() {
  int n = 0;
  if (DIR* d = opendir("/dev")) {
    while (const dirent* e = readdir(d)) {
      const char* name = e->d_name;
      if (std::strncmp(name, "nvidia", 6) != 0 || !name[6]) continue;
      bool digits = true;
      for (const char* p = name + 6; *p; ++p) digits = digits && std::isdigit(static_cast<unsigned char>(*p));
      n += digits ? 1 : 0;
    }
    closedir(d);
  }
  return n;
}
}  // namespace

void assign_rank_gpus() {
  if (!Ranks::many() || Ranks::local_size() < 2) return;
  const char* set = std::getenv("CUDA_VISIBLE_DEVICES");
  if (set) return;
  const std::vector<int> mine = gpus_for_local_rank(Ranks::local_rank(), Ranks::local_size(), host_gpu_count());
  if (mine.empty()) return;
  std::string list;
  for (int g : mine) list += (list.empty() ? "" : ",") + std::to_string(g);
  setenv("CUDA_VISIBLE_DEVICES", list.c_str(), 1);
}

Options options_of_other_rank(const Options& opts) {
  Options o = opts;
  o.output_path.clear();
  o.rejects_path.clear();
  o.trace_path.clear();
  o.progress = 0;
  o.profile = false;
  o.quiet = true;
  return o;
}

}  // namespace warpcsv
