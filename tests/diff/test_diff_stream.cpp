// Differential tests of row output printed as written and of rows that stream out to standard
// output (exec/stream_out.hpp): at every --chunk-size and --threads, a bare column's field is
// exactly the input's, and rows streamed to stdout are the bytes held output (-o) gives, also
// when a late value widens a type after rows went out (the input is read again and checked).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "diff/random_csv.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

struct Run {
  int code = 0;
  std::string out, error;
};

// One run to stdout (rows stream out when they can) or to a file with -o (held).
Run run(const TempDir& dir, const std::string& pipeline, const std::string& input, uint64_t chunk, int threads,
        bool to_file, bool skip, OutputFormat format = OutputFormat::Csv) {
  Options opts;
  opts.pipeline = pipeline;
  opts.files = {input};
  opts.chunk_size = chunk;
  opts.threads = threads;
  opts.device = "cpu";
  opts.quiet = true;
  opts.format = format;
  if (skip) opts.bad_rows = BadRows::Skip;
  const std::string path = dir.file(to_file ? "out.csv" : "stdout.txt");
  std::remove(path.c_str());
  if (to_file) opts.output_path = path;
  Run r;
  {
    CaptureStderr err(dir.file("stderr.txt"));
    CaptureStdout out(to_file ? dir.file("unused.txt") : path);
    r.code = testing::run_to_exit(opts, r.error);
  }
  r.out = read_file(path);
  return r;
}

const std::vector<uint64_t> kChunks = {1, 3, 7, 64, 1000, 1 << 20};
const std::vector<int> kThreads = {1, 2, 4};

}  // namespace

TEST_CASE("diff: bare columns print each field as the input wrote it, at every setting") {
  for (uint64_t seed : {3u, 11u}) {
    DatasetOptions o;
    o.rows = 500;
    o.bad_rows = true;
    o.mixed_eol = true;
    const Dataset ds = make_dataset(seed, o);
    TempDir dir;
    const std::string input = dir.file("input.csv");
    write_file(input, ds.text);
    // What each good row must print: its fields, unquoted, as the input has them.
    const auto in_rows = naive_split(ds.text);
    REQUIRE(in_rows.size() == ds.records.size() + 1);
    std::vector<std::vector<std::optional<std::string>>> expect = {in_rows[0]};
    for (size_t i = 0; i < ds.records.size(); ++i)
      if (!ds.records[i].bad) expect.push_back(in_rows[i + 1]);
    for (uint64_t chunk : kChunks)
      for (int threads : kThreads)
        for (bool to_file : {false, true}) {
          INFO("seed " << seed << " chunk " << chunk << " threads " << threads << (to_file ? " -o" : " stdout"));
          const Run r = run(dir, "select *", input, chunk, threads, to_file, true);
          REQUIRE(r.code == 0);
          const auto got = naive_split(r.out);
          REQUIRE(got.size() == expect.size());
          for (size_t k = 0; k < got.size(); ++k) {
            INFO("row " << k);
            // An empty field is null either way; the rest byte for byte.
            REQUIRE(got[k].size() == expect[k].size());
            for (size_t c = 0; c < got[k].size(); ++c) CHECK(got[k][c].value_or("") == expect[k][c].value_or(""));
          }
        }
  }
}

TEST_CASE("diff: rows streamed to stdout are the bytes held output gives, at every setting") {
  DatasetOptions o;
  o.rows = 700;
  o.bad_rows = true;
  const Dataset ds = make_dataset(29, o);
  TempDir dir;
  const std::string input = dir.file("input.csv");
  write_file(input, ds.text);
  const std::vector<std::pair<std::string, OutputFormat>> questions = {
      {"select *", OutputFormat::Csv},
      {"filter v1 > 0 | select k1, v2, f, s", OutputFormat::Csv},
      {"filter v2 < 0 | select s, v2 | limit 40 | select v2, s", OutputFormat::Tsv},
      {"select k1, s, k2 * 2 as k | dropna k1 | limit 100", OutputFormat::Ndjson},
      {"select v1, v2, f, s", OutputFormat::Json},  // numbers by their type in JSON: held
  };
  for (const auto& [pipeline, format] : questions) {
    const Run held = run(dir, pipeline, input, 1ull << 30, 1, true, true, format);
    REQUIRE(held.code == 0);
    for (uint64_t chunk : kChunks)
      for (int threads : kThreads) {
        INFO(pipeline << "\nchunk " << chunk << " threads " << threads);
        const Run r = run(dir, pipeline, input, chunk, threads, false, true, format);
        CHECK(r.code == 0);
        REQUIRE(r.out == held.out);
      }
  }
}

TEST_CASE("diff: a late widening after rows streamed out reads again, checked, at every setting") {
  TempDir dir;
  std::string text = "k,v\n";
  for (int i = 0; i < 300000; ++i) text += std::to_string(i % 51) + "," + std::to_string(i) + "\n";
  text += "7.5,1\n";
  for (int i = 0; i < 1000; ++i) text += "3," + std::to_string(i) + "\n";
  write_file(dir.file("wide.csv"), text);
  for (const std::string pipeline : {"select k, v", "filter k > 49 | select v, k", "select v | limit 300500"}) {
    const Run held = run(dir, pipeline, dir.file("wide.csv"), 1ull << 30, 1, true, false);
    REQUIRE(held.code == 0);
    if (pipeline == "select k, v") CHECK(held.out == text);  // as written, the 7.5 too
    for (uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20})
      for (int threads : {1, 3}) {
        INFO(pipeline << "\nchunk " << chunk << " threads " << threads);
        const Run r = run(dir, pipeline, dir.file("wide.csv"), chunk, threads, false, false);
        CHECK(r.code == 0);
        CHECK(r.error.empty());
        REQUIRE(r.out == held.out);
      }
  }
}
