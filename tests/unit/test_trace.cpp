// --trace: the tracer's JSON, and a CPU run's trace read back (one complete
// event per partition, on the host's threads, stages on the main thread),
// with the strict parser of trace_json.hpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "runtime/trace.hpp"
#include "test_files.hpp"
#include "trace_json.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using testing::parse_trace;
using testing::read_file;
using testing::TempDir;
using testing::Trace;
using testing::TraceEvent;
using testing::write_file;

namespace {

// ~1.3 MB: 100k rows of 50 keys, in partitions of 64 KiB (about 20).
std::string make_input(const TempDir& dir) {
  std::string text = "k,v,s\n";
  for (int i = 0; i < 100000; ++i) text += "id" + std::to_string(i % 50) + "," + std::to_string(i) + ",x\n";
  const std::string f = dir.file("in.csv");
  write_file(f, text);
  return f;
}

struct TracedRun {
  int code = 0;
  std::string error, trace_text, profile;
  uint64_t partitions = 0;  // as --profile reports them
};

TracedRun run_traced(const TempDir& dir, const std::string& pipeline, const std::string& input, Options opts = {}) {
  opts.pipeline = pipeline;
  opts.files = {input};
  if (!opts.chunk_size) opts.chunk_size = 64 << 10;
  if (!opts.threads) opts.threads = 2;
  opts.device = "cpu";
  opts.profile = true;
  opts.quiet = true;
  if (opts.trace_path.empty()) opts.trace_path = dir.file("trace.json");
  if (opts.output_path.empty()) opts.output_path = dir.file("out.csv");
  TracedRun r;
  {
    testing::CaptureStderr err(dir.file("stderr.txt"));
    r.code = testing::run_to_exit(opts, r.error);
  }
  r.profile = read_file(dir.file("stderr.txt"));
  std::smatch m;
  if (std::regex_search(r.profile, m, std::regex("([0-9]+) partitions of"))) r.partitions = std::stoull(m[1]);
  r.trace_text = read_file(opts.trace_path);
  return r;
}

}  // namespace

TEST_CASE("trace: the tracer writes its events as valid Chrome trace JSON", "[trace]") {
  TempDir dir;
  const std::string path = dir.file("t.json");
  {
    trace::Tracer t(path);
    t.name_this_thread("main \"quoted\"\\");  // escaped in the file
    const auto t0 = trace::Clock::now();
    t.host("stage one", "stage", t0, {{"bytes", 123}, {"rows", -4}});
    std::thread other([&] { t.host("on another thread", "partition", trace::Clock::now()); });
    other.join();
    t.name_process(trace::gpu_pid(0), "gpu0");
    t.name_thread(trace::gpu_pid(0), 0, "compute stream");
    t.complete_us("rows batch 0", "kernel", trace::gpu_pid(0), 0, 10.5, 2.25);
    t.complete_us("before the start", "kernel", trace::gpu_pid(0), 0, -5, -1);  // clamped to 0
    CHECK(t.events() == 4);
    t.write();
    t.host("after the write", "stage", trace::Clock::now());  // dropped
    CHECK(t.events() == 4);
  }
  const Trace tr = parse_trace(read_file(path));
  REQUIRE(tr.valid);
  CHECK(tr.display_unit == "ms");
  CHECK(tr.complete("stage").size() == 1);
  CHECK(tr.complete("partition").size() == 1);
  CHECK(tr.complete("kernel").size() == 2);
  const TraceEvent& s = *tr.complete("stage")[0];
  CHECK(s.args.at("bytes") == 123);
  CHECK(s.args.at("rows") == -4);
  CHECK(s.pid == 0);
  CHECK(tr.thread_name(0, s.tid) == "main \"quoted\"\\");
  CHECK(tr.complete("partition")[0]->tid != s.tid);
  CHECK(tr.process_name(0) == "cpu");
  CHECK(tr.process_name(1) == "gpu0");
  CHECK(tr.thread_name(1, 0) == "compute stream");
  for (const TraceEvent* e : tr.complete("kernel")) {
    CHECK(e->pid == 1);
    CHECK(e->ts >= 0);
    CHECK(e->dur >= 0);
  }
}

TEST_CASE("trace: the test's JSON check refuses what is not JSON", "[trace]") {
  testing::Json j;
  for (const char* bad : {"", "{", "{\"a\":1,}", "[1,]", "{\"a\" 1}", "[01]", "[1.]", "\"a\nb\"", "{} x", "[nul]",
                          "{\"a\":\"\\x\"}"})
    CHECK_FALSE(testing::JsonParser::parse(bad, &j));
  for (const char* good : {"{}", "[]", " [1, -2.5e3, true, false, null, \"\\u0041\\n\"] ", "{\"a\":{\"b\":[{}]}}"})
    CHECK(testing::JsonParser::parse(good, &j));
}

