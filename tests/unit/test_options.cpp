// The command line: every option fills Options; bad values are usage errors
// that name the option; --help / --version exit early with their text.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli/option_table.hpp"
#include "cli/options.hpp"
#include "cli/version.hpp"
#include "exec/device.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "warpcsv");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  return parse_options(static_cast<int>(args.size()), argv.data());
}

// The message of the UsageError that parsing `args` throws ("" if none).
std::string usage_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("options: defaults with a pipeline and no file") {
  Options o = parse({"groupby a | agg count()"});
  CHECK(o.pipeline == "groupby a | agg count()");
  CHECK(o.files.empty());
  CHECK(o.dialect.delimiter == ",");
  CHECK(o.dialect.quote == '"');
  CHECK(o.dialect.escape == -1);
  CHECK(o.dialect.comment == -1);
  CHECK(o.dialect.header);
  CHECK(o.format == OutputFormat::Csv);
  CHECK(o.device == "auto");
  CHECK(o.chunk_size == 0);
  CHECK(o.bad_rows == BadRows::Fail);
  CHECK_FALSE(o.quiet);
}

TEST_CASE("options: every option lands in its field") {
  Options o = parse({"--no-header", "--names", "id, name,amount", "--quote", "'", "--null", "NA",
                     "--null=-", "--schema", "id:int,amount:decimal", "--escape", "\\",
                     "--comment", "#", "--skip", "2", "--bad-rows", "skip", "--rejects",
                     "bad.txt", "-f", "ndjson", "-o", "out.json", "--device", "0,1",
                     "--chunk-size", "64M", "--threads", "3", "--explain", "--profile",
                     "--progress", "--no-progress", "-q", "filter id > 1", "a.csv", "-",
                     "b.csv.gz"});
  CHECK(o.pipeline == "filter id > 1");
  CHECK(o.files == std::vector<std::string>{"a.csv", "-", "b.csv.gz"});
  CHECK_FALSE(o.dialect.header);
  CHECK(o.dialect.names == std::vector<std::string>{"id", "name", "amount"});
  CHECK(o.dialect.quote == '\'');
  CHECK(o.dialect.null_tokens == std::vector<std::string>{"NA", "-"});
  CHECK(o.schema == "id:int,amount:decimal");
  CHECK(o.dialect.escape == '\\');
  CHECK(o.dialect.comment == '#');
  CHECK(o.dialect.skip_lines == 2);
  CHECK(o.bad_rows == BadRows::Skip);
  CHECK(o.rejects_path == "bad.txt");
  CHECK(o.format == OutputFormat::Ndjson);
  CHECK(o.output_path == "out.json");
  CHECK(o.device == "0,1");
  CHECK(o.chunk_size == 64ull << 20);
  CHECK(o.threads == 3);
  CHECK(o.explain);
  CHECK(o.profile);
  CHECK(o.quiet);
}

TEST_CASE("options: --null takes one token and leaves the files alone") {
  Options o = parse({"--null", "NA", "select a", "x.csv", "y.csv"});
  CHECK(o.dialect.null_tokens == std::vector<std::string>{"NA"});
  CHECK(o.pipeline == "select a");
  CHECK(o.files == std::vector<std::string>{"x.csv", "y.csv"});
}

TEST_CASE("options: delimiter spellings") {
  CHECK(parse({"-d", "\\t", "p"}).dialect.delimiter == "\t");
  CHECK(parse({"-d", "tab", "p"}).dialect.delimiter == "\t");
  CHECK(parse({"--delimiter", "\t", "p"}).dialect.delimiter == "\t");
  CHECK(parse({"--delimiter=;", "p"}).dialect.delimiter == ";");
  CHECK(parse({"-d|", "p"}).dialect.delimiter == "|");
  CHECK(parse({"-d", ", ", "p"}).dialect.delimiter == ", ");
  CHECK(parse({"-d", "||", "p"}).dialect.delimiter == "||");
  CHECK(parse({"-d", "\xc2\xa6", "p"}).dialect.delimiter == "\xc2\xa6");
  CHECK(contains(usage_error({"-d", "abcde", "p"}), "--delimiter: expected 1 to 4 bytes"));
  CHECK(contains(usage_error({"-d", "\"", "p"}), "holds the quote character"));
  CHECK(contains(usage_error({"-d", ",\"", "p"}), "holds the quote character"));
  CHECK(contains(usage_error({"-d", ";\n", "p"}), "a line break cannot separate fields"));
  CHECK(contains(usage_error({"-d", "#;", "--comment", "#", "p"}), "--comment '#' is also in the delimiter"));
}

