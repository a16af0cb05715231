// Deliberately naive statistics in long double, the references the aggregate
// tests compare against.
#pragma once
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace warpcsv::testing {

// Pearson correlation by the two-pass textbook formula; none for fewer than
// two pairs or a constant side.
inline std::optional<long double> naive_pearson(const std::vector<std::pair<long double, long double>>& v) {
  if (v.size() < 2) return std::nullopt;
  long double mx = 0, my = 0;
  for (auto& p : v) mx += p.first, my += p.second;
  mx /= v.size();
  my /= v.size();
  long double sxx = 0, syy = 0, sxy = 0;
  for (auto& p : v) {
    sxx += (p.first - mx) * (p.first - mx);
    syy += (p.second - my) * (p.second - my);
    sxy += (p.first - mx) * (p.second - my);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx) / std::sqrt(syy);
}

}  // namespace warpcsv::testing
