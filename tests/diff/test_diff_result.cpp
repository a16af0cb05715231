// The aggregate result in runs: whatever the groups per run and the threads,
// a run writes the same bytes, the same error and exit code, with keys of
// every type ordered as the CPU executor orders them.
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch.hpp"
#include "diff/key_types_csv.hpp"
#include "result/spill_file.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

struct Outcome {
  int code = 0;
  std::string out, error;
  std::string profile;  // stderr, with a memory limit
};

Outcome run_with_runs(const TempDir& dir, const std::string& pipeline, const std::string& input, uint64_t run_rows,
                      int threads, OutputFormat format = OutputFormat::Csv, uint64_t thread_tables_budget = 0,
                      uint64_t memory_limit = 0) {
  Options opts;
  opts.pipeline = pipeline;
  opts.files = {input};
  opts.threads = threads;
  opts.device = "cpu";
  opts.quiet = true;
  opts.format = format;
  opts.result_run_rows = run_rows;
  opts.thread_tables_budget = thread_tables_budget;
  if (thread_tables_budget) opts.chunk_size = 4096;  // many windows, a fold after each
  // A tiny memory limit: the folded groups spill after every few windows, and --profile says so.
  opts.memory_limit = memory_limit;
  opts.profile = memory_limit != 0;
  if (memory_limit) opts.chunk_size = 4096;
  opts.output_path = dir.file("out.txt");
  std::remove(opts.output_path.c_str());
  Outcome r;
  {
    CaptureStderr quiet(memory_limit ? dir.file("stderr.txt") : "/dev/null");
    r.code = testing::run_to_exit(opts, r.error);
  }
  r.out = read_file(opts.output_path);
  if (memory_limit) r.profile = read_file(dir.file("stderr.txt"));
  return r;
}