TEST_CASE("options: every output format and a suggestion for a typo") {
  CHECK(parse({"-f", "csv", "p"}).format == OutputFormat::Csv);
  CHECK(parse({"-f", "tsv", "p"}).format == OutputFormat::Tsv);
  CHECK(parse({"--format", "json", "p"}).format == OutputFormat::Json);
  CHECK(parse({"--format=ndjson", "p"}).format == OutputFormat::Ndjson);
  CHECK(parse({"-f", "table", "p"}).format == OutputFormat::Table);
  CHECK(parse({"-f", "markdown", "p"}).format == OutputFormat::Markdown);
  std::string e = usage_error({"-f", "jsno", "p"});
  CHECK(contains(e, "--format: expected csv|tsv|json|ndjson|table|markdown, found 'jsno'"));
  CHECK(contains(e, "did you mean 'json'?"));
}

TEST_CASE("options: chunk sizes") {
  CHECK(parse_byte_size("100", "--chunk-size") == 100);
  CHECK(parse_byte_size("512K", "--chunk-size") == 512u * 1024);
  CHECK(parse_byte_size("64M", "--chunk-size") == 64ull << 20);
  CHECK(parse_byte_size("64mb", "--chunk-size") == 64ull << 20);
  CHECK(parse_byte_size("1G", "--chunk-size") == 1ull << 30);
  CHECK(parse_byte_size("2GiB", "--chunk-size") == 2ull << 30);
  CHECK(parse_byte_size("7B", "--chunk-size") == 7);
  CHECK(contains(usage_error({"--chunk-size", "0", "p"}), "must be at least 1 byte"));
  CHECK(contains(usage_error({"--chunk-size", "abc", "p"}), "--chunk-size: not a number"));
  CHECK(contains(usage_error({"--chunk-size", "64X", "p"}), "unknown unit 'X'"));
  CHECK(contains(usage_error({"--chunk-size", "12MBB", "p"}), "unknown unit"));
  CHECK(contains(usage_error({"--chunk-size", "99999999999999999999", "p"}), "too large"));
  CHECK(contains(usage_error({"--chunk-size", "99999999999G", "p"}), "too large"));
  CHECK(contains(usage_error({"--chunk-size", "-5", "p"}), "not a number"));
}

TEST_CASE("options: devices") {
  CHECK(parse({"--device", "cpu", "p"}).device == "cpu");
  CHECK(parse({"--device", "gpu", "p"}).device == "gpu");
  CHECK(parse({"--device", "3", "p"}).device == "3");
  for (const char* bad : {"GPU", "0,", ",1", "0,,1", "cuda", ""})
    CHECK(contains(usage_error({"--device", bad, "p"}), "--device: expected auto, cpu, gpu"));
}

TEST_CASE("options: bad values name the option") {
  CHECK(contains(usage_error({"--bad-rows", "ignore", "p"}), "--bad-rows: expected fail|skip"));
  CHECK(contains(usage_error({"--rejects", "r.txt", "p"}), "--rejects needs --bad-rows skip"));
  CHECK(contains(usage_error({"--skip", "-1", "p"}), "--skip: expected a line count >= 0"));
  CHECK(contains(usage_error({"--skip", "x", "p"}),
                 "--skip: expected a line count >= 0, found 'x'"));
  CHECK(contains(usage_error({"--threads", "abc", "p"}), "found 'abc'"));
  CHECK(contains(usage_error({"--threads", "0", "p"}), "--threads: expected a thread count"));
  CHECK(contains(usage_error({"--names", "a,,b", "p"}), "--names: empty column name"));
  CHECK(contains(usage_error({"--names", "a,b,a", "p"}), "'a' appears twice"));
  CHECK(contains(usage_error({"--null", "", "p"}), "--null"));
  CHECK(contains(usage_error({"--delimiter"}), "--delimiter"));
}

