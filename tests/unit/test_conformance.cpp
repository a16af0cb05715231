// CSV conformance: whole runs (run_pipeline) over the examples of RFC 4180 and the kinds of
// cases csv-spectrum collects, plus the awkward inputs real files bring (BOM, CR-only lines,
// NUL bytes, invalid UTF-8, unterminated quotes). Every case runs at chunk sizes 1, 3, 64 and
// the default, on 1 and 2 threads; all must print the same bytes, and those bytes must be the
// expectation written here by hand. Bad inputs must fail with exit 3 and file:line:column, or,
// under --bad-rows skip, be counted on stderr and listed in --rejects.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#ifdef WARPCSV_HAVE_CUDA
#include "cuda/cuda_executor.hpp"
#endif
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;

namespace {

using testing::CaptureStderr;
using testing::TempDir;
const auto& slurp = testing::read_file;
const auto& spit = testing::write_file;

struct Result {
  int code = 0;
  std::string out, error, diagnostics, rejects;
};

using Tweak = std::function<void(Options&)>;

// One run over `input` (written to DIR/in.csv) at one chunk size and thread count.
Result run_once(const TempDir& dir, const std::string& input, const std::string& pipeline,
                const Tweak& tweak, uint64_t chunk, int threads, const std::string& device = "cpu") {
  const std::string in = dir.file("in.csv");
  spit(in, input);
  Options o;
  o.pipeline = pipeline;
  o.files = {in};
  o.device = device;
  o.gpus_start_together = true;  // with "0,1" both GPUs share the tiny inputs
  o.chunk_size = chunk;
  o.threads = threads;
  o.quiet = false;
  o.output_path = dir.file("out.csv");
  if (tweak) tweak(o);
  std::remove(o.output_path.c_str());
  if (!o.rejects_path.empty()) std::remove(o.rejects_path.c_str());
  Result r;
  {
    CaptureStderr cap(dir.file("err.txt"));
    r.code = testing::run_to_exit(o, r.error);
  }
  r.out = slurp(o.output_path);
  r.diagnostics = slurp(dir.file("err.txt"));
  if (!o.rejects_path.empty()) r.rejects = slurp(o.rejects_path);
  return r;
}

const uint64_t kChunks[] = {1, 3, 64, 0};  // 0: the tool's default
const int kThreads[] = {1, 2};

// The executors to run every case on: the CPU, and the GPUs when there are any
// (a GPU test machine runs the whole conformance suite through the CUDA executor too).
std::vector<std::string> devices() {
  std::vector<std::string> d = {"cpu"};
#ifdef WARPCSV_HAVE_CUDA
  if (cuda_device_count() == 1) d.push_back("gpu");
  if (cuda_device_count() > 1) d.push_back("0,1");  // --device gpu would use GPU 0 alone on these small inputs
#endif
  return d;
}

// Runs everywhere; every setting must agree with the first one byte for byte.
Result run_all(const TempDir& dir, const std::string& input, const std::string& pipeline,
               const Tweak& tweak = nullptr) {
  const Result base = run_once(dir, input, pipeline, tweak, 0, 1);
  for (const std::string& device : devices()) {
    for (uint64_t chunk : kChunks) {
      for (int threads : kThreads) {
        const Result r = run_once(dir, input, pipeline, tweak, chunk, threads, device);
        INFO("pipeline: " << pipeline << "  device " << device << " chunk " << chunk << " threads " << threads);
        CHECK(r.code == base.code);
        CHECK(r.error == base.error);
        CHECK(r.diagnostics == base.diagnostics);
        CHECK(r.rejects == base.rejects);
        CHECK(r.out == base.out);
      }
    }
  }
  return base;
}

// The result of a good input: exit 0, no error, and exactly `want` on the output.
void expect_output(const std::string& input, const std::string& pipeline, const std::string& want,
                   const Tweak& tweak = nullptr) {
  TempDir dir;
  const Result r = run_all(dir, input, pipeline, tweak);
  INFO("input: " << input << "\npipeline: " << pipeline << "\nerror: " << r.error);
  CHECK(r.code == 0);
  CHECK(r.error.empty());
  CHECK(r.out == want);
}

// A bad input under --bad-rows fail: exit 3 and a message starting "IN:line:column: ".
void expect_failure(const std::string& input, const std::string& pipeline,
                    const std::string& where, const std::string& says,
                    const Tweak& tweak = nullptr) {
  TempDir dir;
  const Result r = run_all(dir, input, pipeline, tweak);
  INFO("input: " << input << "\nerror: " << r.error);
  CHECK(r.code == kExitInput);
  const std::string prefix = dir.file("in.csv") + ":" + where + ": ";
  CHECK(r.error.compare(0, prefix.size(), prefix) == 0);
  CHECK(r.error.find(says) != std::string::npos);
}

// Options for --bad-rows skip with a rejects file in `dir`.
Tweak skip_to(const TempDir& dir, const Tweak& more = nullptr) {
  const std::string rejects = dir.file("rejects.csv");
  return [rejects, more](Options& o) {
    o.bad_rows = BadRows::Skip;
    o.rejects_path = rejects;
    if (more) more(o);
  };
}

// The source,line,column fields of each rejected row, e.g. {"2,3"}.
std::vector<std::string> rejected_lines(const std::string& rejects) {
  std::vector<std::string> out;
  std::istringstream in(rejects);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    // "PATH",LINE,COLUMN,... ; a row's text may span lines, so keep lines that start a record.
    if (line.empty() || line[0] != '"') continue;
    const size_t q = line.find("\",");
    if (q == std::string::npos) continue;
    const size_t c1 = line.find(',', q + 2);
    const size_t c2 = line.find(',', c1 + 1);
    out.push_back(line.substr(q + 2, c2 - q - 2));
  }
  return out;
}

