// Differential tests of the CUDA executor: every question runs through the
// library entry (run_pipeline) with --device cpu and with the GPUs, at chunk
// sizes from a few bytes up, and must give the same output bytes, --rejects
// file, exit code and message. Without CUDA or a GPU they do not run: gpu_main.cpp
// reports them as skipped.
#include "catch.hpp"
#include "test_files.hpp"
#include "trace_json.hpp"

#ifdef WARPCSV_HAVE_CUDA
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "cuda/cuda_executor.hpp"
#include "cuda/pinned.hpp"
#include "diff/key_types_csv.hpp"
#include "diff/polluted_csv.hpp"
#include "diff/random_csv.hpp"
#include "exec/device.hpp"
#include "result/spill_file.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;

namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

struct RunResult {
  int code = 0;
  std::string out, rejects, error;
  std::string profile;  // stderr, with RunConfig::profile
};

struct RunConfig {
  std::string device = "cpu";
  uint64_t chunk = 0;
  bool skip = false;
  std::vector<std::string> nulls;
  std::string schema;
  bool gpus_together = true;  // false: GPUs join the scan when ready, as on the command line
  int threads = 0;            // --threads (0: all)
  bool profile = false;       // --profile, stderr kept in RunResult::profile
  uint64_t result_run_rows = 0;  // groups per run of the result (0: the default)
  uint64_t gpu_memory_limit = 0;  // --gpu-memory-limit (0: none)
  std::string delimiter = ",";
  int escape = -1, comment = -1;  // --escape, --comment (-1: none)
  OutputFormat format = OutputFormat::Csv;
  BadRows bad_rows = BadRows::Fail;  // `skip` overrides it
  // --no-header with these names and lines to skip, when names are given.
  std::vector<std::string> names;
  int skip_lines = 0;
};

RunResult run_tool(const TempDir& dir, const std::string& pipeline, const std::string& input,
                   const RunConfig& c) {
  Options opts;
  opts.pipeline = pipeline;
  opts.files = {input};
  opts.chunk_size = c.chunk;
  opts.threads = c.threads;
  opts.device = c.device;
  opts.gpus_start_together = c.gpus_together;  // a list of GPUs shares even these small inputs
  opts.quiet = true;
  opts.dialect.null_tokens = c.nulls;
  opts.schema = c.schema;
  opts.profile = c.profile;
  opts.result_run_rows = c.result_run_rows;
  opts.gpu_memory_limit = c.gpu_memory_limit;
  opts.dialect.delimiter = c.delimiter;
  opts.dialect.escape = c.escape;
  opts.dialect.comment = c.comment;
  opts.format = c.format;
  if (!c.names.empty()) {
    opts.dialect.names = c.names;
    opts.dialect.header = false;
    opts.dialect.skip_lines = c.skip_lines;
  }
  opts.bad_rows = c.skip ? BadRows::Skip : c.bad_rows;
  opts.output_path = dir.file("out.csv");
  std::remove(opts.output_path.c_str());
  if (opts.bad_rows != BadRows::Fail) {
    opts.rejects_path = dir.file("rejects.csv");
    std::remove(opts.rejects_path.c_str());
  }
  RunResult r;
  {
    testing::CaptureStderr quiet(c.profile ? dir.file("stderr.txt") : "/dev/null");
    r.code = testing::run_to_exit(opts, r.error);
  }
  if (c.profile) r.profile = read_file(dir.file("stderr.txt"));
  r.out = read_file(opts.output_path);
  if (opts.bad_rows != BadRows::Fail) r.rejects = read_file(opts.rejects_path);
  return r;
}

// A random dataset of `rows` rows (make_dataset's defaults otherwise) in dir/name.
std::string dataset_file(const TempDir& dir, const std::string& name, uint64_t seed, size_t rows) {
  testing::DatasetOptions o;
  o.rows = rows;
  const std::string f = dir.file(name);
  write_file(f, testing::make_dataset(seed, o).text);
  return f;
}

// A random dataset in a temp dir and a pipeline's CPU output for it: the
// bytes every GPU run of the pipeline must give.
struct CpuReference {
  TempDir dir;
  std::string file, pipeline;
  RunResult cpu;
  CpuReference(const std::string& name, uint64_t seed, size_t rows, std::string p)
      : file(dataset_file(dir, name, seed, rows)), pipeline(std::move(p)), cpu(run_tool(dir, pipeline, file, RunConfig{})) {
    REQUIRE(cpu.code == 0);
  }
  // Whether the pipeline run with `c` gives the CPU's bytes.
  bool same(const RunConfig& c) const { return run_tool(dir, pipeline, file, c).out == cpu.out; }
};

bool have_gpu() {
  if (cuda_device_count() > 0) return true;
  WARN("no GPU: GPU tests skipped");
  return false;
}

// Every GPU listed ("0,1,..."): --device gpu runs small inputs on GPU 0 alone.
std::string all_gpus() {
  std::string list;
  for (int i = 0; i < cuda_device_count(); ++i) list += (i ? "," : "") + std::to_string(i);
  return list;
}

// The device settings to compare with the CPU: --device gpu, and all GPUs
// listed when there are several.
std::vector<std::string> gpu_devices() {
  std::vector<std::string> d = {"gpu"};
  if (cuda_device_count() > 1) d.push_back(all_gpus());
  return d;
}

const std::vector<uint64_t> kChunks = {7, 100, 4096, 1 << 20, 0};

// Runs `pipeline` on the CPU once, then on the GPUs at every chunk size; all
// must match the CPU byte for byte. Returns the CPU result.
RunResult check_same(const TempDir& dir, const std::string& pipeline, const std::string& input,
                     RunConfig c = RunConfig{}, const std::vector<uint64_t>& chunks = kChunks) {
  c.device = "cpu";
  c.chunk = 0;
  const RunResult base = run_tool(dir, pipeline, input, c);
  for (const std::string& dev : gpu_devices()) {
    for (uint64_t chunk : chunks) {
      c.device = dev;
      c.chunk = chunk;
      const RunResult r = run_tool(dir, pipeline, input, c);
      INFO("pipeline: " << pipeline << "\ndevice " << dev << " chunk " << chunk << "\ncpu error: "
                        << base.error << "\ngpu error: " << r.error);
      CHECK(r.code == base.code);
      CHECK(r.error == base.error);
      CHECK(r.rejects == base.rejects);
      REQUIRE(r.out == base.out);
    }
  }
  return base;
}

// Pipelines the GPU runs itself (exact, order-independent aggregates).
const std::vector<std::string> kGpuPipelines = {
    "groupby k1 | agg count(), count(v1), sum(v1), mean(v1), min(v1), max(v1)",
    "groupby k2 | agg sum(v2), var(v1), std(v2), corr(v1, v2), min(v2), max(v2), mean(v2)",
    "filter v1 > 0 and k1 != \"beta\" | groupby k1, k2 | agg sum(v1 * 2 + k2) as t, count() as n",
    "groupby lower(k1) | agg sum(v1), max(k2), min(k2)",
    "agg count(), sum(v1), var(v2), std(v1), corr(v2, v1), min(v2)",
    "groupby s | agg count(), min(v1), sum(v2)",
    "filter s is not null | groupby k2 % 3 | agg mean(v2), count(s)",
    "groupby k1, s | agg count() as n | sort n desc, k1, s | limit 7",
    "filter contains(s, \"a\") or v2 < 0 | groupby k1 | agg var(v2), corr(k2, v1)",
    "groupby k1 | agg sum(f), mean(f), var(f), std(f), min(f), max(f), count(f)",
    "groupby k2 % 5 | agg corr(f, v1), corr(v2, f), sum(f * 0.5), min(-f), max(f + v1)",
    // Holistic aggregates over strings: the GPU groups by k1 and each argument; the host regroups.
    "groupby k1 | agg median(s), count_distinct(s), sum(v1), count()",
    "groupby k2 % 3 | agg count_distinct(s), count_distinct(k1), min(v1)",
    "agg median(v1), quantile(v2, 0.25), count_distinct(s), count()",
    // Over numbers only: the run's first GPU alone lists each row's arguments with its group
    // and sorts the lists, as the CPU lists (and compacts) them.
    "groupby k2 % 7 | agg median(v1), quantile(f, 0.75), count_distinct(v2), sum(v1), median(k2)",
    "filter v1 > -50 | groupby k1 | agg median(v2), quantile(v1, 0.1), count_distinct(f), median(f), std(v1)",
    "agg count_distinct(v1), median(f), quantile(v2, 0.99), count()",
    "groupby k1, k2 % 3 | agg median(k2 * 1000 + v1), count_distinct(v1 % 5), quantile(v2, 0)",
    // Strings (of at most 8 bytes: s) listed beside numbers, as their bytes.
    "groupby k1 | agg count_distinct(v1), median(v2), quantile(f, 0.9), median(s), count_distinct(s), sum(v1)",
    "agg count_distinct(s), median(v1), quantile(s, 0.25)",
    "groupby substr(k1, 2, 3), split_part(s, \"a\", -1) | agg count(), sum(v1), max(len(trim(s)))",
    "filter rtrim(ltrim(k1)) != k1 or substr(s, -2) == \"ab\" | groupby k2 % 4 | agg count(), min(v2), "
    "max(greatest(v1, k2, v2)), min(least(v1, k2)), count(nullif(k2, 0))",
    "filter k1 like '%a%' or s ilike 'B_%' or s not like '%x%' | groupby k1 ilike 'GAMMA' | agg count(), sum(v1)",
    "groupby if(v1 > 0, 'pos', 'neg'), case when v2 > 10 then 'hi' when v2 > 0 then 'mid' end | agg count(), "
    "count_if(k2 > 1), sum(case k2 when 1 then v1 else 0 end)",
    "filter v1 between -10 and 50 and k1 || s != 'x' | groupby replace(k1, 'a', 'AA') || '/' || k2 | agg count(), "
    "min(v2)",
    "groupby try_cast(s as int), cast(v2 as decimal(1)), cast(k2 as string) | agg count(), sum(cast(v1 as float)), "
    "max(cast(f as int))",
    // A later agg runs on the host over the GPU's groups (written from the GPU in key order).
    "groupby k1, k2 | agg sum(v1) as t, count() as n | groupby k1 | agg median(t), count_distinct(k2), sum(n), "
    "first(t), last(k2)",
    "groupby k2 % 7 as b | agg sum(v2) as s, min(v1) as lo | agg sum(s), mean(lo), count() | select *",
    "groupby cast(f as string), cast(v2 / 3 as string) | agg count()",  // floats' shortest texts, made on the GPU
};

