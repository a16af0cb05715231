// format_value and the six writers: exact numbers, dates, quoting, escaping,
// nulls and alignment, written to a real FILE and read back.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/post.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/output.hpp"
#include "unit/writer_output.hpp"

using namespace warpcsv;
using testing::write_all;

namespace {

ColumnType ty(Type t, uint8_t scale = 0) {
  ColumnType c;
  c.type = t;
  c.scale = scale;
  return c;
}
// Values point at their bytes: literals (static storage) or named strings only.
Value str(const char* s) { return Value::of_str(s, static_cast<uint32_t>(std::strlen(s))); }
Value str(const std::string& s) { return Value::of_str(s.data(), static_cast<uint32_t>(s.size())); }
Value str(std::string&&) = delete;
Value null() { return Value::make_null(); }
Value i(int128 x) { return Value::of_int(x); }
Value f(double x) { return Value::of_float(x); }

}  // namespace

TEST_CASE("format_value: integers are exact in 128 bits") {
  CHECK(format_value(i(0), ty(Type::Int)) == "0");
  CHECK(format_value(i(-42), ty(Type::Int)) == "-42");
  CHECK(format_value(i(std::numeric_limits<int64_t>::max()), ty(Type::Int)) ==
        "9223372036854775807");
  int128 big = static_cast<int128>(std::numeric_limits<int64_t>::max()) * 1000 + 7;
  CHECK(format_value(i(big), ty(Type::Int)) == "9223372036854775807007");
  int128 min128 = static_cast<int128>(static_cast<uint128>(1) << 127);
  CHECK(format_value(i(min128), ty(Type::Int)) == "-170141183460469231731687303715884105728");
  // Either side of 2^64, where formatting switches from 128-bit to 64-bit division.
  int128 two64 = static_cast<int128>(static_cast<uint128>(1) << 64);
  CHECK(format_value(i(two64 - 1), ty(Type::Int)) == "18446744073709551615");
  CHECK(format_value(i(two64), ty(Type::Int)) == "18446744073709551616");
  CHECK(format_value(i(-two64 - 1), ty(Type::Int)) == "-18446744073709551617");
  CHECK(format_value(i(two64 * 10), ty(Type::Decimal, 2)) == "1844674407370955161.60");
  CHECK(format_value(null(), ty(Type::Int)) == "");
}

TEST_CASE("format_value: decimals print exactly `scale` fraction digits") {
  CHECK(format_value(i(-5), ty(Type::Decimal, 2)) == "-0.05");
  CHECK(format_value(i(1230), ty(Type::Decimal, 2)) == "12.30");
  CHECK(format_value(i(0), ty(Type::Decimal, 3)) == "0.000");
  CHECK(format_value(i(7), ty(Type::Decimal, 1)) == "0.7");
  CHECK(format_value(i(-100), ty(Type::Decimal, 2)) == "-1.00");
  CHECK(format_value(i(123), ty(Type::Decimal, 0)) == "123");
  CHECK(format_value(i(1), ty(Type::Decimal, 18)) == "0.000000000000000001");
}

TEST_CASE("format_value: floats are shortest round-trip with .0 when integral") {
  CHECK(format_value(f(3.0), ty(Type::Float)) == "3.0");
  CHECK(format_value(f(-2.0), ty(Type::Float)) == "-2.0");
  CHECK(format_value(f(0.1), ty(Type::Float)) == "0.1");
  CHECK(format_value(f(0.1 + 0.2), ty(Type::Float)) == "0.30000000000000004");
  CHECK(format_value(f(2.5), ty(Type::Float)) == "2.5");
  CHECK(format_value(f(1e20), ty(Type::Float)) == "1e+20");
  CHECK(format_value(f(std::nan("")), ty(Type::Float)) == "nan");
  CHECK(format_value(f(-std::nan("")), ty(Type::Float)) == "nan");
  CHECK(format_value(f(HUGE_VAL), ty(Type::Float)) == "inf");
  CHECK(format_value(f(-HUGE_VAL), ty(Type::Float)) == "-inf");
  double back = std::stod(format_value(f(1.0 / 3.0), ty(Type::Float)));
  CHECK(back == 1.0 / 3.0);
}

TEST_CASE("format_value: dates, proleptic Gregorian, negative years") {
  CHECK(format_value(i(0), ty(Type::Date)) == "1970-01-01");
  CHECK(format_value(i(-1), ty(Type::Date)) == "1969-12-31");
  CHECK(format_value(i(19782), ty(Type::Date)) == "2024-02-29");  // leap day
  CHECK(format_value(i(11016), ty(Type::Date)) == "2000-02-29");
  CHECK(format_value(i(-719528), ty(Type::Date)) == "0000-01-01");
  CHECK(format_value(i(-719529), ty(Type::Date)) == "-0001-12-31");
  CHECK(format_value(i(2932896), ty(Type::Date)) == "9999-12-31");
  CHECK(format_value(i(2932897), ty(Type::Date)) == "10000-01-01");
}

