// --delimiter auto: the sniffer (io.hpp sniff_delimiter) on inline samples, and whole runs that
// use it (the first file decides for all files; --explain says what was chosen, on stderr).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "cli/options.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;

namespace {

// Sniffs a whole input with the default quote and no escape, comment or skipped lines.
SniffResult sniff(const std::string& s, bool at_eof = true) {
  return sniff_delimiter(s.data(), s.size(), at_eof, '"', -1, -1, 0);
}
char pick(const std::string& s) { return sniff(s).delimiter; }

struct TempDir {
  std::string path;
  TempDir() {
    std::string templ = "/tmp/warpcsv-sniff-XXXXXX";
    REQUIRE(mkdtemp(&templ[0]) != nullptr);
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream f(path + "/" + name, std::ios::binary);
    f << bytes;
    return path + "/" + name;
  }
  std::string read(const std::string& name) const {
    std::ifstream f(path + "/" + name, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
};

struct Run {
  int code = 0;
  std::string out, error, diagnostics, stdout_text;
};

// Runs `pipeline` over `files` with --delimiter auto (and `explain` if asked).
Run run_auto(const TempDir& dir, const std::vector<std::string>& files,
             const std::string& pipeline, bool explain = false, uint64_t chunk = 0) {
  Options o;
  o.pipeline = pipeline;
  o.files = files;
  o.device = "cpu";
  o.dialect.delimiter_auto = true;
  o.explain = explain;
  o.chunk_size = chunk;
  o.output_path = dir.path + "/out.csv";
  std::remove(o.output_path.c_str());
  Run r;
  {
    // --explain prints the plan on stdout: capture both streams.
    const testing::CaptureStdout out(dir.path + "/stdout.txt");
    const testing::CaptureStderr err(dir.path + "/err.txt");
    r.code = testing::run_to_exit(o, r.error);
  }
  r.out = dir.read("out.csv");
  r.diagnostics = dir.read("err.txt");
  r.stdout_text = dir.read("stdout.txt");
  return r;
}

}  // namespace

TEST_CASE("sniff: each candidate delimiter", "[conformance][sniff]") {
  CHECK(pick("a,b,c\n1,2,3\n4,5,6\n") == ',');
  CHECK(pick("a;b;c\n1;2;3\n4;5;6\n") == ';');
  CHECK(pick("a\tb\tc\n1\t2\t3\n") == '\t');
  CHECK(pick("a|b|c\n1|2|3\n") == '|');
  CHECK(pick("a;b\r\n1;2\r\n") == ';');
  CHECK(pick("a|b\r1|2\r") == '|');
  const SniffResult s = sniff("a;b;c\n1;2;3\n4;5;6\n");
  CHECK(s.found);
  CHECK(s.fields == 3);
  CHECK(s.rows == 3);
  CHECK(s.consistent == 3);
}

TEST_CASE("sniff: delimiters inside quotes do not count", "[conformance][sniff]") {
  // Commas only inside quotes; semicolons separate.
  CHECK(pick("a;b\n\"1,2,3\";x\n\"4,5,6\";y\n") == ';');
  // Decimal commas in a semicolon file.
  CHECK(pick("a;b;c\n1,5;2,5;3\n0,1;7;8,25\n") == ';');
  // Tabs and pipes inside quoted text of a comma file, and a quoted line break.
  CHECK(pick("id,text\n1,\"a|b|c|d\"\n2,\"x\ty\tz\"\n3,\"p|q\nr|s|t\"\n") == ',');
  // Doubled quotes inside a quoted field holding the other candidates.
  CHECK(pick("k|v\n1|\"say \"\"a;b;c\"\"\"\n2|\"\"\n") == '|');
}

TEST_CASE("sniff: consistency beats frequency", "[conformance][sniff]") {
  // Many commas in one row, but only '|' splits every row the same way.
  CHECK(pick("a|b\n1,2,3,4,5|x\n6|y\n7|z,z\n") == '|');
  // A ragged row does not spoil a delimiter that fits all the others.
  CHECK(pick("a,b,c\n1,2,3\n4,5\n6,7,8\n9,10,11\n") == ',');
  // Equal consistency: more fields win, then the order , ; \t |.
  CHECK(pick("a,b;c;d\n1,2;3;4\n") == ';');
  CHECK(pick("a,b;c\n1,2;3\n") == ',');
  // Trailing delimiters on some rows still count as consistent.
  const SniffResult t = sniff("a;b\n1;2;\n3;4\n");
  CHECK(t.delimiter == ';');
  CHECK(t.fields == 2);
  CHECK(t.consistent == 3);
}

TEST_CASE("sniff: one column, header only, empty", "[conformance][sniff]") {
  const SniffResult one = sniff("name\nalice\nbob\n");
  CHECK(one.delimiter == ',');
  CHECK_FALSE(one.found);
  CHECK(one.rows == 3);
  CHECK(pick("a;b;c\n") == ';');
  CHECK(pick("a\tb") == '\t');
  const SniffResult empty = sniff("");
  CHECK(empty.delimiter == ',');
  CHECK_FALSE(empty.found);
  CHECK(empty.rows == 0);
  CHECK(pick("\n\n\r\n") == ',');
}

TEST_CASE("sniff: BOM, --skip lines, comments and blank lines are not rows",
          "[conformance][sniff]") {
  CHECK(pick("\xef\xbb\xbf" "a;b\n1;2\n") == ';');
  // Two title lines full of commas are skipped with --skip 2.
  const std::string titled = "Report, 2024, all regions\nexported by x, y, z\na|b\n1|2\n3|4\n";
  CHECK(sniff_delimiter(titled.data(), titled.size(), true, '"', -1, -1, 2).delimiter == '|');
  // Comment lines full of commas are ignored with --comment '#'.
  const std::string commented = "# a, b, c, d, e\n#x,y,z\na;b\n1;2\n# f,g\n3;4\n";
  CHECK(sniff_delimiter(commented.data(), commented.size(), true, '"', -1, '#', 0).delimiter ==
        ';');
  CHECK(sniff("a;b\n\n\n1;2\n\n3;4\n").rows == 3);
}

TEST_CASE("sniff: quote, escape and a cut-off sample", "[conformance][sniff]") {
  // With --quote '|' the pipe is never the delimiter; single-quoted commas do not count.
  const std::string sq = "a;b\n'1,2';x\n'3,4';y\n";
  CHECK(sniff_delimiter(sq.data(), sq.size(), true, '\'', -1, -1, 0).delimiter == ';');
  const std::string pq = "a,b\n|x|,1\n";
  CHECK(sniff_delimiter(pq.data(), pq.size(), true, '|', -1, -1, 0).delimiter == ',');
  // Backslash-escaped quotes keep the quoted field open across the semicolons.
  const std::string esc = "a,b\n\"x\\\";y;z\",1\n\"p;q\",2\n";
  CHECK(sniff_delimiter(esc.data(), esc.size(), true, '"', '\\', -1, 0).delimiter == ',');
  // A sample cut in the middle of a row: that partial row is not held against ';'.
  CHECK(sniff("a;b;c\n1;2;3\n4;5", false).consistent == 2);
  CHECK(sniff("a;b;c\n1;2;3\n4;5", false).rows == 2);
  // A sample that is one long partial row still decides.
  CHECK(sniff("a|b|c|d", false).delimiter == '|');
}

TEST_CASE("describe_sniff names the choice", "[conformance][sniff]") {
  CHECK(describe_sniff(sniff("a\tb\n1\t2\n")) ==
        "--delimiter auto: '\\t' (2 fields in 2 of 2 sampled rows)");
  CHECK(describe_sniff(sniff("a\n1\n")).find("read as one column") != std::string::npos);
}

TEST_CASE("--delimiter auto: whole runs", "[conformance][sniff]") {
  TempDir dir;
  SECTION("semicolon file with quoted semicolons and decimal commas, any chunk size") {
    const std::string f = dir.write("s.csv", "a;b;c\n1;\"x;y\";2,5\n3;z;4\n");
    for (uint64_t chunk : {uint64_t{1}, uint64_t{3}, uint64_t{0}}) {
      const Run r = run_auto(dir, {f}, "select *", false, chunk);
      CHECK(r.code == 0);
      CHECK(r.out == "a,b,c\n1,x;y,\"2,5\"\n3,z,4\n");
      CHECK(r.diagnostics.empty());
    }
  }
  SECTION("tab file") {
    const std::string f = dir.write("t.tsv", "k\tv\nx\t1\nx\t2\ny\t3\n");
    const Run r = run_auto(dir, {f}, "groupby k | agg sum(v) as s");
    CHECK(r.out == "k,s\nx,3\ny,3\n");
  }
  SECTION("the first file decides for the others") {
    const std::string a = dir.write("a.csv", "k|v\nx|1\n");
    const std::string b = dir.write("b.csv", "k|v\ny|2\n");
    const Run r = run_auto(dir, {a, b}, "agg sum(v) as s");
    CHECK(r.code == 0);
    CHECK(r.out == "s\n3\n");
    // A second file in another dialect has a different header: an input error, not a guess.
    const std::string c = dir.write("c.csv", "k;v\nz;3\n");
    const Run bad = run_auto(dir, {a, c}, "agg sum(v) as s");
    CHECK(bad.code == kExitInput);
    CHECK(bad.error.find("header does not match") != std::string::npos);
  }
  SECTION("--explain reports the choice on stderr only") {
    const std::string f = dir.write("p.csv", "a|b\n1|2\n");
    const Run r = run_auto(dir, {f}, "select b", true);
    CHECK(r.code == 0);
    CHECK(r.diagnostics ==
          "warpcsv: " + f + ": --delimiter auto: '|' (2 fields in 2 of 2 sampled rows)\n");
    CHECK(r.stdout_text.find("plan:") != std::string::npos);
    CHECK(r.stdout_text.find("--delimiter auto") == std::string::npos);
    const Run quiet = run_auto(dir, {f}, "select b");
    CHECK(quiet.diagnostics.empty());
    CHECK(quiet.out == "b\n2\n");
  }
  SECTION("a one-column file stays one column") {
    const std::string f = dir.write("one.csv", "name\nal, jr\nbo\n");
    const Run r = run_auto(dir, {f}, "select name");
    CHECK(r.code == 3);  // the comma row is ragged under ',': reported, not silently split
    const std::string g = dir.write("one2.csv", "name\nal\nbo\n");
    CHECK(run_auto(dir, {g}, "agg count() as n").out == "n\n2\n");
  }
}

TEST_CASE("--delimiter auto on the command line", "[conformance][sniff]") {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "warpcsv");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    return parse_options(static_cast<int>(args.size()), argv.data());
  };
  CHECK(parse({"-d", "auto", "p"}).dialect.delimiter_auto);
  CHECK(parse({"--delimiter=auto", "p"}).dialect.delimiter_auto);
  CHECK_FALSE(parse({"-d", ";", "p"}).dialect.delimiter_auto);
  CHECK_FALSE(parse({"p"}).dialect.delimiter_auto);
  // The default delimiter ',' equal to --quote is no conflict when the delimiter is sniffed.
  CHECK(parse({"-d", "auto", "--quote", ",", "p"}).dialect.delimiter_auto);
  std::string msg;
  try {
    parse({"-d", "aut", "p"});
  } catch (const UsageError& e) {
    msg = e.what();
  }
  CHECK(msg.find("cannot hold letters or digits") != std::string::npos);
  CHECK(msg.find("'auto'") != std::string::npos);
  CHECK(msg.find("found 'aut'") != std::string::npos);
}