// Pipelines the CUDA executor hands to the CPU executor (same bytes either way).
const std::vector<std::string> kCpuPipelines = {
    "groupby k1 | agg sum(f), first(v1), last(s)",
    // More holistic arguments than the GPU lists, strings among them: the CPU executor lists them.
    "groupby k1 | agg count_distinct(v1), median(v2), quantile(f, 0.9), median(s), count_distinct(k2), sum(v1)",
    "groupby k2 | agg min(s), max(f)",
    "filter v1 > 1000 | select k1, v1, v2",
    "groupby len(filename()) > 0 | agg count(), sum(v1)",  // a GPU batch does not know its rows' file
};

}  // namespace

TEST_CASE("gpu: inline edge cases give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("edge.csv");
  SECTION("quotes, doubled quotes, embedded delimiters and newlines in keys, CRLF") {
    write_file(f,
               "k,v,d\r\n"
               "\"a,b\",1,1.5\r\n"
               "\"line\nbreak\",2,-0.25\r\n"
               "\"say \"\"hi\"\"\",3,7\r\n"
               "\"a,b\",-4,2.125\r\n"
               "plain,,\r\n"
               ",5,1\r\n"
               "\"say \"\"hi\"\"\",6,-1.5");
    const RunResult r = check_same(dir, "groupby k | agg count(), sum(v), min(d), max(v), mean(d)", f);
    CHECK(r.code == 0);
    check_same(dir, "agg sum(v), var(d), count(k)", f);
  }
  SECTION("empty lines, CR-only line ends, a file without a final newline") {
    write_file(f, "k,v\n\nx,1\rx,2\r\n\ny,3\n\r\ny,-10");
    const RunResult r = check_same(dir, "groupby k | agg sum(v), count()", f);
    CHECK(r.out == "k,sum(v),count()\nx,3,2\ny,-7,2\n");
  }
  SECTION("--null tokens and a single column with empty lines") {
    write_file(f, "k,v\nNA,1\nb,NA\nb,2\n");
    RunConfig c;
    c.nulls = {"NA"};
    const RunResult r = check_same(dir, "groupby k | agg count(v), sum(v)", f, c);
    CHECK(r.out == "k,count(v),sum(v)\nb,1,2\n,1,1\n");
    write_file(f, "v\n1\n\n2\n");
    check_same(dir, "agg count(), count(v), sum(v)", f);
  }
  SECTION("128-bit sums past 64 bits and negative values") {
    std::string text = "k,v\n";
    for (int i = 0; i < 300; ++i)
      text += (i % 2 ? "a," : "b,") + std::string(i % 3 ? "9000000000000000000" : "-8999999999999999999") + "\n";
    write_file(f, text);
    check_same(dir, "groupby k | agg sum(v), mean(v), var(v), min(v), max(v)", f);
  }
  SECTION("valid multibyte UTF-8 runs on the GPU, with no CPU rerun") {
    std::string text = "k,v\n";
    const char* keys[] = {"caf\xc3\xa9", "na\xc3\xafve", "\xe6\x9d\xb1\xe4\xba\xac", "\xf0\x9f\x98\x80", "plain"};
    for (int i = 0; i < 2000; ++i) text += std::string(keys[i % 5]) + "," + std::to_string(i % 13 - 6) + "\n";
    write_file(f, text);
    const CudaRunInfo before = cuda_run_info();
    const RunResult r = check_same(dir, "groupby k | agg count(), sum(v), min(v)", f);
    CHECK(r.code == 0);
    CHECK(r.out.find("caf\xc3\xa9,400,") != std::string::npos);
    CHECK(cuda_run_info().cpu_reruns == before.cpu_reruns);
  }
  SECTION("int arithmetic past 64 bits is a bad row: the GPU flags it, the CPU's scan reports it") {
    // Line 3002 holds INT64_MAX, line 6003 INT64_MIN.
    std::string text = "k,v\n";
    for (int i = 0; i < 3000; ++i) text += (i % 2 ? "a," : "b,") + std::to_string(i) + "\n";
    text += "a,9223372036854775807\n";
    for (int i = 0; i < 3000; ++i) text += "b," + std::to_string(-i) + "\n";
    text += "b,-9223372036854775808\n";
    write_file(f, text);
    const CudaRunInfo before = cuda_run_info();
    const RunResult fail = check_same(dir, "groupby k | agg sum(v + 1), count()", f);
    CHECK(fail.code == 3);
    CHECK(fail.error.find(":3002:1: integer overflow in 'sum(v + 1)'") != std::string::npos);
    CHECK(check_same(dir, "groupby v * 2 | agg count()", f).code == 3);
    CHECK(check_same(dir, "filter -v > 0 | groupby k | agg count()", f).code == 3);
    RunConfig skip;
    skip.skip = true;
    const RunResult skipped = check_same(dir, "groupby k | agg sum(v * 2), count(), max(-v), min(abs(v))", f, skip);
    CHECK(skipped.code == 0);
    CHECK(skipped.rejects.find(",3002,1,") != std::string::npos);
    CHECK(skipped.rejects.find(",6003,1,") != std::string::npos);
    CHECK(cuda_run_info().cpu_reruns > before.cpu_reruns);
    // A sum past 64 bits, and arithmetic on it, is exact to 128 bits.
    const RunResult sum = check_same(dir, "groupby k | agg sum(v), sum(v) + 1 as s1, count()", f);
    CHECK(sum.code == 0);
  }
  SECTION("--schema checks its columns even when the pipeline does not use them") {
    std::string text = "k,v,d\n";
    for (int i = 0; i < 3000; ++i)
      text += (i % 3 ? "a," : "b,") + std::to_string(i) + "," + std::to_string(i % 7) + "\n";
    write_file(f, text);
    RunConfig c;
    c.schema = "d:int";
    const CudaRunInfo before = cuda_run_info();
    CHECK(check_same(dir, "groupby k | agg sum(v), count()", f, c).code == 0);
    CHECK(cuda_run_info().cpu_reruns == before.cpu_reruns);  // valid values: no rerun
    write_file(f, text + "a,5,Sun\n" + text.substr(6));
    const RunResult fail = check_same(dir, "groupby k | agg sum(v), count()", f, c);
    CHECK(fail.code == 3);
    CHECK(fail.error.find(":3002:5: column 'd' expected an int value, found 'Sun'") != std::string::npos);
    c.skip = true;
    const RunResult skipped = check_same(dir, "groupby k | agg sum(v), count()", f, c);
    CHECK(skipped.code == 0);
    CHECK(skipped.rejects.find(",3002,5,") != std::string::npos);
  }
  SECTION("dates and timestamps under min/max") {
    write_file(f, "k,d,t\na,2024-01-02,2024-01-02T03:04:05\na,1999-12-31,2030-01-01T00:00:00\nb,,\n");
    check_same(dir, "groupby k | agg min(d), max(d), min(t), max(t), count(d)", f);
  }
}

TEST_CASE("gpu: random files, every GPU aggregate and expression, every chunk size", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("in.csv");
  struct Case {
    uint64_t seed;
    testing::DatasetOptions o;
  };
  std::vector<Case> cases(4);
  cases[0] = {11, {}};
  cases[1].seed = 12;
  cases[1].o.rows = 1500;
  cases[1].o.crlf = true;
  cases[1].o.key_cardinality = 40;
  cases[1].o.empty_lines = true;
  cases[2].seed = 13;
  cases[2].o.mixed_eol = true;
  cases[2].o.final_newline = false;
  cases[3].seed = 14;
  cases[3].o.rows = 3000;
  cases[3].o.key_cardinality = 3000;
  cases[3].o.k2_range = 5000;
  for (const Case& c : cases) {
    write_file(f, testing::make_dataset(c.seed, c.o).text);
    const CudaRunInfo before = cuda_run_info();
    for (const auto& p : kGpuPipelines) {
      const RunResult r = check_same(dir, p, f);
      CHECK(r.code == 0);
      CHECK(r.out.size() > 10);
    }
    const CudaRunInfo after = cuda_run_info();
    // Clean files: every GPU pipeline ran on the GPU, none was run again on
    // the CPU, and the tails sized from the sample held every row.
    CHECK(after.cpu_reruns == before.cpu_reruns);
    CHECK(after.tail_reruns == before.tail_reruns);
    CHECK(after.gpu_scans > before.gpu_scans);
  }
}

