// Command-line parsing with CLI11. Long option names are the contract
// (DESIGN.md §1); every rejection is a UsageError that names the option,
// shows what was found and says how to fix it.
#include "cli/options.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <limits>

#include "warpcsv/errors.hpp"

#ifndef WARPCSV_VERSION
#define WARPCSV_VERSION "0.0.0"
#endif

namespace warpcsv {
namespace {

const char* const kHint = "run 'warpcsv --help' for the options and examples";

struct OptionName {
  const char* name;
  bool takes_value;
};

// Every long option, for the unknown-option check and its suggestion.
const OptionName kLongOptions[] = {
    {"delimiter", true}, {"no-header", false}, {"names", true},      {"quote", true},
    {"null", true},      {"schema", true},     {"escape", true},     {"comment", true},
    {"skip", true},      {"bad-rows", true},   {"rejects", true},    {"format", true},
    {"output", true},    {"device", true},     {"chunk-size", true}, {"threads", true},
    {"explain", false},  {"profile", false},   {"progress", false},  {"no-progress", false},
    {"quiet", false},    {"version", false},   {"help", false},
};
const std::string kShortFlags = "qVh";
const std::string kShortValues = "dfo";

// Levenshtein distance, for "did you mean" hints.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The closest candidate within a small distance, or "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

[[noreturn]] void usage(const std::string& msg) {
  throw UsageError(msg + "\n  hint: " + kHint);
}

// Rejects options CLI11 would only report vaguely, with a suggestion.
// Skips the value of options that take one, since values may start with '-'.
void check_unknown_options(int argc, char** argv) {
  std::vector<std::string> longs;
  for (const auto& o : kLongOptions) longs.push_back(o.name);
  // The values each option was given: one that takes one value may come once
  // (--null is repeated on purpose).
  std::map<std::string, std::vector<std::string>> given;
  auto value_at = [&](int j) { return j < argc ? std::string(argv[j]) : std::string(); };
  auto check_repeats = [&] {
    for (const auto& [name, values] : given)
      if (name != "null" && values.size() > 1)
        usage("--" + name + " given " + std::to_string(values.size()) + " times ('" + values[0] + "', then '" +
              values[1] + "'); give it once");
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return check_repeats();
    if (a.size() < 2 || a[0] != '-') continue;
    if (a[1] == '-') {
      std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos
                                                                        : a.find('=') - 2);
      const OptionName* known = nullptr;
      for (const auto& o : kLongOptions)
        if (name == o.name) known = &o;
      if (!known) {
        std::string s = closest(name, longs);
        usage("unknown option '" + a.substr(0, name.size() + 2) + "'" +
              (s.empty() ? "" : "; did you mean '--" + s + "'?"));
      }
      if (known->takes_value) {
        const size_t eq = a.find('=');
        given[name].push_back(eq == std::string::npos ? value_at(++i) : a.substr(eq + 1));
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(a[1]))) continue;  // a negative number
    // A cluster of short flags, possibly ending in one that takes a value.
    for (size_t k = 1; k < a.size(); ++k) {
      char c = a[k];
      if (kShortValues.find(c) != std::string::npos) {
        const std::string name = c == 'd' ? "delimiter" : c == 'f' ? "format" : "output";
        given[name].push_back(k + 1 == a.size() ? value_at(++i) : a.substr(k + 1));  // -f json or -fjson
        break;
      }
      if (kShortFlags.find(c) == std::string::npos)
        usage(std::string("unknown option '-") + c + "' in '" + a +
              "'; short options are -d -f -o -q -V -h");
    }
  }
  check_repeats();
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string name = trim(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                           : comma - start));
    if (name.empty())
      usage("--names: empty column name in '" + text +
            "'; expected names separated by commas, e.g. --names id,name,amount");
    if (std::find(out.begin(), out.end(), name) != out.end())
      usage("--names: column name '" + name + "' appears twice in '" + text +
            "'; give each column a distinct name");
    out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Picks `text` from `choices` or fails with the closest one as a hint.
std::string pick(const std::string& text, const std::vector<std::string>& choices,
                 const std::string& option) {
  if (std::find(choices.begin(), choices.end(), text) != choices.end()) return text;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : "|") + c;
  std::string s = closest(text, choices);
  usage(option + ": expected " + list + ", found '" + text + "'" +
        (s.empty() ? "" : "; did you mean '" + s + "'?"));
}

