// `groupby KEYS | top N by O | select ...` run in the scan (order statistics
// per group, unfolded after it: spec/bind_top.cpp) against the post stage
// that keeps whole rows (result/top_rows.*, checked against a naive
// reference in test_diff_cpu.cpp): the same rows, byte for byte, at tiny
// chunks, on several threads, with the holistic values listed or grouped by.
// The fields are written as the result prints values (`1.50`, `1e+20`,
// `2024-03-01T10:00:00`), since the scan's rows print values, not the
// fields as written.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

ColumnType T(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

// Keys k, s, d, b; orders oi, od (2 places), of, odt, ots, ob, each with
// ties and nulls; x, a column the top's select may also read.
const std::vector<OutputColumn> kSchema = {
    {"k", T(Type::Int)},         {"s", T(Type::String)},     {"d", T(Type::Date)},       {"b", T(Type::Bool)},
    {"oi", T(Type::Int)},        {"od", T(Type::Decimal, 2)}, {"of", T(Type::Float)},     {"odt", T(Type::Date)},
    {"ots", T(Type::Timestamp)}, {"ob", T(Type::Bool)},      {"x", T(Type::Int)}};

std::string table(uint64_t seed, int rows) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto or_null = [&](const std::string& v, int one_in) { return pick(one_in) == 0 ? std::string() : v; };
  static const char* const kStrings[] = {"east", "west", "north", "a b", "zz"};
  static const char* const kFloats[] = {"-2.5", "0.0", "1.0", "3.25", "-7.125", "1e+20", "inf", "-inf", "nan"};
  std::string text = "k,s,d,b,oi,od,of,odt,ots,ob,x\n";
  for (int r = 0; r < rows; ++r) {
    const int cents = pick(41) * 25 - 500;
    const std::string od = std::string(cents < 0 ? "-" : "") + std::to_string(std::abs(cents) / 100) + "." +
                           std::to_string(std::abs(cents) % 100 / 10) + std::to_string(std::abs(cents) % 10);
    text += or_null(std::to_string(pick(9) - 3), 15) + "," + or_null(kStrings[pick(5)], 12) + "," +
            or_null("2024-01-0" + std::to_string(1 + pick(4)), 15) + "," + (pick(2) ? "true" : "false") + "," +
            or_null(std::to_string(pick(31) - 15), 6) + "," + or_null(od, 6) + "," + or_null(kFloats[pick(9)], 6) +
            "," + or_null("2023-12-2" + std::to_string(pick(10)), 6) + "," +
            or_null("2024-03-01T1" + std::to_string(pick(10)) + ":00:0" + std::to_string(pick(3)), 6) + "," +
            or_null(pick(2) ? "true" : "false", 4) + "," + std::to_string(r) + "\n";
  }
  return text;
}

struct Setting {
  uint64_t chunk;
  int threads;
  bool by_groups;  // holistic values grouped by in the scan instead of listed
};

std::string run(const TempDir& dir, const std::string& pipeline, const Setting& s) {
  Options opts;
  opts.pipeline = pipeline;
  opts.files = {dir.file("input.csv")};
  opts.device = "cpu";
  opts.chunk_size = s.chunk;
  opts.threads = s.threads;
  opts.holistic_by_groups = s.by_groups;
  opts.quiet = true;
  opts.output_path = dir.file("out.csv");
  std::remove(opts.output_path.c_str());
  std::string error;
  const int code = testing::run_to_exit(opts, error);
  INFO("pipeline: " << pipeline << "\nerror: " << error);
  REQUIRE(code == 0);
  return read_file(opts.output_path);
}

bool in_scan(const std::string& pipeline, const std::vector<OutputColumn>& schema) {
  const Plan p = build_plan(pipeline, schema);
  return !p.post.empty() && p.post[0].kind == PostStage::Unfold;
}

const std::vector<Setting> kSettings = {{7, 1, false},    {7, 3, true},         {1000, 2, false},
                                        {1000, 3, true},  {1 << 20, 2, false},  {1 << 20, 1, true}};

// `groupby KEYS | TOP | select ITEMS REST` in the scan, against the same
// with x selected too (the post stage), then ITEMS again by position.
void check_top(const TempDir& dir, const std::string& keys, const std::string& top, const std::string& items,
               const std::string& rest = "", const std::vector<OutputColumn>& schema = kSchema,
               const std::vector<Setting>& settings = kSettings) {
  const std::string scan = "groupby " + keys + " | " + top + " | select " + items + rest;
  const size_t n = 1 + static_cast<size_t>(std::count(items.begin(), items.end(), ','));
  std::string positions;
  for (size_t i = 1; i <= n; ++i) positions += (i > 1 ? ", $" : "$") + std::to_string(i);
  const std::string post = "groupby " + keys + " | " + top + " | select " + items + ", x | select " + positions + rest;
  INFO("in the scan: " << scan << "\nas the post stage: " << post);
  REQUIRE(in_scan(scan, schema));
  REQUIRE_FALSE(in_scan(post, schema));
  const std::string expect = run(dir, post, Setting{1 << 20, 1, false});
  CHECK(std::count(expect.begin(), expect.end(), '\n') > 1);
  for (const Setting& s : settings) {
    INFO("chunk " << s.chunk << " threads " << s.threads << (s.by_groups ? " grouped by the values" : " listed"));
    REQUIRE(run(dir, scan, s) == expect);
  }
}

}  // namespace