// A bad input under --bad-rows skip: exit 0, exactly `want` on the output, the
// count of skipped rows on stderr, and `lines` (see rejected_lines) in the
// rejects file. Returns the result for further checks.
Result expect_skipped(const std::string& input, const std::string& pipeline, const std::string& want,
                      const std::vector<std::string>& lines) {
  TempDir dir;
  const Result r = run_all(dir, input, pipeline, skip_to(dir));
  INFO("input: " << input << "\npipeline: " << pipeline << "\nerror: " << r.error);
  CHECK(r.code == 0);
  CHECK(r.out == want);
  const std::string skipped =
      "skipped " + std::to_string(lines.size()) + (lines.size() == 1 ? " bad row" : " bad rows");
  CHECK(r.diagnostics.find(skipped) != std::string::npos);
  CHECK(rejected_lines(r.rejects) == lines);
  return r;
}

}  // namespace

// ---- RFC 4180, section 2 --------------------------------------------------------------------

TEST_CASE("rfc4180: CRLF records, with and without a final line break", "[conformance]") {
  expect_output("aaa,bbb,ccc\r\nzzz,yyy,xxx\r\n", "select *", "aaa,bbb,ccc\nzzz,yyy,xxx\n");
  expect_output("aaa,bbb,ccc\r\nzzz,yyy,xxx", "select *", "aaa,bbb,ccc\nzzz,yyy,xxx\n");
  expect_output("aaa,bbb,ccc\r\nzzz,yyy,xxx", "agg count() as n", "n\n1\n");
}

TEST_CASE("rfc4180: quoted fields, line breaks and doubled quotes in quotes", "[conformance]") {
  expect_output("\"aaa\",\"bbb\",\"ccc\"\r\nzzz,yyy,xxx\r\n", "select *",
                "aaa,bbb,ccc\nzzz,yyy,xxx\n");
  // A header name holding CRLF keeps it, and is quoted on output.
  expect_output("\"aaa\",\"b\r\nbb\",\"ccc\"\r\nzzz,yyy,xxx", "select *",
                "aaa,\"b\r\nbb\",ccc\nzzz,yyy,xxx\n");
  expect_output("\"aaa\",\"b\"\"bb\",\"ccc\"\r\nzzz,yyy,xxx", "select *",
                "aaa,\"b\"\"bb\",ccc\nzzz,yyy,xxx\n");
}

