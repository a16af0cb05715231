// How the CPU executor cuts the input: the windows it maps and the
// partitions it runs on its threads.
#pragma once
#include <algorithm>
#include <cstdint>

namespace warpcsv {

// The CPU executor maps the input a window at a time and runs the window's
// partitions on its threads: four per thread, so that every thread has work
// (windows of 8 partitions kept 8 of 16 threads busy), in windows of at most
// twice kCpuWindowBytes unless 8 partitions need more. Without --chunk-size
// the partitions shrink as the threads grow, keeping windows near
// kCpuWindowBytes: 16 MiB for up to two threads, 2 MiB for 16, at least 1 MiB.
constexpr uint64_t kCpuWindowBytes = 128ull << 20;
inline uint64_t cpu_window_bytes(uint64_t chunk, int threads) {
  const uint64_t want = std::max<uint64_t>(8, 4 * static_cast<uint64_t>(std::max(1, threads))) * chunk;
  return std::max({std::min(want, 2 * kCpuWindowBytes), 8 * chunk, uint64_t{1} << 20});
}
inline uint64_t default_cpu_chunk(int threads) {
  return std::clamp<uint64_t>(kCpuWindowBytes / (4 * static_cast<uint64_t>(std::max(2, threads))), 1ull << 20,
                              16ull << 20);
}

}  // namespace warpcsv
