// parallel_stable_sort (exec/parallel.hpp) against std::stable_sort: keys with many ties (the
// original position tells a stable order from another), at sizes around the range cut-offs and
// thread counts that leave pairs without a partner.
#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "exec/parallel.hpp"

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
