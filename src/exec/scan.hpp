// What an executor (CPU threads or GPUs) needs to scan the input and what it
// gives back: a partial aggregate table, or the output rows in input order.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/group_table.hpp"
#include "io/input.hpp"
#include "runtime/progress.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// A row that could not be used, located for the message and --rejects.
struct RowIssue {
  // Padded: a row short of fields kept with nulls (--bad-rows pad), not skipped.
  enum Kind : uint8_t { Ragged, Malformed, BadValue, Padded } kind;
  std::string source;
  uint64_t line = 0;    // 1-based, global within the source
  uint64_t column = 0;  // 1-based byte column within that line
  int field = -1;       // input column index, for BadValue
  std::string text;     // the offending field (BadValue) or row, short, for messages
  std::string row;      // the whole row for --rejects (up to kRejectedRowBytes), as text escapes it
  std::string message;  // what was expected and found
};

// A value that does not fit a type inferred from the first rows: the driver
// widens the column's type and runs again (or stops, naming --schema).
struct TypeWidening {
  int column;
  std::string text;
  RowIssue where;
};

// Per-run settings derived from the plan and options, shared by executors.
struct HolisticGroups;
class OrderedGroups;
namespace trace {
class Tracer;
}

class LookupTable;

struct ScanSettings {
  const Plan* plan = nullptr;
  const Options* opts = nullptr;
  std::vector<bool> type_from_schema;  // per input column: fixed by --schema
  uint64_t chunk_size = 0;
  int threads = 1;
  Progress* progress = nullptr;  // never null while scanning
  // Bytes of the longest row in the inference sample (0: unknown), which
  // sizes the GPUs' batch tails (see gpu_batch_tail).
  uint64_t longest_sampled_row = 0;
  // The CPU executor folds its threads' group tables into the result when
  // they hold more bytes than this (0: never before the end).
  uint64_t thread_tables_budget = 0;
  // Bytes the CPU executor's folded groups may hold before they spill to
  // temporary files (result/spill.hpp; 0: never).
  uint64_t groups_budget = 0;
  // A plan with holistic aggregates: the CPU executor (and the CUDA
  // executor on one GPU) groups by the agg's own keys and lists each row's
  // holistic arguments here (from_lists); otherwise executors fill the
  // scan's group table as for any plan (keyed by the arguments too).
  HolisticGroups* holistic = nullptr;
  // --trace: executors record their partitions, batches and stages here
  // (runtime/trace.hpp); null when not tracing.
  trace::Tracer* tracer = nullptr;
  // Row output goes out as it is produced (exec/stream_out.hpp): the CPU
  // executor starts with small windows, and takes what a stream has so far.
  bool stream_rows = false;
  // An aggregate plan whose groups may stay on the device that made them
  // (no holistic aggregates, some keys): an executor that keeps its groups
  // there hands them to this, in output order, before it lets the device go,
  // and leaves the host table empty. Null: the groups come to the host table.
  const std::function<void(OrderedGroups&)>* device_result = nullptr;
  // The join stages' lookup tables (Plan::joins), read before the scan.
  const std::vector<LookupTable>* lookups = nullptr;
  // Numbers for the scan's partitions: `partition_count` from
  // `first_partition` (a rank's, ranks/shares.hpp), as row order keys need.
  uint64_t first_partition = 0;
  uint64_t partition_count = uint64_t{1} << 32;
};

// Receives the non-aggregate rows, rows [begin, end) of a partition's table
// at a time, in input order. Returns false once it needs no more rows (a
// limit was reached). The table is not read after its last rows went out, so
// a sink given all of its rows at once may take its storage (std::move).
using RowBatchSink = std::function<bool(Table&, size_t begin, size_t end)>;

// One line of --profile: a stage on a device, its time and the bytes it moved.
struct StageTiming {
  std::string stage;
  std::string device;  // "cpu", "gpu0", ...
  double seconds = 0;
  uint64_t bytes = 0;
  uint64_t peak_device_bytes = 0;  // GPUs: peak memory in use
};

struct ScanStats {
  uint64_t rows = 0;
  uint64_t skipped = 0;
  uint64_t padded = 0;  // rows kept with nulls for missing fields (--bad-rows pad)
  uint64_t bytes = 0;
  uint64_t partitions = 0;
  uint64_t chunk_size = 0;
  std::vector<StageTiming> stages;  // filled by executors for --profile
  std::string executor;             // what scanned in the end: "cpu" or "gpu"
};

class ScanExecutor {
 public:
  virtual ~ScanExecutor() = default;
  // Scans every source. Aggregate plans fill `groups`; others stream rows to
  // `sink`. Bad rows: under fail, throws InputError; under skip, calls
  // `on_skip` for each in input order. Throws TypeWidening for an inferred
  // type that a later value does not fit.
  virtual void scan(InputSet& in, const ScanSettings& settings, GroupTable* groups,
                    const RowBatchSink& sink, const std::function<void(const RowIssue&)>& on_skip,
                    ScanStats& stats) = 0;
};

std::unique_ptr<ScanExecutor> make_cpu_executor();
// Whether the CPU executor may aggregate plain rows a batch at a time (on
// by default); tests turn it off to compare with the row-at-a-time path.
void set_cpu_row_batches(bool on);

// Formats an issue as the user sees it: "file:line:col: message".
std::string describe_issue(const RowIssue& issue);

}  // namespace warpcsv