// ---- csv-spectrum ---------------------------------------------------------------------------

TEST_CASE("spectrum: comma in quotes", "[conformance]") {
  const std::string in =
      "first,last,address,city,zip\n"
      "John,Doe,120 any st.,\"Anytown, WW\",08123\n";
  expect_output(in, "select *", in);
  expect_output(in, "select city, zip", "city,zip\n\"Anytown, WW\",08123\n");
  expect_output(in, "groupby city | agg count() as n", "city,n\n\"Anytown, WW\",1\n");
}

TEST_CASE("spectrum: empty fields and empty quoted fields are null", "[conformance]") {
  const std::string in = "a,b,c\n1,\"\",\"\"\n2,3,4\n";
  expect_output(in, "select *", "a,b,c\n1,,\n2,3,4\n");
  expect_output(in, "agg count() as n, count(b) as nb, sum(c) as sc", "n,nb,sc\n2,1,4\n");
  expect_output("a,b,c\r\n1,\"\",\"\"\r\n2,3,4\r\n", "select *", "a,b,c\n1,,\n2,3,4\n");
  expect_output("a,b,c\n,,\n", "select *, a is null as an", "a,b,c,an\n,,,true\n");
}

TEST_CASE("spectrum: escaped quotes", "[conformance]") {
  const std::string in = "a,b\n1,\"ha \"\"ha\"\" ha\"\n3,4\n";
  expect_output(in, "select *", in);
  expect_output(in, "select len(b) as n", "n\n10\n1\n");
  expect_output("key,val\n1,\"{\"\"type\"\": \"\"Point\"\", \"\"coordinates\"\": [102.0, 0.5]}\"\n",
                "select val",
                "val\n\"{\"\"type\"\": \"\"Point\"\", \"\"coordinates\"\": [102.0, 0.5]}\"\n");
}

TEST_CASE("spectrum: newlines in quotes, LF and CRLF", "[conformance]") {
  expect_output("a,b,c\n1,2,3\n\"Once upon \na time\",5,6\n7,8,9\n", "select *",
                "a,b,c\n1,2,3\n\"Once upon \na time\",5,6\n7,8,9\n");
  expect_output("a,b,c\r\n1,2,3\r\n\"Once upon \r\na time\",5,6\r\n7,8,9\r\n", "select *",
                "a,b,c\n1,2,3\n\"Once upon \r\na time\",5,6\n7,8,9\n");
  expect_output("a,b,c\n1,2,3\n\"Once upon \na time\",5,6\n7,8,9\n",
                "agg sum(b) as s, count() as n",
                "s,n\n15,3\n");
}

TEST_CASE("spectrum: quotes, newlines and commas together", "[conformance]") {
  const std::string in = "a,b\n1,\"ha \n\"\"ha\"\", \nha\"\n3,4\n";
  expect_output(in, "select *", in);
  expect_output(in, "groupby a | agg count() as n", "a,n\n1,1\n3,1\n");
  // A delimiter, quote and line break right after each other, in every order.
  expect_output("a,b\n\",\"\"\n\",\"\n,\"\"\"\n", "select *", "a,b\n\",\"\"\n\",\"\n,\"\"\"\n");
}