TEST_CASE("trace: a CPU run has one complete event per partition, on its threads", "[trace]") {
  TempDir dir;
  const std::string input = make_input(dir);
  const TracedRun r = run_traced(dir, "groupby k | agg sum(v), count()", input);
  REQUIRE(r.code == 0);
  REQUIRE(r.partitions > 8);
  const Trace tr = parse_trace(r.trace_text);
  INFO(tr.problem);
  REQUIRE(tr.valid);
  CHECK(tr.display_unit == "ms");

  // One event per partition, each partition once, with its bytes and rows.
  const auto parts = tr.complete("partition");
  CHECK(parts.size() == r.partitions);
  std::set<double> indices;
  double bytes = 0, rows = 0;
  std::set<int> tids;
  for (const TraceEvent* e : parts) {
    indices.insert(e->args.at("index"));
    CHECK(e->name == "partition " + std::to_string(static_cast<uint64_t>(e->args.at("index"))));
    bytes += e->args.at("bytes");
    rows += e->args.at("rows");
    CHECK(e->pid == trace::kHostPid);
    tids.insert(e->tid);
  }
  CHECK(indices.size() == r.partitions);
  CHECK(*indices.rbegin() == r.partitions - 1);
  CHECK(rows == 100000);
  CHECK(bytes == read_file(input).size() - 6);  // all but the header
  // --threads 2: at most two partitions at a time, on named threads (the
  // process's kept threads: in a process that ran wider before, more than two).
  for (int tid : tids) CHECK_FALSE(tr.thread_name(0, tid).empty());
  std::vector<std::pair<double, int>> edges;  // +1 at a start, -1 at an end
  for (const TraceEvent* e : parts) {
    edges.emplace_back(e->ts, 1);
    edges.emplace_back(e->ts + e->dur - 0.002, -1);  // the file's µs have 3 decimals
  }
  std::sort(edges.begin(), edges.end());
  int running = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, running += d);
  CHECK(most >= 1);
  CHECK(most <= 2);

  // Every complete event has ts, dur >= 0, a pid of the host (no GPU here)
  // and a named thread; the driver's stages are on the main thread.
  std::map<int, std::vector<const TraceEvent*>> by_tid;
  for (const TraceEvent& e : tr.events) {
    if (e.ph != "X") {
      CHECK(e.ph == "M");
      continue;
    }
    CHECK(e.ts >= 0);
    CHECK(e.dur >= 0);
    CHECK(e.pid == 0);
    CHECK(e.tid >= 1);
    by_tid[e.tid].push_back(&e);
  }
  std::set<std::string> stages;
  for (const TraceEvent* e : tr.complete("stage")) {
    stages.insert(e->name);
    CHECK(tr.thread_name(0, e->tid) == "main");
  }
  CHECK(stages == std::set<std::string>{"open+infer", "scan", "result: sort", "post+output"});
  CHECK(tr.complete("merge").size() == 1);  // the thread tables' fold
  CHECK(!tr.complete("read").empty());
  // The events of each thread nest, so trace viewers show them as recorded.
  for (const auto& [tid, evs] : by_tid) {
    INFO("tid " << tid);
    CHECK(testing::nests(evs, 0.002));  // the file's µs have 3 decimals
  }
}

TEST_CASE("trace: a run that streams rows traces its partitions too", "[trace]") {
  TempDir dir;
  const std::string input = make_input(dir);
  const TracedRun r = run_traced(dir, "filter v > 50000 | select k, v", input);
  REQUIRE(r.code == 0);
  const Trace tr = parse_trace(r.trace_text);
  REQUIRE(tr.valid);
  CHECK(tr.complete("partition").size() == r.partitions);
  CHECK(!tr.complete("output").empty());
}

TEST_CASE("trace: a run that fails still writes what it recorded", "[trace]") {
  TempDir dir;
  std::string text = "k,v\n";
  for (int i = 0; i < 50000; ++i) text += "a," + std::to_string(i) + "\n";
  text += "a,not-a-number\n";
  write_file(dir.file("bad.csv"), text);
  Options opts;
  opts.schema = "v:int";
  const TracedRun r = run_traced(dir, "groupby k | agg sum(v)", dir.file("bad.csv"), opts);
  CHECK(r.code == kExitInput);
  const Trace tr = parse_trace(r.trace_text);
  INFO(tr.problem);
  REQUIRE(tr.valid);
  CHECK(tr.complete("stage").size() >= 1);  // open+infer
  CHECK(!tr.complete("partition").empty());
}

TEST_CASE("trace: a trace file that cannot be written, or names the input or output, fails the run", "[trace]") {
  TempDir dir;
  const std::string input = make_input(dir);
  Options opts;
  opts.trace_path = dir.file("no/such/dir/trace.json");
  TracedRun r = run_traced(dir, "groupby k | agg count()", input, opts);
  CHECK(r.code == kExitInput);
  CHECK(r.error.find("cannot write --trace file") != std::string::npos);

  opts.trace_path = input;
  r = run_traced(dir, "groupby k | agg count()", input, opts);
  CHECK(r.code == kExitUsage);
  CHECK(r.error.find("--trace") != std::string::npos);
  CHECK(read_file(input).size() > 1000000);  // not emptied

  opts.trace_path = dir.file("same.csv");
  opts.output_path = dir.file("same.csv");
  r = run_traced(dir, "groupby k | agg count()", input, opts);
  CHECK(r.code == kExitUsage);
  CHECK(r.error.find("-o and --trace name the same file") != std::string::npos);
}

TEST_CASE("trace: without --trace no file is written", "[trace]") {
  TempDir dir;
  const std::string input = make_input(dir);
  Options opts;
  opts.pipeline = "groupby k | agg count()";
  opts.files = {input};
  opts.device = "cpu";
  opts.quiet = true;
  opts.output_path = dir.file("out.csv");
  REQUIRE(run_pipeline(opts) == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("trace.json")));
  CHECK(trace::current() == nullptr);
}