void check_device(const std::string& d) {
  if (d == "auto" || d == "cpu" || d == "gpu") return;
  // A list of GPU ordinals: digits separated by single commas.
  bool ok = !d.empty() && d.front() != ',' && d.back() != ',';
  for (size_t i = 0; ok && i < d.size(); ++i)
    ok = std::isdigit(static_cast<unsigned char>(d[i])) || (d[i] == ',' && d[i - 1] != ',');
  if (!ok)
    usage("--device: expected auto, cpu, gpu or a list of GPU numbers such as 0,1; found '" + d +
          "'");
}

// A whole decimal number in [min, max], or a usage error naming the option.
int64_t parse_count(const std::string& text, const std::string& option, int64_t min,
                    const char* what) {
  size_t i = 0;
  int64_t n = 0;
  bool neg = !text.empty() && text[0] == '-';
  if (neg) i = 1;
  bool ok = i < text.size();
  for (; ok && i < text.size(); ++i) {
    ok = std::isdigit(static_cast<unsigned char>(text[i])) && n < (int64_t{1} << 50);
    n = n * 10 + (text[i] - '0');
  }
  if (!ok || (neg ? -n : n) < min)
    usage(option + ": expected " + what + " >= " + std::to_string(min) + ", found '" + text +
          "'");
  return neg ? -n : n;
}

}  // namespace

char parse_char_option(const std::string& text, const std::string& option) {
  if (text == "\\t" || text == "tab" || text == "\t") return '\t';
  if (text.size() == 1) return text[0];
  if (static_cast<unsigned char>(text[0]) >= 0x80)
    usage(option + ": expected one ASCII character, found '" + text +
          "', a character of several bytes in UTF-8 (not supported); convert the file or pick another one");
  usage(option + ": expected one character (or '\\t' / 'tab' for a tab), found '" + text +
        "'");
}

uint64_t parse_byte_size(const std::string& text, const std::string& option) {
  auto fail = [&](const std::string& why) -> uint64_t {
    usage(option + ": " + why + ", found '" + text +
          "'; expected a byte count such as 100, 512K, 64M or 1G");
  };
  size_t i = 0;
  uint64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (n > (std::numeric_limits<uint64_t>::max() - d) / 10) return fail("too large");
    n = n * 10 + d;
    ++i;
  }
  if (i == 0) return fail("not a number");
  std::string unit = text.substr(i);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'B': shift = 0; break;
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return fail("unknown unit '" + text.substr(i) + "'");
    }
    std::string rest = unit.substr(1);
    if (unit[0] == 'B' ? !rest.empty() : !(rest.empty() || rest == "B" || rest == "IB"))
      return fail("unknown unit '" + text.substr(i) + "'");
  }
  if (n == 0) return fail("must be at least 1 byte");
  if (shift && n > (std::numeric_limits<uint64_t>::max() >> shift)) return fail("too large");
  return n << shift;
}

// "warpcsv 0.1.0" and the optional input formats built in ("zstd: yes" or "zstd: no").
std::string version_text() {
#ifdef WARPCSV_HAVE_ZSTD
  const char* zstd = "yes";
#else
  const char* zstd = "no";
#endif
  return std::string("warpcsv ") + WARPCSV_VERSION + "\nzstd: " + zstd;
}