TEST_CASE("gpu: delimiters of several bytes, and a space, give the CPU's bytes at every chunk size", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("in.csv");
  uint64_t seed = 15;
  for (const std::string delimiter : {", ", "||", "\xc2\xa6", " "}) {
    testing::DatasetOptions o;
    o.rows = 1200;
    o.key_cardinality = 30;
    o.mixed_eol = true;
    o.bad_rows = true;
    o.delimiter = delimiter;
    write_file(f, testing::make_dataset(seed++, o).text);
    RunConfig c;
    c.delimiter = delimiter;
    c.skip = true;
    for (const char* p : {"groupby k1 | agg count(), sum(v1), mean(v2), min(v1), max(k2)",
                          "filter v1 > 0 | groupby k2 % 4, k1 | agg sum(v2), count(s)"}) {
      INFO("delimiter " << delimiter);
      const RunResult r = check_same(dir, p, f, c, {1, 7, 100, 4096, 0});
      CHECK(r.code == 0);
      CHECK(r.out.size() > 20);
    }
  }
}

TEST_CASE("gpu: date parts and truncations give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("dates.csv");
  std::mt19937_64 rng(404);
  std::string text = "d,t,v\n";
  for (int i = 0; i < 4000; ++i) {
    char row[96];
    std::snprintf(row, sizeof row, "%04d-%02d-%02d,%04d-%02d-%02dT%02d:%02d:%02d.%03d,%d\n",
                  1900 + static_cast<int>(rng() % 250), 1 + static_cast<int>(rng() % 12),
                  1 + static_cast<int>(rng() % 28), 1960 + static_cast<int>(rng() % 100),
                  1 + static_cast<int>(rng() % 12), 1 + static_cast<int>(rng() % 28), static_cast<int>(rng() % 24),
                  static_cast<int>(rng() % 60), static_cast<int>(rng() % 60), static_cast<int>(rng() % 1000),
                  static_cast<int>(rng() % 100));
    text += rng() % 20 == 0 ? std::string(",,1\n") : std::string(row);
  }
  write_file(f, text);
  for (const char* p : {"groupby year(d), dow(t) | agg count(), sum(v), min(epoch(t)), max(week(d))",
                        "groupby date_trunc('month', t), quarter(d) | agg count(), sum(hour(t) * 60 + minute(t))",
                        "filter isodow(d) > 5 | groupby date_trunc('week', d) | agg max(doy(d)), min(second(t))",
                        "groupby date(t) | agg count(), max(epoch(d)), min(day(t))",
                        "groupby strftime(t, '%Y-%m %a %j %H:%M:%S'), datediff('day', d, t) % 7 | agg count(), "
                        "max(d + 30), min(datediff('month', d, date(t))), max(datediff('second', t, d))"}) {
    const RunResult r = check_same(dir, p, f);
    CHECK(r.code == 0);
    CHECK(r.out.size() > 20);
  }
}

TEST_CASE("gpu: lookup joins, inner and left, one and two, give the CPU's bytes on the GPU", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("in.csv");
  testing::DatasetOptions o;
  o.rows = 3000;
  write_file(f, testing::make_dataset(77, o).text);
  // k2 from -20 to 20: some keys have no lookup row, some two, one a null key.
  std::string ranks = "k2,name,w\n,none,1\n";
  for (int k = -20; k <= 25; k += 1 + (k % 3 == 0)) {
    ranks += std::to_string(k) + ",n" + std::to_string((k + 40) % 7) + "," + std::to_string(k * 3) + "\n";
    if (k % 5 == 0) ranks += std::to_string(k) + ",\"dup, " + std::to_string(k) + "\"," + std::to_string(k) + ".5\n";
  }
  write_file(dir.file("ranks.csv"), ranks);
  write_file(dir.file("labels.csv"), "code;label\nalpha;A\nbeta;B\nhas,comma;C\nbeta;B2\n");
  const std::string ranks_f = "'" + dir.file("ranks.csv") + "'", labels_f = "'" + dir.file("labels.csv") + "'";
  const CudaRunInfo before = cuda_run_info();
  for (const std::string& p :
       {"join " + ranks_f + " on k2 | groupby name | agg count(), sum(v1), max(w)",
        "left join " + ranks_f + " on k2 | groupby name, k1 | agg count(), sum(w * v1), min(w)",
        "join " + labels_f + " delimiter ';' on lower(k1) = code | join " + ranks_f +
            " on k2 | filter w > 0 | groupby label, name | agg count(), min(v2), sum(f)",
        "left join " + labels_f + " delimiter ';' on k1 = code as l | groupby label is null, k2 % 3 | agg count(), "
        "sum(v1)",
        "join " + ranks_f + " on v2 = w | agg count(), sum(v1)"}) {
    const RunResult r = check_same(dir, p, f);
    CHECK(r.code == 0);
    CHECK(r.out.size() > 10);
  }
  const CudaRunInfo after = cuda_run_info();
  CHECK(after.cpu_reruns == before.cpu_reruns);  // every join ran on the GPU
  CHECK(after.gpu_scans > before.gpu_scans);
}

TEST_CASE("gpu: polluted files under --bad-rows pad give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("in.csv");
  uint64_t seed = 70;
  for (const std::string delimiter : {",", ", ", "||"}) {
    for (testing::Pollution p : {testing::Pollution::MissingSeparator, testing::Pollution::ExtraSeparator,
                                 testing::Pollution::StrayQuote, testing::Pollution::Preamble}) {
      const testing::PollutedFile file = testing::make_polluted(seed++, p, 300, seed % 2 ? 0 : 150, delimiter);
      write_file(f, file.text);
      RunConfig c;
      c.delimiter = delimiter;
      c.bad_rows = BadRows::Pad;
      c.names = testing::polluted_column_names();
      c.skip_lines = file.skip_lines;
      INFO("delimiter '" << delimiter << "', pollution " << static_cast<int>(p));
      const RunResult r = check_same(dir, "groupby day | agg count(), max(id), min(id)", f, c, {1, 7, 4096, 0});
      CHECK(r.code == 0);
      CHECK(r.out.size() > 20);
    }
  }
}

TEST_CASE("gpu: the messy sales sample gives the CPU's bytes at every chunk size", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = WARPCSV_DATA_DIR "/sales_sample.csv";  // quoted newlines, empty fields
  REQUIRE(std::ifstream(f).good());
  const CudaRunInfo before = cuda_run_info();
  for (const char* p : {"groupby region | agg count(), sum(amount), mean(unit_price), min(order_date), max(quantity)",
                        "filter status != \"cancelled\" | groupby customer, product | agg sum(quantity * unit_price), "
                        "var(discount), corr(quantity, amount)",
                        "groupby status, region | agg count(discount), sum(discount), max(amount), min(unit_price)",
                        "groupby region | agg median(amount), count_distinct(customer), quantile(unit_price, 0.1)",
                        "groupby region | agg median(amount), quantile(unit_price, 0.1), count_distinct(quantity)"}) {
    const RunResult r = check_same(dir, p, f, RunConfig{}, {1, 7, 100, 4096, 0});
    CHECK(r.code == 0);
    CHECK(r.out.size() > 20);
  }
  CHECK(cuda_run_info().gpu_scans > before.gpu_scans);
}

// 300k groups of a string key and float aggregates (~110 MB of group words),
// on the CPU and on the GPUs at `chunks`; returns the CPU result.
// The file: dir/many.csv.
std::string many_groups_file(const TempDir& dir) {
  const std::string f = dir.file("many.csv");
  std::string text = "k,v,x\n";
  for (int64_t i = 0; i < 300000; ++i)
    text += "key" + std::to_string(i * 7919 % 300007) + "," + std::to_string(i % 1000 - 500) + "," +
            std::to_string(i % 97) + ".25\n";
  write_file(f, text);
  return f;
}
const char* const kManyGroupsPipeline = "groupby k | agg sum(v), mean(x), count(), max(x)";

RunResult check_many_groups(const std::vector<uint64_t>& chunks) {
  TempDir dir;
  return check_same(dir, kManyGroupsPipeline, many_groups_file(dir), RunConfig{}, chunks);
}

// Runs check(input) over key-types files (testing::key_types_csv) of `rows`
// rows with each count of distinct keys.
template <class Check>
void over_key_types_files(const std::vector<int>& distincts, size_t rows, uint64_t seed, Check&& check) {
  TempDir dir;
  for (int distinct : distincts) {
    const std::string input = dir.file("keys" + std::to_string(distinct) + ".csv");
    write_file(input, testing::key_types_csv(static_cast<uint64_t>(distinct) + seed, rows, distinct));
    check(dir, input, distinct);
  }
}

// The groups stay on the GPU, ordered there by every key type's digits, and
// come back in runs of any size: the CPU's bytes, errors and exit codes.
TEST_CASE("gpu: groups ordered on the GPU and read back in runs give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  const std::vector<std::string> pipelines = {
      "groupby s | agg count(), sum(v)",
      "groupby i, s | agg count() as n, min(v), max(v)",
      "groupby f | agg count(), mean(v)",
      "groupby dt, ts, b | agg sum(v), std(v)",
      "groupby d, s, f | agg count() as n | filter n > 1",
      "groupby b, i * 1.0 * 1000000000000000000 | agg count()",
      "groupby s, i | agg sum(v) as t | sort t desc, s | limit 9",
      "groupby s | agg count() | limit 3",
      "groupby upper(s) | agg sum(v * 1000000000000000000000000000000000000)",
  };
  over_key_types_files({5, 300, 5000}, 6000, 0, [&](const TempDir& dir, const std::string& input, int) {
    for (const std::string& p : pipelines)
      for (uint64_t run_rows : {1, 7, 0}) {
        RunConfig c;
        c.result_run_rows = run_rows;
        check_same(dir, p, input, c, {100, 0});
      }
  });
}

