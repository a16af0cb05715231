// A stable least-significant-digit radix sort of items by an integer key, on
// several threads: per pass, every thread counts its range's digits, then
// moves its items to their places. Passes whose digit all items share are
// skipped, so only the key bits that vary cost time.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/parallel.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// Sorts `items` stably by the low `bits` bits of their keys; digit(item,
// shift) is the key's 8 bits from bit `shift`. `spare` is a buffer of as many
// items (its contents do not matter).
template <class Item, class Digit>
void radix_sort(UninitVector<Item>& items, UninitVector<Item>& spare, int bits, int threads, Digit digit) {
  const size_t n = items.size();
  if (n < 2) return;
  spare.resize(n);
  const size_t parts = range_parts(n, threads);
  std::vector<std::array<size_t, 256>> counts(parts);
  for (int shift = 0; shift < bits; shift += 8) {
    parallel_for(parts, threads, [&](size_t p, int) {
      std::array<size_t, 256>& c = counts[p];
      c.fill(0);
      for (size_t i = n * p / parts, e = n * (p + 1) / parts; i < e; ++i) ++c[digit(items[i], shift)];
    });
    // Where each part's items of each digit go: digits in order, parts in order within a digit.
    size_t at = 0;
    bool one_digit = false;
    for (int d = 0; d < 256; ++d) {
      size_t total = 0;
      for (size_t p = 0; p < parts; ++p) total += counts[p][static_cast<size_t>(d)];
      if (total == n) one_digit = true;
      for (size_t p = 0; p < parts; ++p) {
        const size_t c = counts[p][static_cast<size_t>(d)];
        counts[p][static_cast<size_t>(d)] = at;
        at += c;
      }
    }
    if (one_digit) continue;
    parallel_for(parts, threads, [&](size_t p, int) {
      std::array<size_t, 256>& to = counts[p];
      for (size_t i = n * p / parts, e = n * (p + 1) / parts; i < e; ++i) spare[to[digit(items[i], shift)]++] = items[i];
    });
    items.swap(spare);
  }
}

}  // namespace warpcsv