TEST_CASE("diff: top N per group in the scan gives the post stage's rows, ties, nulls and NaN included") {
  TempDir dir;
  write_file(dir.file("input.csv"), table(3, 600));
  // Groups of about 65 rows (k), 8 (k, s) and 4 (s, d, b): N from 1 to past the group.
  const std::vector<std::string> keys = {"k", "k, s", "s, d, b"};
  const std::vector<std::string> orders = {"oi", "od", "of", "odt", "ots", "ob"};
  size_t at = 0;
  for (const std::string& o : orders)
    for (int n : {1, 3, 16})
      for (const std::string dir_word : {" desc", "", " asc"}) {
        if (dir_word == " asc" && n != 3) continue;  // as the default, once per order
        const std::string& k = keys[at++ % keys.size()];
        SECTION(k + " | top " + std::to_string(n) + " by " + o + dir_word) {
          check_top(dir, k, "top " + std::to_string(n) + " by " + o + dir_word, k + ", " + o);
        }
      }
  SECTION("the select in another order, aliased, by $N, a column twice, keys alone") {
    check_top(dir, "k, s", "top 2 by od desc", "od as top_od, $2, k, od");
    check_top(dir, "s, k", "top 5 by of", "k");
    check_top(dir, "k", "top 4 by oi * 3 - 1 desc", "k");
    check_top(dir, "of", "top 3 by odt desc", "of, odt");  // float keys: -inf first, nan and null last
  }
  SECTION("the order grouped by too, and stages after the select") {
    check_top(dir, "k, oi", "top 3 by oi desc", "k, oi");
    check_top(dir, "s, ob", "top 2 by ob", "ob, s", " | filter s != 'west' | limit 9");
    check_top(dir, "d", "top 3 by ots desc", "d, ots", " | sort ots desc, d | limit 12");
  }
}

TEST_CASE("diff: top N per group in the scan over many groups and one group of many rows") {
  TempDir dir;
  std::mt19937_64 rng(17);
  std::string text = "g,v,x\n";
  for (int r = 0; r < 30000; ++r)
    text += std::to_string(rng() % 9000) + "," + (rng() % 9 ? std::to_string(static_cast<int>(rng() % 2001) - 1000) : "") +
            "," + std::to_string(r) + "\n";
  write_file(dir.file("input.csv"), text);
  const std::vector<OutputColumn> schema = {{"g", T(Type::Int)}, {"v", T(Type::Int)}, {"x", T(Type::Int)}};
  const std::vector<Setting> settings = {{4096, 3, false}, {4096, 2, true}, {1 << 20, 1, false}};
  check_top(dir, "g", "top 2 by v desc", "g, v", "", schema, settings);
  check_top(dir, "g % 1", "top 9 by v", "v", "", schema, settings);
}

TEST_CASE("diff: top N per group in the scan from compacted lists, ranks across values of many rows") {
  // 1.1M rows on one thread: its list compacts at 2^20 values (50 common values a group, each then
  // one value of thousands of rows) and merges later values into their equals. A few rare values
  // (one row each) sort before the common ones either way, so ranks 1..16 pass from them into a
  // value of many rows.
  TempDir dir;
  std::mt19937_64 rng(5);
  std::string text = "g,v,x\n";
  for (int r = 0; r < 1100000; ++r) {
    std::string v = std::to_string(rng() % 50);
    if (r % 99991 == 0) v = std::to_string(100000 + r);
    if (r % 99989 == 0) v = "-" + std::to_string(100000 + r);
    if (r % 13 == 0) v.clear();
    text += std::to_string(r % 5) + "," + v + "," + std::to_string(r % 7) + "\n";
  }
  write_file(dir.file("input.csv"), text);
  const std::vector<OutputColumn> schema = {{"g", T(Type::Int)}, {"v", T(Type::Int)}, {"x", T(Type::Int)}};
  const std::vector<Setting> settings = {{1 << 20, 1, false}, {1 << 20, 1, true}, {1 << 20, 2, false}};
  check_top(dir, "g", "top 16 by v desc", "g, v", "", schema, settings);
  check_top(dir, "g", "top 16 by v", "g, v", "", schema, settings);
}
