// Type inference, per-row fit checks, widening and --schema parsing (io.hpp).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/input.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/io.hpp"

using namespace warpcsv;

namespace {

ColumnType T(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

ColumnType guess(const std::vector<std::string>& fields, std::vector<std::string> nulls = {}) {
  TypeGuess g(std::move(nulls));
  for (const auto& f : fields) g.observe(f.data(), static_cast<uint32_t>(f.size()));
  return g.result();
}

bool fits(const std::string& s, ColumnType t) {
  return text_fits(s.data(), static_cast<uint32_t>(s.size()), t);
}

ColumnType widen(ColumnType t, const std::string& s) {
  return widen_for(t, s.data(), static_cast<uint32_t>(s.size()));
}

std::string usage_error(const std::string& spec) {
  try {
    parse_schema_option(spec);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("TypeGuess names the narrowest type") {
  CHECK(guess({"true", "False", "TRUE"}) == T(Type::Bool));
  CHECK(guess({"1", "-2", "+3", "0", "-0"}) == T(Type::Int));
  CHECK(guess({"0", "1"}) == T(Type::Int));  // 0/1 is not Bool
  CHECK(guess({"1", "2.5", "3.25"}) == T(Type::Decimal, 2));
  CHECK(guess({"1.50"}) == T(Type::Decimal, 2));
  CHECK(guess({".5", "5."}) == T(Type::Decimal, 1));
  CHECK(guess({"1", "2.5", "1e3"}) == T(Type::Float));
  CHECK(guess({"1.5", "nan", "-inf"}) == T(Type::Float));
  CHECK(guess({"9223372036854775807"}) == T(Type::Int));
  // An integer beyond int64 is text (IDs stay apart); with a point or an exponent, a float.
  CHECK(guess({"9223372036854775808"}) == T(Type::String));
  CHECK(guess({"1", "-9223372036854775809"}) == T(Type::String));
  CHECK(guess({"12345678901234567890", "12345678901234567891"}) == T(Type::String));
  CHECK(guess({"9223372036854775808.0"}) == T(Type::Float));
  CHECK(guess({"9223372036854775808e0"}) == T(Type::Float));
  CHECK(guess({"123456789012345678"}) == T(Type::Int));
  CHECK(guess({"1234567890123456.78"}) == T(Type::Decimal, 2));   // 18 significant digits
  CHECK(guess({"12345678901234567.8"}) == T(Type::Decimal, 1));
  CHECK(guess({"123456789012345678.9"}) == T(Type::Float));  // 19 digits
  // Each value fits 18 digits, but the widest integer part plus the largest scale does not.
  CHECK(guess({"1234567890123456", "0.123"}) == T(Type::Float));
  CHECK(guess({"0.0000000000000000001"}) == T(Type::Float));  // scale 19
  CHECK(guess({"2024-01-31", "1999-12-01"}) == T(Type::Date));
  CHECK(guess({"2024-01-31", "2024-01-31T10:00:00Z"}) == T(Type::Timestamp));
  CHECK(guess({"2024-01-31 10:00", "2024-02-01T00:00:00.5+01:00"}) == T(Type::Timestamp));
  CHECK(guess({"2024-02-30"}) == T(Type::String));  // not a calendar date
  CHECK(guess({"1", "true"}) == T(Type::String));
  CHECK(guess({"1", "2024-01-01"}) == T(Type::String));
  CHECK(guess({"abc"}) == T(Type::String));
}

TEST_CASE("TypeGuess: the result does not depend on the order of the fields") {
  // Each field is tested only for the kinds the fields before it left open,
  // so a wrong skip would show as a result that depends on the order.
  const std::vector<std::string> pool = {
      "1", "-7", "0", "true", "FALSE", "1.5", "-0.25", "12.000", "123456789012345678", "1e3", "inf",
      "2024-01-31", "2024-01-31 12:00:00", "2024-01-31T12:00:00", "007", "x", "", "NA", "1,000",
      " 5", "99999999999999999999", "0.1234567890123456789", "nan", "2024-13-01", "+3"};
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<std::string> fields(1 + rng() % 8);
    for (auto& f : fields) f = pool[rng() % pool.size()];
    const ColumnType first = guess(fields, {"NA"});
    std::vector<std::string> other = fields;
    std::shuffle(other.begin(), other.end(), rng);
    const ColumnType again = guess(other, {"NA"});
    // Observed in two pieces and merged (how inference reads its sample on threads).
    const size_t cut = rng() % (other.size() + 1);
    TypeGuess a({"NA"}), b({"NA"});
    for (size_t i = 0; i < other.size(); ++i) (i < cut ? a : b).observe(other[i].data(), static_cast<uint32_t>(other[i].size()));
    a.merge(b);
    INFO("iter " << iter);
    REQUIRE(again.type == first.type);
    REQUIRE(again.scale == first.scale);
    REQUIRE(a.result() == first);
    REQUIRE(a.observed() == static_cast<uint64_t>(std::count_if(fields.begin(), fields.end(), [](const std::string& f) {
              return !f.empty() && f != "NA";
            })));
  }
}

// The sample is cut into pieces read on threads; rows (quoted fields with
// delimiters, quotes and line breaks in them, comment lines, CRLF) cross the
// pieces' edges.
TEST_CASE("infer_schema: the sample read on threads gives the types one thread gives") {
  testing::TempDir dir;
  for (int variant = 0; variant < 4; ++variant) {
    std::mt19937_64 rng(100 + variant);
    const bool comments = variant % 2 == 1;
    std::string text = "i,d,f,day,s,rare,e\n";
    // A value that makes the column `rare` String, placed past the first
    // pieces: a merge that dropped a piece would leave the column Int.
    const size_t rare_row = 2000 + rng() % 10000;
    for (size_t row = 0; text.size() < (3u << 19); ++row) {
      if (comments && rng() % 50 == 0) text += "# a comment, with \"a quote\n";
      text += std::to_string(static_cast<int64_t>(rng() % 2000000) - 1000000) + ",";
      text += std::to_string(rng() % 1000) + "." + std::to_string(10 + rng() % 90) + ",";
      text += rng() % 3 ? std::to_string(rng() % 100) + ".5e" + std::to_string(rng() % 9) : std::string("");
      text += ",2024-0" + std::to_string(1 + rng() % 9) + "-1" + std::to_string(rng() % 10) + ",";
      switch (rng() % 4) {
        case 0: text += "\"a,\n\"\"b\"\",\r\nc\""; break;
        case 1: text += "\"\""; break;
        case 2: text += "plain"; break;
        default: text += "\"x\ny\"";
      }
      text += "," + (row == rare_row ? std::string("x") : std::to_string(rng() % 50)) + ",";
      text += rng() % 10 ? "" : "NA";
      text += variant >= 2 && rng() % 2 ? "\r\n" : "\n";
    }
    const std::string path = dir.file("sample.csv");
    testing::write_file(path, text);
    auto infer = [&](int threads) {
      Options opts;
      opts.files = {path};
      if (comments) opts.dialect.comment = '#';
      InputSet in = InputSet::open(opts);
      std::vector<bool> unobserved;
      std::vector<OutputColumn> cols = infer_schema(in, opts, threads, &unobserved);
      std::vector<std::string> out;
      for (size_t c = 0; c < cols.size(); ++c)
        out.push_back(cols[c].name + ":" + std::to_string(static_cast<int>(cols[c].type.type)) + "/" +
                      std::to_string(cols[c].type.scale) + (unobserved[c] ? "?" : ""));
      return out;
    };
    const std::vector<std::string> one = infer(1);
    INFO("variant " << variant << ": " << one[0] << " " << one[1] << " " << one[4] << " " << one[5]);
    REQUIRE(one.size() == 7);
    CHECK(one[0] == "i:" + std::to_string(static_cast<int>(Type::Int)) + "/0");
    CHECK(one[1] == "d:" + std::to_string(static_cast<int>(Type::Decimal)) + "/2");
    CHECK(one[5] == "rare:" + std::to_string(static_cast<int>(Type::String)) + "/0");
    CHECK(one[6] == "e:" + std::to_string(static_cast<int>(Type::String)) + "/0");  // NA is text here
    for (int threads : {2, 3, 5, 16}) {
      INFO("threads " << threads);
      CHECK(infer(threads) == one);
    }
  }
}

// The longest sampled row sizes the GPUs' batch tails: it must be the whole
// row (quoted line breaks included), wherever the pieces are cut.
TEST_CASE("infer_schema: the longest sampled row, in bytes, on any thread count") {
  testing::TempDir dir;
  const std::string path = dir.file("rows.csv");
  auto longest = [&](int threads) {
    Options opts;
    opts.files = {path};
    InputSet in = InputSet::open(opts);
    uint64_t n = 12345;
    (void)infer_schema(in, opts, threads, nullptr, &n);
    return n;
  };
  std::mt19937_64 rng(7);
  for (int variant = 0; variant < 3; ++variant) {
    std::string text = "a,b\n";
    std::string big;  // a quoted field of short lines: longer as a row than any line
    for (int i = 0; i < 300; ++i) big += "line " + std::to_string(i) + ",\"\"x\"\"\r\n";
    const std::string big_row = "1,\"" + big + "\"" + (variant == 2 ? "\r\n" : "\n");
    std::string rows;
    while (rows.size() < (variant == 1 ? 900000u : 200000u))
      rows += std::to_string(rng() % 1000) + "," + std::string(rng() % 40, 'y') + "\n";
    const size_t cut = rows.find('\n', rows.size() / 2) + 1;
    text += rows.substr(0, cut) + big_row + rows.substr(cut);
    testing::write_file(path, text);
    INFO("variant " << variant);
    for (int threads : {1, 2, 5, 16}) CHECK(longest(threads) == big_row.size());
  }
  // A row the sample cuts counts the bytes sampled.
  testing::write_file(path, "a,b\n1,\"" + std::string(kInferSampleBytes * 2, 'z') + "\"\n");
  CHECK(longest(4) >= kInferSampleBytes);
  // No data rows.
  testing::write_file(path, "a,b\n");
  CHECK(longest(4) == 0);
}

TEST_CASE("TypeGuess: leading zeros, separators and spaces keep text") {
  CHECK(guess({"1", "007"}) == T(Type::String));
  CHECK(guess({"-01"}) == T(Type::String));
  CHECK(guess({"00.5"}) == T(Type::String));
  CHECK(guess({"00"}) == T(Type::String));
  CHECK(guess({"0.5", "0"}) == T(Type::Decimal, 1));
  CHECK(guess({"1,000"}) == T(Type::String));
  CHECK(guess({" 1"}) == T(Type::String));
  CHECK(guess({"1 "}) == T(Type::String));
  CHECK(guess({"$5"}) == T(Type::String));
}

TEST_CASE("TypeGuess: nulls fit every type") {
  CHECK(guess({"", "1", "", "2"}) == T(Type::Int));
  CHECK(guess({"NA", "1.5", "NA"}, {"NA"}) == T(Type::Decimal, 1));
  CHECK(guess({"NA", "1.5"}) == T(Type::String));  // NA is text unless it is a null token
  CHECK(guess({"", ""}) == T(Type::String));       // only nulls
  CHECK(guess({}) == T(Type::String));
  TypeGuess g;
  g.observe("", 0);
  g.observe("5", 1);
  CHECK(g.observed() == 1);
}

TEST_CASE("text_fits checks each row against its column type") {
  CHECK(fits("", T(Type::Int)));  // null
  CHECK(fits("-12", T(Type::Int)));
  CHECK_FALSE(fits("007", T(Type::Int)));
  CHECK_FALSE(fits("1.5", T(Type::Int)));
  CHECK_FALSE(fits("99999999999999999999", T(Type::Int)));
  CHECK(fits("1.25", T(Type::Decimal, 2)));
  CHECK(fits("1.250", T(Type::Decimal, 2)));
  CHECK(fits("3", T(Type::Decimal, 2)));
  CHECK_FALSE(fits("1.255", T(Type::Decimal, 2)));
  CHECK_FALSE(fits("1e2", T(Type::Decimal, 2)));
  CHECK_FALSE(fits("1000000000000000000", T(Type::Decimal, 1)));  // overflows at scale 1
  CHECK(fits("1e300", T(Type::Float)));
  CHECK_FALSE(fits("01.5", T(Type::Float)));
  CHECK(fits("TRUE", T(Type::Bool)));
  CHECK_FALSE(fits("1", T(Type::Bool)));
  CHECK(fits("2020-02-29", T(Type::Date)));
  CHECK_FALSE(fits("2020-02-29T00:00", T(Type::Date)));
  CHECK(fits("2020-02-29", T(Type::Timestamp)));
  CHECK(fits("anything, really", T(Type::String)));
}

TEST_CASE("widen_for moves up the lattice only as far as needed") {
  CHECK(widen(T(Type::Int), "5") == T(Type::Int));
  CHECK(widen(T(Type::Int), "2.75") == T(Type::Decimal, 2));
  CHECK(widen(T(Type::Int), "1e5") == T(Type::Float));
  CHECK(widen(T(Type::Int), "abc") == T(Type::String));
  CHECK(widen(T(Type::Int), "007") == T(Type::String));
  CHECK(widen(T(Type::Int), "99999999999999999999") == T(Type::String));
  CHECK(widen(T(Type::Int), "99999999999999999999.5") == T(Type::Float));
  CHECK(widen(T(Type::Decimal, 2), "-99999999999999999999") == T(Type::String));
  CHECK(widen(T(Type::Float), "99999999999999999999") == T(Type::Float));  // a float column reads it
  CHECK(widen(T(Type::Decimal, 2), "1.5") == T(Type::Decimal, 2));
  CHECK(widen(T(Type::Decimal, 1), "1.125") == T(Type::Decimal, 3));
  CHECK(widen(T(Type::Decimal, 2), "1.5e3") == T(Type::Float));
  CHECK(widen(T(Type::Decimal, 10), "123456789.5") == T(Type::Decimal, 10));  // fits int64
  CHECK(widen(T(Type::Decimal, 10), "1234567890.5") == T(Type::Float));  // does not
  CHECK(widen(T(Type::Decimal, 2), "x") == T(Type::String));
  CHECK(widen(T(Type::Float), "1.5") == T(Type::Float));
  CHECK(widen(T(Type::Float), "x") == T(Type::String));
  CHECK(widen(T(Type::Bool), "1") == T(Type::String));
  CHECK(widen(T(Type::Date), "2024-01-01T10:00") == T(Type::Timestamp));
  CHECK(widen(T(Type::Date), "tomorrow") == T(Type::String));
  CHECK(widen(T(Type::Timestamp), "2024-01-01") == T(Type::Timestamp));
  CHECK(widen(T(Type::Timestamp), "noon") == T(Type::String));
  CHECK(widen(T(Type::String), "1") == T(Type::String));
}

TEST_CASE("--schema parsing") {
  auto s = parse_schema_option("id:int, price:decimal(2),name:String,when:timestamp,d:date,"
                               "ok:bool,x:float,amount:decimal,a:b:string");
  REQUIRE(s.size() == 9);
  CHECK((s[0].name == "id" && s[0].type == T(Type::Int) && !s[0].infer_scale));
  CHECK((s[1].name == "price" && s[1].type == T(Type::Decimal, 2) && !s[1].infer_scale));
  CHECK((s[2].name == "name" && s[2].type == T(Type::String)));
  CHECK(s[3].type == T(Type::Timestamp));
  CHECK(s[4].type == T(Type::Date));
  CHECK(s[5].type == T(Type::Bool));
  CHECK(s[6].type == T(Type::Float));
  CHECK((s[7].name == "amount" && s[7].type.type == Type::Decimal && s[7].infer_scale));
  CHECK((s[8].name == "a:b" && s[8].type == T(Type::String)));  // the last ':' splits
  CHECK(parse_schema_option("v:decimal(18)")[0].type == T(Type::Decimal, 18));
  CHECK(parse_schema_option("v:decimal( 0 )")[0].type == T(Type::Decimal, 0));

  std::string e = usage_error("id:int,price:flaot");
  CHECK(e.find("unknown type 'flaot'") != std::string::npos);
  CHECK(e.find("price") != std::string::npos);
  CHECK(e.find("position 8") != std::string::npos);
  CHECK(e.find("expected one of int, float") != std::string::npos);
  CHECK(usage_error("id:int,id:float").find("'id' is given a type twice") != std::string::npos);
  CHECK(usage_error("id").find("expected name:type") != std::string::npos);
  CHECK(usage_error("id:int,,x:int").find("empty entry") != std::string::npos);
  CHECK(usage_error(":int").find("column name") != std::string::npos);
  CHECK(usage_error("v:decimal(19)").find("0 to 18") != std::string::npos);
  CHECK(usage_error("v:decimal(x)").find("0 to 18") != std::string::npos);
  CHECK(usage_error("v:").find("unknown type ''") != std::string::npos);
  CHECK(schema_type_name(T(Type::Decimal, 3)) == "decimal(3)");
  CHECK(schema_type_name(T(Type::Timestamp)) == "timestamp");
}
