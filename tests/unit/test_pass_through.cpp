// Row output as written (OutputColumn::as_written, Value::text), zoned timestamps printed
// with Z, unique output names, and rows that stream out (exec/stream_out.hpp).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/stream_out.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/spec.hpp"
#include "warpcsv/table.hpp"
#include "unit/writer_output.hpp"

using namespace warpcsv;
using testing::write_all;
using testing::written;

namespace {

ColumnType T(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

// A value of `t` read from `text` (which must outlive it), carrying its text.
Value read_as(ColumnType t, const std::string& text) {
  Value v;
  REQUIRE(field_to_value(t, text.data(), static_cast<uint32_t>(text.size()), &v, false));
  v.text = text.data();
  v.text_len = static_cast<uint32_t>(text.size());
  return v;
}

std::vector<OutputColumn> schema() {
  return {{"pickup", T(Type::Timestamp)}, {"fare", T(Type::Decimal, 2)}, {"tbl", T(Type::Float)},
          {"n", T(Type::Int)},            {"ok", T(Type::Bool)},         {"name", T(Type::String)}};
}

std::vector<std::string> names(const std::vector<OutputColumn>& cols) {
  std::vector<std::string> n;
  for (const auto& c : cols) n.push_back(c.name);
  return n;
}
std::vector<bool> as_written(const std::vector<OutputColumn>& cols) {
  std::vector<bool> w;
  for (const auto& c : cols) w.push_back(c.as_written);
  return w;
}

}  // namespace

TEST_CASE("writers print a column as written from its text, and computed columns from their values") {
  const std::string ts = "2019-03-25 22:04:25", dec = "6.5", fl = "55", in = "+5", b = "TRUE";
  std::vector<OutputColumn> cols = {{"pickup", T(Type::Timestamp), true}, {"fare", T(Type::Decimal, 2), true},
                                    {"tbl", T(Type::Float), true},        {"n", T(Type::Int), true},
                                    {"ok", T(Type::Bool), true},          {"fare2", T(Type::Decimal, 2), false}};
  const Value fare = read_as(T(Type::Decimal, 2), dec);
  std::vector<std::vector<Value>> rows = {{read_as(T(Type::Timestamp), ts), fare, read_as(T(Type::Float), fl),
                                           read_as(T(Type::Int), in), read_as(T(Type::Bool), b), fare},
                                          {Value::make_null(), Value::make_null(), Value::make_null(),
                                           Value::make_null(), Value::make_null(), Value::make_null()}};
  CHECK(write_all(OutputFormat::Csv, cols, rows) ==
        "pickup,fare,tbl,n,ok,fare2\n2019-03-25 22:04:25,6.5,55,+5,TRUE,6.50\n,,,,,\n");
  CHECK(write_all(OutputFormat::Tsv, cols, rows) ==
        "pickup\tfare\ttbl\tn\tok\tfare2\n2019-03-25 22:04:25\t6.5\t55\t+5\tTRUE\t6.50\n\t\t\t\t\t\n");
  // JSON: numbers keep their text where it is a JSON number (+5 is not), bools are true/false.
  CHECK(write_all(OutputFormat::Ndjson, cols, rows) ==
        "{\"pickup\":\"2019-03-25 22:04:25\",\"fare\":6.5,\"tbl\":55,\"n\":5,\"ok\":true,\"fare2\":6.50}\n"
        "{\"pickup\":null,\"fare\":null,\"tbl\":null,\"n\":null,\"ok\":null,\"fare2\":null}\n");
  const std::string table = write_all(OutputFormat::Table, cols, rows);
  for (const char* cell : {"| 2019-03-25 22:04:25 |", " 6.5 |", " 55 |", " +5 |", " TRUE |", " 6.50 |"})
    CHECK(table.find(cell) != std::string::npos);
  CHECK(value_text(fare, cols[1]) == "6.5");
  CHECK(value_text(fare, cols[5]) == "6.50");
}

TEST_CASE("JSON prints a number as written only when the text is a JSON number") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"0", "0"},         {"-0", "-0"},       {"6.50", "6.50"}, {"1e3", "1e3"},     {"1E+3", "1E+3"},
      {"-2.5e-3", "-2.5e-3"}, {".5", "0.5"},  {"5.", "5.0"},    {"+1.5", "1.5"},    {"inf", "null"},
      {"nan", "null"},    {"1e", "?"}};
  for (const auto& [text, want] : cases) {
    if (want == "?") continue;  // not a float at all
    INFO(text);
    std::vector<OutputColumn> cols = {{"x", T(Type::Float), true}};
    const std::string out = write_all(OutputFormat::Ndjson, cols, {{read_as(T(Type::Float), text)}});
    CHECK(out == "{\"x\":" + want + "}\n");
  }
}