// A GPU table that outgrows --gpu-memory-limit spills its groups to the
// host's hash parts, again and again at tiny limits, and the parts give the
// unlimited run's bytes: groups of every key type, from one to 20k, at
// batches of 512 bytes up, on one worker and on two sharing GPU 0.
TEST_CASE("gpu: groups spilled past --gpu-memory-limit give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  const std::vector<std::string> pipelines = {
      "groupby s | agg count(), sum(v), max(v)",
      "groupby i, s, d | agg count() as n, mean(v), std(v)",
      "groupby f, dt, ts, b | agg sum(v), count(f)",
      "groupby s, i | agg sum(v) as t | filter t > 0 | sort t desc, s | limit 9",
      "groupby upper(s), b | agg sum(v * 1.5), count() as n | groupby b | agg sum(n)",
  };
  over_key_types_files({1, 300, 40000}, 20000, 7, [&](const TempDir& dir, const std::string& input, int distinct) {
    for (const std::string& p : pipelines)
      for (uint64_t limit : {uint64_t{64} << 10, uint64_t{4} << 20}) {
        RunConfig c;
        c.gpu_memory_limit = limit;
        const CudaRunInfo before = cuda_run_info();
        const RunResult cpu = check_same(dir, p, input, c, {512, 65536, 1 << 20});
        // Two workers on GPU 0, each with a table of its own, spilling into the same parts.
        c.device = "0,0";
        c.chunk = 4096;
        CHECK(run_tool(dir, p, input, c).out == cpu.out);
        const CudaRunInfo after = cuda_run_info();
        INFO("pipeline: " << p << ", " << distinct << " keys, limit " << limit);
        CHECK(after.cpu_reruns == before.cpu_reruns);
        if (distinct >= 40000 && limit < (uint64_t{1} << 20)) CHECK(after.table_spills > before.table_spills);
      }
  });
}

// Several workers (here two and three on GPU 0) exchange their groups by
// key range after the scan; each orders its range, and the ranges in turn
// are the CPU's bytes: keys of every type (nulls, -0.0, NaN, strings that
// share prefixes), from one group to 40k, in runs of 7 groups and the default.
TEST_CASE("gpu: workers that exchange their groups by key range give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  const std::vector<std::string> pipelines = {
      "groupby s | agg count(), sum(v), max(v)",
      "groupby i, s, d | agg count() as n, mean(v), std(v)",
      "groupby f, dt, ts, b | agg sum(v), count(f)",
      "groupby b, s | agg sum(v) as t | filter t > 0 | sort t desc, s | limit 9",
      "groupby upper(s), i * 1.0 | agg min(v), count()",
  };
  over_key_types_files({1, 300, 40000}, 20000, 11, [&](const TempDir& dir, const std::string& input, int distinct) {
    for (const std::string& p : pipelines) {
      RunConfig c;
      const RunResult cpu = run_tool(dir, p, input, c);
      REQUIRE(cpu.code == 0);
      for (const char* workers : {"0,0", "0,0,0"})
        for (uint64_t chunk : {uint64_t{4096}, uint64_t{65536}})
          for (uint64_t run_rows : {uint64_t{7}, uint64_t{0}}) {
            c.device = workers;
            c.chunk = chunk;
            c.result_run_rows = run_rows;
            c.profile = run_rows == 0;
            const CudaRunInfo before = cuda_run_info();
            const RunResult r = run_tool(dir, p, input, c);
            const CudaRunInfo after = cuda_run_info();
            INFO("pipeline: " << p << ", " << distinct << " keys, workers " << workers << ", chunk " << chunk
                               << ", runs of " << run_rows << "\nerror: " << r.error);
            CHECK(r.code == 0);
            REQUIRE(r.out == cpu.out);
            CHECK(after.cpu_reruns == before.cpu_reruns);
            CHECK(after.key_exchanges == before.key_exchanges + 1);
            if (c.profile) {
              CHECK(r.profile.find("result: merge its key range") != std::string::npos);
              CHECK(r.profile.find("result: order groups") != std::string::npos);
            }
          }
    }
  });
}

// The result's rows finalized and formatted on the GPU, a run at a time: the
// CPU's bytes in CSV and TSV for keys that need quoting or escaping, on one
// worker and on two that exchange key ranges, in runs of 7 rows and the
// default; results a GPU does not format (expressions, post stages) are
// formatted on the host; a sum past 128 bits fails as on the CPU.
TEST_CASE("gpu: result rows formatted on the GPU give the CPU's bytes and errors", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("text.csv");
  static const char* const kNames[] = {"plain", " lead", "trail ", "a,b", "say \"\"hi\"\"", "tab\there",
                                       "back\\slash", "Z\xc3\xbcrich", "x"};
  std::string text = "s,k,d,dt,b\n";
  for (int i = 0; i < 30000; ++i) {
    const std::string name = kNames[i % 9];
    text += (i % 11 == 0 ? std::string() : "\"" + name + std::to_string(i % 3000) + "\"") + "," +
            std::to_string((i * 7919) % 5000 - 2500) + "," + std::to_string(i % 300 - 150) + ".0" +
            std::to_string(i % 10) + ",2024-0" + std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10) + "," +
            (i % 2 ? "true" : "false") + "\n";
  }
  write_file(f, text);
  const std::vector<std::string> formatted = {
      "groupby s | agg count(), sum(k), min(d), max(dt)",
      "groupby k, s, b | agg sum(d) as total, count(s), k as again",
      "groupby dt, b | agg min(k), max(k), count()",
      "groupby s | agg mean(k), std(d), corr(k, d), mean(k * 1.5)",  // floats' shortest texts
  };
  for (const std::string& p : formatted)
    for (const OutputFormat format : {OutputFormat::Csv, OutputFormat::Tsv}) {
      RunConfig c;
      c.format = format;
      const RunResult cpu = run_tool(dir, p, f, c);
      REQUIRE(cpu.code == 0);
      for (const char* device : {"gpu", "0,0"})
        for (uint64_t run_rows : {uint64_t{7}, uint64_t{0}})
          for (uint64_t chunk : {uint64_t{4096}, uint64_t{0}}) {
            c.device = device;
            c.result_run_rows = run_rows;
            c.chunk = chunk;
            const CudaRunInfo before = cuda_run_info();
            const RunResult r = run_tool(dir, p, f, c);
            INFO("pipeline: " << p << ", tsv " << (format == OutputFormat::Tsv) << ", device " << device
                              << ", runs of " << run_rows << ", chunk " << chunk << "\nerror: " << r.error);
            CHECK(r.code == 0);
            REQUIRE(r.out == cpu.out);
            CHECK(cuda_run_info().text_runs > before.text_runs);
          }
    }
  for (const std::string p : {"groupby s | agg sum(k) * 2 as twice, count()", "groupby s | agg count() | limit 5"}) {
    RunConfig c;
    const RunResult cpu = run_tool(dir, p, f, c);
    c.device = "gpu";
    const CudaRunInfo before = cuda_run_info();
    const RunResult r = run_tool(dir, p, f, c);
    INFO(p);
    CHECK(r.out == cpu.out);
    CHECK(cuda_run_info().text_runs == before.text_runs);
  }
  // Sums of k * 10^36 overflow 128 bits (1.7e38) in the groups where |k| passes 170.
  const std::string overflow = "groupby b, s | agg count(), sum(k * 1000000000000000000000000000000000000)";
  const RunResult cpu = run_tool(dir, overflow, f, RunConfig{});
  REQUIRE(cpu.code != 0);
  RunConfig c;
  c.device = "gpu";
  c.result_run_rows = 7;
  const RunResult r = run_tool(dir, overflow, f, c);
  CHECK(r.code == cpu.code);
  CHECK(r.error == cpu.error);
}

// 300k groups through a 1 MiB table at 4 KiB batches: hundreds of spills,
// into compressed spill files, with --profile naming them.
TEST_CASE("gpu: many spills of a small GPU table give the CPU's bytes and show in --profile", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = many_groups_file(dir);
  const std::string p = kManyGroupsPipeline;
  const RunResult cpu = run_tool(dir, p, f, RunConfig{});
  REQUIRE(cpu.code == 0);
  RunConfig c;
  c.device = "gpu";
  c.chunk = 4096;
  c.gpu_memory_limit = 1 << 20;
  c.profile = true;
  const CudaRunInfo before = cuda_run_info();
  set_spill_compression(SpillCompression::Always);  // the spill files' frames compressed
  const RunResult r = run_tool(dir, p, f, c);
  set_spill_compression(SpillCompression::Auto);
  CHECK(r.code == 0);
  CHECK(r.out == cpu.out);
  CHECK(cuda_run_info().table_spills >= before.table_spills + 10);
  CHECK(r.profile.find("MiB of records") != std::string::npos);
  CHECK(r.profile.find("gpu: spill groups to the host") != std::string::npos);
  CHECK(r.profile.find("result: aggregate and sort parts") != std::string::npos);
}

TEST_CASE("gpu: a table of many groups comes back through the pinned ring in rounds", "[gpu]") {
  if (!have_gpu()) return;
  // Default batches: 33 MiB ring buffers, so the group words take two rounds.
  const RunResult r = check_many_groups({0});
  CHECK(r.code == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 300001);
}

