// Each rank's share of the input: a contiguous run of the input's bytes,
// across files, as even as the files allow, cut only at row starts.
//
// The cuts first fall at even byte offsets of all the files together; a cut
// in a file that cannot be read at any offset (standard input, compressed) or
// is small moves to that file's start or end. A cut inside a file then moves
// to the first row start at or after it, which needs the quote state there:
// the bytes between cuts are summarised (transition vector and line count)
// by the ranks, each some of them, the summaries exchanged and composed, as
// between partitions. The same summaries give the lines before a share, so
// messages name the same line as one process does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "io/input.hpp"
#include "warpcsv/core/dialect.hpp"

namespace warpcsv {

// One rank's part of one source: data bytes [begin, end), both row starts,
// and the line terminators before begin. `whole`: all of it (a stream too).
struct SourceShare {
  bool whole = true;
  uint64_t begin = 0, end = 0;
  uint64_t lines_before = 0;
  bool empty() const { return !whole && begin == end; }
};
using RankShare = std::vector<SourceShare>;  // per source

// A cut: ranks from this one on start at `offset` of source `source`
// (offset 0 is the source's start; source == sources: past the end).
struct InputCut {
  size_t source = 0;
  uint64_t offset = 0;
};

// What splitting needs to know of a source.
struct SourceExtent {
  uint64_t bytes = 0;       // data bytes (after the header)
  bool splittable = false;  // a regular file, read at any offset
};

// Where each rank's share starts (ranks entries, the first {0, 0}): even
// shares of all the bytes, a cut inside a source that is not splittable or
// smaller than `min_split_bytes` moved to its nearer end.
std::vector<InputCut> plan_cuts(const std::vector<SourceExtent>& sources, int ranks, uint64_t min_split_bytes);

// A run of bytes summarised for composing: its transition vector and its
// line terminators (LF, and CR not followed by LF; the byte after the run
// decides a CR at its end).
struct ByteSummary {
  TransitionVector tv = 0;
  uint64_t lines = 0;
};
// Line terminators in p[0, n), `next` the byte after (-1: none).
uint64_t count_line_ends(const char* p, uint64_t n, int next);

// From a cut at a byte where the state is `state`, the first row start at or
// after it: its distance from the cut and the lines in between. `bytes` holds
// what follows the cut (to the end of the source when `to_end`); returns
// false if no row starts within `bytes` and more is needed.
struct RowStartFound {
  uint64_t distance = 0;
  uint64_t lines = 0;
};
bool find_row_start(const Dialect& d, uint8_t state, bool after_cr, const char* bytes, uint64_t n, bool to_end,
                    RowStartFound* found);

// A source is cut between ranks only where it has at least this many
// partitions (the scan's chunk): small files go whole to one rank.
constexpr uint64_t kRankMinSplitChunks = 4;

// Every rank's share (index: rank), the same on every rank. Collective: each
// rank summarises its pieces on `threads` threads, the summaries are
// exchanged (Ranks::allgather, after an agreement). Throws UsageError for a
// stream (standard input) among several ranks.
std::vector<RankShare> split_input(const InputSet& in, int threads, uint64_t min_split_bytes);

// Keeps only `share` of the input (its sources' other bytes are not read).
void keep_share(InputSet& in, const RankShare& share);

// Rank `rank`'s partition numbers, of `ranks`: `count` from `first`. Row
// order keys are (partition << 32 | row), and a rank numbers its share's
// partitions after those of the ranks before it, so that first, last and a
// distinct's first rows compare across ranks.
struct PartitionNumbers {
  uint64_t first = 0;
  uint64_t count = uint64_t{1} << 32;
};
PartitionNumbers rank_partition_numbers(int rank, int ranks);

// The shares in words for --explain, a line per rank.
std::string describe_shares(const InputSet& in, const std::vector<RankShare>& shares);

}  // namespace warpcsv
