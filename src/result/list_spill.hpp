// Holistic lists past the memory limit (--memory-limit), held in temporary
// files. Each spill sorts one argument's lists by (group, value), equal values
// merged into one record with their rows, and writes them as a run; after the
// scan the runs of an argument are merged, so that every group's values are
// read once, in ascending order, whatever their number: memory holds a
// buffer per run and a row count per group. Groups are named by ids that
// stay fixed while the result's table renumbers its groups (the executor
// maps them). The files are unlinked as they are made.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/arg_list.hpp"
#include "result/spill_file.hpp"

namespace warpcsv {

class SpilledLists {
 public:
  // One argument per type, as plan.scan.keys past the agg's own.
  // `memory_budget`: bytes the merge's read buffers may hold together.
  SpilledLists(std::vector<Type> arg_types, uint64_t memory_budget);

  // Writes the values of argument a's lists as one run, sorted on up to
  // `threads` threads, and empties the lists. Value i of a list is of group
  // id[list.group(i)], which every group listed must have.
  void spill(size_t a, std::vector<ArgList>& lists, const std::vector<uint32_t>& id, int threads);

  // Calls fn(id, value, rows) for each distinct value of argument a in its
  // runs, by id, then by value ascending; the value is valid during the call.
  void merge(size_t a, const std::function<void(uint32_t, const Value&, uint64_t)>& fn) const;
  // The rows that group `id`'s values of argument a stand for.
  uint64_t rows(size_t a, uint32_t id) const {
    const std::vector<uint64_t>& r = args_[a].rows;
    return id < r.size() ? r[id] : 0;
  }

  size_t spills() const { return spills_; }
  uint64_t bytes_written() const { return bytes_; }
  // For --profile: "N MiB of records, M MiB in DIR".
  std::string describe_bytes() const;

 private:
  // Records: the group's id (4 bytes), the rows (8), then the value: a
  // holistic key (8 bytes), an int128 (16), or a string's length (4) and bytes.
  enum class Form : uint8_t { Keys, Wide, Strings };
  struct Run {
    std::unique_ptr<SpillFile> file;
    Form form;
  };
  struct Argument {
    Type type;
    std::vector<Run> runs;
    std::vector<uint64_t> rows;  // by id
  };
  class Reader;

  std::vector<Argument> args_;
  std::string dir_;
  uint64_t memory_budget_;
  size_t spills_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace warpcsv
