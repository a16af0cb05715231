// parallel_stable_sort (runtime/parallel.hpp) against std::stable_sort: keys with many ties (the
// original position tells a stable order from another), at sizes around the range cut-offs and
// thread counts that leave pairs without a partner. parallel_for and the kept threads it runs on
// (runtime/workers.hpp): every index once, worker ids, nesting, errors.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "runtime/grow_array.hpp"
#include "runtime/parallel.hpp"

using namespace warpcsv;

TEST_CASE("parallel_stable_sort gives std::stable_sort's order") {
  std::mt19937_64 rng(5);
  using Item = std::pair<uint32_t, uint32_t>;  // key, original position
  auto by_key = [](const Item& a, const Item& b) { return a.first < b.first; };
  for (size_t n : {0ul, 1ul, 100ul, 16384ul, 32767ul, 32768ul, 65537ul, 100003ul, 600000ul}) {
    for (uint32_t distinct : {1u, 7u, 1000u, 1u << 30}) {
      std::vector<Item> items(n);
      for (size_t i = 0; i < n; ++i) items[i] = {static_cast<uint32_t>(rng() % distinct), static_cast<uint32_t>(i)};
      std::vector<Item> want = items;
      std::stable_sort(want.begin(), want.end(), by_key);
      for (int threads : {1, 2, 3, 5, 8, 13, 32}) {
        if (n == 600000 && threads != 13 && threads != 32) continue;
        std::vector<Item> got = items;
        parallel_stable_sort(got.begin(), got.end(), by_key, threads);
        INFO("n " << n << ", distinct keys " << distinct << ", threads " << threads);
        REQUIRE(got == want);
      }
    }
  }
}

TEST_CASE("parallel_for: every index once, worker ids in range, on kept threads") {
  for (size_t n : {1ul, 2ul, 7ul, 1000ul}) {
    for (int threads : {1, 2, 3, 8, 32}) {
      std::vector<std::atomic<int>> seen(n);
      std::atomic<int> bad_worker{0};
      parallel_for(n, threads, [&](size_t i, int worker) {
        seen[i].fetch_add(1);
        if (worker < 0 || worker >= threads) bad_worker.fetch_add(1);
      });
      INFO("n " << n << ", threads " << threads);
      for (size_t i = 0; i < n; ++i) REQUIRE(seen[i].load() == 1);
      REQUIRE(bad_worker.load() == 0);
    }
  }
  // Later calls reuse the threads the first ones made.
  const int made = WorkerPool::shared().threads();
  for (int round = 0; round < 50; ++round) parallel_for(64, 32, [](size_t, int) {});
  CHECK(WorkerPool::shared().threads() == made);
}

TEST_CASE("parallel_for: two items on the same worker id never overlap") {
  // A worker id names one thread at a time: per-worker scratch needs no lock.
  constexpr int kThreads = 6;
  std::vector<std::atomic<int>> busy(kThreads);
  std::atomic<int> overlaps{0};
  parallel_for(2000, kThreads, [&](size_t, int w) {
    if (busy[w].fetch_add(1) != 0) overlaps.fetch_add(1);
    std::this_thread::yield();
    busy[w].fetch_sub(1);
  });
  CHECK(overlaps.load() == 0);
}

TEST_CASE("parallel_for: nested and concurrent calls finish; the first error is rethrown") {
  // Callers on several threads, each nesting a loop inside its items: the
  // pool lends what it has and makes more threads, never waits for a
  // helper that cannot come.
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      parallel_for(8, 4, [&](size_t i, int) {
        parallel_for(100, 3, [&](size_t j, int) { sum.fetch_add(i * 100 + j); });
      });
    });
  for (auto& t : callers) t.join();
  // Each caller adds sum over i < 8, j < 100 of (100 i + j) = 100 * 100 * 28 + 8 * 4950.
  CHECK(sum.load() == 4 * (100ull * 100 * 28 + 8 * 4950));

  CHECK_THROWS_WITH(parallel_for(1000, 4,
                                 [&](size_t i, int) {
                                   if (i == 10) throw std::runtime_error("item 10");
                                 }),
                    "item 10");
  // The pool is still good after an error.
  std::atomic<int> after{0};
  parallel_for(100, 4, [&](size_t, int) { after.fetch_add(1); });
  CHECK(after.load() == 100);
}

TEST_CASE("WorkerPool: a team's helpers get distinct ids; finish waits for them") {
  WorkerPool& pool = WorkerPool::shared();
  std::mutex m;
  std::vector<int> ids;
  std::atomic<int> running{0}, release{0};
  const WorkerPool::TeamHandle team = pool.start(5, [&](int id) {
    running.fetch_add(1);
    while (!release.load()) std::this_thread::yield();
    std::lock_guard<std::mutex> l(m);
    ids.push_back(id);
  });
  while (running.load() < 5) std::this_thread::yield();  // all five joined: none is left waiting for a thread
  release = 1;
  pool.finish(team);
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<int>{1, 2, 3, 4, 5});
  // A team that asked for no helpers finishes at once.
  pool.finish(pool.start(0, [](int) { FAIL("no helper was asked for"); }));
}

TEST_CASE("GrowArray: push, append, resize, drop_front and moves keep the elements of a vector doing the same") {
  std::mt19937_64 rng(21);
  GrowArray<uint32_t> a;
  std::vector<uint32_t> v;
  for (int step = 0; step < 20000; ++step) {
    switch (rng() % 5) {
      case 0: {
        const uint32_t x = static_cast<uint32_t>(rng());
        a.push_back(x);
        v.push_back(x);
        break;
      }
      case 1: {
        std::vector<uint32_t> more(rng() % 300);
        for (auto& x : more) x = static_cast<uint32_t>(rng());
        a.append(more.data(), more.size());
        v.insert(v.end(), more.begin(), more.end());
        break;
      }
      case 2: {  // grow (new elements are not initialized: written here) or shrink
        const size_t n = rng() % (v.size() + 200);
        const size_t old = a.size();
        a.resize(n);
        for (size_t i = old; i < n; ++i) a[i] = static_cast<uint32_t>(i);
        const size_t vold = v.size();
        v.resize(n);
        for (size_t i = vold; i < n; ++i) v[i] = static_cast<uint32_t>(i);
        break;
      }
      case 3: {
        const size_t n = rng() % (v.size() + 2);
        a.drop_front(n);
        v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size())));
        break;
      }
      default: {
        GrowArray<uint32_t> b(std::move(a));
        CHECK(a.size() == 0);
        a = std::move(b);
      }
    }
    REQUIRE(a.size() == v.size());
    REQUIRE(a.capacity() >= a.size());
    REQUIRE(std::equal(v.begin(), v.end(), a.data()));
  }
}