TEST_CASE("spectrum: simple and UTF-8 content", "[conformance]") {
  expect_output("a,b,c\n1,2,3\n", "select *", "a,b,c\n1,2,3\n");
  expect_output("a,b,c\r\n1,2,3\r\n", "select *", "a,b,c\n1,2,3\n");
  const std::string utf8 = "a,b,c\n1,2,3\n4,5,\xca\xa4\n";
  expect_output(utf8, "select *", utf8);
  expect_output("name,city\n\xc3\x89mile,Z\xc3\xbcrich\n"
                "\xe5\xb1\xb1\xe7\x94\xb0,\xe6\x9d\xb1\xe4\xba\xac\n",
                "filter city == \"Z\xc3\xbcrich\" | select name",
                "name\n\xc3\x89mile\n");
  // UTF-8 column names work in backticks.
  expect_output("pr\xc3\xa9nom,n\nx,1\ny,2\n", "agg sum(n) as `s\xc3\xa9`", "s\xc3\xa9\n3\n");
}

// ---- line endings -----------------------------------------------------------------------------

TEST_CASE("line endings: LF, CRLF, CR only, mixed, none at the end", "[conformance]") {
  const std::string want = "a,b\n1,2\n3,4\n";
  expect_output("a,b\n1,2\n3,4\n", "select *", want);
  expect_output("a,b\r\n1,2\r\n3,4\r\n", "select *", want);
  expect_output("a,b\r1,2\r3,4\r", "select *", want);
  expect_output("a,b\r1,2\r3,4", "select *", want);
  expect_output("a,b\n1,2\r\n3,4\r", "select *", want);
  expect_output("a,b\r\n1,2\n3,4", "select *", want);
  expect_output("a,b\r1,2\r3,4", "agg sum(b) as s", "s\n6\n");
  // Blank lines between rows are not rows (multi-column input).
  expect_output("a,b\n\n1,2\r\n\r\n\r3,4\n\n", "select *", want);
}

TEST_CASE("byte order mark: UTF-8 BOM is dropped, not part of the first name", "[conformance]") {
  expect_output("\xef\xbb\xbf" "a,b\n1,2\n", "select a", "a\n1\n");
  expect_output("\xef\xbb\xbf" "\"a\",b\n1,2\n", "select a", "a\n1\n");
  expect_output("\xef\xbb\xbf" "a,b\r\n1,2\r\n", "agg count() as n", "n\n1\n");
}

TEST_CASE("header only and empty input", "[conformance]") {
  expect_output("a,b\n", "select *", "a,b\n");
  expect_output("a,b", "select *", "a,b\n");
  expect_output("a,b\r\n", "agg count() as n, max(a) as m", "n,m\n0,\n");
  expect_output("a,b\n", "groupby a | agg count() as n", "a,n\n");
  expect_output("", "agg count() as n", "n\n0\n");
}

TEST_CASE("empty input: select * prints nothing, not an empty line", "[conformance]") {
  // An empty line would be read back as one empty record by the next tool in the pipe.
  expect_output("", "select *", "");
  expect_output("\n\n", "select *", "");
}

TEST_CASE("trailing delimiter: one extra empty field is tolerated", "[conformance]") {
  expect_output("a,b\n1,2,\n3,4,\n", "select *", "a,b\n1,2\n3,4\n");
  expect_output("a,b\n1,2,\n3,4\n", "agg sum(b) as s", "s\n6\n");
  // A quoted empty last field is a real field, not a trailing delimiter.
  expect_failure("a,b\n1,2,\"\"\n", "select *", "2:7", "expected 2 fields, found 3");
  // Two extra delimiters are a ragged row.
  expect_failure("a,b\n1,2,,\n", "select *", "2:6", "expected 2 fields, found 4");
}

// ---- dialect options --------------------------------------------------------------------------