std::string help_text() {
  return std::string("warpcsv ") + WARPCSV_VERSION +
         R"( - filter / group-by / aggregate pipelines over CSV files

Usage: warpcsv [OPTIONS] PIPELINE [FILE...]

  PIPELINE   stages joined by '|' in one argument, e.g.
             'filter amount > 0 | groupby region | agg sum(amount) as total'
  FILE       CSV files read as one table (same header); none or '-' reads stdin.
             gzip- and zstd-compressed files are recognised and decompressed.

Input:
  -d, --delimiter C     field separator (default ','; '\t' or 'tab' for a tab;
                        'auto' picks , ; tab or | from the first lines)
      --no-header       first line is data; columns are named c1..cN
      --names a,b,...   column names (with --no-header) or new names for the header
      --quote C         quote character (default '"'; doubled inside quotes = literal)
      --escape C        escape character inside quotes (default: none)
      --null S          extra token read as null (repeatable); empty is always null
      --schema SPEC     name:type,... overrides inference
                        (int float decimal string bool date timestamp)
      --comment C       skip lines that start with C
      --skip N          skip N lines before the header
      --bad-rows MODE   fail (default: exit 3 at the first bad row) or skip (count on stderr)
      --rejects FILE    with --bad-rows skip: write each rejected line with file:line

Output:
  -f, --format F        csv (default), tsv, json, ndjson, table, markdown
  -o, --output FILE     write the result to FILE instead of stdout

Execution:
      --device D        auto (default), cpu, gpu (GPU 0 below 32 GiB of input, else all)
                        or a list of GPUs such as 0,1
      --chunk-size N    bytes per partition, e.g. 64M (results never depend on it)
      --threads N       host threads (default: all cores)
      --explain         print the plan and the partitioning, run nothing
      --profile         per-stage timing and memory summary on stderr after the run
      --progress, --no-progress
                        progress bar on stderr; default: only when stderr is a terminal
  -q, --quiet           no notices on stderr (errors are still printed)
  -V, --version         print the version (and whether zstd input is built in)
  -h, --help            print this help and exit

Examples:
  # top 10 customers by revenue, as an aligned table
  warpcsv -f table 'filter amount > 0 | groupby customer | agg sum(amount) as total
                    | sort total desc | limit 10' sales.csv

  # rows per day from a gzip-compressed, tab-separated log on stdin
  zcat access.tsv.gz | warpcsv -d '\t' 'groupby day | agg count() as hits'

  # cron job (crontab line): nightly totals to a file, errors mailed by cron
  15 2 * * * cd /srv/data && warpcsv -q -o daily.csv 'groupby region | agg sum(amount)' sales.csv.gz

  # CI data check: fails the job (exit 1) and prints the offending rows
  warpcsv 'assert amount >= 0 and customer is not null' data/sales.csv

Exit codes: 0 ok (also when the reader of stdout went away), 1 assert failed,
2 usage error, 3 input error, 4 resource error, 130 interrupted.
)";
}

