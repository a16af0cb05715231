// The command line: every option fills Options; bad values are usage errors
// that name the option; --help / --version exit early with their text.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli/options.hpp"
#include "exec/device.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"

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
  CHECK(o.dialect.delimiter == ',');
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
  CHECK(parse({"-d", "\\t", "p"}).dialect.delimiter == '\t');
  CHECK(parse({"-d", "tab", "p"}).dialect.delimiter == '\t');
  CHECK(parse({"--delimiter", "\t", "p"}).dialect.delimiter == '\t');
  CHECK(parse({"--delimiter=;", "p"}).dialect.delimiter == ';');
  CHECK(parse({"-d|", "p"}).dialect.delimiter == '|');
  CHECK(contains(usage_error({"-d", "ab", "p"}), "--delimiter: expected one character"));
  CHECK(contains(usage_error({"-d", "\"", "p"}), "--quote are both"));
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
      CHECK(e.text == std::string("warpcsv ") + WARPCSV_VERSION + "\nzstd: yes\n");
#else
      CHECK(e.text == std::string("warpcsv ") + WARPCSV_VERSION + "\nzstd: no\n");
#endif
    }
  }
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
  const DeviceChoice d = choose_device(o);
  o.files = {small};
  CHECK(device_name(d, o) == "auto (cpu)");
  o.files = {small, large};
#ifdef WARPCSV_HAVE_CUDA
  CHECK(device_name(d, o) == "auto (gpu)");
  CHECK(describe_auto_choice(o).find("the GPUs (the CPU if none is found)") == 0);
  o.files = {small};
  CHECK(describe_auto_choice(o).find("the CPU: 8 bytes of input, fewer than the 268435456") == 0);
  o.files = {"-"};
  CHECK(describe_auto_choice(o).find("the CPU: the input is a stream") == 0);
#else
  CHECK(device_name(d, o) == "auto (cpu)");
  CHECK(describe_auto_choice(o) == "the CPU: this warpcsv was built without CUDA");
#endif
  o.device = "cpu";
  CHECK(device_name(choose_device(o), o) == "cpu");
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