// $TMPDIR (where spill files go) set to `path` while it lives, then as it was.
class ScopedTmpdir {
 public:
  explicit ScopedTmpdir(const std::string& path) {
    const char* old = std::getenv("TMPDIR");
    had_ = old != nullptr;
    if (old) saved_ = old;
    ::setenv("TMPDIR", path.c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (had_) ::setenv("TMPDIR", saved_.c_str(), 1);
    else ::unsetenv("TMPDIR");
  }
  ScopedTmpdir(const ScopedTmpdir&) = delete;
  ScopedTmpdir& operator=(const ScopedTmpdir&) = delete;

 private:
  bool had_ = false;
  std::string saved_;
};

// The names in a directory, "." and ".." left out.
std::vector<std::string> read_file_names(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(path.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

const std::vector<std::string> kResultPipelines = {
    "groupby s | agg count(), sum(v)",
    "groupby i, s | agg count() as n, min(v), max(v)",
    "groupby f | agg count(), mean(v)",
    "groupby dt, ts, b | agg sum(v)",
    "groupby d, s, f | agg count() as n | filter n > 1",
    "groupby b, i * 1.0 * 1000000000000000000 | agg count()",  // keys past 64 bits
    "groupby s, 123456789012345678901234567890 as big, i + 1 as j, dt | agg count()",  // an int key past 64 bits
    "groupby s, i | agg sum(v) as t | sort t desc, s | limit 9",
    "groupby s | agg median(v), count_distinct(i), sum(v)",
    "groupby s | agg count() | limit 3",
    "groupby s, i | agg sum(v) as t | groupby s | agg median(t), sum(t), count() as n | filter n > 1",  // a later agg
    "groupby upper(s) | agg sum(v * 1000000000000000000000000000000000000)",  // overflows in some group
};

}  // namespace

TEST_CASE("result: runs of any size and any threads write the same bytes") {
  TempDir dir;
  for (int distinct : {5, 300, 5000}) {
    const std::string input = dir.file("keys" + std::to_string(distinct) + ".csv");
    write_file(input, key_types_csv(static_cast<uint64_t>(distinct), 6000, distinct));
    for (const std::string& p : kResultPipelines) {
      const Outcome base = run_with_runs(dir, p, input, 0, 1);
      INFO("pipeline: " << p << ", distinct " << distinct << "\nerror: " << base.error);
      if (p.find("1000000000000000000000000000000000000") == std::string::npos) REQUIRE(base.code == 0);
      else CHECK(base.code == kExitInput);
      for (uint64_t run_rows : {1, 2, 7, 1000})
        for (int threads : {1, 3}) {
          const Outcome r = run_with_runs(dir, p, input, run_rows, threads);
          INFO("run rows " << run_rows << ", threads " << threads);
          CHECK(r.code == base.code);
          CHECK(r.error == base.error);
          CHECK(r.out == base.out);
        }
    }
  }
}

// Groups by keys fold part by part and are written from the parts; with a
// holistic aggregate the same groups take the one-table way. Both must give
// the same rows, on any threads, with the thread tables folded early.
TEST_CASE("result: groups folded in parts write what one table writes") {
  TempDir dir;
  const std::string input = dir.file("keys.csv");
  write_file(input, key_types_csv(11, 20000, 3000));
  const std::string parts = "groupby s, i, f | agg count() as n, sum(v) as t, min(v) as lo";
  const std::string one_table = "groupby s, i, f | agg count() as n, sum(v) as t, min(v) as lo, median(v) | select s, i, f, n, t, lo";
  const Outcome want = run_with_runs(dir, one_table, input, 0, 1);
  REQUIRE(want.code == 0);
  REQUIRE(std::count(want.out.begin(), want.out.end(), '\n') > 1000);
  for (int threads : {1, 2, 4})
    for (uint64_t budget : {uint64_t{0}, uint64_t{1}}) {
      INFO("threads " << threads << ", thread tables budget " << budget);
      const Outcome got = run_with_runs(dir, parts, input, 0, threads, OutputFormat::Csv, budget);
      CHECK(got.code == 0);
      CHECK(got.out == want.out);
    }
}

TEST_CASE("result: aligned formats hold the runs' rows until the end") {
  TempDir dir;
  const std::string input = dir.file("keys.csv");
  write_file(input, key_types_csv(7, 3000, 400));
  for (OutputFormat f : {OutputFormat::Table, OutputFormat::Markdown, OutputFormat::Json}) {
    const Outcome base = run_with_runs(dir, "groupby s, f | agg count()", input, 0, 2, f);
    REQUIRE(base.code == 0);
    CHECK(run_with_runs(dir, "groupby s, f | agg count()", input, 3, 2, f).out == base.out);
  }
}

// Groups past a memory limit go to temporary files, part by part, and come
// back aggregated, sorted and merged: the bytes, errors and exit codes of a
// run without a limit, for one group or many, long string keys and string
// states included, and no file is left in $TMPDIR.
TEST_CASE("result: groups spilled past a tiny memory limit write what an unlimited run writes") {
  TempDir dir;
  const std::string spill_dir = dir.file("spill");
  REQUIRE(std::system(("mkdir -p '" + spill_dir + "'").c_str()) == 0);
  const ScopedTmpdir tmpdir(spill_dir);
  const std::vector<std::string> pipelines = {
      "groupby s, i | agg count() as n, min(s) as lo, max(s) as hi, first(s) as fs, last(v) as lv, sum(v)",
      "groupby d, f, dt, ts, b | agg mean(v), var(v), count()",
      "groupby s | agg count() as n | filter n > 1 | limit 50",
      "groupby upper(s), i | agg sum(v * 1000000000000000000000000000000000000)",  // overflows in some group
      "distinct s, i + 0 as j",  // groups by their first rows: spilled, the sort stage orders them
  };
  for (const auto& [distinct, rows] : {std::pair{1, 2000}, {40, 5000}, {3000, 20000}, {30000, 60000}}) {
    const std::string input = dir.file("keys.csv");
    write_file(input, key_types_csv(static_cast<uint64_t>(distinct) + 17, static_cast<size_t>(rows), distinct));
    for (const std::string& p : pipelines) {
      const Outcome want = run_with_runs(dir, p, input, 0, 2);
      INFO("pipeline: " << p << ", distinct " << distinct << "\nerror: " << want.error);
      for (int threads : {1, 3}) {
        // Spill files compressed on one run, not on the other.
        set_spill_compression(threads == 1 ? SpillCompression::Never : SpillCompression::Always);
        const Outcome got = run_with_runs(dir, p, input, 7, threads, OutputFormat::Csv, 0, 64 << 10);
        set_spill_compression(SpillCompression::Auto);
        INFO("threads " << threads << "\nprofile: " << got.profile);
        CHECK(got.code == want.code);
        CHECK(got.error == want.error);
        CHECK(got.out == want.out);
        if (distinct >= 3000 && got.code == 0) CHECK(got.profile.find("result: spill (") != std::string::npos);
        CHECK(read_file_names(spill_dir).empty());
      }
    }
  }
}

TEST_CASE("result: holistic lists spilled past a tiny memory limit write what an unlimited run writes") {
  TempDir dir;
  const std::string spill_dir = dir.file("spill");
  REQUIRE(std::system(("mkdir -p '" + spill_dir + "'").c_str()) == 0);
  const ScopedTmpdir tmpdir(spill_dir);
  const std::vector<std::string> pipelines = {
      "groupby s | agg median(v), count_distinct(i), quantile(d, 0.9), sum(v)",
      "groupby i, b | agg median(s) as ms, count_distinct(s), quantile(f, 0.25), median(dt), median(ts)",
      // one group of every row; ints past 64 bits in some runs and not in others
      "agg median(v), count_distinct(s), count_distinct(f), quantile(i * 1.0 * 1000000000000000000, 0.5)",
      "groupby dt | top 2 by v desc | select dt, v",
      "groupby s | agg count_distinct(v) as n | filter n > 3 | sort n desc, s | limit 20",
  };
  for (const auto& [distinct, rows] : {std::pair{40, 5000}, {3000, 20000}, {20000, 40000}}) {
    const std::string input = dir.file("keys.csv");
    write_file(input, key_types_csv(static_cast<uint64_t>(distinct) + 5, static_cast<size_t>(rows), distinct));
    for (const std::string& p : pipelines) {
      const Outcome want = run_with_runs(dir, p, input, 0, 2);
      INFO("pipeline: " << p << ", distinct " << distinct << "\nerror: " << want.error);
      REQUIRE(want.code == 0);
      for (int threads : {1, 3}) {
        set_spill_compression(threads == 1 ? SpillCompression::Never : SpillCompression::Always);
        const Outcome got = run_with_runs(dir, p, input, 7, threads, OutputFormat::Csv, 0, 64 << 10);
        set_spill_compression(SpillCompression::Auto);
        INFO("threads " << threads << "\nprofile: " << got.profile);
        CHECK(got.code == 0);
        CHECK(got.error.empty());
        CHECK(got.out == want.out);
        // A top keeps a few values a group: its lists outgrow the limit only with many groups.
        if (distinct >= (p.find("top") == std::string::npos ? 3000 : 20000))
          CHECK(got.profile.find("result: spill holistic lists (") != std::string::npos);
        CHECK(read_file_names(spill_dir).empty());
      }
    }
  }
}

// A file of one default window: under a small --memory-limit the windows
// shrink so that the thread tables fold (and spill) within the scan, not
// only after the whole file's groups are in them.
TEST_CASE("result: a small memory limit bounds the thread tables within one file's window") {
  TempDir dir;
  const std::string input = dir.file("keys.csv");
  write_file(input, key_types_csv(91, 120000, 100000));
  const std::string p = "groupby s, i | agg count() as n, sum(v), max(s) as hi";
  const Outcome want = run_with_runs(dir, p, input, 0, 2);
  REQUIRE(want.code == 0);
  Options opts;
  opts.pipeline = p;
  opts.files = {input};
  opts.threads = 2;
  opts.device = "cpu";
  opts.quiet = true;
  opts.profile = true;
  opts.memory_limit = 8 << 20;  // thread tables fold past 2 MiB
  opts.output_path = dir.file("limited.txt");
  std::string error;
  {
    CaptureStderr profile(dir.file("profile.txt"));
    REQUIRE(testing::run_to_exit(opts, error) == 0);
  }
  const std::string said = read_file(dir.file("profile.txt"));
  INFO(said);
  CHECK(read_file(opts.output_path) == want.out);
  CHECK(said.find("more times to bound memory") != std::string::npos);
}

TEST_CASE("result: a spill directory that cannot be written is a resource error naming it") {
  TempDir dir;
  const std::string input = dir.file("keys.csv");
  write_file(input, key_types_csv(5, 20000, 5000));
  const Outcome got = [&] {
    const ScopedTmpdir tmpdir(dir.file("missing/dir"));
    return run_with_runs(dir, "groupby s, i | agg count()", input, 0, 2, OutputFormat::Csv, 0, 64 << 10);
  }();
  CHECK(got.code == kExitResource);
  CHECK(got.error.find("missing/dir") != std::string::npos);
  CHECK(got.error.find("set TMPDIR to a directory with room, or raise --memory-limit") != std::string::npos);
}

// A later agg over a first agg's groups of one row each (keyed by a row
// number first, so its rows come in input order) sees the input's own rows:
// it must write what the scan's agg writes over the file, the same groups in
// the same order with the same values, first() and last() included.
TEST_CASE("result: an agg over a first agg's one-row groups writes what the scan's agg writes") {
  TempDir dir;
  const std::string text = key_types_csv(23, 4000, 300);
  std::string numbered;
  for (size_t at = 0, row = 0; at < text.size(); ++row) {
    const size_t end = text.find('\n', at) + 1;
    numbered += (row ? std::to_string(row) : "id") + "," + text.substr(at, end - at);
    at = end;
  }
  const std::string input = dir.file("numbered.csv");
  write_file(input, numbered);
  const std::string one_row_groups = "groupby id, s, i, d, f, dt, ts, b, v | agg count() as c | ";
  const std::string aggs =
      "agg count() as n, count(s), sum(v) as sv, min(v) as lo, max(s) as hs, first(s) as fs, last(dt) as ld, "
      "mean(v), var(v), sum(d), max(i) - min(v) as span, median(v), median(s), quantile(f, 0.3), quantile(d, 0.9), "
      "count_distinct(i), count_distinct(s), min(ts), max(b)";
  for (const std::string keys : {"", "s", "i", "d", "f", "dt, ts", "b, s", "v % 7 as m, s"}) {
    const std::string scan = (keys.empty() ? "" : "groupby " + keys + " | ") + aggs;
    const Outcome want = run_with_runs(dir, scan, input, 0, 2);
    INFO("keys: " << keys << "\nerror: " << want.error);
    REQUIRE(want.code == 0);
    CHECK(std::count(want.out.begin(), want.out.end(), '\n') > 1);
    for (int threads : {1, 3}) {
      const Outcome got = run_with_runs(dir, one_row_groups + scan, input, 5, threads);
      INFO("threads " << threads);
      CHECK(got.code == 0);
      CHECK(got.out == want.out);
    }
  }
}

// Stages after the agg that take one row at a time (filter, select, dropna,
// the rows of a top) run on the threads that finalize and format the runs;
// a limit after them makes them take the rows one by one on one thread, as
// before. Both must write the same bytes and fail with the same error.
TEST_CASE("result: row-local stages after the agg write what the stages row by row write") {
  TempDir dir;
  const std::string input = dir.file("keys.csv");
  write_file(input, key_types_csv(31, 6000, 400));
  struct Case {
    std::string pipeline;
    bool fails;  // in some group's row
  };
  const std::vector<Case> cases = {
      {"groupby s, i | agg sum(v) as t, count() as n | filter n > 1", false},
      {"groupby s, i | agg sum(v) as t, count() as n | select s, t * 2 as t2, upper(s) as u, n | dropna t2", false},
      {"groupby s | agg sum(v) as t | filter t % 3 = 0 | select s || '-' || s as ss, t | filter ss > 'a'", false},
      {"groupby s | top 2 by v desc | select s, v * 10 as v10", false},
      {"groupby d | top 3 by f | filter f > 0 | select d, f", false},
      // A later stage's strings must not overwrite an earlier stage's that the row still holds.
      {"groupby s | agg count() as n | select upper(s) as u, n | select lower(u) as l, u, u || 'x' as ux, n", false},
      {"groupby s, i | agg sum(v) as t | select s, t * 1000000000000000000000000000000000000 as big", true},
      {"groupby s | agg min(dt) as first_day | select s, first_day, cast(s as int) as n", true},
      {"groupby s, i | agg sum(v) as t | filter t * 1000000000000000000000000000000000000 > 0", true},
  };
  for (const Case& c : cases) {
    const std::string& p = c.pipeline;
    const Outcome rowwise = run_with_runs(dir, p + " | limit 1000000000", input, 0, 1);
    INFO("pipeline: " << p << "\nerror: " << rowwise.error);
    if (c.fails) {
      CHECK(rowwise.code == kExitInput);
    } else {
      REQUIRE(rowwise.code == 0);
      CHECK(std::count(rowwise.out.begin(), rowwise.out.end(), '\n') > 10);
    }
    for (uint64_t run_rows : {1, 7, 0})
      for (int threads : {1, 3}) {
        const Outcome got = run_with_runs(dir, p, input, run_rows, threads);
        INFO("run rows " << run_rows << ", threads " << threads);
        CHECK(got.code == rowwise.code);
        CHECK(got.error == rowwise.error);
        CHECK(got.out == rowwise.out);
      }
  }
}