TEST_CASE("--escape backslash inside quotes", "[conformance]") {
  const Tweak esc = [](Options& o) { o.dialect.escape = '\\'; };
  expect_output("a,b\n1,\"x\\\"y\"\n", "select *", "a,b\n1,\"x\"\"y\"\n", esc);
  expect_output("a,b\n1,\"x\\\\y\"\n", "select *", "a,b\n1,x\\y\n", esc);
  // An escaped delimiter and an escaped quote right before the closing quote.
  expect_output("a,b\n1,\"x\\,y\\\"\"\n2,z\n", "select *", "a,b\n1,\"x,y\"\"\"\n2,z\n", esc);
  // Doubled quotes still work with an escape character.
  expect_output("a,b\n1,\"x\"\"y\"\n", "select len(b) as n", "n\n3\n", esc);
  // Outside quotes the backslash is an ordinary byte.
  expect_output("a,b\n1,x\\y\n", "select b", "b\nx\\y\n", esc);
}

TEST_CASE("--comment lines are skipped only at a line start", "[conformance]") {
  const Tweak hash = [](Options& o) { o.dialect.comment = '#'; };
  const std::string in = "# generated\na,b\n#note\n1,x#y\n\"#2\",z\n# end";
  expect_output(in, "select *", "a,b\n1,x#y\n#2,z\n", hash);
  expect_output(in, "agg count() as n", "n\n2\n", hash);
  // A '#' at a line start inside a quoted field is data.
  expect_output("a,b\n1,\"x\n#y\"\n", "select *", "a,b\n1,\"x\n#y\"\n", hash);
  expect_output("a,b\r\n#c\r\n1,2\r\n", "select *", "a,b\n1,2\n", hash);
}

TEST_CASE("--skip N skips raw lines before the header", "[conformance]") {
  const Tweak skip2 = [](Options& o) { o.dialect.skip_lines = 2; };
  expect_output("title\nexported \"today\n a,b\n1,2\n", "select *", "\" a\",b\n1,2\n", skip2);
  expect_output("x\r\ny\r\na,b\r\n1,2\r\n", "select b", "b\n2\n", skip2);
  expect_output("x\ny\n", "agg count() as n", "n\n0\n", skip2);
  expect_output("x\n", "agg count() as n", "n\n0\n", skip2);
}

TEST_CASE("--null NA, quoted or not; other text stays", "[conformance]") {
  const Tweak na = [](Options& o) { o.dialect.null_tokens = {"NA"}; };
  const std::string in = "a,b\nNA,\"NA\"\n1,NAN\n2,na\n";
  expect_output(in, "select *", "a,b\n,\n1,NAN\n2,na\n", na);
  expect_output(in, "agg count(a) as ca, count(b) as cb, sum(a) as s", "ca,cb,s\n2,2,3\n", na);
  expect_output(in, "filter a is null | select b", "b\n\n", na);
  const Tweak two = [](Options& o) { o.dialect.null_tokens = {"NA", "-"}; };
  expect_output("a\n-\nNA\n5\n", "agg count(a) as c, sum(a) as s", "c,s\n1,5\n", two);
}

TEST_CASE("--quote \"'\" single quotes", "[conformance]") {
  const Tweak sq = [](Options& o) { o.dialect.quote = '\''; };
  expect_output("a,b\n1,'x,y'\n2,'it''s'\n3,\"q\"\n", "select *",
                "a,b\n1,\"x,y\"\n2,it's\n3,\"\"\"q\"\"\"\n", sq);
  expect_output("a,b\n1,'x\ny'\n", "agg count() as n", "n\n1\n", sq);
}

TEST_CASE("tab and semicolon delimiters", "[conformance]") {
  const Tweak tab = [](Options& o) { o.dialect.delimiter = '\t'; };
  expect_output("a\tb\n1\tx,y\n2\t\"p\tq\"\n", "select *", "a,b\n1,\"x,y\"\n2,p\tq\n", tab);
  expect_output("a\tb\n1\t2\n3\t4\n", "agg sum(b) as s", "s\n6\n", tab);
  const Tweak semi = [](Options& o) { o.dialect.delimiter = ';'; };
  expect_output("a;b\n1;2,5\n2;\"x;y\"\n", "select *", "a,b\n1,\"2,5\"\n2,x;y\n", semi);
  expect_output("a;b\n1;2\n1;3\n", "groupby a | agg sum(b) as s", "a,s\n1,5\n", semi);
}

