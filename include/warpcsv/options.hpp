// Options of one run, as parsed from the command line (src/cli/options.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace warpcsv {

enum class OutputFormat { Csv, Tsv, Json, Ndjson, Table, Markdown };
// --bad-rows: stop at the first bad row, skip bad rows, or also keep rows that
// lack trailing fields, with nulls for them (others are skipped).
enum class BadRows { Fail, Skip, Pad };

// How the bytes of a CSV file are to be read.
struct DialectOptions {
  std::string delimiter = ",";  // 1 to 4 bytes (kMaxDelimiterBytes)
  bool delimiter_auto = false;  // --delimiter auto: sniffed from the first input (io.hpp)
  char quote = '"';
  int escape = -1;   // -1: none
  int comment = -1;  // -1: none
  int64_t skip_lines = 0;
  bool header = true;
  std::vector<std::string> names;        // --names
  std::vector<std::string> null_tokens;  // --null, besides the empty field
};

struct Options {
  std::string pipeline;
  std::vector<std::string> files;  // empty: standard input
  DialectOptions dialect;
  std::string schema;  // --schema "name:type,..."
  BadRows bad_rows = BadRows::Fail;
  std::string rejects_path;
  OutputFormat format = OutputFormat::Csv;
  std::string output_path;  // empty: stdout
  bool output_header = true;  // --no-output-header: false
  std::string device = "auto";
  uint64_t chunk_size = 0;  // 0: chosen by the tool
  int threads = 0;          // 0: hardware concurrency
  uint64_t memory_limit = 0;  // --memory-limit bytes (0: the machine's or the cgroup's memory)
  uint64_t gpu_memory_limit = 0;  // --gpu-memory-limit: bytes of each GPU's group table (0: its free memory)
  bool explain = false;
  bool profile = false;
  std::string trace_path;  // --trace FILE: a Chrome/Perfetto trace of the run (empty: none)
  int progress = -1;  // --progress 1, --no-progress 0, default -1: only when stderr is a terminal
  bool quiet = false;
  // Not on the command line: every GPU of the run starts before the scan
  // does, so tests see several GPUs share even a small input (normally a GPU
  // joins when it is ready, and one ready after the input is used up does no work).
  bool gpus_start_together = false;
  // Not on the command line: bytes the CPU executor's thread tables may hold
  // before they are folded into the result (0: thread_tables_budget of the
  // host's memory). Tests make it small so that folds happen mid-scan.
  uint64_t thread_tables_budget = 0;
  // Tests: holistic aggregates on the CPU group by their arguments too and
  // regroup after the scan, as on the GPU, instead of listing rows.
  bool holistic_by_groups = false;
  // Not on the command line: groups per run of the aggregate result as it is
  // finalized and written (0: kResultRunRows). Tests make it tiny.
  uint64_t result_run_rows = 0;
};

}  // namespace warpcsv