TEST_CASE("format_value: timestamps, fraction only when non-zero") {
  CHECK(format_value(i(0), ty(Type::Timestamp)) == "1970-01-01T00:00:00");
  const int128 day = static_cast<int128>(86400) * 1000000;
  CHECK(format_value(i(19782 * day + ((13 * 60 + 5) * 60 + 9) * static_cast<int128>(1000000)),
                     ty(Type::Timestamp)) == "2024-02-29T13:05:09");
  CHECK(format_value(i(1500), ty(Type::Timestamp)) == "1970-01-01T00:00:00.001500");
  CHECK(format_value(i(-1), ty(Type::Timestamp)) == "1969-12-31T23:59:59.999999");
  CHECK(format_value(i(-day), ty(Type::Timestamp)) == "1969-12-31T00:00:00");
}

TEST_CASE("format_value: bools and raw string bytes") {
  CHECK(format_value(i(1), ty(Type::Bool)) == "true");
  CHECK(format_value(i(0), ty(Type::Bool)) == "false");
  std::string raw("a,\"b\"\n\0c", 8);
  CHECK(format_value(str(raw), ty(Type::String)) == raw);
  CHECK(format_value(str(""), ty(Type::String)) == "");
}

TEST_CASE("csv writer: RFC 4180 quoting, nulls empty, empty string quoted") {
  std::vector<OutputColumn> cols = {{"name", ty(Type::String)}, {"amount", ty(Type::Decimal, 2)}};
  std::vector<std::vector<Value>> rows = {
      {str("plain"), i(1230)},         {str("Smith, John"), i(-5)},
      {str("say \"hi\""), null()},     {str("two\nlines"), i(0)},
      {str(" padded"), i(1)},          {str("trail "), i(2)},
      {null(), i(3)},                  {str(""), i(4)},
      {str("cr\rhere"), i(5)},
  };
  CHECK(write_all(OutputFormat::Csv, cols, rows) ==
        "name,amount\n"
        "plain,12.30\n"
        "\"Smith, John\",-0.05\n"
        "\"say \"\"hi\"\"\",\n"
        "\"two\nlines\",0.00\n"
        "\" padded\",0.01\n"
        "\"trail \",0.02\n"
        ",0.03\n"
        "\"\",0.04\n"
        "\"cr\rhere\",0.05\n");
}

TEST_CASE("csv writer: header names are quoted too; no rows is just the header") {
  std::vector<OutputColumn> cols = {{"sum(a, b)", ty(Type::Int)}, {"n", ty(Type::Int)}};
  CHECK(write_all(OutputFormat::Csv, cols, {}) == "\"sum(a, b)\",n\n");
}

TEST_CASE("tsv writer: backslash escapes, nulls empty") {
  std::vector<OutputColumn> cols = {{"k", ty(Type::String)}, {"v", ty(Type::Float)}};
  std::vector<std::vector<Value>> rows = {
      {str("a\tb"), f(1.5)}, {str("line\nbreak\r"), null()}, {str("back\\slash"), f(2)},
      {null(), f(-0.25)}};
  CHECK(write_all(OutputFormat::Tsv, cols, rows) ==
        "k\tv\n"
        "a\\tb\t1.5\n"
        "line\\nbreak\\r\t\n"
        "back\\\\slash\t2.0\n"
        "\t-0.25\n");
}

TEST_CASE("json writer: array of objects, numbers unquoted, escapes, nan as null") {
  std::vector<OutputColumn> cols = {{"s", ty(Type::String)},      {"i", ty(Type::Int)},
                                    {"d", ty(Type::Decimal, 2)}, {"f", ty(Type::Float)},
                                    {"b", ty(Type::Bool)},       {"day", ty(Type::Date)}};
  std::vector<std::vector<Value>> rows = {
      {str("q\"b\\s\n\t\x01"), i(-3), i(-5), f(0.5), i(1), i(0)},
      {null(), null(), null(), f(std::nan("")), null(), null()},
      {str("\xc3\xa9t\xe9"), i(0), i(100), f(-HUGE_VAL), i(0), i(-1)},
  };
  CHECK(write_all(OutputFormat::Json, cols, rows) ==
        "[\n"
        "{\"s\":\"q\\\"b\\\\s\\n\\t\\u0001\",\"i\":-3,\"d\":-0.05,\"f\":0.5,\"b\":true,"
        "\"day\":\"1970-01-01\"},\n"
        "{\"s\":null,\"i\":null,\"d\":null,\"f\":null,\"b\":null,\"day\":null},\n"
        "{\"s\":\"\xc3\xa9t\\ufffd\",\"i\":0,\"d\":1.00,\"f\":null,\"b\":false,"
        "\"day\":\"1969-12-31\"}\n"
        "]\n");
}