TEST_CASE("a field larger than --chunk-size", "[conformance]") {
  const std::string big(200000, 'x');
  const std::string in = "a,b\n1,\"" + big + "\"\n2," + big + "\n3,y\n";
  TempDir dir;
  for (uint64_t chunk : {uint64_t{1000}, uint64_t{65536}, uint64_t{0}}) {
    const Result r = run_once(dir, in, "select a, len(b) as n", nullptr, chunk, 2);
    INFO("chunk " << chunk << " error " << r.error);
    CHECK(r.code == 0);
    CHECK(r.out == "a,n\n1,200000\n2,200000\n3,1\n");
  }
  const Result r = run_once(dir, in, "select *", nullptr, 4096, 2);
  CHECK(r.out == "a,b\n1," + big + "\n2," + big + "\n3,y\n");
}

// ---- bad inputs -------------------------------------------------------------------------------

TEST_CASE("unterminated quote at the end of the input", "[conformance]") {
  const std::string in = "a,b\n1,2\n3,\"abc\ndef\n";
  expect_failure(in, "select *", "3:3", "unterminated quoted field");
  expect_skipped(in, "select *", "a,b\n1,2\n", {"3,3"});
}

TEST_CASE("malformed header rows fail like malformed data rows", "[conformance]") {
  // Today the unterminated quote swallows the whole file into one column name (exit 0, no
  // rows), and text after a closing quote in a name is dropped silently.
  expect_failure("a,\"b\n1,2\n", "select *", "1:3", "unterminated quoted field");
  expect_failure("a,\"b\"c\n1,2\n", "select *", "1:6", "after a closing quote");
}

TEST_CASE("header only: numeric aggregates over a column with no values", "[conformance]") {
  // A nightly job over a file with no rows today must not fail with a type error (exit 2):
  // a column with no values has no evidence against any type.
  expect_output("a,b\r\n", "agg count() as n, sum(a) as s", "n,s\n0,\n");
  expect_output("a,b\n,x\n", "agg sum(a) as s, mean(a) as m", "s,m\n,\n");
}

TEST_CASE("stray quotes and text after a closing quote", "[conformance]") {
  expect_failure("a,b\n1,ab\"c\n2,x\n", "select *", "2:5", "inside an unquoted field");
  expect_failure("a,b\n1,\"ab\"c\n2,x\n", "select *", "2:7", "after a closing quote");
  // Line numbers count the lines inside earlier quoted fields.
  expect_failure("a,b\n1,\"x\ny\"\n2,p\"q\n", "select *", "4:4", "inside an unquoted field");
  expect_failure("a,b\r\n1,\"x\r\ny\"\r\n2,\"p\"q\r\n", "select *", "4:6", "after a closing quote");
  expect_skipped("a,b\n1,ab\"c\n2,x\n3,\"p\"q\n4,y\n", "agg count() as n, sum(a) as s", "n,s\n2,6\n",
                 {"2,5", "4,6"});
}

TEST_CASE("ragged rows: file:line:column and skip counts", "[conformance]") {
  expect_failure("a,b,c\n1,2,3\n4,5\n", "select *", "3:4", "expected 3 fields, found 2");
  expect_failure("a,b\n1,\"x\ny\"\n2,3,4\n", "select *", "4:6", "expected 2 fields, found 3");
  expect_skipped("a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,11,12\n", "groupby c | agg count() as n", "c,n\n3,1\n12,1\n",
                 {"3,4", "4,8"});
}

