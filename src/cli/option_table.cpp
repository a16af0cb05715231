// The command line's one written form (option_table.hpp): options in --help's order.
#include "cli/option_table.hpp"

#include <stdexcept>

namespace warpcsv::cli {

const char* const kSynopsis = "warpcsv [OPTIONS] PIPELINE [FILE...]";
const char* const kDescription = "filter / group-by / aggregate pipelines over CSV files";

const std::vector<OptionSpec>& option_table() {
  using C = Complete;
  static const std::vector<OptionSpec> kOptions = {
      // Input
      {'d', "delimiter", "C",
       "field separator (default ','; '\\t' or 'tab' for a tab; up to\n"
       "4 bytes such as ', ' or '||'; 'auto' picks , ; tab or | from the first lines)",
       "Input", C::Choices, {",", ";", "tab", "|", "auto"}},
      {0, "no-header", nullptr, "first line is data; columns are named c1..cN", "Input", C::None, {}},
      {0, "names", "a,b,...", "column names (with --no-header) or new names for the header", "Input",
       C::None, {}},
      {0, "quote", "C", "quote character (default '\"'; doubled inside quotes = literal)", "Input",
       C::None, {}},
      {0, "escape", "C", "escape character inside quotes (default: none)", "Input", C::None, {}},
      {0, "null", "S", "extra token read as null (repeatable); empty is always null", "Input",
       C::None, {}, /*repeatable=*/true},
      {0, "schema", "SPEC",
       "name:type,... overrides inference; every value of\n"
       "those columns is checked, used or not\n"
       "(int float decimal string bool date timestamp)",
       "Input", C::None, {}},
      {0, "comment", "C", "skip lines that start with C", "Input", C::None, {}},
      {0, "skip", "N", "skip N lines before the header", "Input", C::None, {}},
      {0, "bad-rows", "MODE",
       "fail (default: exit 3 at the first bad row), skip (count on stderr)\n"
       "or pad (rows short of fields get nulls; other bad rows are skipped)",
       "Input", C::Choices, {"fail", "skip", "pad"}},
      {0, "rejects", "FILE", "with --bad-rows skip or pad: write each rejected or padded line with file:line", "Input",
       C::File, {}},
      // Output
      {'f', "format", "F", "csv (default), tsv, json, ndjson, table, markdown", "Output", C::Choices,
       {"csv", "tsv", "json", "ndjson", "table", "markdown"}},
      {'o', "output", "FILE", "write the result to FILE instead of stdout\n(replaced only when the run succeeds)",
       "Output", C::File, {}},
      {0, "no-output-header", nullptr, "leave out the header row (csv, tsv, table, markdown)", "Output", C::None,
       {}},
      // Execution
      {0, "device", "D",
       "auto (default), cpu, gpu (GPU 0 below 32 GiB of input, else all)\n"
       "or a list of GPUs such as 0,1",
       "Execution", C::Choices, {"auto", "cpu", "gpu"}},
      {0, "chunk-size", "N", "bytes per partition, e.g. 64M (results never depend on it)",
       "Execution", C::None, {}},
      {0, "threads", "N", "host threads (default: all cores)", "Execution", C::None, {}},
      {0, "memory-limit", "SIZE",
       "host memory for groups and buffers, e.g. 4G (default: the machine's or\n"
       "the cgroup's); groups past half of it spill to files in $TMPDIR",
       "Execution", C::None, {}},
      {0, "gpu-memory-limit", "SIZE",
       "GPU memory for each GPU's groups, e.g. 8G (default: what the GPU has\n"
       "free); past it the groups spill to the host, then to files in $TMPDIR",
       "Execution", C::None, {}},
      {0, "explain", nullptr, "print the plan and the partitioning, run nothing", "Execution",
       C::None, {}},
      {0, "profile", nullptr, "per-stage timing and memory summary on stderr after the run",
       "Execution", C::None, {}},
      {0, "trace", "FILE", "write a Chrome/Perfetto trace of the run (JSON) to FILE", "Execution",
       C::File, {}},
      {0, "progress", nullptr, "progress bar on stderr; default: only when stderr is a terminal",
       "Execution", C::None, {}},
      {0, "no-progress", nullptr, "no progress bar, also when stderr is a terminal", "Execution", C::None, {}, false, /*joins_previous=*/true},
      {'q', "quiet", nullptr, "no notices on stderr (errors are still printed)", "Execution",
       C::None, {}},
      {'V', "version", nullptr, "print the version (and whether zstd input is built in)",
       "Execution", C::None, {}},
      {'h', "help", nullptr, "print this help and exit", "Execution", C::None, {}},
  };
  return kOptions;
}

// The stages of src/spec/parser.cpp (a unit test compares the names with its message).
const std::vector<StageSpec>& stage_table() {
  static const std::vector<StageSpec> kStages = {
      {"filter", "EXPR",
       "keep rows where EXPR is true; after agg it keeps groups (like SQL HAVING)", "where"},
      {"groupby", "EXPR, ...", "group keys; must be followed by agg or top", "group by"},
      {"agg", "EXPR [as NAME], ...",
       "aggregates per group, or over all rows without groupby", ""},
      {"select", "EXPR [as NAME], ...", "output rows (no aggregation), in input order", ""},
      {"sort", "EXPR [asc|desc], ...", "order the output (nulls last either way; stable)", ""},
      {"limit", "N", "the first N output rows", ""},
      {"top", "N by EXPR [asc|desc], ...",
       "after groupby: the N rows of each group that sort first (whole rows); else the N first rows", ""},
      {"distinct", "[EXPR [as NAME], ...]",
       "unique rows (of the listed expressions, or of all columns), in first-occurrence order", ""},
      {"join", "'FILE' [delimiter D] on KEY [= COL], ... [as NAME]",
       "add the columns of FILE's rows whose COL equals KEY (a row per match; `left join` keeps rows without one)",
       ""},
      {"dropna", "[COL, ...]",
       "drop rows with a null in the named columns (default: all columns referenced)", ""},
      {"assert", "EXPR",
       "every row must satisfy EXPR; the failing rows go to stderr and the exit code is 1", ""},
  };
  return kStages;
}

const std::vector<OperandSpec>& operand_table() {
  static const std::vector<OperandSpec> kOperands = {
      {"PIPELINE",
       "stages joined by '|' in one argument, e.g.\n"
       "'filter amount > 0 | groupby region | agg sum(amount) as total'"},
      {"FILE",
       "CSV files read as one table (same header); none or '-' reads stdin.\n"
       "gzip- and zstd-compressed files are recognised and decompressed."},
  };
  return kOperands;
}

const std::vector<ExampleSpec>& example_table() {
  static const std::vector<ExampleSpec> kExamples = {
      {"top 10 customers by revenue, as an aligned table",
       "warpcsv -f table 'filter amount > 0 | groupby customer | agg sum(amount) as total\n"
       "                  | sort total desc | limit 10' sales.csv"},
      {"rows per day from a gzip-compressed, tab-separated log on stdin",
       "zcat access.tsv.gz | warpcsv -d '\\t' 'groupby day | agg count() as hits'"},
      {"cron job (crontab line): nightly totals to a file, errors mailed by cron",
       "15 2 * * * cd /srv/data && warpcsv -q -o daily.csv 'groupby region | agg sum(amount)' "
       "sales.csv.gz"},
      {"CI data check: fails the job (exit 1) and prints the offending rows",
       "warpcsv 'assert amount >= 0 and customer is not null' data/sales.csv"},
  };
  return kExamples;
}

const std::vector<ExitCodeSpec>& exit_code_table() {
  static const std::vector<ExitCodeSpec> kCodes = {
      {0, "ok (also when the reader of stdout went away)",
       "success, also when the reader of standard output went away (| head)"},
      {1, "assert failed", "an assert stage failed; the failing rows are on standard error"},
      {2, "usage error",
       "usage error: a bad option, a pipeline syntax error, an unknown column, a type error"},
      {3, "input error",
       "input error: a missing or unreadable file, a corrupt or truncated gzip or zstd stream, "
       "malformed CSV under --bad-rows fail, a header mismatch, a value that does not fit a "
       "--schema type, an int result past 64 bits, output that cannot be written"},
      {4, "resource error",
       "resource error: out of memory, a device failure, --device gpu without a usable GPU; "
       "also internal errors"},
      {130, "interrupted", "interrupted (SIGINT, Ctrl-C); no result is written after it"},
      {143, "SIGTERM", "terminated (SIGTERM); as 130"},
      {129, "SIGHUP", "hung up (SIGHUP); as 130"},
  };
  return kCodes;
}

const OptionSpec* find_option(const std::string& long_name) {
  for (const auto& o : option_table())
    if (long_name == o.long_name) return &o;
  return nullptr;
}

const OptionSpec* find_short_option(char short_name) {
  if (short_name == 0) return nullptr;
  for (const auto& o : option_table())
    if (o.short_name == short_name) return &o;
  return nullptr;
}

std::string cli11_name(const std::string& long_name) {
  const OptionSpec* o = find_option(long_name);
  if (!o) throw std::logic_error("option --" + long_name + " is not in src/cli/option_table.cpp");
  std::string name;
  if (o->short_name) name = std::string("-") + o->short_name + ",";
  return name + "--" + o->long_name;
}

namespace {

// --help's option column: the text starts here.
constexpr size_t kHelpColumn = 24;

std::string left_column(const OptionSpec& o) {
  std::string s = o.short_name ? std::string("  -") + o.short_name + ", " : std::string(6, ' ');
  s += std::string("--") + o.long_name;
  if (o.value) s += std::string(" ") + o.value;
  return s;
}

// Each line of `text` (lines joined by '\n'), the first after `first`, the others after `indent`.
std::string indent_lines(const std::string& first, const std::string& indent, const std::string& text) {
  std::string out;
  size_t start = 0;
  for (bool is_first = true;; is_first = false) {
    size_t nl = text.find('\n', start);
    out += (is_first ? first : indent) +
           text.substr(start, nl == std::string::npos ? std::string::npos : nl - start) + "\n";
    if (nl == std::string::npos) return out;
    start = nl + 1;
  }
}

}  // namespace

std::string operands_help() {
  std::string out;
  for (const auto& o : operand_table()) {
    std::string name = std::string("  ") + o.name;
    out += indent_lines(name + std::string(13 - name.size(), ' '), std::string(13, ' '), o.help);
  }
  return out;
}

std::string options_help() {
  const auto& table = option_table();
  std::string out;
  const char* section = nullptr;
  for (size_t i = 0; i < table.size(); ++i) {
    const OptionSpec& o = table[i];
    if (o.joins_previous) continue;
    if (!section || std::string(section) != o.section) {
      if (section) out += "\n";
      section = o.section;
      out += std::string(section) + ":\n";
    }
    std::string left = left_column(o);
    for (size_t j = i + 1; j < table.size() && table[j].joins_previous; ++j)
      left += std::string(", --") + table[j].long_name;
    const std::string indent(kHelpColumn, ' ');
    if (left.size() + 2 > kHelpColumn)  // too wide: the text starts on the next line
      out += left + "\n" + indent_lines(indent, indent, o.help);
    else
      out += indent_lines(left + std::string(kHelpColumn - left.size(), ' '), indent, o.help);
  }
  return out;
}

std::string examples_help() {
  std::string out;
  for (const auto& e : example_table()) {
    out += std::string("  # ") + e.comment + "\n";
    out += indent_lines("  ", "  ", e.command);
    out += "\n";
  }
  return out;
}

std::string exit_codes_help() {
  const auto& codes = exit_code_table();
  std::string out, line = "Exit codes:";
  for (size_t i = 0; i < codes.size(); ++i) {
    std::string item = std::to_string(codes[i].code) + " " + codes[i].brief +
                       (i + 1 < codes.size() ? "," : ".");
    if (line.size() + 1 + item.size() > 80) {
      out += line + "\n";
      line = item;
    } else {
      line += " " + item;
    }
  }
  return out + line + "\n";
}

}  // namespace warpcsv::cli