TEST_CASE("json writer: empty result is an empty array; invalid UTF-8 forms replaced") {
  std::vector<OutputColumn> cols = {{"x", ty(Type::String)}};
  CHECK(write_all(OutputFormat::Json, cols, {}) == "[\n]\n");
  // overlong '/', a lone continuation byte, a UTF-16 surrogate, a cut-off sequence
  std::vector<std::vector<Value>> rows = {{str("\xc0\xaf|\x80|\xed\xa0\x80|\xe2\x82")}};
  CHECK(write_all(OutputFormat::Ndjson, cols, rows) ==
        "{\"x\":\"\\ufffd\\ufffd|\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"}\n");
}

TEST_CASE("ndjson writer: one object per line, key names escaped") {
  std::vector<OutputColumn> cols = {{"a\"b", ty(Type::Int)}, {"t", ty(Type::Timestamp)}};
  std::vector<std::vector<Value>> rows = {{i(1), i(1500)}, {i(2), null()}};
  CHECK(write_all(OutputFormat::Ndjson, cols, rows) ==
        "{\"a\\\"b\":1,\"t\":\"1970-01-01T00:00:00.001500\"}\n"
        "{\"a\\\"b\":2,\"t\":null}\n");
  CHECK(write_all(OutputFormat::Ndjson, cols, {}) == "");
}

TEST_CASE("table writer: aligned box, numbers right, nulls shown, breaks escaped") {
  std::vector<OutputColumn> cols = {{"region", ty(Type::String)}, {"total", ty(Type::Decimal, 2)},
                                    {"n", ty(Type::Int)}};
  std::vector<std::vector<Value>> rows = {
      {str("east"), i(1230), i(3)}, {str("north\nwest"), i(-5), i(12)},
      {null(), null(), i(0)},       {str("\xc3\xa9t\xc3\xa9"), i(100000), null()}};
  CHECK(write_all(OutputFormat::Table, cols, rows) ==
        "+-------------+---------+------+\n"
        "| region      |   total |    n |\n"
        "+-------------+---------+------+\n"
        "| east        |   12.30 |    3 |\n"
        "| north\\nwest |   -0.05 |   12 |\n"
        "| null        |    null |    0 |\n"
        "| \xc3\xa9t\xc3\xa9         | 1000.00 | null |\n"
        "+-------------+---------+------+\n");
}

TEST_CASE("table writer: wide characters take two columns, combining marks none") {
  std::vector<OutputColumn> cols = {{"name", ty(Type::String)}, {"n", ty(Type::Int)}};
  // 東京 (two wide), an emoji, e + a combining acute accent
  std::vector<std::vector<Value>> rows = {
      {str("\xe6\x9d\xb1\xe4\xba\xac"), i(1)}, {str("\xf0\x9f\x98\x80"), i(2)}, {str("e\xcc\x81"), i(3)}, {str("abcd"), i(4)}};
  CHECK(write_all(OutputFormat::Table, cols, rows) ==
        "+------+---+\n"
        "| name | n |\n"
        "+------+---+\n"
        "| \xe6\x9d\xb1\xe4\xba\xac | 1 |\n"
        "| \xf0\x9f\x98\x80   | 2 |\n"
        "| e\xcc\x81    | 3 |\n"
        "| abcd | 4 |\n"
        "+------+---+\n");
  CHECK(terminal_width("\xff", 1) == 1);  // an invalid byte: one column
}

TEST_CASE("table writer: no rows prints the header box") {
  std::vector<OutputColumn> cols = {{"a", ty(Type::String)}, {"count", ty(Type::Int)}};
  CHECK(write_all(OutputFormat::Table, cols, {}) ==
        "+---+-------+\n"
        "| a | count |\n"
        "+---+-------+\n");
}

TEST_CASE("markdown writer: GitHub table, pipes escaped, numbers right-aligned") {
  std::vector<OutputColumn> cols = {{"k", ty(Type::String)}, {"v", ty(Type::Float)}};
  std::vector<std::vector<Value>> rows = {
      {str("a|b"), f(1.5)}, {str("x\ny"), null()}, {null(), f(100)}, {str("c\r\nd\re"), f(2)}};
  CHECK(write_all(OutputFormat::Markdown, cols, rows) ==
        "| k           |     v |\n"
        "| ----------- | ----: |\n"
        "| a\\|b        |   1.5 |\n"
        "| x<br>y      |       |\n"
        "|             | 100.0 |\n"
        "| c<br>d<br>e |   2.0 |\n");
}

