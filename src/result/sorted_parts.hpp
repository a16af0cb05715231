// Files of group records, each sorted by keys and sharing no group with
// another, merged in output order on several threads. Each file keeps every
// kSampleEvery-th record aside (its samples); the samples of all files,
// merged, cut the key order into ranges of about equal size, and where a
// range starts and ends in each file follows from the samples on either
// side. Ranges are then merged on their own threads, a batch at a time, and
// handed out in order: memory holds the samples and one batch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "result/group_rows.hpp"
#include "result/spill.hpp"

namespace warpcsv {

// One record in this many of a sorted file is a sample: a range's start in a
// file is found by reading on from a sample, past fewer than this many records.
constexpr size_t kSampleEvery = 256;

// A sorted file with its samples: each sampled record's bytes, one after
// another, and where it starts in the file.
struct SortedPart {
  std::unique_ptr<SpillFile> file;
  std::vector<char> samples;
  std::vector<uint64_t> sample_offsets;
  size_t sample_every = kSampleEvery;
};

// Writes the groups of a table, in the order given, to a sorted part.
class SortedPartWriter {
 public:
  SortedPartWriter(const GroupRecords& records, const std::string& dir, size_t sample_every = kSampleEvery);
  void add(const GroupTable& t, size_t g);
  SortedPart finish();

 private:
  const GroupRecords* records_;
  SortedPart part_;
  std::vector<char> buffer_;
  size_t written_ = 0;  // records
};

// The samples of a sorted file written without them, read through once.
SortedPart sample_sorted_file(const GroupRecords& records, std::unique_ptr<SpillFile> file,
                              size_t sample_every = kSampleEvery);

// The groups of `parts` (`groups` in all) in output order, merged a batch of
// key ranges at a time on up to `threads` threads, in runs of `run_rows`.
// `memory_budget` (0: none given) bounds what a batch holds; `range_records`
// (0: as the budget allows) sets about how many records a range has.
std::unique_ptr<OrderedGroups> merge_sorted_parts(const GroupRecords& records, const GroupLayout& layout,
                                                  std::vector<SortedPart> parts, size_t groups, size_t run_rows,
                                                  int threads, uint64_t memory_budget, size_t range_records = 0);

// The same for files written without samples: they are sampled first.
std::unique_ptr<OrderedGroups> merge_sorted_records(const GroupLayout& layout,
                                                    std::vector<std::unique_ptr<SpillFile>> files, size_t groups,
                                                    size_t run_rows, int threads);

}  // namespace warpcsv
