// Cuts a window of bytes into fixed-size partitions and resolves the exact
// CSV state at each partition start by composing transition vectors in order.
#pragma once
#include <cstdint>
#include <vector>

#include "io/input.hpp"
#include "warpcsv/core/dialect.hpp"

namespace warpcsv {

constexpr uint64_t kNoRow = ~0ull;

struct PartitionedWindow {
  std::vector<uint64_t> begin;      // partition j covers [begin[j], begin[j+1]) (last: size)
  std::vector<uint8_t> state;       // CSV state at begin[j]
  std::vector<uint64_t> first_row;  // first row start in partition j, or kNoRow
  // Whether partition j's bytes may hold a NUL or invalid UTF-8 (TextCheck, in
  // the same pass as the quote bytes): only then can its rows have either.
  std::vector<uint8_t> maybe_bad_text;
  size_t ready = 0;                 // partitions [0, ready) can be processed in full
  uint64_t consumed = 0;            // bytes of the window those partitions account for
  uint64_t end(size_t j) const { return j + 1 < begin.size() ? begin[j + 1] : size; }
  uint64_t size = 0;
};

// The transition vector of bytes [p, p+n), fast when they hold no quote,
// escape or comment byte (the common case).
TransitionVector transition_vector(const Dialect& d, const char* p, uint64_t n);
// The same, and whether the bytes may hold a NUL or invalid UTF-8 (TextCheck), from the same pass.
TransitionVector transition_vector(const Dialect& d, const char* p, uint64_t n, bool* maybe_bad_text);

// Partitions a window (which starts at a row start) of `chunk`-byte pieces.
// Partition j is ready when a later partition holds a row start (so its last
// row ends inside the window), or the window reaches the end of input or ends
// right after a row. With `fine_tail`, a window of more than two chunks per
// thread cuts its last `threads` chunks' bytes in quarters: threads that take
// partitions one after another then finish the window closer together.
PartitionedWindow partition_window(const Dialect& d, const Window& w, uint64_t chunk, int threads,
                                   bool fine_tail = false);

}  // namespace warpcsv
