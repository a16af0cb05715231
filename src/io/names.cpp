// Unique column names: `day`, `day_2`, ... (see make_names_unique in io.hpp).
#include <string>
#include <unordered_map>
#include <vector>

#include "warpcsv/io.hpp"

namespace warpcsv {

void make_names_unique(std::vector<std::string>& names, const std::vector<bool>& made_up) {
  std::unordered_map<std::string, int> taken;
  for (const auto& n : names) taken[n] += 0;
  std::unordered_map<std::string, bool> used;
  std::vector<size_t> order;  // the names given first, then the made-up ones
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < names.size(); ++i)
      if ((i < made_up.size() && made_up[i]) == (pass == 1)) order.push_back(i);
  for (size_t i : order) {
    std::string& n = names[i];
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