// The table grows from a few thousand groups to 300k over ~1500 batches on
// each GPU; it once hung there on two GPUs (docs/testing.md, "tests/gpu").
TEST_CASE("gpu: many groups at small batches give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  CHECK(check_many_groups({4096}).code == 0);
}

// One GPU's holistic lists grow with the rows (from the first batch's bound,
// at least twofold) over thousands of small batches, and hold nearly distinct
// values in many groups; a value past 64 bits (no holistic key) makes the
// CPU executor scan instead, with the same bytes.
TEST_CASE("gpu: holistic lists grow over many batches and give the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("lists.csv");
  std::string text = "k,v,x,d\n";
  for (int64_t i = 0; i < 200000; ++i)
    text += "key" + std::to_string(i * 7919 % 20011) + "," + std::to_string(i * 104729 % 1000003 - 500000) + "," +
            std::to_string(i % 97) + ".25," + (i % 11 ? "2024-0" + std::to_string(1 + i % 9) + "-1" + std::to_string(i % 10) : "") + "\n";
  write_file(f, text);
  const CudaRunInfo before = cuda_run_info();
  check_same(dir, "groupby k | agg median(v), count_distinct(x), quantile(v, 0.9), sum(x), median(d)", f, RunConfig{},
             {4096, 1 << 20, 0});
  check_same(dir, "agg median(v), count_distinct(v), quantile(x, 0.3), median(d)", f, RunConfig{}, {4096, 0});
  CHECK(cuda_run_info().cpu_reruns == before.cpu_reruns);
  // v * 10^14 passes 64 bits for |v| > 92233 (as a decimal: an int would overflow, a bad row): the
  // GPU hands the scan to the CPU.
  const RunResult wide = check_same(dir, "groupby k | agg median(v * 100000000000000.0), count()", f, RunConfig{}, {0});
  CHECK(wide.code == 0);
  CHECK(cuda_run_info().cpu_reruns > before.cpu_reruns);
  // Strings listed beside numbers as their bytes: up to 8 on the GPU (k is 4-8 bytes, d 10); a
  // longer one hands the scan to the CPU.
  const CudaRunInfo strings = cuda_run_info();
  check_same(dir, "groupby x | agg count_distinct(k), median(k), quantile(v, 0.5), max(v)", f, RunConfig{},
             {4096, 1 << 20, 0});
  check_same(dir, "agg count_distinct(k), quantile(k, 0.9), median(x)", f, RunConfig{}, {0});
  CHECK(cuda_run_info().cpu_reruns == strings.cpu_reruns);
  const RunResult longer = check_same(dir, "groupby x | agg count_distinct(k || '-' || x), median(v)", f, RunConfig{},
                                      {0});
  CHECK(longer.code == 0);
  CHECK(cuda_run_info().cpu_reruns > strings.cpu_reruns);
}

// `groupby KEYS | top N by O | select` of keys and O runs in the scan as
// order statistics of each group's listed values (spec/bind_top.cpp): on
// the GPU too, with the CPU's bytes: ties, nulls (after the values), NaN,
// -0.0 and infinities, N past the groups' rows, O grouped by too.
TEST_CASE("gpu: top N per group in the scan gives the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  const std::vector<std::string> pipelines = {
      "groupby s | top 3 by v desc | select s, v",
      "groupby b, dt | top 2 by f | select b, dt, f",
      "groupby i | top 16 by d desc | select i, d as top_d",
      "groupby s, b | top 4 by ts | select ts, s",
      "groupby dt | top 1 by b desc | select dt, b",
      "groupby s | top 5 by i desc | select s, i",
      "groupby s, v | top 2 by v | select s, v",
      "filter v > 0 | groupby d | top 3 by v * 2 desc | select d | limit 50",
  };
  TempDir dir;
  for (int distinct : {5, 300}) {
    const std::string input = dir.file("keys" + std::to_string(distinct) + ".csv");
    write_file(input, testing::key_types_csv(static_cast<uint64_t>(distinct) + 3, 6000, distinct));
    const CudaRunInfo before = cuda_run_info();
    for (const std::string& p : pipelines) {
      const RunResult cpu = check_same(dir, p, input, RunConfig{}, {7, 4096, 0});
      CHECK(std::count(cpu.out.begin(), cpu.out.end(), '\n') > 3);
    }
    CHECK(cuda_run_info().cpu_plans == before.cpu_plans);  // the GPU ran every one
    CHECK(cuda_run_info().cpu_reruns == before.cpu_reruns);
  }
}

TEST_CASE("gpu: GPUs that join the scan when ready give the CPU's bytes", "[gpu]") {
  if (!have_gpu() || cuda_device_count() < 2) return;
  TempDir dir;
  const std::string f = dataset_file(dir, "join.csv", 4242, 2000);
  RunConfig c;
  c.gpus_together = false;  // GPU 1 takes part or not, depending on when it is ready
  for (int i = 0; i < 3; ++i) {
    const RunResult r = check_same(dir, "groupby k1, k2 | agg sum(v1), count(), mean(f), var(v2)", f, c, {61, 4096});
    CHECK(r.code == 0);
  }
}

TEST_CASE("gpu: a run reuses the staging the run before it left on its GPUs", "[gpu]") {
  if (!have_gpu()) return;
  const CpuReference ref("reuse.csv", 77, 3000, "groupby k1 | agg sum(v1), count(), max(f)");
  RunConfig c;
  for (const std::string& dev : gpu_devices()) {
    c.device = dev;
    c.chunk = 333;  // no other test uses this batch size: the first run builds
    const uint64_t before = cuda_run_info().stagings_built;
    CHECK(ref.same(c));
    const uint64_t built = cuda_run_info().stagings_built - before;
    CHECK(built >= 1);
    CHECK(ref.same(c));  // same GPUs, same batch size: nothing built
    CHECK(cuda_run_info().stagings_built - before == built);
    // Other threads: other pinned slots (built), the GPUs' stagings kept
    // (their slot events made again).
    c.threads = 3;
    const uint64_t before_threads = cuda_run_info().stagings_built;
    CHECK(ref.same(c));
    CHECK(cuda_run_info().stagings_built - before_threads == 1);
    c.threads = 0;
    CHECK(ref.same(c));
    c.chunk = 4096;  // another batch size: built again, and still the same bytes
    CHECK(ref.same(c));
    CHECK(cuda_run_info().stagings_built - before > built);
  }
}

// The slots are made before the GPU count is known, with room for any; each
// run hands out only those its readers and GPUs use.
TEST_CASE("gpu: a run uses the slots its GPUs read into, fewer for fewer GPUs", "[gpu]") {
  if (!have_gpu()) return;
  const CpuReference ref("slots.csv", 99, 3000, "groupby k2 | agg sum(v1), count(), min(f)");
  RunConfig c;
  c.chunk = 4096;
  std::vector<std::string> order = {"0"};
  if (cuda_device_count() > 1) order = {"0", all_gpus(), "0"};
  const bool many_threads = std::thread::hardware_concurrency() > 4;  // room for more than one GPU's slots
  std::vector<int> used;
  for (const std::string& dev : order) {
    c.device = dev;
    const uint64_t scans = cuda_run_info().gpu_scans;
    CHECK(ref.same(c));
    const CudaRunInfo info = cuda_run_info();
    CHECK(info.gpu_scans == scans + 1);  // it ran on the GPUs
    CHECK(info.slots_in_use >= 1);
    CHECK(info.slots_in_use <= info.slot_capacity);
    if (dev == "0" && many_threads) CHECK(info.slots_in_use < info.slot_capacity);
    used.push_back(info.slots_in_use);
  }
  if (used.size() == 3) {
    CHECK(used[0] < used[1]);  // more GPUs: more readers and copies in flight
    CHECK(used[2] == used[0]);
  }
  // Fewer threads: fewer readers, so fewer slots, and the same bytes.
  if (many_threads) {
    c.device = "0";
    c.threads = 3;
    CHECK(ref.same(c));
    CHECK(cuda_run_info().slots_in_use < used[0]);
  }
}

// PinnedSlots itself: pin(n) page-locks at least the first n slots (more
// only when it had to allocate all of them with CUDA), hands out only those,
// and a later, larger pin locks more.
TEST_CASE("gpu: pinned slots lock and hand out the first n", "[gpu]") {
  if (!have_gpu()) return;
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  const uint64_t piece = 2ull << 20;
  cuda::PinnedSlots slots(8, piece, 2);  // two faulted in: pin() faults the others
  auto locked = [&](uint64_t at) {
    unsigned flags = 0;
    const bool yes = cudaHostGetFlags(&flags, slots.data() + at) == cudaSuccess;
    (void)cudaGetLastError();
    return yes;
  };
  for (int n : {3, 2, 6}) {
    slots.pin(n);
    INFO("pin(" << n << ")");
    CHECK(slots.count() == n);
    REQUIRE(slots.pinned_bytes() >= n * piece);
    CHECK(locked(0));
    CHECK(locked(n * piece - 1));
    if (slots.pinned_bytes() < 8 * piece) CHECK_FALSE(locked(slots.pinned_bytes()));
    std::vector<int> taken;
    for (int i = 0; i < n; ++i) {
      const cuda::PinnedSlots::Slot s = slots.take();
      CHECK(s.mem == slots.data() + static_cast<uint64_t>(s.index) * piece);
      taken.push_back(s.index);
    }
    std::sort(taken.begin(), taken.end());
    std::vector<int> first_n(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) first_n[static_cast<size_t>(i)] = i;
    CHECK(taken == first_n);  // each of the first n once, none past them
    for (int i : taken) slots.give(i, nullptr);
  }
  CHECK(slots.pinned_bytes() >= 6 * piece);  // after 3, 2 (kept 3) and 6
}

