// A minimal fork-join loop over the process's kept host threads, and a
// stable sort on them.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/workers.hpp"

namespace warpcsv {

// Runs fn(i) for i in [0, n) on a new thread each (for work that waits on
// a device, not on the host's cores) and rethrows the first exception.
template <class Fn>
void on_threads(size_t n, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Calls fn(i, worker) for i in [0, n) on up to `threads` threads: the caller
// and helpers from WorkerPool::shared() (a nested call is fine). Worker ids
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
  WorkerPool& pool = WorkerPool::shared();
  const WorkerPool::TeamHandle team = pool.start(static_cast<int>(t - 1), [&](int worker) { body(worker); });
  body(0);
  pool.finish(team);
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

namespace detail {

// How many of the first k elements of the stable merge of a[0, m) and
// b[0, n) come from a (a's elements go first on ties).
template <class It, class Cmp>
size_t merge_split(It a, size_t m, It b, size_t n, size_t k, Cmp& cmp) {
  size_t lo = k > n ? k - n : 0, hi = std::min(k, m);
  while (lo < hi) {
    const size_t i = lo + (hi - lo) / 2;
    // a[i] goes before b[k - i - 1] unless b's is strictly less: then more
    // of the first k come from a.
    if (!cmp(b[k - i - 1], a[i])) lo = i + 1;
    else hi = i;
  }
  return lo;
}

}  // namespace detail

// A stable sort on several threads: ranges sorted in parallel, then merged
// pairwise, level by level, between the range and a buffer. Each merge is
// cut into pieces of its output (found by binary search, as in merge path)
// so that the last levels, with few pairs, still use every thread: the last
// merge alone, on one thread, would take most of the sort.
template <class It, class Cmp>
void parallel_stable_sort(It first, It last, Cmp cmp, int threads) {
  using T = typename std::iterator_traits<It>::value_type;
  const size_t n = static_cast<size_t>(last - first);
  const size_t parts = range_parts(n, threads);
  if (parts <= 1) {
    std::stable_sort(first, last, cmp);
    return;
  }
  std::vector<size_t> b(parts + 1);
  for (size_t t = 0; t <= parts; ++t) b[t] = n * t / parts;
  parallel_for(parts, threads, [&](size_t t, int) { std::stable_sort(first + b[t], first + b[t + 1], cmp); });
  std::unique_ptr<T[]> buffer(new T[n]);
  T* const data = &*first;
  T* from = data;
  T* to = buffer.get();
  const size_t workers = static_cast<size_t>(std::max(1, threads));
  for (size_t width = 1; width < parts; width *= 2) {
    // Tasks: output pieces of each pair's merge (or of a lone range's copy),
    // about n / workers elements each.
    struct Task {
      size_t lo, mid, hi, k0, k1;
    };
    std::vector<Task> tasks;
    for (size_t lo = 0; lo < parts; lo += 2 * width) {
      const size_t mid = std::min(parts, lo + width), hi = std::min(parts, lo + 2 * width);
      const size_t len = b[hi] - b[lo];
      const size_t pieces = std::max<size_t>(1, len * workers / n);
      for (size_t p = 0; p < pieces; ++p)
        tasks.push_back(Task{b[lo], b[mid], b[hi], len * p / pieces, len * (p + 1) / pieces});
    }
    parallel_for(tasks.size(), threads, [&](size_t i, int) {
      const Task& t = tasks[i];
      const T* a = from + t.lo;
      const T* c = from + t.mid;
      const size_t m = t.mid - t.lo, nb = t.hi - t.mid;
      const size_t i0 = detail::merge_split(a, m, c, nb, t.k0, cmp);
      const size_t i1 = detail::merge_split(a, m, c, nb, t.k1, cmp);
      std::merge(a + i0, a + i1, c + (t.k0 - i0), c + (t.k1 - i1), to + t.lo + t.k0, cmp);
    });
    std::swap(from, to);
  }
  if (from != data)
    parallel_ranges(n, threads, [&](size_t lo, size_t hi) { std::copy(from + lo, from + hi, data + lo); });
}

}  // namespace warpcsv