TEST_CASE("a timestamp column whose values carry a zone prints its computed values with Z") {
  const Value v = Value::of_int(int128(1710016200) * 1000000);  // 2024-03-09T20:30:00 UTC
  CHECK(format_value(v, T(Type::Timestamp)) == "2024-03-09T20:30:00");
  CHECK(format_value(v, T(Type::Timestamp, kZoned)) == "2024-03-09T20:30:00Z");
  const Value frac = Value::of_int(int128(1710016200) * 1000000 + 250000);
  CHECK(format_value(frac, T(Type::Timestamp, kZoned)) == "2024-03-09T20:30:00.250000Z");
  CHECK(T(Type::Timestamp, kZoned) == T(Type::Timestamp));  // one type to the binder
}

TEST_CASE("inference marks a timestamp column with a zone; a late zone widens an inferred column") {
  auto guess = [](std::vector<std::string> fields) {
    TypeGuess g;
    for (const auto& f : fields) g.observe(f.data(), static_cast<uint32_t>(f.size()));
    return g.result();
  };
  CHECK(guess({"2024-03-10 01:30:00", "2024-03-10 02:00:00"}).scale == 0);
  CHECK(guess({"2024-03-10 01:30:00", "2024-03-10 02:00:00+05:00"}).scale == kZoned);
  CHECK(guess({"2024-03-10", "2024-03-10T02:00:00Z"}).scale == kZoned);
  CHECK(guess({"2024-03-10", "2024-03-10T02:00:00Z"}).type == Type::Timestamp);
  CHECK(guess({"2024-03-10", "2024-03-11"}).type == Type::Date);
  // Pieces merged in any order give the zone too.
  TypeGuess a, b;
  const std::string x = "2024-03-10 01:30:00", y = "2024-03-10 01:30:00-0130";
  a.observe(x.data(), static_cast<uint32_t>(x.size()));
  b.observe(y.data(), static_cast<uint32_t>(y.size()));
  a.merge(b);
  CHECK(a.result().scale == kZoned);

  const std::string zoned = "2024-03-10 01:30:00+05:00", naive = "2024-03-10 01:30:00";
  CHECK_FALSE(text_fits(zoned.data(), static_cast<uint32_t>(zoned.size()), T(Type::Timestamp)));
  CHECK(text_fits(zoned.data(), static_cast<uint32_t>(zoned.size()), T(Type::Timestamp, kZoned)));
  CHECK(text_fits(naive.data(), static_cast<uint32_t>(naive.size()), T(Type::Timestamp, kZoned)));
  const ColumnType w = widen_for(T(Type::Timestamp), zoned.data(), static_cast<uint32_t>(zoned.size()));
  CHECK((w.type == Type::Timestamp && w.scale == kZoned));
  const ColumnType d = widen_for(T(Type::Date), zoned.data(), static_cast<uint32_t>(zoned.size()));
  CHECK((d.type == Type::Timestamp && d.scale == kZoned));
  const ColumnType dn = widen_for(T(Type::Date), naive.data(), static_cast<uint32_t>(naive.size()));
  CHECK((dn.type == Type::Timestamp && dn.scale == 0));

  // The executors' check: an inferred column without a zone does not take one (it widens);
  // a --schema column and a zoned one do, converted to UTC.
  Value v;
  CHECK_FALSE(field_to_value(T(Type::Timestamp), zoned.data(), static_cast<uint32_t>(zoned.size()), &v, true));
  REQUIRE(field_to_value(T(Type::Timestamp), zoned.data(), static_cast<uint32_t>(zoned.size()), &v, false));
  CHECK(format_value(v, T(Type::Timestamp)) == "2024-03-09T20:30:00");
  REQUIRE(field_to_value(T(Type::Timestamp, kZoned), zoned.data(), static_cast<uint32_t>(zoned.size()), &v, true));
  CHECK(format_value(v, T(Type::Timestamp, kZoned)) == "2024-03-09T20:30:00Z");
  CHECK(timestamp_has_zone("2024-03-10T01:30:00z", 20));
  CHECK_FALSE(timestamp_has_zone("2024-03-10 01:30:00.5", 21));
}