TEST_CASE("gpu: a run takes over the group table the run before it left, cleared", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dataset_file(dir, "tables.csv", 78, 3000);
  // min and max: the same key and word counts, other initial words; then
  // more keys (a new table), and the first pipeline again.
  const std::vector<std::string> pipelines = {"groupby k1 | agg min(v1)", "groupby k1 | agg max(v1)",
                                              "groupby k1, k2 | agg min(v1)", "groupby k1 | agg min(v1)"};
  RunConfig c;
  std::vector<std::string> cpu;
  for (const auto& p : pipelines) {
    cpu.push_back(run_tool(dir, p, f, c).out);
    REQUIRE(!cpu.back().empty());
  }
  for (const std::string& dev : gpu_devices()) {
    c.device = dev;
    c.chunk = 2048;
    const uint64_t before = cuda_run_info().tables_reused;
    for (size_t i = 0; i < pipelines.size(); ++i) {
      INFO(dev << ": " << pipelines[i]);
      CHECK(run_tool(dir, pipelines[i], f, c).out == cpu[i]);
    }
    CHECK(cuda_run_info().tables_reused - before >= 1);  // at least max(v1) after min(v1)
  }
}

TEST_CASE("gpu: --profile shows each GPU's read, waits and busy times", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  // ~200 batches: each busy total is well above the 0.1 ms the profile prints.
  const std::string f = dataset_file(dir, "profile.csv", 91, 200000);
  Options opts;
  opts.pipeline = "groupby k1 | agg sum(v1), count()";
  opts.files = {f};
  opts.device = "gpu";
  opts.chunk_size = 65536;  // several batches
  opts.profile = true;
  opts.output_path = dir.file("out.csv");
  {
    testing::CaptureStderr capture(dir.file("profile.txt"));
    REQUIRE(run_pipeline(opts) == 0);
  }
  const std::string text = read_file(dir.file("profile.txt"));
  // A stage's seconds: the number after its name and its device.
  auto seconds_of = [&](const std::string& stage) {
    const size_t at = text.find(stage);
    if (at == std::string::npos) return -1.0;
    std::istringstream line(text.substr(at + stage.size(), text.find('\n', at) - at - stage.size()));
    std::string device;
    double s = -1;
    line >> device >> s;
    return s;
  };
  // The scan's line names what ran it.
  const size_t scan_at = text.find("\n  scan ");
  REQUIRE(scan_at != std::string::npos);
  std::istringstream scan_line(text.substr(scan_at + 8, 40));
  std::string scan_device;
  scan_line >> scan_device;
  CHECK(scan_device == "gpu");
  CHECK(seconds_of("gpu: wait for reads") >= 0);  // may round to 0: reads run ahead
  CHECK(seconds_of("gpu: wait for a buffer") >= 0);
  CHECK(seconds_of("gpu: wait for start states") >= 0);
  CHECK(seconds_of("gpu: wait (table, end)") >= 0);
  CHECK(seconds_of("gpu: grow group table") >= 0);  // 0 when a kept table was big enough
  CHECK(seconds_of("gpu: set-up, not waiting") >= 0);  // may round to 0
  CHECK(seconds_of("gpu: end of run") >= 0);
  CHECK(seconds_of("gpu: copy in, start to end") > 0);
  CHECK(seconds_of("gpu busy: quote vectors") > 0);
  CHECK(seconds_of("gpu busy: rows+aggregate") > 0);
}

// --trace on the GPUs: each batch's reads on host threads (pid 0), its copy
// on a copy stream and its two kernel phases on the compute stream of its
// GPU (pid 1 + GPU), on the run's timeline (within the scan stage); the
// table's merge and copy back.
void check_gpu_trace(const std::string& device, bool several) {
  TempDir dir;
  const std::string f = dataset_file(dir, "trace.csv", 92, 200000);
  Options opts;
  opts.pipeline = "groupby k1 | agg sum(v1), count()";
  opts.files = {f};
  opts.device = device;
  opts.gpus_start_together = true;
  opts.chunk_size = 65536;  // many batches
  opts.profile = true;
  opts.trace_path = dir.file("trace.json");
  opts.output_path = dir.file("out.csv");
  {
    testing::CaptureStderr capture(dir.file("profile.txt"));
    REQUIRE(run_pipeline(opts) == 0);
  }
  const std::string profile = read_file(dir.file("profile.txt"));
  INFO(profile);
  const size_t scan_at = profile.find("\n  scan ");  // the scan's line names what ran it
  REQUIRE(scan_at != std::string::npos);
  std::istringstream scan_line(profile.substr(scan_at + 8, 40));
  std::string scan_device;
  scan_line >> scan_device;
  REQUIRE(scan_device == "gpu");
  const size_t at = profile.find(" partitions of ");
  REQUIRE(at != std::string::npos);
  const uint64_t batches = std::stoull(profile.substr(profile.rfind(' ', at - 1) + 1));
  REQUIRE(batches > 8);

  const testing::Trace tr = testing::parse_trace(read_file(opts.trace_path));
  INFO(tr.problem);
  REQUIRE(tr.valid);
  const testing::TraceEvent* scan = nullptr;
  for (const auto* e : tr.complete("stage"))
    if (e->name == "scan") scan = e;
  REQUIRE(scan != nullptr);
  // Per batch and stage: the batch's copy, its vector kernels and row kernels.
  auto per_batch = [&](const std::string& cat, const std::string& what) {
    std::map<double, int> seen;  // batch -> events (a batch number per GPU feed: one source here)
    for (const auto* e : tr.complete(cat)) {
      if (e->name.rfind(what + " batch ", 0) != 0) continue;
      INFO(e->name);
      CHECK(e->pid >= 1);
      CHECK(tr.process_name(e->pid) == "gpu" + std::to_string(e->pid - 1));
      const std::string stream = tr.thread_name(e->pid, e->tid);
      CHECK(stream == (what == "copy" ? "copy stream " + std::to_string(e->tid - 1) + " (host to device)"
                                      : std::string("compute stream")));
      CHECK(e->ts >= scan->ts - 100);  // on the run's timeline, give or take the conversion
      CHECK(e->ts + e->dur <= scan->ts + scan->dur + 100);
      ++seen[e->args.at("batch")];
    }
    CHECK(seen.size() == batches);
    for (const auto& [b, n] : seen) CHECK(n == 1);
    return seen.size();
  };
  per_batch("copy", "copy");
  per_batch("kernel", "vectors");
  per_batch("kernel", "rows");
  // Reads: on host threads, in pieces, every batch's bytes.
  std::set<double> read_batches;
  for (const auto* e : tr.complete("read")) {
    if (e->name.rfind("read batch ", 0) != 0) continue;
    CHECK(e->pid == 0);
    read_batches.insert(e->args.at("batch"));
  }
  CHECK(read_batches.size() == batches);
  std::set<int> gpu_pids;
  std::map<std::pair<int, int>, std::vector<const testing::TraceEvent*>> tracks;
  for (const auto& e : tr.events) {
    if (e.ph != "X") continue;
    CHECK(e.ts >= 0);
    CHECK(e.dur >= 0);
    if (e.pid > 0) gpu_pids.insert(e.pid);
    tracks[{e.pid, e.tid}].push_back(&e);
  }
  CHECK(gpu_pids.size() == (several ? static_cast<size_t>(cuda_device_count()) : 1u));
  for (const auto& [track, evs] : tracks) {
    INFO("pid " << track.first << " tid " << track.second);
    CHECK(testing::nests(evs, 50.0));  // a GPU's times are converted to the host's clock (µs)
  }
  bool copied_back = false, merged = false;
  for (const auto* e : tr.complete("copy")) copied_back |= e->name == "copy back table";
  for (const auto* e : tr.complete("merge")) merged |= e->name == "merge tables";
  CHECK(copied_back);
  CHECK(merged == several);
}

TEST_CASE("gpu: --trace has an event per batch and stage on the GPU", "[gpu]") {
  if (!have_gpu()) return;
  check_gpu_trace("gpu", false);
  if (cuda_device_count() > 1) check_gpu_trace(all_gpus(), true);
}

TEST_CASE("gpu: a table with room for the batches in flight stops the pipeline rarely", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dataset_file(dir, "few.csv", 5, 20000);  // ~250 batches of 4 KiB, 6 groups
  RunConfig c;
  const RunResult cpu = run_tool(dir, "groupby k1 | agg sum(v1), count()", f, c);
  for (const std::string& dev : gpu_devices()) {
    c.device = dev;
    c.chunk = 4096;
    const uint64_t before = cuda_run_info().table_stops;
    CHECK(run_tool(dir, "groupby k1 | agg sum(v1), count()", f, c).out == cpu.out);
    // A stop to size the table at the first batch of each GPU, not one per
    // batch (which a table sized only for the next batch caused).
    CHECK(cuda_run_info().table_stops - before <= static_cast<uint64_t>(cuda_device_count()));
  }
}

