// Lookup joins: reading a lookup file, its typed index, and the loop over a
// row's joined copies (core/lookup.hpp), as the executors use them.
#include <memory>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/lookup_table.hpp"
#include "warpcsv/spec.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

std::string str(const Value& v) { return v.null ? "null" : std::string(v.s.ptr, v.s.len); }

// A pipeline's lookup files opened, its plan bound against `input`, and its tables loaded.
struct Loaded {
  Options opts;
  std::unique_ptr<LookupFiles> files;
  Plan plan;
  Loaded(const std::string& pipeline, const std::vector<OutputColumn>& input, std::vector<std::string> nulls = {}) {
    opts.pipeline = pipeline;
    opts.dialect.null_tokens = std::move(nulls);
    files = std::make_unique<LookupFiles>(opts, 2);
    for (int attempt = 0; attempt < 8; ++attempt) {
      plan = build_plan(pipeline, input, {}, {}, files->columns().schemas);
      if (files->load(plan)) return;
    }
    FAIL("the lookup columns kept widening");
  }
  const LookupView& view() const { return files->tables().at(0).view(); }
};

const std::vector<OutputColumn> kInput = {{"id", {Type::Int, 0}}, {"code", {Type::String, 0}}};

// The message of the exception `load` throws ("" when it throws none).
template <class Fn>
std::string error_of(Fn&& load) {
  try {
    load();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("lookup file: header names, types, quoted fields, as-written text, nulls and null keys") {
  TempDir dir;
  write_file(dir.file("l.csv"), "\xEF\xBB\xBFid,name,price,\n1,\"a, \"\"b\"\"\",1.50,\n2,c,7,\n,d,NA,\n");
  const Loaded l("join '" + dir.file("l.csv") + "' on id | select name, price", kInput, {"NA"});
  const auto schema = l.files->columns().schemas.at(0);
  REQUIRE(schema.size() == 4);
  CHECK(schema[0].type.type == Type::Int);
  CHECK(schema[1].type.type == Type::String);
  CHECK(schema[2].type == ColumnType{Type::Decimal, 2});
  CHECK(schema[3].name == "c4");  // an empty header name gets its position
  const LookupView& v = l.view();
  CHECK(l.files->tables().at(0).rows() == 3);
  REQUIRE(v.width == 3);  // the key, then name and price (what the pipeline reads)
  CHECK(str(v.cells[1]) == "a, \"b\"");
  CHECK(std::string(v.cells[2].text, v.cells[2].text_len) == "1.50");  // printed as written
  CHECK(v.cells[2 * 3 + 2].null);                                      // NA
  const Type types[] = {Type::Int};
  Value key = Value::of_int(2);
  CHECK(bucket_row(lookup_first(v, &key, types, lookup_hash(&key, types, 1))) == 1);
  key = Value::of_int(3);
  CHECK(lookup_first(v, &key, types, lookup_hash(&key, types, 1)) == kEmptyBucket);
  key = Value::make_null();  // a null key matches nothing, not even the row whose key is null
  CHECK(lookup_first(v, &key, types, lookup_hash(&key, types, 1)) == kEmptyBucket);
}

TEST_CASE("lookup file: a ragged row, an empty file, a missing one and one too large are errors naming it") {
  TempDir dir;
  write_file(dir.file("ragged.csv"), "code,b\nx,2\ny\n");
  const std::string ragged = error_of([&] { Loaded("join '" + dir.file("ragged.csv") + "' on code", kInput); });
  CHECK(ragged.find("the lookup file of a join: ") != std::string::npos);
  CHECK(ragged.find("ragged.csv:3") != std::string::npos);
  write_file(dir.file("empty.csv"), "");
  CHECK(error_of([&] { Loaded("join '" + dir.file("empty.csv") + "' on code", kInput); }).find("is empty") !=
        std::string::npos);
  CHECK(error_of([&] { Loaded("join '" + dir.file("none.csv") + "' on code", kInput); })
            .find("the lookup file of a join: cannot open") != std::string::npos);
  write_file(dir.file("big.csv"), "code\n" + std::string(4000, '1') + "\n");
  Options opts;
  opts.pipeline = "join '" + dir.file("big.csv") + "' on code";
  opts.memory_limit = 4000;
  CHECK_THROWS_AS(LookupFiles(opts, 1), ResourceError);
  write_file(dir.file("semi.csv"), "code;b\nx;1\n");
  CHECK(Loaded("join '" + dir.file("semi.csv") + "' delimiter ';' on code", kInput).files->columns().schemas.at(0).size() == 2);
}

TEST_CASE("lookup table: rows of one key chain in file order; keys widen to the row key's type") {
  TempDir dir;
  // 1.5 past the inference sample's rows would widen the column; here the sample holds it.
  write_file(dir.file("l.csv"), "k,v\n1,a\n2,b\n1,c\n1.5,d\n2,e\n");
  const std::vector<OutputColumn> input = {{"x", {Type::Decimal, 2}}};
  const Loaded l("join '" + dir.file("l.csv") + "' on x = k | select v", input);
  REQUIRE(l.plan.joins.at(0).key_types.at(0) == ColumnType{Type::Decimal, 2});
  const LookupView& v = l.view();
  const Type types[] = {Type::Decimal};
  // The key's rows, "+" first when its bucket says it has more than one.
  auto rows_of = [&](int128 scaled) {
    Value key = Value::of_int(scaled);
    const LookupBucket b = lookup_first(v, &key, types, lookup_hash(&key, types, 1));
    std::string out = b & kBucketHasMore ? "+" : "";
    for (uint32_t r = bucket_row(b); r != kNoLookupRow; r = v.next[r]) out += str(v.cells[r * v.width + 1]);
    return out;
  };
  CHECK(rows_of(100) == "+ac");
  CHECK(rows_of(200) == "+be");
  CHECK(rows_of(150) == "d");
  CHECK(rows_of(300).empty());
}

TEST_CASE("lookup table: a value past the sample widens its column, and the plan is bound again") {
  TempDir dir;
  std::string text = "code,n\n";
  for (int i = 0; i < 100000; ++i) text += "c" + std::to_string(i) + "," + std::to_string(i) + "\n";
  text += "late,2.5\n";  // past the 1 MiB sample: n becomes a decimal
  write_file(dir.file("l.csv"), text);
  const Loaded l("join '" + dir.file("l.csv") + "' on code | select n", kInput);
  CHECK(l.files->columns().schemas.at(0).at(1).type == ColumnType{Type::Decimal, 1});
  CHECK(l.plan.output.at(0).type == ColumnType{Type::Decimal, 1});
  CHECK(l.files->tables().at(0).rows() == 100001);
}

TEST_CASE("joined rows: every combination of two joins in file order; a left join's nulls; an inner join's none") {
  TempDir dir;
  write_file(dir.file("a.csv"), "k,x\n1,a1\n2,a2\n1,a3\n");
  write_file(dir.file("b.csv"), "x,y\na1,b1\na3,b3\na3,b4\n");
  const Loaded la("join '" + dir.file("a.csv") + "' on id = k | select x", kInput);
  const Loaded lb("join '" + dir.file("b.csv") + "' on code = x | select y", kInput);
  const LookupView ta = la.view(), tb = lb.view();
  // Slot 0: the row's k; slot 1: a's x (join 0's key for b); slot 2: b's y.
  const Instr key_a[] = {{Op::Column, Type::Int, 0, Type::Int, 0, 0}};
  const Instr key_b[] = {{Op::Column, Type::String, 0, Type::String, 0, 1}};
  JoinView joins[2] = {};
  joins[0].table = ta;
  joins[0].keys[0] = ProgramView{key_a, 1, nullptr, ""};
  joins[0].key_types[0] = Type::Int;
  joins[0].first_slot = 1;
  joins[0].width = 1;
  joins[1].table = tb;
  joins[1].keys[0] = ProgramView{key_b, 1, nullptr, ""};
  joins[1].key_types[0] = Type::String;
  joins[1].first_slot = 2;
  joins[1].width = 1;
  char scratch[64];
  auto copies = [&](int128 k, bool left_b) {
    joins[1].left = left_b;
    Value slots[3] = {Value::of_int(k), Value::make_null(), Value::make_null()};
    EvalContext ctx = make_eval_context(scratch, sizeof scratch);
    std::string out;
    CHECK(for_each_joined_row(joins, 2, slots, ctx, [&]() {
      out += str(slots[1]) + "/" + str(slots[2]) + " ";
      return true;
    }));
    return out;
  };
  CHECK(copies(1, false) == "a1/b1 a3/b3 a3/b4 ");
  CHECK(copies(1, true) == "a1/b1 a3/b3 a3/b4 ");
  CHECK(copies(2, false).empty());  // a2 has no row in b
  CHECK(copies(2, true) == "a2/null ");
  CHECK(copies(9, true).empty());  // join 0 is inner
  // emit() returning false stops the loop.
  Value slots[3] = {Value::of_int(1), Value::make_null(), Value::make_null()};
  EvalContext ctx = make_eval_context(scratch, sizeof scratch);
  int seen = 0;
  CHECK_FALSE(for_each_joined_row(joins, 2, slots, ctx, [&]() { return ++seen < 2; }));
  CHECK(seen == 2);
}
