// A CPU scan that yields at a window boundary (as it does while GPUs start)
// and is resumed from the recorded position must give exactly the rows, the
// line numbers and the aggregates of one uninterrupted scan.
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "catch.hpp"
#include "exec/group_table.hpp"
#include "exec/input.hpp"
#include "exec/scan.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

// Rows with quoted commas and line breaks, so the resume point must be a
// real row start with its line number carried over.
std::string make_csv(uint64_t seed, size_t rows, size_t bad_row) {
  std::mt19937_64 rng(seed);
  std::string s = "k,v,t\n";
  for (size_t i = 0; i < rows; ++i) {
    if (i == bad_row) {
      s += "only,two\n";
      continue;
    }
    s += "k" + std::to_string(rng() % 50) + "," + std::to_string(static_cast<int>(rng() % 2001) - 1000) + ",";
    s += rng() % 5 == 0 ? "\"a,b\nc\"\n" : "plain\n";
  }
  return s;
}

struct Scan {
  Options opts;
  InputSet in;
  Plan plan;
  ScanSettings settings;
  Progress progress{0, 0};

  Scan(const std::string& path, const std::string& pipeline) {
    opts.pipeline = pipeline;
    opts.files = {path};
    opts.chunk_size = 4096;  // windows of 1 MiB: several per file
    in = InputSet::open(opts);
    plan = build_plan(pipeline, infer_schema(in, opts));
    settings.plan = &plan;
    settings.opts = &opts;
    settings.type_from_schema.assign(in.column_names.size(), false);
    settings.chunk_size = opts.chunk_size;
    settings.threads = 3;
    settings.progress = &progress;
  }
};

std::string rows_text(const Table& t) {
  std::string out;
  for (size_t r = 0; r < t.rows(); ++r) {
    const Value* v = t.row(r);
    out += std::string(v[0].s.ptr, v[0].s.len) + "," + std::to_string(static_cast<long long>(v[1].i)) + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("resume: rows and the first bad row's line match one uninterrupted scan") {
  const std::string path = (std::filesystem::temp_directory_path() / "warpcsv_resume.csv").string();
  const size_t rows = 120000, bad = 110000;
  std::ofstream(path, std::ios::binary) << make_csv(7, rows, bad);
  const std::string pipeline = "filter v > 0 | select k, v";

  // Uninterrupted.
  Scan whole(path, pipeline);
  std::string expected;
  std::string expected_error;
  ScanStats stats;
  try {
    make_cpu_executor()->scan(whole.in, whole.settings, nullptr, [&](const Table& t) {
      expected += rows_text(t);
      return true;
    }, [](const RowIssue&) {}, stats);
  } catch (const InputError& e) {
    expected_error = e.what();
  }
  REQUIRE(expected_error.find("expected 3 fields, found 2") != std::string::npos);

  for (int stop_after : {1, 2, 3, 5}) {
    INFO("stop after " << stop_after << " batches");
    Scan first(path, pipeline);
    std::atomic<bool> stop{false};
    ScanPosition at;
    first.settings.yield_when = &stop;
    first.settings.stopped_at = &at;
    std::string got;
    int batches = 0;
    ScanStats s1;
    make_cpu_executor()->scan(first.in, first.settings, nullptr, [&](const Table& t) {
      got += rows_text(t);
      if (++batches == stop_after) stop = true;
      return true;
    }, [](const RowIssue&) {}, s1);
    REQUIRE_FALSE(at.finished);
    CHECK(at.offset > 0);
    // The rest from where it stopped, in a fresh opening of the input.
    Scan rest(path, pipeline);
    rest.settings.start = at;
    std::string error;
    ScanStats s2;
    try {
      make_cpu_executor()->scan(rest.in, rest.settings, nullptr, [&](const Table& t) {
        got += rows_text(t);
        return true;
      }, [](const RowIssue&) {}, s2);
    } catch (const InputError& e) {
      error = e.what();
    }
    CHECK(error == expected_error);
    CHECK(got == expected);
  }
  std::filesystem::remove(path);
}

TEST_CASE("resume: an aggregate split between two scans merges to the same groups") {
  const std::string path = (std::filesystem::temp_directory_path() / "warpcsv_resume_agg.csv").string();
  std::ofstream(path, std::ios::binary) << make_csv(11, 150000, ~size_t{0});
  const std::string pipeline = "groupby k | agg sum(v), count(), min(v), max(v)";
  Scan whole(path, pipeline);
  GroupLayout layout = GroupLayout::from_plan(whole.plan);
  GroupTable all(&layout), split(&layout);
  ScanStats st;
  make_cpu_executor()->scan(whole.in, whole.settings, &all, RowBatchSink(), [](const RowIssue&) {}, st);

  Scan first(path, pipeline);
  std::atomic<bool> stop{true};  // stops before the first window...
  ScanPosition at;
  first.settings.yield_when = &stop;
  first.settings.stopped_at = &at;
  make_cpu_executor()->scan(first.in, first.settings, &split, RowBatchSink(), [](const RowIssue&) {}, st);
  REQUIRE_FALSE(at.finished);
  CHECK(at.offset == 0);
  Scan rest(path, pipeline);  // ...and the rest does it all
  rest.settings.start = at;
  make_cpu_executor()->scan(rest.in, rest.settings, &split, RowBatchSink(), [](const RowIssue&) {}, st);
  REQUIRE(split.size() == all.size());
  for (size_t g = 0; g < all.size(); ++g) {
    const char* mine = nullptr;
    for (size_t h = 0; h < split.size(); ++h)
      if (key_equal(split.keys(h)[0], all.keys(g)[0], Type::String)) mine = split.state(h);
    REQUIRE(mine != nullptr);
    for (const auto& a : layout.aggs) {
      const Value x = agg_finalize(a, all.state(g)), y = agg_finalize(a, mine);
      CHECK(x.null == y.null);
      CHECK(x.i == y.i);
    }
  }
  std::filesystem::remove(path);
}