// The table is sized by each batch's LF and CR count, not by its bytes over
// the columns: long rows of three columns and five groups, batches of 20000
// bytes (no other test uses that size, so no table is kept from before).
TEST_CASE("gpu: the group table is sized by the rows in a batch, not its bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("long_rows.csv");
  std::string text = "k,v,pad\n";
  for (int i = 0; i < 3000; ++i)
    text += "key" + std::to_string(i % 5) + "," + std::to_string(i * 37 % 1000 - 500) + "," + std::string(70, 'x') + "\n";
  write_file(f, text);
  RunConfig c;
  const RunResult cpu = run_tool(dir, "groupby k | agg sum(v), count()", f, c);
  REQUIRE(cpu.code == 0);
  for (const std::string& dev : gpu_devices()) {
    c.device = dev;
    c.chunk = 20000;
    const CudaRunInfo before = cuda_run_info();
    CHECK(run_tool(dir, "groupby k | agg sum(v), count()", f, c).out == cpu.out);
    const CudaRunInfo after = cuda_run_info();
    CHECK(after.gpu_scans == before.gpu_scans + 1);
    CHECK(after.cpu_reruns == before.cpu_reruns);
    // Rows of 79-82 bytes: at most 254 start in 20000 bytes, and ten batches
    // ahead (and doubling) is a few thousand groups. By bytes over columns
    // the bound was 6668 per batch, ten times that ahead.
    INFO("table groups " << after.table_groups);
    CHECK(after.table_groups > 0);
    CHECK(after.table_groups < 20000 / 3);
    CHECK(after.table_stops - before.table_stops <= static_cast<uint64_t>(cuda_device_count()));
  }
}

// Batch tails are sized from the inference sample's rows (short here: the
// 64 KiB minimum). A quoted field of many lines, far past the sample and
// across batch edges, makes a row longer than that tail: the GPUs scan again
// with the 1 MiB tail; a row longer than that makes the CPU scan.
TEST_CASE("gpu: a row longer than the sampled rows' tail makes the GPUs scan again", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("long_row.csv");
  const std::string pipeline = "groupby k | agg sum(v), count()";
  auto file_with_row_of = [&](uint64_t field_bytes) {
    std::string text = "k,s,v\n";
    for (int i = 0; text.size() < (2u << 20) - 1000; ++i)
      text += "k" + std::to_string(i % 7) + ",s" + std::to_string(i % 100) + "," + std::to_string(i % 1000) + "\n";
    std::string field;
    while (field.size() < field_bytes) field += "line, \"\"quoted\"\"\r\n";
    text += "k3,\"" + field + "\",-5\n";  // starts 1000 bytes before the 2 MiB batch edge
    for (int i = 0; text.size() < (3u << 20) + field_bytes; ++i)
      text += "k" + std::to_string(i % 5) + ",t," + std::to_string(i % 300) + "\n";
    write_file(f, text);
  };
  for (const uint64_t field_bytes : {uint64_t{200} << 10, uint64_t{2} << 20}) {
    file_with_row_of(field_bytes);
    const RunResult cpu = run_tool(dir, pipeline, f, RunConfig{});
    REQUIRE(cpu.code == 0);
    const bool fits_longest_tail = field_bytes < kGpuMaxTail;
    for (const std::string& dev : gpu_devices())
      for (const uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20}) {
        INFO("field " << field_bytes << " bytes, --device " << dev << ", chunk " << chunk);
        RunConfig c;
        c.device = dev;
        c.chunk = chunk;
        c.profile = true;
        const CudaRunInfo before = cuda_run_info();
        const RunResult r = run_tool(dir, pipeline, f, c);
        CHECK(r.out == cpu.out);
        const CudaRunInfo after = cuda_run_info();
        CHECK(after.tail_reruns == before.tail_reruns + 1);
        CHECK(after.gpu_scans == before.gpu_scans + (fits_longest_tail ? 1 : 0));
        CHECK(after.cpu_reruns == before.cpu_reruns + (fits_longest_tail ? 0 : 1));
        // --profile keeps every try given up.
        CHECK(r.profile.find("gpu: scan with 64 KiB tails, a row longer") != std::string::npos);
        CHECK((r.profile.find("gpu: scan handed to the cpu") != std::string::npos) == !fits_longest_tail);
      }
  }
}

TEST_CASE("gpu: plans without a GPU form run on the CPU with the same bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("in.csv");
  write_file(f, testing::make_dataset(21, {}).text);
  const CudaRunInfo before = cuda_run_info();
  for (const auto& p : kCpuPipelines) check_same(dir, p, f, RunConfig{}, {7, 0});
  CHECK(cuda_run_info().cpu_plans > before.cpu_plans);
}

TEST_CASE("gpu: bad rows are reported exactly as the CPU executor reports them", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("bad.csv");
  testing::DatasetOptions o;
  o.rows = 800;
  o.bad_rows = true;
  o.mixed_eol = true;
  write_file(f, testing::make_dataset(31, o).text);
  SECTION("--bad-rows skip: same output and --rejects file") {
    RunConfig c;
    c.skip = true;
    const RunResult r = check_same(dir, kGpuPipelines[0], f, c, {7, 4096, 0});
    CHECK(r.code == 0);
    CHECK(!r.rejects.empty());
  }
  SECTION("--bad-rows fail: same exit code and message, with file:line") {
    const RunResult r = check_same(dir, kGpuPipelines[1], f, RunConfig{}, {100, 0});
    CHECK(r.code == kExitInput);
    CHECK(r.error.find("bad.csv:") != std::string::npos);
  }
  SECTION("NUL bytes and invalid UTF-8 (and valid multibyte text in good rows)") {
    testing::DatasetOptions b;
    b.rows = 600;
    b.byte_issues = true;
    write_file(f, testing::make_dataset(32, b).text);
    RunConfig c;
    c.skip = true;
    const RunResult r = check_same(dir, kGpuPipelines[0], f, c, {7, 4096, 0});
    CHECK(r.code == 0);
    CHECK(!r.rejects.empty());
    check_same(dir, kGpuPipelines[1], f, RunConfig{}, {100, 0});
  }
  SECTION("a value that does not fit --schema") {
    write_file(f, "k,v\na,1\nb,x2\n");
    RunConfig c;
    c.schema = "v:int";
    const RunResult r = check_same(dir, "groupby k | agg sum(v)", f, c, {7, 0});
    CHECK(r.code == kExitInput);
    CHECK(r.error.find(":3:") != std::string::npos);
  }
  SECTION("a value that widens an inferred type after the sample") {
    std::string text = "k,v\n";
    for (int i = 0; i < 5000; ++i) text += "a," + std::to_string(i) + "\n";
    text += "b,2.5\n";
    write_file(f, text);
    const RunResult r = check_same(dir, "groupby k | agg sum(v), count()", f, RunConfig{}, {4096, 0});
    CHECK(r.code == 0);
    CHECK(r.out.find("b,2.5,1") != std::string::npos);
  }
}

// Narrow rows ("station;temp") in batches without quotes are split at their
// delimiters, and their keys hashed a word at a time; the batches' other rows
// (the last, empty lines, bad rows) and batches holding a quote, a NUL or bytes
// that are not UTF-8 go through parse_row. Both must agree with the CPU.
std::string narrow_rows(uint64_t seed, int rows, bool messy) {
  std::mt19937_64 rng(seed);
  const std::vector<std::string> names = {
      "A", "Oslo", "Z\xc3\xbcrich", "S\xc3\xa3o Paulo", "\xe6\x9d\xb1\xe4\xba\xac", "Ny", "Ushuaia-Tierra del Fuego",
      "Llanfairpwllgwyngyllgogerychwyrndrob", "\xf0\x9f\x98\x80 city", "abcdefgh", "abcdefghi", "abcdefg",
      "Reykjav\xc3\xadk", "ABCDEFGHIJKLMNOP", "Bras\xc3\xadlia"};
  std::string text;
  for (int i = 0; i < rows; ++i) {
    const std::string& name = names[rng() % names.size()];
    const int tenths = static_cast<int>(rng() % 1999) - 999;
    std::string temp = (tenths < 0 ? "-" : "") + std::to_string(std::abs(tenths) / 10) + "." +
                       std::to_string(std::abs(tenths) % 10);
    if (rng() % 50 == 0) temp.clear();  // a null temperature
    std::string eol = "\n";
    if (messy) {
      const int pick = static_cast<int>(rng() % 400);
      if (pick == 0) eol = "\r\n";
      if (pick == 1) eol = "\r";
      if (pick == 2) text += "\n";                          // an empty line
      if (pick == 3) temp += ";extra";                      // a field too many
      if (pick == 4) text += "\"Quoted;\"\"name\";1.5\n";   // a quote: its batch takes parse_row
      if (pick == 5) text += "Bad\xff;2.0\n";               // not UTF-8
      if (pick == 6) text += std::string("Nul\0", 4) + ";3.0\n";
      if (pick == 7) text += ";4.5\n";                      // a null station
    }
    text += name + ";" + temp + eol;
  }
  return text;
}

