// Groups past the memory limit (--memory-limit), held in temporary files:
// the hash parts of the folded groups are written out when they outgrow
// their budget, and after the scan each part is read back and aggregated on
// its own, sorted, and written out again; the sorted parts are then merged
// as the result is written. Memory holds one part and a buffer per part,
// whatever the groups. The files are unlinked as they are made, so nothing
// is left behind however the process ends.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/group_table.hpp"
#include "result/group_rows.hpp"
#include "result/spill_file.hpp"

namespace warpcsv {

// Bytes a spill file's writer or reader buffers.
constexpr size_t kSpillBufferBytes = 256 << 10;

// Room for one group's block read out of a record, aligned for its states.
class AlignedBlock {
 public:
  explicit AlignedBlock(size_t bytes) : bytes_(bytes + kAggStateAlign) {}
  char* get() { return bytes_.data() + padding(); }
  const char* get() const { return bytes_.data() + padding(); }

 private:
  size_t padding() const {
    return (kAggStateAlign - reinterpret_cast<uintptr_t>(bytes_.data()) % kAggStateAlign) % kAggStateAlign;
  }

  std::vector<char> bytes_;
};

// Groups as records in a spill file: the hash, the group's block (packed
// keys, then states) and the bytes of its strings (long keys, string
// states), which the block points at again when read.
class GroupRecords {
 public:
  explicit GroupRecords(const GroupLayout& layout);

  // Appends group g of `t` to `to` through `buffer` (flushed when full and
  // by flush()).
  void write(const GroupTable& t, size_t g, SpillFile& to, std::vector<char>& buffer) const;
  // Appends group g's record to `buffer`.
  void append(const GroupTable& t, size_t g, std::vector<char>& buffer) const;
  // Calls fn(hash, block) for each record of p[0, n) (whole records), the
  // block's strings pointing into p.
  void each_record(const char* p, size_t n, const std::function<void(uint64_t, const char*)>& fn) const;
  // The record at p (n bytes left): its hash, and its block copied to
  // `block` (block_bytes(), aligned for the states) with its strings
  // pointing into p. Returns the record's bytes.
  size_t read_record(const char* p, size_t n, uint64_t* hash, char* block) const;
  static void flush(SpillFile& to, std::vector<char>& buffer);

  // Reads one file's records in order.
  class Reader {
   public:
    Reader(const GroupRecords& records, const SpillFile& file);
    // The next record; false at the end of the file.
    bool next();
    uint64_t hash() const { return hash_; }
    // Where the record starts in the file.
    uint64_t record_offset() const { return record_offset_; }
    // The record's block, its strings pointing into this reader: valid
    // until the next call to next().
    const char* block() const { return block_.data(); }
    // The record's strings, one after another, as block() points at them.
    StrRef strings() const { return StrRef{strings_.data(), static_cast<uint32_t>(strings_.size())}; }

   private:
    const GroupRecords* records_;
    SpillCursor in_;
    uint64_t hash_ = 0, record_offset_ = 0;
    std::vector<char> block_, strings_;
  };

  size_t block_bytes() const { return block_bytes_; }
  const PackedKeys& packed() const { return packed_; }
  // Points the strings of `block` (long keys, then string states, as
  // written) at consecutive bytes from `at`.
  void point_strings(char* block, const char* at) const;

 private:
  // Calls fn(StrRef) for each string of `block` that is held outside it:
  // keys too long to be inline, then string states.
  template <class Fn>
  void each_string(const char* block, Fn&& fn) const;


  const GroupLayout* layout_;
  PackedKeys packed_;
  size_t key_bytes_, block_bytes_;
};

// The hash parts of a run's groups, spilled. Not thread-safe.
class SpilledGroups {
 public:
  // `nparts`: a power of two. `memory_budget`: host bytes the parts being
  // aggregated after the scan may hold together (0: one part per thread).
  SpilledGroups(const GroupLayout& layout, size_t nparts, uint64_t memory_budget = 0);

  // Writes the groups of every part (parts[p] to file p) on up to `threads`
  // threads, and empties them.
  void spill(std::vector<GroupTable>& parts, int threads);
  // Writes every group of `t` to its hash part's file, on up to `threads`
  // threads. A group may be spilled again later: the parts merge them.
  void spill_table(const GroupTable& t, int threads);
  // Part by part: every record of part p merged into a table of its own,
  // sorted by keys and written to a file of sorted parts; then the sorted
  // parts, merged in output order on `threads` threads (result/sorted_parts.hpp).
  std::unique_ptr<OrderedGroups> sorted(const Plan& plan, int threads, size_t run_rows);

  const GroupLayout& layout() const { return *layout_; }
  // Bytes of records written.
  uint64_t bytes_written() const { return bytes_; }
  // For --profile: "N MiB of records, M MiB in DIR" (what the files took, compressed).
  std::string describe_bytes() const;
  size_t spills() const { return spills_; }

 private:
  // Appends groups[0, n) of `t` (groups null: its groups 0 to n - 1) to
  // part p's file as records; returns the bytes written. One thread a part.
  uint64_t append_to_part(size_t p, const GroupTable& t, const uint32_t* groups, size_t n);

  const GroupLayout* layout_;
  GroupRecords records_;
  std::string dir_;
  std::vector<std::unique_ptr<SpillFile>> files_;  // one per part, made when first needed
  uint64_t memory_budget_;
  uint64_t bytes_ = 0;
  std::atomic<uint64_t> stored_{0};
  size_t spills_ = 0;
};

}  // namespace warpcsv
