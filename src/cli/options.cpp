// Command-line parsing with CLI11. Long option names are the contract
// (README.md, "Command line"); every rejection is a UsageError that names the option,
// shows what was found and says how to fix it.
#include "cli/options.hpp"

#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

#include "cli/option_table.hpp"
#include "cli/version.hpp"
#include "spec/bind_util.hpp"
#include "warpcsv/core/dialect.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv {
namespace {

const char* const kHint = "run 'warpcsv --help' for the options and examples";

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
  // Every option of the table (option_table.cpp), for the check and its suggestion.
  std::vector<std::string> longs;
  std::string shorts;
  for (const auto& o : cli::option_table()) {
    longs.push_back(o.long_name);
    if (o.short_name) shorts += std::string(shorts.empty() ? "-" : " -") + o.short_name;
  }
  // The values each option was given: one that takes one value may come once
  // (--null is repeated on purpose).
  std::map<std::string, std::vector<std::string>> given;
  auto value_at = [&](int j) { return j < argc ? std::string(argv[j]) : std::string(); };
  auto check_repeats = [&] {
    for (const auto& [name, values] : given)
      if (!cli::find_option(name)->repeatable && values.size() > 1)
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
      const cli::OptionSpec* known = cli::find_option(name);
      if (!known) {
        std::string s = closest(name, longs);
        usage("unknown option '" + a.substr(0, name.size() + 2) + "'" +
              (s.empty() ? "" : "; did you mean '--" + s + "'?"));
      }
      if (known->value) {
        const size_t eq = a.find('=');
        given[name].push_back(eq == std::string::npos ? value_at(++i) : a.substr(eq + 1));
      }
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(a[1]))) continue;  // a negative number
    // A cluster of short flags, possibly ending in one that takes a value.
    for (size_t k = 1; k < a.size(); ++k) {
      char c = a[k];
      const cli::OptionSpec* known = cli::find_short_option(c);
      if (!known)
        usage(std::string("unknown option '-") + c + "' in '" + a + "'; short options are " + shorts);
      if (known->value) {
        // -f json or -fjson
        given[known->long_name].push_back(k + 1 == a.size() ? value_at(++i) : a.substr(k + 1));
        break;
      }
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

// The values an option takes, as option_table.cpp lists them (--format's, --bad-rows').
std::vector<std::string> choices_of(const char* long_name) {
  const auto& c = cli::find_option(long_name)->choices;
  return {c.begin(), c.end()};
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

// `warpcsv data.csv 'PIPELINE'`: the first operand is a file and not a
// pipeline, or the second is a pipeline and not a file. Says the order.
void check_pipeline_first(const Options& o) {
  auto exists = [](const std::string& path) {
    struct stat st {};
    return path == "-" || ::stat(path.c_str(), &st) == 0;
  };
  auto parses = [](const std::string& text) {
    try {
      check_pipeline_syntax(text);
      return true;
    } catch (const UsageError&) {
      return false;
    }
  };
  if (!exists(o.pipeline)) return;
  const bool swapped = !o.files.empty() && !exists(o.files[0]) && parses(o.files[0]);
  if (!swapped && parses(o.pipeline)) return;
  using spec::shell_word;
  std::string fixed = "warpcsv " + (swapped ? shell_word(o.files[0]) : std::string("'PIPELINE'")) + " " +
                      shell_word(o.pipeline);
  for (size_t i = swapped ? 1 : 0; i < o.files.size(); ++i) fixed += " " + shell_word(o.files[i]);
  usage("'" + o.pipeline + "' is " + (o.pipeline == "-" ? "standard input" : "a file") +
        ", not a pipeline; the pipeline comes first: " + fixed);
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

uint64_t parse_byte_size(const std::string& text, const std::string& option, uint64_t least,
                         const char* least_text) {
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
  if (shift && n > (std::numeric_limits<uint64_t>::max() >> shift)) return fail("too large");
  if ((n << shift) < least) return fail(std::string("must be at least ") + least_text);
  return n << shift;
}

// "warpcsv 0.1.0" and the optional input formats built in ("zstd: yes" or "zstd: no").
std::string version_text() {
#ifdef WARPCSV_HAVE_ZSTD
  const char* zstd = "yes";
#else
  const char* zstd = "no";
#endif
  return std::string("warpcsv ") + version_string() + "\nzstd: " + zstd;
}

// The options, examples and exit codes come from option_table.cpp, as do the man page's.
std::string help_text() {
  return std::string("warpcsv ") + version_string() + " - " + cli::kDescription +
         "\n\nUsage: " + cli::kSynopsis + "\n\n" + cli::operands_help() + "\n" + cli::options_help() +
         "\nExamples:\n" + cli::examples_help() + cli::exit_codes_help();
}

Options parse_options(int argc, char** argv) {
  check_unknown_options(argc, argv);

  Options o;
  std::string delimiter, quote, escape, comment, names, bad_rows = "fail", format = "csv";
  std::string chunk_size, skip, threads, memory_limit, gpu_memory_limit;
  bool no_header = false, no_output_header = false, progress = false, no_progress = false;

  CLI::App app{"warpcsv", "warpcsv"};
  // The names come from option_table.cpp (cli11_name throws for one that is not there).
  using cli::cli11_name;
  app.set_help_flag(cli11_name("help"));
  app.set_version_flag(cli11_name("version"), version_text());
  app.add_option("pipeline", o.pipeline);
  app.add_option("files", o.files);
  app.add_option(cli11_name("delimiter"), delimiter);
  app.add_flag(cli11_name("no-header"), no_header);
  app.add_option(cli11_name("names"), names);
  app.add_option(cli11_name("quote"), quote);
  // One token per --null; repeat the option for more (never swallow the files).
  app.add_option(cli11_name("null"), o.dialect.null_tokens)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option(cli11_name("schema"), o.schema);
  app.add_option(cli11_name("escape"), escape);
  app.add_option(cli11_name("comment"), comment);
  app.add_option(cli11_name("skip"), skip);
  app.add_option(cli11_name("bad-rows"), bad_rows);
  app.add_option(cli11_name("rejects"), o.rejects_path);
  app.add_option(cli11_name("format"), format);
  app.add_option(cli11_name("output"), o.output_path);
  app.add_flag(cli11_name("no-output-header"), no_output_header);
  app.add_option(cli11_name("device"), o.device);
  app.add_option(cli11_name("chunk-size"), chunk_size);
  app.add_option(cli11_name("threads"), threads);
  app.add_option(cli11_name("memory-limit"), memory_limit);
  app.add_option(cli11_name("gpu-memory-limit"), gpu_memory_limit);
  app.add_flag(cli11_name("explain"), o.explain);
  app.add_flag(cli11_name("profile"), o.profile);
  app.add_option(cli11_name("trace"), o.trace_path);
  app.add_flag(cli11_name("progress"), progress);
  app.add_flag(cli11_name("no-progress"), no_progress);
  app.add_flag(cli11_name("quiet"), o.quiet);
  // And every option of the table is registered here.
  for (const auto& spec : cli::option_table())
    if (!app.get_option_no_throw(std::string("--") + spec.long_name))
      throw std::logic_error(std::string("--") + spec.long_name +
                             " is in option_table.cpp but not parsed in options.cpp");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw EarlyExit{help_text()};
  } catch (const CLI::CallForAllHelp&) {
    throw EarlyExit{help_text()};
  } catch (const CLI::CallForVersion& e) {
    throw EarlyExit{std::string(e.what()) + "\n"};
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11 says "--output: 1 required TEXT missing": name the option and what it wants.
    const std::string what = e.what();
    const size_t colon = what.find(':');
    if (what.find("required") != std::string::npos && colon != std::string::npos)
      usage(what.substr(0, colon) + ": expected a value after it, found none; write " + what.substr(0, colon) +
            " VALUE");
    usage(what);
  } catch (const CLI::ParseError& e) {
    usage(e.what());
  }

  if (app.count("pipeline") == 0)
    usage("missing PIPELINE; usage: warpcsv [OPTIONS] PIPELINE [FILE...], e.g. "
          "warpcsv 'groupby region | agg count()' sales.csv");
  check_pipeline_first(o);

  if (app.count("--delimiter")) {
    // 'auto': chosen among , ; \t | from the first input's first bytes (src/io/sniff.cpp).
    o.dialect.delimiter_auto = delimiter == "auto";
    if (!o.dialect.delimiter_auto) {
      if (delimiter == "\\t" || delimiter == "tab") delimiter = "\t";
      if (delimiter.empty() || delimiter.size() > static_cast<size_t>(kMaxDelimiterBytes))
        usage("--delimiter: expected 1 to 4 bytes (such as ',', ', ', '||' or '¦'), '\\t' or 'tab' for a tab, "
              "or 'auto' to detect it; found '" + delimiter + "'");
      if (delimiter.size() > 1 && std::any_of(delimiter.begin(), delimiter.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) != 0;
          }))
        usage("--delimiter: a delimiter of several bytes cannot hold letters or digits (values hold them); "
              "found '" + delimiter + "'; give punctuation such as ', ' or '||', or 'auto' to detect it");
      o.dialect.delimiter = delimiter;
    }
  }
  if (app.count("--quote")) o.dialect.quote = parse_char_option(quote, "--quote");
  if (o.dialect.quote == '\n' || o.dialect.quote == '\r') usage("--quote: a line break cannot be the quote character");
  if (app.count("--output") && o.output_path.empty())
    usage("--output: empty file name; give a file, or leave -o out to write to stdout");
  if (app.count("--rejects") && o.rejects_path.empty()) usage("--rejects: empty file name; give a file");
  if (o.rejects_path == "-")  // standard output holds the result
    usage("--rejects: '-' would mix the rejected rows into the result on standard output; give a file, or "
          "/dev/stderr");
  if (app.count("--trace") && o.trace_path.empty()) usage("--trace: empty file name; give a file");
  if (app.count("--escape"))
    o.dialect.escape = static_cast<unsigned char>(parse_char_option(escape, "--escape"));
  if (app.count("--comment"))
    o.dialect.comment = static_cast<unsigned char>(parse_char_option(comment, "--comment"));
  const std::string& d = o.dialect.delimiter;
  const bool delimiter_given = !o.dialect.delimiter_auto;
  if (delimiter_given && (d.find('\n') != std::string::npos || d.find('\r') != std::string::npos))
    usage("--delimiter: a line break cannot separate fields");
  if (delimiter_given && d.find(o.dialect.quote) != std::string::npos)
    usage(std::string("--delimiter '") + d + "' holds the quote character '" + o.dialect.quote +
          "'; give them different characters");
  // Each special byte must have one meaning, or the dialect is ambiguous.
  auto clash = [&](int c, const char* name) {
    if (c < 0) return;
    if (c == '\n' || c == '\r') usage(std::string(name) + ": a line break cannot be " + (name + 2));
    const bool in_delimiter = delimiter_given && d.find(static_cast<char>(c)) != std::string::npos;
    if (in_delimiter || c == o.dialect.quote)
      usage(std::string(name) + " '" + static_cast<char>(c) + "' is also " +
            (c == o.dialect.quote ? "the quote character" : "in the delimiter") + "; give a different one");
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

  const std::string mode = pick(bad_rows, choices_of("bad-rows"), "--bad-rows");
  o.bad_rows = mode == "fail" ? BadRows::Fail : mode == "pad" ? BadRows::Pad : BadRows::Skip;
  if (!o.rejects_path.empty() && o.bad_rows == BadRows::Fail)
    usage("--rejects needs --bad-rows skip or pad (with the default 'fail' no row is rejected)");

  std::string f = pick(format, choices_of("format"), "--format");
  o.format = f == "csv"      ? OutputFormat::Csv
             : f == "tsv"    ? OutputFormat::Tsv
             : f == "json"   ? OutputFormat::Json
             : f == "ndjson" ? OutputFormat::Ndjson
             : f == "table"  ? OutputFormat::Table
                             : OutputFormat::Markdown;
  if (no_output_header && (o.format == OutputFormat::Json || o.format == OutputFormat::Ndjson))
    usage("--no-output-header: " + f + " output has no header row (each object names its fields); leave the "
          "option out, or use -f csv");
  o.output_header = !no_output_header;

  check_device(o.device);
  if (app.count("--chunk-size")) o.chunk_size = parse_byte_size(chunk_size, "--chunk-size");
  if (app.count("--memory-limit")) {
    // Input windows and buffers need some.
    o.memory_limit = parse_byte_size(memory_limit, "--memory-limit", 64ull << 20, "64M");
  }
  if (app.count("--gpu-memory-limit"))
    o.gpu_memory_limit = parse_byte_size(gpu_memory_limit, "--gpu-memory-limit", 1ull << 20, "1M");
  if (app.count("--threads"))
    o.threads = static_cast<int>(parse_count(threads, "--threads", 1, "a thread count"));
  if (progress) o.progress = 1;
  if (no_progress) o.progress = 0;
  return o;
}

}  // namespace warpcsv