TEST_CASE("options: unknown options get the closest name and a hint") {
  std::string e = usage_error({"--fromat", "json", "p"});
  CHECK(contains(e, "unknown option '--fromat'; did you mean '--format'?"));
  CHECK(contains(e, "warpcsv --help"));
  CHECK(contains(usage_error({"--no-headers", "p"}), "did you mean '--no-header'?"));
  CHECK(contains(usage_error({"--frobnicate=3", "p"}), "unknown option '--frobnicate'"));
  CHECK(contains(usage_error({"-x", "p"}), "unknown option '-x'"));
  // A value that looks like an option is still a value.
  CHECK(parse({"--comment", "-", "p"}).dialect.comment == '-');
}

TEST_CASE("options: a missing pipeline is a usage error") {
  CHECK(contains(usage_error({}), "missing PIPELINE"));
  CHECK(contains(usage_error({"-q"}), "missing PIPELINE"));
}

TEST_CASE("options: a file where the pipeline goes says the order") {
  testing::TempDir tmp;
  const std::string data = tmp.file("d.csv");
  std::FILE* f = std::fopen(data.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fclose(f);
  CHECK(contains(usage_error({data, "groupby a | agg count()"}),
                 "is a file, not a pipeline; the pipeline comes first: warpcsv 'groupby a | agg count()' " + data));
  CHECK(contains(usage_error({"-q", data}), "the pipeline comes first: warpcsv 'PIPELINE' " + data));
  CHECK(contains(usage_error({"-", "select a"}), "'-' is standard input, not a pipeline"));
  CHECK(parse({"select a", data}).files == std::vector<std::string>{data});
  CHECK(parse({"select a", "no-such.csv"}).pipeline == "select a");  // a missing file is the run's error
}

TEST_CASE("options: --no-output-header, for the formats that have a header") {
  CHECK(parse({"select a"}).output_header);
  CHECK_FALSE(parse({"--no-output-header", "-f", "table", "select a"}).output_header);
  CHECK(contains(usage_error({"--no-output-header", "-f", "json", "select a"}),
                 "--no-output-header: json output has no header row"));
}

TEST_CASE("options: --help and --version exit early with their text") {
  for (const char* flag : {"--help", "-h"}) {
    try {
      parse({flag});
      FAIL("expected EarlyExit");
    } catch (const EarlyExit& e) {
      CHECK(contains(e.text, "Usage: warpcsv [OPTIONS] PIPELINE [FILE...]"));
      CHECK(contains(e.text, "--chunk-size"));
      CHECK(contains(e.text, "Examples:"));
    }
  }
  for (const char* flag : {"--version", "-V"}) {
    try {
      parse({flag});
      FAIL("expected EarlyExit");
    } catch (const EarlyExit& e) {
#ifdef WARPCSV_HAVE_ZSTD
      CHECK(e.text == std::string("warpcsv ") + version_string() + "\nzstd: yes\n");
#else
      CHECK(e.text == std::string("warpcsv ") + version_string() + "\nzstd: no\n");
#endif
    }
  }
  // The project's version, then what git describe said in a build from a checkout.
  const std::string v = version_string();
  CHECK(v.rfind(WARPCSV_VERSION, 0) == 0);
  CHECK((v == WARPCSV_VERSION || v.rfind(std::string(WARPCSV_VERSION) + " (", 0) == 0));
}

// The tables --help, the man page and the completions are made from (option_table.cpp).
TEST_CASE("options: --help lists every option of the table, and the table every stage") {
  const std::string help = help_text();
  for (const auto& o : cli::option_table()) {
    std::string name = std::string("--") + o.long_name + (o.value ? std::string(" ") + o.value : "");
    if (o.short_name) name = std::string("-") + o.short_name + ", " + name;
    if (o.joins_previous) name = std::string(", --") + o.long_name;
    CHECK(contains(help, name));
  }
  CHECK(contains(help, "      --trace FILE      write a Chrome/Perfetto trace of the run (JSON) to FILE\n"));
  // The parser's list of stages is the table's.
  std::string stages;
  for (const auto& s : cli::stage_table()) stages += std::string(stages.empty() ? "" : ", ") + s.name;
  try {
    check_pipeline_syntax("frobnicate x");
    FAIL("expected a syntax error");
  } catch (const UsageError& e) {
    CHECK(contains(e.what(), "stages are " + stages));
  }
  // Short options in the unknown-option message come from the table too.
  CHECK(contains(usage_error({"-x", "p"}), "short options are -d -f -o -q -V -h"));
}

TEST_CASE("options: --trace FILE") {
  CHECK(parse({"--trace", "run.json", "p"}).trace_path == "run.json");
  CHECK(parse({"--trace=run.json", "p"}).trace_path == "run.json");
  CHECK(parse({"p"}).trace_path.empty());
  CHECK(contains(usage_error({"--trace", "", "p"}), "--trace: empty file name"));
  CHECK(contains(usage_error({"--trace", "a", "--trace", "b", "p"}), "--trace given 2 times"));
  CHECK(contains(usage_error({"--trac", "a", "p"}), "did you mean '--trace'?"));
}

// Which GPUs a run uses, and what the CUDA driver is shown of them.
TEST_CASE("devices: an input too small for several GPUs runs on GPU 0; a list is kept") {
  DeviceChoice all;
  all.kind = DeviceChoice::Gpu;
  CHECK(gpus_for_input(all, 5'000'000'000ull) == std::vector<int>{0});
  CHECK(gpus_for_input(all, 0) == std::vector<int>{0});  // a stream
  CHECK(gpus_for_input(all, kAllGpusBytes - 1) == std::vector<int>{0});
  CHECK(gpus_for_input(all, kAllGpusBytes).empty());  // all of them
  DeviceChoice listed = all;
  listed.gpus = {1, 0};
  CHECK(gpus_for_input(listed, 10) == std::vector<int>{1, 0});
}

TEST_CASE("devices: auto hands inputs to the GPUs from 32 MiB per host thread, 256 MiB to 1 GiB") {
  CHECK(auto_gpu_bytes(1) == 256ull << 20);
  CHECK(auto_gpu_bytes(8) == 256ull << 20);
  CHECK(auto_gpu_bytes(16) == 512ull << 20);
  CHECK(auto_gpu_bytes(32) == 1ull << 30);
  CHECK(auto_gpu_bytes(512) == 1ull << 30);
  CHECK(auto_gpu_bytes(0) == 256ull << 20);
  Options o;
  o.threads = 6;
  CHECK(host_threads(o) == 6);
  o.threads = 0;
  CHECK(host_threads(o) >= 1);
}

TEST_CASE("host memory: physical memory or a lower cgroup limit; thread tables get a quarter") {
  const uint64_t physical = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  const uint64_t mem = host_memory_bytes();
  CHECK(mem > (64ull << 20));
  CHECK(mem <= physical);
  if (FILE* f = std::fopen("/sys/fs/cgroup/memory.max", "r")) {
    unsigned long long limit = 0;
    if (std::fscanf(f, "%llu", &limit) == 1 && limit < physical) CHECK(mem == limit);
    std::fclose(f);
  }
  CHECK(thread_tables_budget(64ull << 30) == 16ull << 30);
  CHECK(thread_tables_budget(512ull << 20) == 256ull << 20);  // at least 256 MiB
}

TEST_CASE("devices: auto says what it picks for the input, and why") {
  testing::TempDir dir;
  const std::string small = dir.file("small.csv"), large = dir.file("large.csv");
  testing::write_file(small, "a,b\n1,2\n");
  {
    std::FILE* f = std::fopen(large.c_str(), "w");  // sparse: no disk space
    REQUIRE(f);
    REQUIRE(ftruncate(fileno(f), static_cast<off_t>(300ull << 20)) == 0);
    std::fclose(f);
  }
  Options o;
  o.device = "auto";
  o.threads = 1;  // the GPUs from 256 MiB
  o.files = {small};
  CHECK(plan_devices(o).name() == "auto (cpu)");
  CHECK_FALSE(plan_devices(o).try_gpus);
  o.files = {small, large};
#ifdef WARPCSV_HAVE_CUDA
  CHECK(plan_devices(o).name() == "auto (gpu)");
  CHECK(plan_devices(o).try_gpus);
  CHECK(plan_devices(o).why.find("the GPUs (the CPU if none can run it)") == 0);
  o.files = {small};
  CHECK(plan_devices(o).why.find("the CPU: 8 bytes of input, fewer than the 268435456") == 0);
  o.files = {"-"};
  CHECK(plan_devices(o).why.find("the CPU: the input is a stream") == 0);
#else
  CHECK(plan_devices(o).name() == "auto (cpu)");
  CHECK(plan_devices(o).why == "the CPU: this warpcsv was built without CUDA");
#endif
  o.device = "cpu";
  CHECK(plan_devices(o).name() == "cpu");
  CHECK_FALSE(plan_devices(o).try_gpus);
  o.device = "0,1";
  const DevicePlan listed = plan_devices(o, 10);
  CHECK(listed.name() == "gpu");
  CHECK(listed.try_gpus);
  CHECK(listed.required());
  CHECK(listed.gpus == std::vector<int>{0, 1});
}

// The GPU code a build holds, and which GPUs run it: machine code runs on
// GPUs of the same major capability from its own on, PTX on any newer GPU.
TEST_CASE("devices: the GPU code of a build, and the GPUs it runs on") {
  const GpuCode portable = parse_gpu_code("75-virtual,80-real,90-real");
  CHECK(portable.known);
  CHECK(portable.sass == std::vector<int>{80, 90});
  CHECK(portable.ptx == std::vector<int>{75});
  CHECK(portable.describe() == "sm_80 and sm_90 machine code, compute_75 PTX");
  CHECK(portable.runs_on(8, 0));   // A100
  CHECK(portable.runs_on(8, 9));   // L4: sm_80 code
  CHECK(portable.runs_on(9, 0));   // H100/H200
  CHECK(portable.runs_on(12, 0));  // Blackwell: the PTX
  CHECK(portable.runs_on(7, 5));   // T4: the PTX
  CHECK_FALSE(portable.runs_on(7, 0));  // V100: older than every piece
  CHECK_FALSE(portable.runs_on(6, 1));

  const GpuCode hopper = parse_gpu_code("90");  // sm_90 and compute_90
  CHECK(hopper.sass == std::vector<int>{90});
  CHECK(hopper.ptx == std::vector<int>{90});
  CHECK_FALSE(hopper.runs_on(8, 0));
  CHECK(hopper.runs_on(10, 0));

  const GpuCode ampere = parse_gpu_code("80-real");
  CHECK(ampere.runs_on(8, 6));
  CHECK_FALSE(ampere.runs_on(9, 0));  // machine code never runs on a newer major
  CHECK(ampere.describe() == "sm_80 machine code");

  const GpuCode specific = parse_gpu_code("90a-real;80");
  CHECK(specific.runs_on(9, 0));
  CHECK(specific.runs_on(8, 0));
  CHECK(specific.runs_on(10, 0));  // compute_80 PTX; sm_90a code runs on 9.0 alone
  CHECK_FALSE(parse_gpu_code("90a-real").runs_on(10, 0));

  const GpuCode native = parse_gpu_code("native");
  CHECK_FALSE(native.known);
  CHECK(native.runs_on(7, 0));  // not known: the kernels' load on the GPU decides
}

// The start-up check, fed a made-up machine: which GPUs a run keeps, what it
// says of the others, and when that is an error.
TEST_CASE("devices: GPUs that cannot run the build are skipped, named, or refused") {
  const GpuCode code = parse_gpu_code("80-real,90-real");
  const GpuFound a100{0, "NVIDIA A100", 8, 0, true}, v100{1, "Tesla V100", 7, 0, true},
      h200{2, "NVIDIA H200", 9, 0, true};
  Options o;
  o.files = {"-"};
  auto plan = [&](const char* device, uint64_t bytes) {
    o.device = device;
    return plan_devices(o, bytes);
  };

  // --device gpu on a large input: every usable GPU, a note for the other.
  GpuSelection sel = select_gpus(plan("gpu", kAllGpusBytes), {a100, v100, h200}, code);
  CHECK(sel.usable == std::vector<int>{0, 2});
  REQUIRE(sel.notices.size() == 1);
  CHECK(sel.notices[0].find("GPU 1 (Tesla V100, compute capability 7.0) cannot run this warpcsv, which holds "
                            "sm_80 and sm_90 machine code; rebuild with cmake -DCMAKE_CUDA_ARCHITECTURES=70") !=
        std::string::npos);
  CHECK(sel.notices[0].find("skipping it") != std::string::npos);

  // Auto on a machine whose only GPU cannot run it: the CPU, with a note.
  sel = select_gpus(plan("auto", 10), {v100}, code);
  CHECK(sel.usable.empty());
  REQUIRE(sel.notices.size() == 1);
  CHECK(sel.notices[0].find("answering on the CPU") != std::string::npos);

  // --device gpu there: exit 4, naming the GPU, its capability and the fix.
  try {
    select_gpus(plan("gpu", 10), {v100}, code);
    FAIL("expected a ResourceError");
  } catch (const ResourceError& e) {
    const std::string m = e.what();
    CHECK(m.find("--device gpu: GPU 0 (Tesla V100, compute capability 7.0) cannot run this warpcsv") == 0);
    CHECK(m.find("-DCMAKE_CUDA_ARCHITECTURES=70") != std::string::npos);
    CHECK(m.find("--device cpu") != std::string::npos);
    CHECK(e.exit_code() == kExitResource);
  }
  // A GPU listed by number must run: no silent skip.
  CHECK_THROWS_AS(select_gpus(plan("0,1", 10), {a100, v100, h200}, code), ResourceError);
  CHECK(select_gpus(plan("2,0", 10), {a100, v100, h200}, code).usable == std::vector<int>{2, 0});
  CHECK_THROWS_AS(select_gpus(plan("3", 10), {a100, v100, h200}, code), ResourceError);  // no GPU 3

  // No GPU at all: the CPU under auto, exit 4 under gpu.
  CHECK(select_gpus(plan("auto", 10), {}, code).usable.empty());
  CHECK_THROWS_AS(select_gpus(plan("gpu", 10), {}, code), ResourceError);

  // The capability passes but the kernels did not load (a native build for another GPU).
  GpuFound odd = h200;
  odd.id = 0;
  odd.loads = false;
  sel = select_gpus(plan("auto", 10), {odd}, parse_gpu_code("native"));
  CHECK(sel.usable.empty());
  REQUIRE(sel.notices.size() == 1);
  CHECK(sel.notices[0].find("GPU code chosen by nvcc at build time") != std::string::npos);
}

TEST_CASE("devices: GPU batch tails are the sampled rows' length times the slack, within bounds") {
  CHECK(gpu_batch_tail(0) == kGpuMaxTail);  // nothing sampled
  CHECK(gpu_batch_tail(1) == kGpuMinTail);
  CHECK(gpu_batch_tail(52) == kGpuMinTail);  // q1's rows: 3.3 KiB
  CHECK(gpu_batch_tail(kGpuMinTail / kGpuRowSlack + 1) == kGpuMinTail + kGpuRowSlack);
  CHECK(gpu_batch_tail(5000) == 5000 * kGpuRowSlack);
  CHECK(gpu_batch_tail(kGpuMaxTail / kGpuRowSlack) == kGpuMaxTail);
  CHECK(gpu_batch_tail(kGpuMaxTail / kGpuRowSlack + 1) == kGpuMaxTail);
  CHECK(gpu_batch_tail(~0ull) == kGpuMaxTail);  // no overflow
  CHECK(kGpuMinTail < kGpuMaxTail);
}

TEST_CASE("devices: the driver is shown GPUs 0..k-1 only, in the user's numbering") {
  CHECK(visible_devices_for({0}, nullptr) == std::optional<std::string>("0"));
  CHECK(visible_devices_for({0, 1}, nullptr) == std::optional<std::string>("0,1"));
  CHECK(visible_devices_for({0}, "3,2") == std::optional<std::string>("3"));
  CHECK(visible_devices_for({0, 1}, "GPU-aa,GPU-bb,GPU-cc") == std::optional<std::string>("GPU-aa,GPU-bb"));
  CHECK_FALSE(visible_devices_for({}, nullptr));         // all GPUs: leave it
  CHECK_FALSE(visible_devices_for({1}, nullptr));        // GPU 1 alone keeps its number: leave it
  CHECK_FALSE(visible_devices_for({1, 0}, "0,1"));
  CHECK_FALSE(visible_devices_for({0, 1}, "5"));         // fewer than asked: the count check names it
  CHECK_FALSE(visible_devices_for({0}, ""));             // none visible stays none
}