TEST_CASE("gpu: rows of plain batches are split at their delimiters, with the CPU's bytes", "[gpu]") {
  if (!have_gpu()) return;
  TempDir dir;
  const std::string f = dir.file("narrow.csv");
  const std::string q = "groupby station | agg min(temp), mean(temp), max(temp), count(), sum(temp)";
  RunConfig c;
  c.delimiter = ";";
  c.names = {"station", "temp"};
  SECTION("clean rows: split at delimiters on the GPU, no CPU rerun") {
    write_file(f, narrow_rows(41, 20000, false));
    const CudaRunInfo before = cuda_run_info();
    const RunResult r = check_same(dir, q, f, c, {100, 4096, 0});
    CHECK(r.code == 0);
    const CudaRunInfo after = cuda_run_info();
    CHECK(after.cpu_reruns == before.cpu_reruns);
    CHECK(after.plain_rows - before.plain_rows > 2 * 19000);  // all but each batch's last row, in three runs
    check_same(dir, "groupby station, temp > 0 | agg count() | sort count() desc, station", f, c, {4096});
  }
  SECTION("CRLF, CR, empty lines, bad rows, quotes, NUL and invalid bytes among them") {
    write_file(f, narrow_rows(42, 20000, true));
    c.skip = true;
    const RunResult r = check_same(dir, q, f, c, {7, 100, 4096, 1 << 16, 0});
    CHECK(r.code == 0);
    CHECK(!r.rejects.empty());
    c.skip = false;
    CHECK(check_same(dir, q, f, c, {4096, 0}).code == kExitInput);
  }
  // Names of up to 26 bytes that differ in their last bytes or their length.
  auto alike_keys = [](uint64_t seed, int rows, int distinct) {
    std::mt19937_64 rng(seed);
    std::string text;
    for (int i = 0; i < rows; ++i) {
      const int len = static_cast<int>(rng() % 27), id = static_cast<int>(rng() % distinct);
      std::string name(static_cast<size_t>(len), 'k');
      for (int at = len - 1, rest = id; at >= 0 && rest; --at, rest /= 10) name[at] = static_cast<char>('0' + rest % 10);
      text += name + ";" + std::to_string(static_cast<int>(rng() % 200) - 100) + "." + std::to_string(i % 10) + "\n";
    }
    return text;
  };
  SECTION("more short keys than a block caches, alike but for one byte, up to 26 bytes long") {
    write_file(f, alike_keys(44, 60000, 3000));
    const CudaRunInfo before = cuda_run_info();
    CHECK(check_same(dir, q, f, c, {100, 4096, 1 << 16, 0}).code == 0);
    CHECK(cuda_run_info().plain_rows - before.plain_rows > 3 * 59000);
  }
  SECTION("a batch that brings more groups than the GPU keeps batch states for") {
    // 30,000 groups in the first 1 MiB batch; the next ones find them in the
    // directory and update the batch's states of groups, and bring 100,000
    // more, past those states' reach, whose rows update their groups' words.
    std::string text;
    for (int i = 0; i < 30000; ++i) text += "s" + std::to_string(i) + ";" + std::to_string(i % 19 - 9) + ".5\n";
    for (int i = 0; i < 150000; ++i) text += "s" + std::to_string(i % 100) + ";" + std::to_string(i % 7) + ".1\n";
    for (int i = 0; i < 100000; ++i) text += "t" + std::to_string(i) + ";-" + std::to_string(i % 5) + ".2\n";
    for (int i = 0; i < 50000; ++i) text += "s" + std::to_string(i * 7 % 30000) + ";" + std::to_string(i % 3) + ".7\n";
    write_file(f, text);
    const RunResult r = check_same(dir, q, f, c, {1 << 19, 1 << 20});
    CHECK(r.code == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 130000);
  }
  SECTION("more short keys than the GPU's directory of them holds: later batches go without it") {
    write_file(f, alike_keys(45, 400000, 100000));
    const RunResult r = check_same(dir, q, f, c, {1 << 16, 1 << 20, 0});
    CHECK(r.code == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 60000);
  }
  SECTION("ints at and past 32 bits and empty values, the key between two value columns") {
    // Rows of values that fit 32 bits take the short way (into their block's
    // states of short keys), the others the general way, into the same
    // groups; a plan that reads both value columns goes the general way.
    std::mt19937_64 rng(47);
    const int64_t edges[] = {INT32_MAX, INT32_MIN, int64_t{INT32_MAX} + 1, int64_t{INT32_MIN} - 1, int64_t{1} << 40,
                             -(int64_t{1} << 40), 0, -1};
    std::string text = "v1,k,v2\n";
    for (int i = 0; i < 30000; ++i) {
      const int64_t v1 = rng() % 5 == 0 ? edges[rng() % 8] : static_cast<int64_t>(rng() % 2000001) - 1000000;
      const std::string v2 = rng() % 20 == 0 ? "" : std::to_string(static_cast<int>(rng() % 200) - 100);
      text += std::to_string(v1) + ",key" + std::to_string(rng() % 50) + "," + v2 + (i % 7 ? "\n" : "\r\n");
    }
    write_file(f, text);
    const CudaRunInfo before = cuda_run_info();
    const RunResult r = check_same(dir, "groupby k | agg count(), count(v1), sum(v1), min(v1), max(v1), mean(v1)", f,
                                   RunConfig{}, {100, 4096, 1 << 16, 0});
    CHECK(r.code == 0);
    check_same(dir, "groupby k | agg min(v2), count(), max(v2), sum(v2)", f, RunConfig{}, {4096, 0});
    check_same(dir, "groupby k | agg count(v2), sum(v1), mean(v2), max(v1)", f, RunConfig{}, {4096, 0});
    const CudaRunInfo after = cuda_run_info();
    CHECK(after.cpu_reruns == before.cpu_reruns);
    CHECK(after.plain_rows - before.plain_rows > 7 * 29000);
  }
  SECTION("quoted fields and comment lines longer than a segment, with escapes and CRLF") {
    // Segments of no quote, escape or comment byte that start inside a quoted
    // field, just after an escape byte, or inside a comment line: their
    // vectors and row starts come without a walk, and must be the walk's.
    std::mt19937_64 rng(46);
    std::string text = "k,v\r\n";
    const char* body_parts[] = {"\n", "\r\n", ",", "\\\"", "\\q", "qq", "q", "\r", "\\\\"};
    for (int i = 0; i < 4000; ++i) {
      const int kind = static_cast<int>(rng() % 8);
      if (kind == 0) {
        text += "#" + std::string(60 + rng() % 140, 'c') + ",x;y\r\n";
      } else if (kind == 1) {
        std::string body;
        const size_t len = 60 + rng() % 160;
        while (body.size() < len) body += body_parts[rng() % 9];
        text += "\"" + body + "\"," + std::to_string(rng() % 100) + "\r\n";
      } else {
        text += "k" + std::to_string(rng() % 7) + "," + std::to_string(static_cast<int>(rng() % 1000) - 500) +
                (rng() % 2 ? "\r\n" : "\n");
      }
    }
    write_file(f, text);
    RunConfig d;
    d.escape = '\\';
    d.comment = '#';
    const CudaRunInfo before = cuda_run_info();
    const RunResult r = check_same(dir, "groupby k | agg count() as n, sum(v), min(v) | sort n desc, k", f, d,
                                   {7, 100, 4096, 1 << 16, 0});
    CHECK(r.code == 0);
    CHECK(r.out.find("\"") != std::string::npos);  // the quoted keys, with their line ends
    CHECK(cuda_run_info().cpu_reruns == before.cpu_reruns);
  }
  SECTION("a header and columns the pipeline does not read, delimited by commas") {
    std::string text = "id,station,temp,note\n", rows = narrow_rows(43, 5000, false);
    std::istringstream in(rows);
    int i = 0;
    for (std::string line; std::getline(in, line); ++i) {
      const size_t at = line.find(';');
      text += std::to_string(i) + "," + line.substr(0, at) + "," + line.substr(at + 1) + ",n" + std::to_string(i % 7) + "\n";
    }
    write_file(f, text);
    const RunResult r = check_same(dir, q, f, RunConfig{}, {100, 4096, 0});
    CHECK(r.code == 0);
  }
}

// Not a test: q1 throughput on a file named by WARPCSV_BENCH_FILE, run four
// times in-process (the first run pays CUDA start-up; the last one prints its
// --profile). scripts/gpu-check.sh runs it. WARPCSV_BENCH_PIPELINE,
// WARPCSV_BENCH_DEVICE and WARPCSV_BENCH_CHUNK (the batch size in bytes)
// change the pipeline, --device and --chunk-size.
TEST_CASE("gpu: q1 throughput in-process", "[.bench]") {
  const char* path = std::getenv("WARPCSV_BENCH_FILE");
  if (!path || !have_gpu()) return;
  const char* pipeline = std::getenv("WARPCSV_BENCH_PIPELINE");
  Options opts;
  opts.pipeline = pipeline ? pipeline : "groupby id1 | agg sum(v1)";
  opts.files = {path};
  const char* device = std::getenv("WARPCSV_BENCH_DEVICE");  // e.g. 0,1 for both GPUs of a small file
  opts.device = device ? device : "gpu";
  if (const char* chunk = std::getenv("WARPCSV_BENCH_CHUNK")) opts.chunk_size = std::strtoull(chunk, nullptr, 10);
  opts.quiet = true;
  opts.output_path = "/dev/null";
  const double bytes = static_cast<double>(std::filesystem::file_size(path));
  for (int i = 0; i < 4; ++i) {
    opts.profile = i == 3;  // the stages of a warm run, after the timed ones
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(run_pipeline(opts) == 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "bench: run " << i << " " << s << " s " << bytes / s / 1e9 << " GB/s (" << opts.pipeline
              << ", --device " << opts.device << ")" << std::endl;
  }
  CHECK(cuda_run_info().gpu_scans >= 3);
  // Whether the pinned slots got huge pages (the runs' speed varies by process).
  std::ifstream rollup("/proc/self/smaps_rollup");
  for (std::string line; std::getline(rollup, line);)
    if (line.rfind("AnonHugePages", 0) == 0) std::cout << "bench: " << line << std::endl;
}

#endif
