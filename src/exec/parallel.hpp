// A minimal fork-join loop over host threads.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace warpcsv {

// Calls fn(i, worker) for i in [0, n) on up to `threads` threads; worker ids
// are stable in [0, threads). The first exception thrown is rethrown.
template <class Fn>
void parallel_for(size_t n, int threads, Fn&& fn) {
  if (n == 0) return;
  const size_t t = std::min<size_t>(n, threads < 1 ? 1 : static_cast<size_t>(threads));
  if (t == 1) {
    for (size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto body = [&](int worker) {
    try {
      for (size_t i; (i = next.fetch_add(1)) < n;) fn(i, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(n);
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < t; ++w) pool.emplace_back(body, static_cast<int>(w));
  body(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// How many contiguous ranges n items split into for `threads` threads: one per
// thread, but none under 16384 items (threads would not pay for fewer).
inline size_t range_parts(size_t n, int threads) {
  constexpr size_t kMinPerRange = 1 << 14;
  return std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(threads < 1 ? 1 : threads), n / kMinPerRange));
}

// Calls fn(begin, end) on the range_parts(n, threads) ranges covering [0, n),
// range p being [n * p / parts, n * (p + 1) / parts).
template <class Fn>
void parallel_ranges(size_t n, int threads, Fn&& fn) {
  const size_t parts = range_parts(n, threads);
  parallel_for(parts, threads, [&](size_t p, int) { fn(n * p / parts, n * (p + 1) / parts); });
}

}  // namespace warpcsv
