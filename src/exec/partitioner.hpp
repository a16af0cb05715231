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

// partition_window's first pass on its own: where a window's partitions
// start, and each one's transition vector and text check, which a caller may
// compute on its threads while the window before is still being scanned.
struct WindowCuts {
  uint64_t offset = 0, size = 0, chunk = 0;  // the window (its offset in the input) and the cut
  std::vector<uint64_t> begin;
  std::vector<TransitionVector> tv;
  std::vector<uint8_t> maybe_bad_text;
};
// The cut of a window of `size` bytes at `offset`, transition vectors not yet computed.
WindowCuts cut_window(uint64_t offset, uint64_t size, uint64_t chunk, int threads, bool fine_tail);
// Computes partition j's transition vector and text check; `data` holds the window's bytes.
void scan_cut(const Dialect& d, const char* data, WindowCuts& cuts, size_t j);
// The rest of partition_window, over cuts scanned in full (every scan_cut done) of window w.
PartitionedWindow partition_window(const Dialect& d, const Window& w, WindowCuts&& cuts, int threads);

// Partitions a window (which starts at a row start) of `chunk`-byte pieces.
// Partition j is ready when a later partition holds a row start (so its last
// row ends inside the window), or the window reaches the end of input or ends
// right after a row. With `fine_tail`, a window of more than two chunks per
// thread cuts its last `threads` chunks' bytes in quarters: threads that take
// partitions one after another then finish the window closer together.
PartitionedWindow partition_window(const Dialect& d, const Window& w, uint64_t chunk, int threads,
                                   bool fine_tail = false);

}  // namespace warpcsv
