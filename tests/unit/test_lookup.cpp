// Lookup joins: reading a lookup file, its typed index, and the loop over a
// row's joined copies (core/lookup.hpp), as the executors use them.
#include <string>
#include <vector>

#include "catch.hpp"
#include "io/lookup_table.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

JoinSpec spec_of(const LookupFile& f, std::vector<int> keys, std::vector<ColumnType> key_types, std::vector<int> cols) {
  JoinSpec s;
  s.path = f.path;
  s.key_columns = std::move(keys);
  s.key_types = std::move(key_types);
  s.columns = std::move(cols);
  s.lookup_schema = f.schema;
  return s;
}

std::string str(const Value& v) { return v.null ? "null" : std::string(v.s.ptr, v.s.len); }

}  // namespace

TEST_CASE("lookup file: header names, types from every value, quoted fields, a trailing delimiter") {
  TempDir dir;
  write_file(dir.file("l.csv"), "\xEF\xBB\xBFid,name,price,\n1,\"a, \"\"b\"\"\",1.50,\n2,c,7,\n,d,NA,\n");
  DialectOptions opts;
  opts.null_tokens = {"NA"};
  const LookupFile f = read_lookup_file(dir.file("l.csv"), 0, opts, 1 << 20);
  REQUIRE(f.schema.size() == 4);
  CHECK(f.schema[0].name == "id");
  CHECK(f.schema[0].type.type == Type::Int);
  CHECK(f.schema[1].type.type == Type::String);
  CHECK(f.schema[2].type == ColumnType{Type::Decimal, 2});
  CHECK(f.schema[3].name == "c4");  // an empty header name gets its position
  CHECK(f.rows() == 3);
  CHECK(f.line == std::vector<uint64_t>{2, 3, 4});

  const LookupTable t(f, spec_of(f, {0}, {ColumnType{Type::Int, 0}}, {1, 2}), opts.null_tokens);
  const LookupView& v = t.view();
  CHECK(v.width == 3);
  CHECK(str(v.cells[1]) == "a, \"b\"");
  CHECK(std::string(v.cells[2].text, v.cells[2].text_len) == "1.50");  // printed as written
  CHECK(v.cells[2 * 3 + 2].null);                                      // NA
  const Type types[] = {Type::Int};
  Value key = Value::of_int(2);
  CHECK(lookup_first(v, &key, types, lookup_hash(&key, types, 1)) == 1);
  key = Value::of_int(3);
  CHECK(lookup_first(v, &key, types, lookup_hash(&key, types, 1)) == kNoLookupRow);
  key = Value::make_null();  // a null key matches nothing, not even the row whose key is null
  CHECK(lookup_first(v, &key, types, lookup_hash(&key, types, 1)) == kNoLookupRow);
}

TEST_CASE("lookup file: a ragged row, a bad quote, an empty file and one too large are errors naming it") {
  TempDir dir;
  DialectOptions opts;
  write_file(dir.file("ragged.csv"), "a,b\n1,2\n3\n");
  CHECK_THROWS_WITH(read_lookup_file(dir.file("ragged.csv"), 0, opts, 1 << 20),
                    Catch::Contains("ragged.csv:3: the lookup file of a join has a row of 1 fields where its header has 2"));
  write_file(dir.file("quote.csv"), "a,b\n1,\"2\n");
  CHECK_THROWS_AS(read_lookup_file(dir.file("quote.csv"), 0, opts, 1 << 20), InputError);
  write_file(dir.file("empty.csv"), "");
  CHECK_THROWS_WITH(read_lookup_file(dir.file("empty.csv"), 0, opts, 1 << 20), Catch::Contains("is empty"));
  write_file(dir.file("big.csv"), "a\n" + std::string(4000, '1') + "\n");
  CHECK_THROWS_AS(read_lookup_file(dir.file("big.csv"), 0, opts, 1000), ResourceError);
  write_file(dir.file("semi.csv"), "a;b\n1;x\n");
  CHECK(read_lookup_file(dir.file("semi.csv"), ';', opts, 1 << 20).schema.size() == 2);
}

TEST_CASE("lookup table: rows of one key chain in file order; keys widen to the row key's type") {
  TempDir dir;
  write_file(dir.file("l.csv"), "k,v\n1,a\n2,b\n1,c\n1.5,d\n2,e\n");
  const LookupFile f = read_lookup_file(dir.file("l.csv"), 0, DialectOptions{}, 1 << 20);
  REQUIRE(f.schema[0].type == ColumnType{Type::Decimal, 1});
  // Compared as decimal(2): the row key 1.50 finds 1.5.
  const LookupTable t(f, spec_of(f, {0}, {ColumnType{Type::Decimal, 2}}, {1}), {});
  const LookupView& v = t.view();
  const Type types[] = {Type::Decimal};
  auto rows_of = [&](int128 scaled) {
    Value key = Value::of_int(scaled);
    std::string out;
    for (uint32_t r = lookup_first(v, &key, types, lookup_hash(&key, types, 1)); r != kNoLookupRow; r = v.next[r])
      out += str(v.cells[r * v.width + 1]);
    return out;
  };
  CHECK(rows_of(100) == "ac");
  CHECK(rows_of(200) == "be");
  CHECK(rows_of(150) == "d");
  CHECK(rows_of(300).empty());
}

TEST_CASE("joined rows: every combination of two joins in file order; a left join's nulls; an inner join's none") {
  TempDir dir;
  write_file(dir.file("a.csv"), "k,x\n1,a1\n2,a2\n1,a3\n");
  write_file(dir.file("b.csv"), "x,y\na1,b1\na3,b3\na3,b4\n");
  const LookupFile fa = read_lookup_file(dir.file("a.csv"), 0, DialectOptions{}, 1 << 20);
  const LookupFile fb = read_lookup_file(dir.file("b.csv"), 0, DialectOptions{}, 1 << 20);
  const LookupTable ta(fa, spec_of(fa, {0}, {ColumnType{Type::Int, 0}}, {1}), {});
  const LookupTable tb(fb, spec_of(fb, {0}, {ColumnType{Type::String, 0}}, {1}), {});
  // Slot 0: the row's k; slot 1: a's x (join 0's key for b); slot 2: b's y.
  const Instr key_a[] = {{Op::Column, Type::Int, 0, Type::Int, 0, 0}};
  const Instr key_b[] = {{Op::Column, Type::String, 0, Type::String, 0, 1}};
  JoinView joins[2] = {};
  joins[0].table = ta.view();
  joins[0].keys[0] = ProgramView{key_a, 1, nullptr, ""};
  joins[0].key_types[0] = Type::Int;
  joins[0].first_slot = 1;
  joins[0].width = 1;
  joins[1].table = tb.view();
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