TEST_CASE("bare columns of row output are marked as written, through every stage") {
  CHECK(as_written(build_plan("select *", schema()).output) == std::vector<bool>(6, true));
  Plan p = build_plan("filter n > 1 | select fare as f, n + 1 as m, name, pickup", schema());
  CHECK(as_written(p.output) == std::vector<bool>{true, false, true, true});
  CHECK(as_written(p.scan_output) == as_written(p.output));
  // After the scan (sort, limit): a select that only names a column keeps what it held.
  Plan q = build_plan("select fare, n | sort fare | limit 3 | select n, fare, fare * 2 as d", schema());
  CHECK(as_written(q.output) == std::vector<bool>{true, true, false});
  for (const auto& st : q.post)
    if (st.kind == PostStage::Sort) CHECK(as_written(st.output) == std::vector<bool>{true, true});
  // Group keys and aggregates print one text per value.
  Plan g = build_plan("groupby fare | agg fare, count() as n", schema());
  CHECK(as_written(g.output) == std::vector<bool>{false, false, false});
}

TEST_CASE("a table keeps the text of an as-written value in its own storage") {
  Table t;
  t.columns = {{"fare", T(Type::Decimal, 2), true}, {"name", T(Type::String), true}};
  std::string fare = "6.5", name = "x";
  Value row[2] = {read_as(T(Type::Decimal, 2), fare), Value::of_str(name.data(), 1)};
  t.append_owned(row);
  fare = "9.9";  // the input buffer is reused
  CHECK(std::string(t.row(0)[0].text, t.row(0)[0].text_len) == "6.5");
  CHECK(t.row(0)[0].i == 650);
}

TEST_CASE("output names are unique as header names are") {
  std::vector<std::string> n = {"day", "day", "day_2", "day", "x"};
  make_names_unique(n);
  CHECK(n == std::vector<std::string>{"day", "day_3", "day_2", "day_4", "x"});
  Plan p = build_plan("select name, name as n, n, fare as n", schema());
  CHECK(names(p.output) == std::vector<std::string>{"name", "n", "n_2", "n_3"});
  Plan g = build_plan("groupby ok | agg ok, count() as ok", schema());
  CHECK(names(g.output) == std::vector<std::string>{"ok", "ok_2", "ok_3"});
}