Options parse_options(int argc, char** argv) {
  check_unknown_options(argc, argv);

  Options o;
  std::string delimiter, quote, escape, comment, names, bad_rows = "fail", format = "csv";
  std::string chunk_size, skip, threads;
  bool no_header = false, progress = false, no_progress = false;

  CLI::App app{"warpcsv", "warpcsv"};
  app.set_help_flag("-h,--help");
  app.set_version_flag("-V,--version", version_text());
  app.add_option("pipeline", o.pipeline);
  app.add_option("files", o.files);
  app.add_option("-d,--delimiter", delimiter);
  app.add_flag("--no-header", no_header);
  app.add_option("--names", names);
  app.add_option("--quote", quote);
  // One token per --null; repeat the option for more (never swallow the files).
  app.add_option("--null", o.dialect.null_tokens)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--schema", o.schema);
  app.add_option("--escape", escape);
  app.add_option("--comment", comment);
  app.add_option("--skip", skip);
  app.add_option("--bad-rows", bad_rows);
  app.add_option("--rejects", o.rejects_path);
  app.add_option("-f,--format", format);
  app.add_option("-o,--output", o.output_path);
  app.add_option("--device", o.device);
  app.add_option("--chunk-size", chunk_size);
  app.add_option("--threads", threads);
  app.add_flag("--explain", o.explain);
  app.add_flag("--profile", o.profile);
  app.add_flag("--progress", progress);
  app.add_flag("--no-progress", no_progress);
  app.add_flag("-q,--quiet", o.quiet);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw EarlyExit{help_text()};
  } catch (const CLI::CallForAllHelp&) {
    throw EarlyExit{help_text()};
  } catch (const CLI::CallForVersion& e) {
    throw EarlyExit{std::string(e.what()) + "\n"};
  } catch (const CLI::ParseError& e) {
    usage(e.what());
  }

  if (app.count("pipeline") == 0)
    usage("missing PIPELINE; usage: warpcsv [OPTIONS] PIPELINE [FILE...], e.g. "
          "warpcsv 'groupby region | agg count()' sales.csv");

  if (app.count("--delimiter")) {
    // 'auto': chosen among , ; \t | from the first input's first bytes (src/io/sniff.cpp).
    o.dialect.delimiter_auto = delimiter == "auto";
    if (!o.dialect.delimiter_auto && delimiter.size() > 1 && delimiter != "\\t" &&
        delimiter != "tab" && static_cast<unsigned char>(delimiter[0]) < 0x80)
      usage("--delimiter: expected one character, '\\t' or 'tab' for a tab, or 'auto' to detect "
            "it; found '" + delimiter + "'");
    if (!o.dialect.delimiter_auto)
      o.dialect.delimiter = parse_char_option(delimiter, "--delimiter");
  }
  if (app.count("--quote")) o.dialect.quote = parse_char_option(quote, "--quote");
  if (o.dialect.quote == '\n' || o.dialect.quote == '\r') usage("--quote: a line break cannot be the quote character");
  if (app.count("--output") && o.output_path.empty())
    usage("--output: empty file name; give a file, or leave -o out to write to stdout");
  if (app.count("--rejects") && o.rejects_path.empty()) usage("--rejects: empty file name; give a file");
  if (app.count("--escape"))
    o.dialect.escape = static_cast<unsigned char>(parse_char_option(escape, "--escape"));
  if (app.count("--comment"))
    o.dialect.comment = static_cast<unsigned char>(parse_char_option(comment, "--comment"));
  char d = o.dialect.delimiter;
  if (d == '\n' || d == '\r') usage("--delimiter: a line break cannot separate fields");
  if (d == o.dialect.quote && !o.dialect.delimiter_auto)
    usage(std::string("--delimiter and --quote are both '") + d +
          "'; give them different characters");
  // Each special byte must have one meaning, or the dialect is ambiguous.
  auto clash = [&](int c, const char* name) {
    if (c < 0) return;
    if (c == '\n' || c == '\r') usage(std::string(name) + ": a line break cannot be " + (name + 2));
    if ((c == d && !o.dialect.delimiter_auto) || c == o.dialect.quote)
      usage(std::string(name) + " '" + static_cast<char>(c) + "' is also the " +
            (c == o.dialect.quote ? "quote" : "delimiter") + " character; give a different one");
  };
  if (o.dialect.escape != o.dialect.quote) clash(o.dialect.escape, "--escape");
  clash(o.dialect.comment, "--comment");
  if (o.dialect.escape >= 0 && o.dialect.escape == o.dialect.comment)
    usage("--escape and --comment are the same character; give different ones");
  if (app.count("--skip")) o.dialect.skip_lines = parse_count(skip, "--skip", 0, "a line count");
  o.dialect.header = !no_header;
  if (app.count("--names")) o.dialect.names = split_names(names);
  for (const auto& t : o.dialect.null_tokens)
    if (t.empty()) usage("--null: the empty field is always null; give a token such as NA");

  o.bad_rows = pick(bad_rows, {"fail", "skip"}, "--bad-rows") == "fail" ? BadRows::Fail
                                                                        : BadRows::Skip;
  if (!o.rejects_path.empty() && o.bad_rows != BadRows::Skip)
    usage("--rejects needs --bad-rows skip (with the default 'fail' no row is rejected)");

  static const std::vector<std::string> kFormats = {"csv",   "tsv",   "json",
                                                    "ndjson", "table", "markdown"};
  std::string f = pick(format, kFormats, "--format");
  o.format = f == "csv"      ? OutputFormat::Csv
             : f == "tsv"    ? OutputFormat::Tsv
             : f == "json"   ? OutputFormat::Json
             : f == "ndjson" ? OutputFormat::Ndjson
             : f == "table"  ? OutputFormat::Table
                             : OutputFormat::Markdown;

  check_device(o.device);
  if (app.count("--chunk-size")) o.chunk_size = parse_byte_size(chunk_size, "--chunk-size");
  if (app.count("--threads"))
    o.threads = static_cast<int>(parse_count(threads, "--threads", 1, "a thread count"));
  if (progress) o.progress = 1;
  if (no_progress) o.progress = 0;
  return o;
}

}  // namespace warpcsv
