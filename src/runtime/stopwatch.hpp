// Seconds between two moments, for --profile's stage times.
#pragma once
#include <chrono>

namespace warpcsv {

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace warpcsv