TEST_CASE("rows stream out only when no later value can change their text") {
  const std::vector<bool> none(6, false);
  std::vector<bool> fixed(6, false);
  fixed[3] = true;  // n from --schema
  fixed[5] = true;  // name: a string
  auto streams = [&](const std::string& pipeline, OutputFormat f, const std::vector<bool>& fx, bool rereadable = true,
                     const std::string& output = "") {
    Options o;
    o.format = f;
    o.output_path = output;
    return rows_can_stream(build_plan(pipeline, schema()), o, fx, rereadable);
  };
  CHECK(streams("filter fare > 1 | select pickup, fare, tbl", OutputFormat::Csv, none));
  CHECK(streams("select *", OutputFormat::Tsv, none));
  CHECK(streams("select n * 2 as m, lower(name) as l | limit 5", OutputFormat::Csv, fixed));
  CHECK_FALSE(streams("select n * 2 as m", OutputFormat::Csv, none));
  CHECK_FALSE(streams("select fare + 1 as f", OutputFormat::Csv, fixed));
  // JSON prints a number by its type (a widening to string quotes it); dates and strings not.
  CHECK_FALSE(streams("select fare", OutputFormat::Json, none));
  CHECK(streams("select pickup, name", OutputFormat::Ndjson, none));
  CHECK(streams("select fare, n", OutputFormat::Json, std::vector<bool>(6, true)));
  // Held as before: a sort or an assert, aligned formats, -o, an aggregate.
  CHECK_FALSE(streams("select pickup | sort pickup", OutputFormat::Csv, none));
  CHECK_FALSE(streams("assert n > 0", OutputFormat::Csv, none));
  CHECK_FALSE(streams("select pickup", OutputFormat::Table, none));
  CHECK_FALSE(streams("select pickup", OutputFormat::Csv, none, true, "out.csv"));
  CHECK(streams("select pickup", OutputFormat::Csv, none, true, "-"));
  CHECK_FALSE(streams("groupby name | agg count()", OutputFormat::Csv, std::vector<bool>(6, true)));
  // A stream cannot be read again: a widening fails the run either way, so rows go out.
  CHECK(streams("select n * 2 as m", OutputFormat::Json, none, false));
}

TEST_CASE("the stream hash is the same however the bytes are cut") {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += "row " + std::to_string(i * 7919) + ",x\n";
  StreamHash whole;
  whole.add(bytes.data(), bytes.size());
  for (size_t step : {1, 3, 31, 32, 33, 100, 4096}) {
    StreamHash cut;
    for (size_t at = 0; at < bytes.size(); at += step) cut.add(bytes.data() + at, std::min(step, bytes.size() - at));
    CHECK(cut.digest() == whole.digest());
  }
  for (size_t at : {size_t{0}, size_t{5}, bytes.size() / 2, bytes.size() - 1}) {
    std::string other = bytes;
    other[at] ^= 1;
    StreamHash h;
    h.add(other.data(), other.size());
    CHECK(h.digest() != whole.digest());
  }
  StreamHash shorter;
  shorter.add(bytes.data(), bytes.size() - 1);
  CHECK(shorter.digest() != whole.digest());
}

TEST_CASE("a reading again after streamed rows writes them again the same, then goes on") {
  std::FILE* dest = std::tmpfile();
  REQUIRE(dest != nullptr);
  StreamedOutput out(true);
  auto attempt = [&](const std::string& bytes) {
    StreamedOutput::Attempt a(out, dest);
    std::fwrite(bytes.data(), 1, bytes.size(), a.file());
    out.flush();
  };
  attempt("k,v\na,1\n");
  CHECK(out.started());
  out.restart("widened");
  {
    StreamedOutput::Attempt a(out, dest);
    std::fputs("k,v\na,", a.file());  // not yet all that went out
    out.flush();
    CHECK_THROWS_AS(out.check_complete(), InputError);
    std::fputs("1\nb,2\n", a.file());
    out.flush();
    out.check_complete();
  }
  CHECK(written(dest) == "k,v\na,1\nb,2\n");
  out.restart("the rows before it print otherwise");
  {
    StreamedOutput::Attempt a(out, dest);
    std::fputs("k,v\na,1\nc,3\nd,4\n", a.file());  // differs from what is out: nothing more goes out
    try {
      out.flush();
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("print otherwise") != std::string::npos);
    }
    CHECK_THROWS_AS(out.check_complete(), InputError);
  }
  CHECK(written(dest) == "k,v\na,1\nb,2\n");
  std::fclose(dest);
}