TEST_CASE("NUL bytes are bad rows: file:line:column, skipped and listed under skip", "[conformance]") {
  const std::string in = std::string("a,b\n1,x\0y\n2,\"p\0q\"\n3,z\n", 22);
  expect_failure(in, "select *", "2:4", "found a NUL byte");
  const Result r = expect_skipped(in, "select *", "a,b\n3,z\n", {"2,4", "3,5"});
  // The rejects file shows the NUL as \x00, not as a raw byte.
  CHECK(r.rejects.find("\"1,x\\x00y\"") != std::string::npos);
  CHECK(r.rejects.find('\0') == std::string::npos);
  // A NUL written as an escape sequence is data, not a NUL byte in the input.
  expect_output("a,b\n1,\"x\\0y\"\n", "select len(b) as n", "n\n3\n", [](Options& o) { o.dialect.escape = '\\'; });
}

TEST_CASE("invalid UTF-8 makes bad rows (Latin-1?) with the iconv fix", "[conformance]") {
  // Latin-1 "café" and a lone continuation byte: warpcsv does not transcode.
  const std::string in = "a,b\n1,caf\xe9\n2,\x80\xff\n3,\xc3\xa9t\xc3\xa9\n";
  expect_failure(in, "select *", "2:6", "found the byte 0xe9, which is not valid UTF-8");
  expect_failure(in, "select *", "2:6", "iconv -f latin1 -t utf-8 ");
  const Result r = expect_skipped(in, "groupby b | agg count() as n, sum(a) as s", "b,n,s\n\xc3\xa9t\xc3\xa9,1,3\n",
                                  {"2,6", "3,3"});
  CHECK(r.rejects.find("\"1,caf\\xe9\"") != std::string::npos);
  CHECK(r.rejects.find("\"2,\\x80\\xff\"") != std::string::npos);
  // Where it is: after a line break inside quotes, at the end of the input, before a NUL.
  expect_failure("a,b\n1,\"x\ny\xe9\"\n", "select *", "3:2", "not valid UTF-8");
  expect_failure("a,b\n1,\xe2\x82", "select *", "2:3", "not valid UTF-8");
  expect_failure(std::string("a,b\n1,\xc3\0\n", 9), "select *", "2:3", "not valid UTF-8");
  expect_failure("a,b\r1,2\r3,\xed\xa0\x80\r", "select *", "3:3", "not valid UTF-8");
}

TEST_CASE("a row with several problems reports the first by position", "[conformance]") {
  expect_failure("a,b\nab\"cdefg\xe9,1\n", "select *", "2:3", "inside an unquoted field");
  expect_failure("a,b\nabcdefg\xe9\"x,1\n", "select *", "2:8", "not valid UTF-8");
  expect_failure(std::string("a,b\n\"x\"y\0,1\n", 12), "select *", "2:4", "after a closing quote");
  // A ragged row's problem is at its end: the bad byte before it comes first.
  expect_failure("a,b,c\n1,caf\xe9\n", "select *", "2:6", "not valid UTF-8");
  expect_failure("a,b\n1,caf\xc3\xa9,3\n", "select *", "2:10", "expected 2 fields, found 3");
}

TEST_CASE("NUL or invalid UTF-8 in the header is an input error, even under skip", "[conformance]") {
  expect_failure("a\xe9,b\n1,2\n", "select *", "1:2", "not valid UTF-8");
  expect_failure(std::string("a,b\0\n1,2\n", 9), "select *", "1:4", "NUL byte");
  TempDir dir;
  const Result r = run_all(dir, "x,\xff\n1,2\n", "select *", skip_to(dir));
  CHECK(r.code == kExitInput);
  CHECK(r.error.find("this is the header row") != std::string::npos);
  CHECK(r.error.find("--bad-rows skip") == std::string::npos);  // it cannot skip a header
  // With --no-header the first line is data, and a bad row like any other.
  const Result nh = run_all(dir, "x,\xff\n1,2\n", "select *", skip_to(dir, [](Options& o) { o.dialect.header = false; }));
  CHECK(nh.code == 0);
  CHECK(nh.out == "c1,c2\n1,2\n");
  CHECK(rejected_lines(nh.rejects) == std::vector<std::string>{"1,3"});
}