TEST_CASE("writers without the header row: rows only, widths from the rows") {
  std::vector<OutputColumn> cols = {{"region", ty(Type::String)}, {"n", ty(Type::Int)}};
  std::vector<std::vector<Value>> rows = {{str("east"), i(3)}, {str("north, west"), i(12)}};
  CHECK(write_all(OutputFormat::Csv, cols, rows, false) == "east,3\n\"north, west\",12\n");
  CHECK(write_all(OutputFormat::Tsv, cols, rows, false) == "east\t3\nnorth, west\t12\n");
  CHECK(write_all(OutputFormat::Table, cols, rows, false) ==
        "+-------------+----+\n"
        "| east        |  3 |\n"
        "| north, west | 12 |\n"
        "+-------------+----+\n");
  CHECK(write_all(OutputFormat::Markdown, cols, rows, false) ==
        "| east        |   3 |\n"
        "| north, west |  12 |\n");
  // No rows: nothing at all.
  for (OutputFormat fmt : {OutputFormat::Csv, OutputFormat::Tsv, OutputFormat::Table, OutputFormat::Markdown})
    CHECK(write_all(fmt, cols, {}, false).empty());
}

TEST_CASE("writers: a full disk is an input error (exit 3) naming the cause") {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (!full) return;  // not Linux: nothing to check
  auto w = make_writer(OutputFormat::Csv, full);
  std::vector<OutputColumn> cols = {{"x", ty(Type::Int)}};
  w->begin(cols);
  Value v = i(1);
  w->row(&v);
  try {
    w->end();
    FAIL("expected a write error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cannot write output") != std::string::npos);
    CHECK(e.exit_code() == 3);
  }
  std::fclose(full);
}

TEST_CASE("post pipeline: a large result formatted on several threads is the same bytes as row by row") {
  std::vector<OutputColumn> cols = {{"k", ColumnType{Type::String, 0}}, {"n", ColumnType{Type::Int, 0}},
                                    {"d", ColumnType{Type::Decimal, 3}}, {"x", ColumnType{Type::Float, 0}}};
  Plan plan;
  plan.finalized_output = cols;
  plan.output = cols;
  plan.scan.aggregate = true;
  Table t;
  t.columns = cols;
  std::mt19937_64 rng(5);
  std::vector<std::vector<Value>> rows;
  std::vector<std::string> texts;
  const size_t n = 300000;  // ten parts of at most 32768 rows, more than the threads
  texts.reserve(n);
  for (size_t r = 0; r < n; ++r) {
    const int kind = static_cast<int>(rng() % 5);
    texts.push_back(kind == 0 ? "a,b" : kind == 1 ? "say \"hi\"" : kind == 2 ? "" : "k" + std::to_string(rng() % 1000));
    std::vector<Value> row = {rng() % 17 ? str(texts.back()) : null(), i(static_cast<int64_t>(rng()) >> 3),
                              rng() % 11 ? i(static_cast<int64_t>(rng() % 2000001) - 1000000) : null(),
                              f(static_cast<double>(static_cast<int64_t>(rng() % 100000)) / 7.0)};
    t.append_owned(row.data());
    rows.push_back(row);
  }
  for (OutputFormat fmt : {OutputFormat::Csv, OutputFormat::Tsv, OutputFormat::Json}) {
    const std::string serial = write_all(fmt, cols, rows);
    std::FILE* tmp = std::tmpfile();
    REQUIRE(tmp != nullptr);
    auto w = make_writer(fmt, tmp);
    {
      PostPipeline post(plan, *w, 4);
      if (post.formats_apart()) {  // CSV, TSV: parts formatted on 4 threads, as aggregate results are
        std::vector<std::string> parts;
        format_in_parts(t.rows(), 4, parts, [&](size_t begin, size_t end, size_t, std::string& out) {
          PostPipeline::RowScratch scratch = post.row_scratch();
          for (size_t r = begin; r < end; ++r) CHECK(post.format_row(out, t.row(r), scratch) == -1);
        });
        CHECK(parts.size() == format_parts(n, 4));
        post.write_parts(parts);
      } else {
        post.push_all(t);
      }
      post.finish();
    }
    std::rewind(tmp);
    std::string out;
    char buf[1 << 16];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, tmp)) > 0) out.append(buf, got);
    std::fclose(tmp);
    CHECK(out.size() == serial.size());
    CHECK(out == serial);
  }
}
