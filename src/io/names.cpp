// Unique column names: `day`, `day_2`, ... (see make_names_unique in io.hpp).
#include <string>
#include <unordered_map>
#include <vector>

#include "warpcsv/io.hpp"

namespace warpcsv {

void make_names_unique(std::vector<std::string>& names) {
  std::unordered_map<std::string, int> taken;
  for (const auto& n : names) taken[n] += 0;
  std::unordered_map<std::string, bool> used;
  for (auto& n : names) {
    if (used[n]) {
      int k = 2;
      while (taken.count(n + "_" + std::to_string(k))) ++k;
      n += "_" + std::to_string(k);
      taken[n] = 1;
    }
    used[n] = true;
  }
}

}  // namespace warpcsv