TEST_CASE("comment lines and --skip lines are not checked for UTF-8", "[conformance]") {
  expect_output("#caf\xe9\na,b\n#\xff\x80\n1,2\n", "select *", "a,b\n1,2\n", [](Options& o) { o.dialect.comment = '#'; });
  expect_output("Export \xe9t\xe9\na,b\n1,2\n", "select *", "a,b\n1,2\n", [](Options& o) { o.dialect.skip_lines = 1; });
}

TEST_CASE("type inference skips rows with NUL or invalid UTF-8", "[conformance]") {
  // Were the 0xE9 row sampled, v would be a string column and sum(v) a type error.
  expect_skipped("k,v\na,1\nb,\xe9\nc,2\n", "agg sum(v) as s, count() as n", "s,n\n3,2\n", {"3,3"});
}

TEST_CASE("valid UTF-8 (accents, CJK, emoji) is kept byte for byte", "[conformance]") {
  const std::string in = "name,v\nJos\xc3\xa9,1\n\xe6\x9d\xb1\xe4\xba\xac,2\n\xf0\x9f\x98\x80,3\nJos\xc3\xa9,4\n";
  expect_output(in, "select *", in);
  expect_output(in, "groupby name | agg sum(v) as s",
                "name,s\nJos\xc3\xa9,5\n\xe6\x9d\xb1\xe4\xba\xac,2\n\xf0\x9f\x98\x80,3\n");
}

TEST_CASE("empty and duplicate header names get distinct names", "[conformance]") {
  expect_output("a,,a\n1,2,3\n", "select *", "a,c2,a_2\n1,2,3\n");
  expect_output("a,,a\n1,2,3\n", "select c2, a_2", "c2,a_2\n2,3\n");
}

TEST_CASE("line numbers in messages with CR-only and CRLF line ends", "[conformance]") {
  expect_failure("a,b\r1,2\r3\r", "select *", "3:2", "expected 2 fields, found 1");
  expect_failure("a,b\r\n1,\"x\r\ny\"\r\n3\r\n", "select *", "4:2", "expected 2 fields, found 1");
  expect_failure("a,b\r1,\"x\ry\"\r3\r", "select *", "4:2", "expected 2 fields, found 1");
  // With --skip and --comment lines before the row, lines still count from the file's start.
  expect_failure("title\n#c\na,b\n#d\n1\n", "select *", "5:2", "expected 2 fields, found 1",
                 [](Options& o) {
                   o.dialect.skip_lines = 1;
                   o.dialect.comment = '#';
                 });
}

TEST_CASE("a backslash escape right at the end of the input", "[conformance]") {
  const Tweak esc = [](Options& o) { o.dialect.escape = '\\'; };
  expect_failure("a,b\n1,\"abc\\", "select *", "2:3", "unterminated quoted field", esc);
  expect_failure("a,b\n1,\"abc\\\"\n", "select *", "2:3", "unterminated quoted field", esc);
}

TEST_CASE("a header wider than the first read (64 KiB)", "[conformance]") {
  std::string header, row;
  for (int i = 0; i < 20000; ++i) {
    header += (i ? ",c" : "c") + std::to_string(i);
    row += (i ? "," : "") + std::to_string(i % 7);
  }
  TempDir dir;
  for (uint64_t chunk : {uint64_t{64}, uint64_t{0}}) {
    const Result r = run_once(dir, header + "\n" + row + "\n" + row, "select c19999, c7", nullptr,
                              chunk, 2);
    CHECK(r.code == 0);
    CHECK(r.out == "c19999,c7\n0,0\n0,0\n");  // 19999 = 7 * 2857
  }
}

TEST_CASE("--skip past the end of the input is an empty input", "[conformance]") {
  expect_output("a,b\n1,2\n", "agg count() as n", "n\n0\n",
                [](Options& o) { o.dialect.skip_lines = 10; });
}
