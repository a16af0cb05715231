// The pipeline language: parsing every stage and expression form, binding to a
// plan (names, types, slots, deduplication), and every error message.
#include <string>
#include <vector>

#include "catch.hpp"
#include "plan_error.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

ColumnType T(Type t, int scale = 0) { return ColumnType{t, static_cast<uint8_t>(scale)}; }

std::vector<OutputColumn> schema() {
  return {{"id", T(Type::String)},      {"region", T(Type::String)}, {"v1", T(Type::Int)},
          {"price", T(Type::Decimal, 2)}, {"x", T(Type::Float)},      {"ok", T(Type::Bool)},
          {"day", T(Type::Date)},         {"odd name", T(Type::Int)}, {"Amount", T(Type::Int)}};
}

std::vector<std::string> names(const std::vector<OutputColumn>& cols) {
  std::vector<std::string> out;
  for (const auto& c : cols) out.push_back(c.name);
  return out;
}

// The UsageError message for `spec`, or "" when it binds.
std::string error_of(const std::string& spec) {
  try {
    build_plan(spec, schema());
  } catch (const UsageError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "";
}

bool has(const std::string& hay, const std::string& needle) {
  bool ok = hay.find(needle) != std::string::npos;
  if (!ok) INFO("message: " << hay << "\nexpected to contain: " << needle);
  return ok;
}

}  // namespace

TEST_CASE("syntax errors mark the position with a caret", "[spec]") {
  std::string m = error_of("filter v1 > 1 and | select x");
  CHECK(m ==
        "syntax error at position 19: expected an expression after 'and', found '|'\n"
        "  filter v1 > 1 and | select x\n"
        "                    ^");
  CHECK_THROWS_AS(check_pipeline_syntax("filter v1 > 1 and | select x"), UsageError);
  CHECK_NOTHROW(check_pipeline_syntax("filter nosuchcolumn > 1"));  // names need a schema

  CHECK(has(error_of(""), "found an empty pipeline"));
  CHECK(has(error_of("filter v1 > 1 |"), "expected a stage"));
  CHECK(has(error_of("filter v1 > 1 | | limit 2"), "at position 17: expected a stage"));
  CHECK(has(error_of("fitler v1 > 1"), "unknown stage 'fitler' (did you mean 'filter'?)"));
  CHECK(has(error_of("filter (v1 > 1"), "expected ')'"));
  CHECK(has(error_of("filter v1 > "), "expected an expression after '>', found the end"));
  CHECK(has(error_of("filter region == \"abc"), "at position 18: unterminated string"));
  CHECK(has(error_of("filter `odd name > 1"), "unterminated column name"));
  CHECK(has(error_of("filter v1 ! 2"), "unexpected '!'"));
  CHECK(has(error_of("filter v1 > 1 region"), "expected '|' or the end of the pipeline after the "
                                              "filter stage, found 'region'"));
  CHECK(has(error_of("select v1 v2"), "expected ',' or '|'"));
  CHECK(has(error_of("filter 1 < v1 < 3"), "comparisons cannot be chained"));
  CHECK(has(error_of("limit x"), "expected a row count"));
  CHECK(has(error_of("limit -1"), "expected a row count"));
  CHECK(has(error_of("filter v1 in 1, 2"), "expected '(' and a list of values"));
  CHECK(has(error_of("filter v1 is 3"), "expected 'null'"));
  CHECK(has(error_of("filter s == \"a\\qb\""), "unknown escape '\\q'"));
  CHECK(has(error_of("filter 12abc > 1"), "column names that start with a digit go in backticks"));
  CHECK(has(error_of("filter $x > 1"), "expected a column number after '$'"));
  CHECK(has(error_of("filter $0 > 1"), "column numbers start at $1"));
  CHECK(has(error_of("select a as"), "expected a name"));
  CHECK(has(error_of("filter v1 > 1 and and v1 < 2"), "expected an expression after 'and', found 'and'"));
  CHECK(has(error_of("filter v1 # 2"), "unexpected character '#'"));

  SECTION("a | inside quotes or backticks is not a separator") {
    Plan p = build_plan("filter region == \"a|b\" or `odd name` > 1 | select id", schema());
    CHECK(p.scan.filter.text == "region == \"a|b\" or `odd name` > 1");
    CHECK(p.post.empty());
  }
  SECTION("multi-line specs name the line") {
    std::string m2 = error_of("filter v1 > 1\n| select ?");
    CHECK(has(m2, "at line 2, position 10"));
    CHECK(has(m2, "\n  | select ?\n           ^"));
  }
  SECTION("long specs show a window around the error") {
    std::string spec = "filter " + std::string(150, ' ') + "v1 > 1 and )";
    std::string m3 = error_of(spec);
    CHECK(has(m3, "position 169"));
    CHECK(has(m3, "  ..."));
    size_t caret_line = m3.rfind('\n');
    std::string shown = m3.substr(m3.find('\n') + 1, caret_line - m3.find('\n') - 1);
    // The caret sits under the ')'.
    CHECK(shown[m3.size() - caret_line - 2] == ')');
  }
  SECTION("positions and carets count characters, two columns for wide ones") {
    CHECK(has(error_of("select \"\xC3\xA9\xC3\xA9\" + ?"), "position 15"));
    CHECK(has(error_of("select \"\xC3\xA9\xC3\xA9\" + ?"), "\n                ^"));
    CHECK(has(error_of("select \"\xE6\x97\xA5\" + ?"), "\n                ^"));  // one CJK character, two columns
    // A window cut inside a long line of two-byte characters still starts at a character.
    std::string accents;
    for (int i = 0; i < 80; ++i) accents += "\xC3\xA9";
    const std::string m4 = error_of("select \"" + accents + "\" + ?");
    CHECK(m4.find("...\xA9") == std::string::npos);
  }
}

TEST_CASE("unknown columns name the closest ones", "[spec]") {
  std::string m = error_of("filter regoin == \"x\"");
  CHECK(m.rfind("unknown column at position 8: no column named 'regoin'; did you mean 'region'?", 0) ==
        0);
  CHECK(has(m, "\n  filter regoin == \"x\"\n         ^"));
  CHECK(has(error_of("select prise"), "did you mean 'price'?"));
  CHECK(has(error_of("select vv1"), "did you mean 'v1'"));
  CHECK(has(error_of("select zzzzzzzz"), "(columns: id, region, v1, price"));
  CHECK(has(error_of("select $10"), "$10 is out of range: the input of this stage has 9 columns ($1..$9)"));
  // After a select only the selected names exist.
  CHECK(has(error_of("select v1 as a | filter v1 > 1"), "no column named 'v1'; did you mean 'a'?"));
  // After agg, only keys and agg outputs exist.
  CHECK(has(error_of("groupby id | agg count() as n | sort v1"), "no column named 'v1'"));
}

TEST_CASE("habits from SQL and the shell get the fix", "[spec]") {
  CHECK(has(error_of("filter v1 > 1 && ok"), "at position 15: unexpected '&&'; join conditions with 'and'"));
  CHECK(has(error_of("filter v1 > 1 & ok"), "unexpected '&'; join conditions with 'and'"));
  CHECK(has(error_of("agg count(distinct id)"), "count(distinct id) is written count_distinct(id)"));
  CHECK(has(error_of("agg sum(distinct v1)"), "'distinct' is not available in sum()"));
  CHECK(has(error_of("order by v1 desc"), "unknown stage 'order'; did you mean 'sort'? SQL's ORDER BY is written: "
                                          "sort v1 desc"));
  CHECK(has(error_of("sort by v1, id"), "at position 6: write sort without 'by': sort v1, id"));
  CHECK(error_of("sort by desc").find("no column named 'by'") != std::string::npos);  // a column `by`
  CHECK(has(error_of("head 5"), "did you mean 'limit'? the first rows are: limit 5"));
  CHECK(has(error_of("top 3"), "expected 'by' and the order, like top 3 by amount desc"));
  CHECK(has(error_of("top 0 by x"), "top takes a row count from 1"));
  CHECK(has(error_of("groupby id | agg count() as n | having n > 1"), "did you mean 'filter'?"));
  CHECK(has(error_of("from t"), "a pipeline names no table: the files come after it"));
  CHECK(has(error_of("select id from t"), "found 'from'; a pipeline names no table"));
  CHECK(has(error_of("select id where v1 > 1"), "stages are joined by '|': select id | filter v1 > 1"));
  CHECK(has(error_of("agg count() group by id"), "groupby comes before agg, joined by '|': groupby id | agg count()"));
}

TEST_CASE("a bare word compared with a column, a double-quoted column name: the string or the name", "[spec]") {
  // A bare word compared with a column may be a string without its quotes.
  CHECK(has(error_of("filter region == east"), "no column named 'east'; did you mean the string \"east\"?"));
  CHECK(has(error_of("filter region in (\"a\", east)"), "did you mean the string \"east\"?"));
  CHECK(has(error_of("filter lower(region) != eest"), "the string \"eest\""));
  CHECK_FALSE(has(error_of("filter nope == 1"), "the string"));
  CHECK_FALSE(has(error_of("filter nope == \"x\""), "the string"));
  CHECK_FALSE(has(error_of("filter region == `east`"), "the string"));
  // A "double-quoted" column name (as SQL writes one) where a column is meant.
  CHECK(has(error_of("groupby \"odd name\" | agg count()"),
            "\"odd name\" is a string, not a column name; column names with spaces or other characters go in "
            "backticks: `odd name`"));
  CHECK(has(error_of("agg sum(\"v1\")"), "write column names without quotes: v1"));
  CHECK(has(error_of("sort \"Amount\""), "write column names without quotes: Amount"));
  CHECK(has(error_of("select \"region\""), "\"region\" is a string"));
  CHECK(error_of("select \"region\" as r, 'v1', \"nope\"").empty());
}

TEST_CASE("a number column that NA or '-' made a string: the message gives the --null fix", "[spec]") {
  auto error_with = [](const std::string& spec, const NullLikeTokens& tokens) {
    try {
      build_plan(spec, schema(), {}, tokens);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const NullLikeTokens na = {{"NA", "-"}};
  CHECK(has(error_with("agg sum(id)", na),
            "sum() needs numbers, found string column 'id'; its values are numbers but for 'NA' and '-', so it is "
            "read as text: if those mean a missing value, run with --null NA --null -"));
  CHECK(has(error_with("filter id > 3", na), "cannot compare string column 'id' with number 3; its values"));
  CHECK(has(error_with("select id * 2", na), "run with --null NA --null -"));
  CHECK(has(error_with("agg mean(id)", {{"#N/A"}}), "but for '#N/A', so it is read as text: if that means a "
                                                    "missing value, run with --null '#N/A'"));
  // Other columns, and no tokens: the --schema hint as before.
  CHECK(has(error_with("agg sum(region)", na), "if the column holds numbers, give it a type with --schema"));
  CHECK(has(error_of("agg sum(id)"), "if the column holds numbers, give it a type with --schema"));
}

TEST_CASE("column lookup: exact, then case-insensitive, backticks, $N", "[spec]") {
  Plan p = build_plan("select amount, AMOUNT, Amount, `odd name`, $1, $3 + 1 as w", schema());
  // (The output names a column three times: the later ones are renamed, as repeated header names are.)
  CHECK(names(p.output) ==
        std::vector<std::string>{"Amount", "Amount_2", "Amount_3", "odd name", "id", "w"});
  CHECK(p.scan.used_columns == std::vector<int>{0, 2, 7, 8});
  // $N counts in the current schema, not the input.
  Plan q = build_plan("select price, id | select $2", schema());
  CHECK(names(q.output) == std::vector<std::string>{"id"});
  CHECK(q.scan.used_columns == std::vector<int>{0});
}

TEST_CASE("type errors", "[spec]") {
  CHECK(has(error_of("filter region == 5"),
            "type error at position 18: cannot compare string column 'region' with number 5; "
            "to compare as text, quote the number: \"5\""));
  CHECK(has(error_of("filter v1 == \"5\""), "cannot compare int column 'v1' with string \"5\""));
  CHECK(has(error_of("filter ok == 1"), "cannot compare bool column 'ok' with number 1"));
  CHECK(has(error_of("filter v1"), "expected a true/false condition in filter, found int column "
                                   "'v1'; compare it with something (for example v1 != 0)"));
  CHECK(has(error_of("filter v1 > 1 and region"), "around 'and'"));
  CHECK(has(error_of("select region + 1"), "'+' needs numbers, found string column 'region'"));
  CHECK(has(error_of("select -region"), "cannot negate string column 'region'"));
  CHECK(has(error_of("select lower(v1)"), "lower() needs a string, found int column 'v1'"));
  CHECK(has(error_of("select abs(id)"), "abs() needs a number"));
  CHECK(has(error_of("select round(x, v1)"), "round() digits must be a whole number"));
  CHECK(has(error_of("select round(x, 1, 2)"), "round() takes 1 to 2 arguments, found 3"));
  CHECK(has(error_of("select len()"), "len() takes 1 argument, found 0"));
  CHECK(has(error_of("select coalesce(v1, id)"), "cannot coalesce int column 'v1' with string column 'id'"));
  CHECK(has(error_of("filter day > \"yesterday\""), "cannot read \"yesterday\" as a date"));
  CHECK(has(error_of("select lowr(id)"), "no function named 'lowr'; did you mean 'lower'"));
  CHECK(has(error_of("agg sum(id)"), "sum() needs numbers, found string column 'id'"));
  CHECK(has(error_of("agg mean(day)"), "mean() needs numbers"));
  CHECK(has(error_of("agg corr(x, id)"), "corr() needs numbers"));
  CHECK(has(error_of("select *x"), "expected ',' or '|'"));
  CHECK(has(error_of("agg max(*)"), "'*' is only allowed in count(*)"));
}

TEST_CASE("aggregate misuse", "[spec]") {
  CHECK(has(error_of("agg top(v1, 3)"), "aggregate 'top' is not available"));
  CHECK(has(error_of("agg quantile(v1)"), "quantile() takes 2 arguments"));
  CHECK(has(error_of("agg quantile(v1, 1.01)"), "must be a decimal number from 0 to 1"));
  CHECK(has(error_of("agg quantile(v1, -0.5)"), "must be a decimal number from 0 to 1"));
  CHECK(has(error_of("agg quantile(v1, 1e-1)"), "must be a decimal number from 0 to 1"));
  CHECK(has(error_of("agg quantile(v1, v1)"), "must be a decimal number from 0 to 1"));
  CHECK(has(error_of("agg median(null)"), "median(null) has no type"));
  CHECK(has(error_of("agg median(v1, 2)"), "median() takes 1 argument"));
  CHECK(has(error_of("agg count_distinct(median(v1))"), "inside another aggregate"));
  CHECK(has(error_of("filter sum(v1) > 1"),
            "aggregate 'sum' is only allowed in an agg stage (not in filter)"));
  CHECK(has(error_of("select count()"), "only allowed in an agg stage (not in select)"));
  CHECK(has(error_of("agg sum(max(v1))"), "aggregate 'max' inside another aggregate"));
  CHECK(has(error_of("groupby id | agg v1"),
            "column v1 in agg is neither a group key nor inside an aggregate"));
  CHECK(has(error_of("agg v1 + 1"), "neither a group key nor inside an aggregate"));
  CHECK(has(error_of("groupby id"), "groupby must be followed by agg"));
  CHECK(has(error_of("groupby id | select id"), "groupby must be followed by agg"));
  CHECK(has(error_of("sort v1 | agg count()"), "aggregation after 'sort' is not supported"));
  // A later agg: its items and keys read the first agg's columns, aggregates stay in agg.
  CHECK(has(error_of("agg count() as n | groupby n"), "groupby must be followed by agg"));
  CHECK(has(error_of("agg count() as n | filter sum(n) > 1"), "only allowed in an agg stage (not in filter)"));
  CHECK(has(error_of("agg count() as n | agg sum(max(n))"), "aggregate 'max' inside another aggregate"));
  CHECK(has(error_of("groupby id | agg count() as n | agg id"),
            "column id in agg is neither a group key nor inside an aggregate"));
  CHECK(has(error_of("groupby id | agg count() as n | agg sum(v1)"), "no column named 'v1'"));
  CHECK(has(error_of("groupby id | agg count() as n | groupby region | agg count()"), "no column named 'region'"));
  CHECK(has(error_of("limit 5 | groupby id | agg count()"),
            "aggregation after 'limit' is not supported"));
  CHECK(has(error_of("agg count(v1, x)"), "count() takes 0 to 1 arguments"));
  CHECK(has(error_of("agg corr(x)"), "corr() takes 2 arguments"));
  CHECK(has(error_of("agg sum(null)"), "sum(null) has no type"));
}

TEST_CASE("filter, select and dropna fold into the scan", "[spec]") {
  Plan p = build_plan("filter v1 > 0 | select v1 * price as amt, region | filter amt > 1 or "
                      "region == \"x\" | dropna region",
                      schema());
  CHECK_FALSE(p.scan.aggregate);
  CHECK(p.scan.used_columns == std::vector<int>{1, 2, 3});
  CHECK(p.scan.slot_types == std::vector<ColumnType>{T(Type::String), T(Type::Int),
                                                     T(Type::Decimal, 2)});
  CHECK(p.scan.filter.text == "v1 > 0 and (amt > 1 or region == \"x\") and region is not null");
  CHECK(p.scan.filter.result.type == Type::Bool);
  REQUIRE(p.scan.outputs.size() == 2);
  CHECK(p.scan.outputs[0].result == T(Type::Decimal, 2));
  CHECK(names(p.scan_output) == std::vector<std::string>{"amt", "region"});
  CHECK(p.post.empty());
  CHECK(p.output.size() == 2);
  CHECK_FALSE(p.has_sort);
  // Every scan program reads input slots only.
  for (const Program* prog : {&p.scan.filter, &p.scan.outputs[0], &p.scan.outputs[1]})
    for (const Instr& in : prog->code)
      if (in.op == Op::Column) CHECK(in.arg < 3);
}

TEST_CASE("columns --schema names are parsed even when the pipeline does not use them", "[spec]") {
  // checked: region (#2) and day (#7), as --schema region:string,day:date would. Any text fits a
  // string: region needs no parsing.
  std::vector<bool> checked(schema().size(), false);
  checked[1] = checked[6] = true;
  Plan c = build_plan("agg count()", schema(), checked);
  CHECK(c.scan.used_columns == std::vector<int>{6});
  CHECK(c.scan.slot_types == std::vector<ColumnType>{T(Type::Date)});
  CHECK(build_plan("agg count()", schema()).scan.used_columns.empty());
  // With used columns: one slot each, in column order; programs read the slots they had.
  Plan f = build_plan("filter v1 > 0 | groupby day | agg sum(price), count(region)", schema(), checked);
  CHECK(f.scan.used_columns == std::vector<int>{1, 2, 3, 6});
  REQUIRE(f.scan.filter.code.size() == 3);
  CHECK(f.scan.filter.code[0].op == Op::Column);
  CHECK(f.scan.filter.code[0].arg == 1);  // v1
  CHECK(f.scan.keys[0].code[0].arg == 3);  // day
  CHECK(f.scan.aggs[0].arg0.code[0].arg == 2);  // price
  CHECK(f.scan.aggs[1].arg0.code[0].arg == 0);  // region
  // The output is the pipeline's: checked columns add no output.
  Plan s = build_plan("select v1", schema(), checked);
  CHECK(names(s.output) == std::vector<std::string>{"v1"});
  CHECK(s.scan.outputs.size() == 1);
  CHECK(s.scan.used_columns == std::vector<int>{2, 6});
  CHECK(explain_plan(c).find("scan: parse 1 of them: day date (#7)") != std::string::npos);
}

TEST_CASE("no stages that project: all input columns", "[spec]") {
  Plan p = build_plan("filter ok", schema());
  CHECK(p.scan.used_columns.size() == 9);
  CHECK(names(p.output) == names(schema()));
  Plan s = build_plan("select *, v1 + 1 as w", schema());
  CHECK(s.output.size() == 10);
  CHECK(s.output.back().name == "w");
}

TEST_CASE("dropna default columns", "[spec]") {
  // Output keeps all columns: every one is checked.
  Plan a = build_plan("dropna", schema());
  CHECK(a.scan.filter.code.size() == 9 * 2 + 8);  // 9 (column, is not null) + 8 ands
  // A later select keeps only referenced columns, so only those are checked.
  Plan b = build_plan("dropna | select id, v1 + 1 as w", schema());
  CHECK(b.scan.filter.text == "id is not null and v1 is not null");
  CHECK(b.scan.used_columns == std::vector<int>{0, 2});
  Plan c = build_plan("dropna x, `odd name` | select id", schema());
  CHECK(c.scan.filter.text == "x is not null and `odd name` is not null");
  CHECK(has(error_of("dropna nope"), "no column named 'nope'"));
  CHECK(has(error_of("dropna 1"), "expected a column name"));
  // After agg: a post stage over the result columns.
  Plan d = build_plan("groupby id | agg max(x) as m | dropna m", schema());
  REQUIRE(d.post.size() == 1);
  CHECK(d.post[0].kind == PostStage::DropNa);
  CHECK(d.post[0].columns == std::vector<int>{1});
  CHECK(d.post[0].text == "dropna m");
}

TEST_CASE("groupby and agg", "[spec]") {
  Plan p = build_plan("filter v1 > 0 and region != \"test\" | groupby id | agg sum(price) as "
                      "total, count() as n, max(v1) - min(x) as r, sum(price) / count() | sort "
                      "total desc, id | limit 10",
                      schema());
  CHECK(p.scan.aggregate);
  CHECK(p.scan.used_columns == std::vector<int>{0, 1, 2, 3, 4});
  REQUIRE(p.scan.keys.size() == 1);
  CHECK(p.scan.keys[0].text == "id");
  REQUIRE(p.scan.aggs.size() == 4);  // sum(price) and count() deduplicated
  CHECK(p.scan.aggs[0].kind == AggKind::Sum);
  CHECK(p.scan.aggs[0].text == "sum(price)");
  CHECK(p.scan.aggs[0].result == T(Type::Decimal, 2));
  CHECK(p.scan.aggs[0].arg0.result == T(Type::Decimal, 2));
  CHECK(p.scan.aggs[1].kind == AggKind::CountStar);
  CHECK(p.scan.aggs[1].arg0.empty());
  CHECK(p.scan.aggs[1].text == "count()");
  CHECK(p.scan.aggs[2].kind == AggKind::Max);
  CHECK(p.scan.aggs[2].result == T(Type::Int));
  CHECK(p.scan.aggs[3].kind == AggKind::Min);
  CHECK(p.scan.aggs[3].result == T(Type::Float));
  CHECK(names(p.scan_output) ==
        std::vector<std::string>{"id", "sum(price)", "count()", "max(v1)", "min(x)"});
  REQUIRE(p.finalize.size() == 4);
  CHECK(p.finalize[2].result == T(Type::Float));
  CHECK(p.finalize[3].text == "sum(price) / count()");
  CHECK(names(p.finalized_output) ==
        std::vector<std::string>{"id", "total", "n", "r", "sum(price) / count()"});
  REQUIRE(p.post.size() == 2);
  CHECK(p.post[0].kind == PostStage::Sort);
  CHECK(p.post[0].descending == std::vector<bool>{true, false});
  CHECK(p.post[0].text == "sort total desc, id");
  CHECK(p.post[0].output.size() == 5);
  CHECK(p.post[1].kind == PostStage::Limit);
  CHECK(p.post[1].limit == 10);
  CHECK(p.has_sort);
  CHECK(names(p.output) == names(p.finalized_output));
}

TEST_CASE("aggregate result types and deduplication", "[spec]") {
  Plan p = build_plan("agg count(*), count(), count(x), sum(v1), sum(ok), sum(x), mean(v1), "
                      "avg(v1), var(price), std(x), first(id), last(day), corr(v1, x), "
                      "min(region), max(day)",
                      schema());
  CHECK_FALSE(p.scan.aggregate == false);
  CHECK(p.scan.keys.empty());
  std::vector<std::string> texts;
  for (const auto& a : p.scan.aggs) texts.push_back(a.text);
  CHECK(texts == std::vector<std::string>{"count()", "count(x)", "sum(v1)", "sum(ok)", "sum(x)",
                                          "mean(v1)", "var(price)", "std(x)", "first(id)",
                                          "last(day)", "corr(v1, x)", "min(region)",
                                          "max(day)"});
  auto result = [&](const char* t) {
    for (const auto& a : p.scan.aggs)
      if (a.text == t) return a.result;
    FAIL("no aggregate " << t);
    return ColumnType{};
  };
  CHECK(result("count(x)") == T(Type::Int));
  CHECK(result("sum(v1)") == T(Type::Int));
  CHECK(result("sum(ok)") == T(Type::Int));
  CHECK(result("sum(x)") == T(Type::Float));
  CHECK(result("mean(v1)") == T(Type::Float));
  CHECK(result("var(price)") == T(Type::Float));
  CHECK(result("first(id)") == T(Type::String));
  CHECK(result("last(day)") == T(Type::Date));
  CHECK(result("corr(v1, x)") == T(Type::Float));
  CHECK(p.scan.aggs[10].kind == AggKind::Corr);
  CHECK(p.scan.aggs[10].arg1.result == T(Type::Float));
  // Output names keep the text as written.
  CHECK(names(p.output)[0] == "count(*)");
  CHECK(names(p.output)[7] == "avg(v1)");
  // `agg` with no groupby: one group, finalize has one program per item.
  CHECK(p.finalize.size() == 15);
  // corr(x,y)*corr(x,y) computes corr once.
  Plan q = build_plan("agg corr(v1,x)*corr(v1, x) as r2, SUM(v1)/count(*) as m", schema());
  CHECK(q.scan.aggs.size() == 3);
  CHECK(names(q.output) == std::vector<std::string>{"r2", "m"});
}

TEST_CASE("holistic aggregates: their arguments join the scan keys, the finalize row reads them in place", "[spec]") {
  Plan p = build_plan("groupby region | agg median(v1) as m, sum(price) as s, count_distinct(id), "
                      "quantile(v1, 0.25) as q, median(day) as d, count_distinct(region)",
                      schema());
  CHECK(p.group_keys == 1);
  // region, then v1, id and day once each; count_distinct(region) reads the key itself.
  REQUIRE(p.scan.keys.size() == 4);
  CHECK(p.scan.keys[1].text == "v1");
  CHECK(p.scan.keys[2].text == "id");
  CHECK(p.scan.keys[3].text == "day");
  REQUIRE(p.holistic.size() == 5);
  CHECK(p.holistic[0].kind == AggKind::Median);
  CHECK(p.holistic[0].key == 1);
  CHECK(p.holistic[0].result == T(Type::Float));
  CHECK(p.holistic[1].kind == AggKind::CountDistinct);
  CHECK(p.holistic[1].key == 2);
  CHECK(p.holistic[1].result == T(Type::Int));
  CHECK(p.holistic[2].kind == AggKind::Quantile);
  CHECK(p.holistic[2].q_units == 25);
  CHECK(p.holistic[2].q_scale == 2);
  CHECK(p.holistic[3].key == 3);
  CHECK(p.holistic[3].result == T(Type::Date));  // a date's median is one of its dates
  CHECK(p.holistic[4].key == 0);
  // Slots after the key: median, sum, count_distinct, quantile, median(day), count_distinct(region).
  CHECK(p.agg_sources == std::vector<int>{~0, 0, ~1, ~2, ~3, ~4});
  REQUIRE(p.scan.aggs.size() == 2);  // sum(price), and count() to weigh each value
  CHECK(p.scan.aggs[1].kind == AggKind::CountStar);
  CHECK(p.holistic_weight == 1);
  CHECK(names(p.finalized_output) ==
        std::vector<std::string>{"region", "m", "s", "count_distinct(id)", "q", "d", "count_distinct(region)"});
  // A count() of the pipeline's own weighs the values too.
  Plan c = build_plan("agg count() as n, median(x)", schema());
  CHECK(c.group_keys == 0);
  REQUIRE(c.scan.aggs.size() == 1);
  CHECK(c.holistic_weight == 0);
  CHECK(c.holistic[0].result == T(Type::Float));
}

TEST_CASE("groupby | top N by a number | select of keys and it: an aggregate scan of order statistics", "[spec]") {
  Plan p = build_plan("filter v1 > 0 | groupby region | top 3 by price desc | select region, price as p", schema());
  CHECK(p.scan.aggregate);
  CHECK(p.group_keys == 1);
  REQUIRE(p.scan.keys.size() == 2);  // region, then price listed per row
  CHECK(p.scan.keys[1].text == "price");
  REQUIRE(p.holistic.size() == 3);
  for (int64_t r = 0; r < 3; ++r) {
    INFO("rank " << r + 1);
    CHECK(p.holistic[r].kind == AggKind::NthValue);
    CHECK(p.holistic[r].key == 1);
    CHECK(p.holistic[r].rank == r + 1);
    CHECK(p.holistic[r].from_largest);
    CHECK(p.holistic[r].result == T(Type::Decimal, 2));  // a picked value keeps its type
  }
  CHECK(p.holistic[1].text == "2nd largest of price");
  REQUIRE(p.scan.aggs.size() == 1);  // the rows of each group
  CHECK(p.scan.aggs[0].kind == AggKind::CountStar);
  CHECK(p.holistic_weight == 0);
  CHECK(names(p.finalized_output) ==
        std::vector<std::string>{"region", "1st largest of price", "2nd largest of price", "3rd largest of price",
                                 "count()"});
  REQUIRE(p.post.size() == 2);
  CHECK(p.post[0].kind == PostStage::Unfold);
  CHECK(p.post[0].group_keys == 1);
  CHECK(p.post[0].limit == 3);
  CHECK(names(p.post[0].output) == std::vector<std::string>{"region", "price"});
  CHECK(p.post[1].kind == PostStage::Select);
  CHECK(names(p.output) == std::vector<std::string>{"region", "p"});
  CHECK(p.output[1].type == T(Type::Decimal, 2));
  CHECK_FALSE(p.has_sort);
  const std::string e = explain_plan(p);
  CHECK(has(e, "holistic: 1st largest of price -> decimal(2) (an order statistic of the group's sorted values of price)"));
  CHECK(has(e, "then: top 3 by price desc (in the scan: each group's 3 largest values of price"));

  // Ascending, keys of two columns, the select by $N and in any order; the
  // order column grouped by too is read from its key.
  Plan a = build_plan("groupby day, v1 | top 2 by v1 | select $3, day, v1 as again, day", schema());
  REQUIRE(a.post.size() == 2);
  CHECK(a.post[0].kind == PostStage::Unfold);
  CHECK(a.scan.keys.size() == 2);  // v1 is a key: no list of its own
  REQUIRE(a.holistic.size() == 2);
  CHECK(a.holistic[0].key == 1);
  CHECK_FALSE(a.holistic[1].from_largest);
  CHECK(a.holistic[1].text == "2nd smallest of v1");
  CHECK(names(a.output) == std::vector<std::string>{"v1", "day", "again", "day_2"});
  // An order expression, the select reading keys only; every number-like type.
  for (const char* o : {"v1 * 2", "x", "ok", "day", "price + 1"}) {
    INFO(o);
    Plan k = build_plan(std::string("groupby region, id | top 16 by ") + o + " | select id", schema());
    REQUIRE_FALSE(k.post.empty());
    CHECK(k.post[0].kind == PostStage::Unfold);
    CHECK(k.holistic.size() == 16);
  }

  // Whole rows, other columns, several orders, strings, or many rows a group: the post stage.
  for (const char* q : {"groupby region | top 2 by v1", "groupby region | top 2 by v1 | select *",
                        "groupby region | top 2 by v1 | select region, v1, x",
                        "groupby region | top 2 by v1 | select region, v1 + 0",
                        "groupby region | top 2 by v1 * 2 | select region, v1",
                        "groupby region | top 2 by v1 desc, x | select region, v1",
                        "groupby region | top 2 by id | select region, id",
                        "groupby region | top 17 by v1 | select region, v1", "top 2 by v1 | select v1",
                        "groupby region | top 2 by v1 | filter v1 > 1 | select region"}) {
    INFO(q);
    Plan g = build_plan(q, schema());
    CHECK_FALSE(g.scan.aggregate);
    CHECK(g.holistic.empty());
    REQUIRE_FALSE(g.post.empty());
    CHECK(g.post[0].kind != PostStage::Unfold);
  }
  // Mistakes are reported as the post stage reports them.
  CHECK(has(error_of("groupby region | top 2 by v1 | select region, nope"), "no column named 'nope'"));
  CHECK(has(error_of("groupby region | top 2 by nope | select region"), "no column named 'nope'"));
  CHECK(has(error_of("groupby region | top 2 by v1 | select $12"), "$12 is out of range"));
  CHECK(has(error_of("groupby \"region\" | top 2 by v1 | select region"), "is a string, not a column name"));
}

TEST_CASE("distinct of strings and computed values: an aggregate scan ordered by each group's first row", "[spec]") {
  for (const std::string& spec : {std::string("distinct id, region"), std::string("distinct id, v1 + 1 as w"),
                                  std::string("filter v1 > 0 | distinct upper(region)"),
                                  std::string("select id, region | distinct | sort region")}) {
    INFO(spec);
    const Plan p = build_plan(spec, schema());
    REQUIRE(p.scan.aggregate);
    REQUIRE(p.scan.aggs.size() == 1);
    CHECK(p.scan.aggs[0].kind == AggKind::FirstRow);
    CHECK(p.scan.aggs[0].arg0.empty());
    CHECK(p.group_keys == p.scan.keys.size());
    REQUIRE(p.post.size() >= 2);
    CHECK(p.post[0].kind == PostStage::Sort);
    CHECK(p.post[0].by_first_row);
    CHECK(p.post[1].kind == PostStage::Select);
    CHECK(p.post[1].exprs.size() == p.group_keys);  // the first row's position is dropped
  }
  const Plan p = build_plan("distinct id, v1 + 1 as w", schema());
  CHECK(names(p.output) == std::vector<std::string>{"id", "w"});
  CHECK(p.output[1].type.type == Type::Int);
  CHECK_FALSE(p.output[0].as_written);
  // Kept row by row: a column as read that prints as written, a float, a
  // limit that ends the input early, a distinct after the scan, many columns.
  for (const std::string& spec :
       {std::string("distinct id, v1"), std::string("distinct price"), std::string("distinct x * 2"),
        std::string("distinct id | limit 5"), std::string("distinct id | filter id != 'a' | limit 5"),
        std::string("sort id | distinct region"),
        std::string("select id as a1, id as a2, id as a3, id as a4, id as a5, id as a6, id as a7, id as a8, id as a9, "
                    "id as b1, id as b2, id as b3, id as b4, id as b5, id as b6, id as b7, id as b8 | distinct")}) {
    INFO(spec);
    const Plan q = build_plan(spec, schema());
    CHECK_FALSE(q.scan.aggregate);
    bool row_by_row = false;
    for (const PostStage& st : q.post) row_by_row |= st.kind == PostStage::Distinct;
    CHECK(row_by_row);
  }
  // A limit after a sort reads every row anyway: groups.
  CHECK(build_plan("distinct id | sort id | limit 5", schema()).scan.aggregate);
  // A stream (standard input): each row out as it comes.
  CHECK_FALSE(build_plan("distinct id", schema(), {}, {}, {}, false).scan.aggregate);
}

TEST_CASE("group keys: expressions, aliases, references from agg", "[spec]") {
  Plan p = build_plan("groupby lower(region) as r, v1 % 10 | agg r, v1 % 10, count() as n, "
                      "max(x)",
                      schema());
  REQUIRE(p.scan.keys.size() == 2);
  CHECK(p.scan.keys[0].result == T(Type::String));
  CHECK(p.scan.keys[1].text == "v1 % 10");
  CHECK(names(p.finalized_output) ==
        std::vector<std::string>{"r", "v1 % 10", "r", "v1 % 10", "n", "max(x)"});
  // finalize program of `r` reads key slot 0; of max(x) reads slot nkeys + 1.
  CHECK(p.finalize[0].code.size() == 1);
  CHECK(p.finalize[0].code[0].arg == 0);
  CHECK(p.finalize[1].code[0].arg == 1);
  CHECK(p.finalize[3].code[0].arg == 3);
  // groupby reading a select alias inlines the selected expression.
  Plan q = build_plan("select upper(id) as u, v1 | groupby u | agg sum(v1)", schema());
  CHECK(q.scan.used_columns == std::vector<int>{0, 2});
  CHECK(q.scan.keys[0].code.back().op == Op::Upper);
  CHECK(names(q.output) == std::vector<std::string>{"u", "sum(v1)"});
  // having: a filter after agg is a post stage over the aggregated row.
  Plan h = build_plan("groupby id | agg sum(v1) as s | filter s > 100", schema());
  REQUIRE(h.post.size() == 1);
  CHECK(h.post[0].kind == PostStage::Filter);
  CHECK(h.post[0].exprs[0].code[0].arg == 1);
}

TEST_CASE("stages after sort/limit/assert go to post", "[spec]") {
  Plan p = build_plan("select id, v1 | sort v1 desc | filter v1 > 2 | select id | assert len(id) > 0 | limit 3",
                      schema());
  CHECK(p.scan.used_columns == std::vector<int>{0, 2});
  CHECK(p.scan.filter.empty());
  REQUIRE(p.post.size() == 5);
  CHECK(p.post[0].kind == PostStage::Sort);
  CHECK(p.post[1].kind == PostStage::Filter);
  CHECK(p.post[1].exprs[0].code[0].arg == 1);  // v1 is slot 1 of (id, v1)
  CHECK(p.post[2].kind == PostStage::Select);
  CHECK(names(p.post[2].output) == std::vector<std::string>{"id"});
  CHECK(p.post[3].kind == PostStage::Assert);
  CHECK(p.post[3].text == "assert len(id) > 0");
  CHECK(p.post[4].limit == 3);
  CHECK(names(p.output) == std::vector<std::string>{"id"});
  // assert first: the scan outputs every column.
  Plan a = build_plan("assert v1 >= 0", schema());
  CHECK(a.scan.outputs.size() == 9);
  CHECK(a.post.size() == 1);
  CHECK(a.post[0].kind == PostStage::Assert);
}

TEST_CASE("keywords are case-insensitive, literals and operators", "[spec]") {
  Plan p = build_plan("FILTER v1 >= 1 AND NOT ok OR region IS NOT NULL | Select v1 | SORT v1 DESC "
                      "| LIMIT 2",
                      schema());
  CHECK(p.scan.filter.text == "v1 >= 1 and not ok or region is not null");
  CHECK(p.post.size() == 2);
  Plan g = build_plan("group by id | agg count()", schema());
  CHECK(g.scan.keys.size() == 1);
  // Literals: int, decimal, float, strings with both quotes, booleans, null.
  Plan l = build_plan("select 12 as a, 12.50 as b, 1e3 as c, 'x' as d, \"y\" as e, true as f, "
                      "null as g, -3 as h, .5 as i",
                      schema());
  CHECK(l.output[0].type == T(Type::Int));
  CHECK(l.output[1].type == T(Type::Decimal, 2));
  CHECK(l.output[2].type == T(Type::Float));
  CHECK(l.output[3].type == T(Type::String));
  CHECK(l.output[5].type == T(Type::Bool));
  CHECK(l.output[7].type == T(Type::Int));
  CHECK(l.output[8].type == T(Type::Decimal, 1));
  CHECK(l.scan.used_columns.empty());
  // Default names: normalized text.
  Plan n = build_plan("select v1+1, lower( id ), (v1*2), v1 not in (1,2), x is null", schema());
  CHECK(names(n.output) == std::vector<std::string>{"v1 + 1", "lower(id)", "v1 * 2",
                                                    "v1 not in (1, 2)", "x is null"});
  // Comparison spellings.
  for (const char* op : {"=", "==", "!=", "<>", "<", "<=", ">", ">="})
    CHECK_NOTHROW(build_plan(std::string("filter v1 ") + op + " 2", schema()));
}

TEST_CASE("explain_plan describes the stages", "[spec]") {
  Plan p = build_plan("filter v1 > 0 | groupby id | agg sum(v1) as total | sort total desc | "
                      "limit 5",
                      schema());
  std::string e = explain_plan(p);
  CHECK(has(e, "input: 9 columns"));
  CHECK(has(e, "parse 2 of them: id string (#1), v1 int (#3)"));
  CHECK(has(e, "filter: v1 > 0"));
  CHECK(has(e, "group by: id string"));
  CHECK(has(e, "aggregate: sum(v1) -> int"));
  CHECK(has(e, "finalize: total = sum(v1)"));
  CHECK(has(e, "then: sort total desc"));
  CHECK(has(e, "then: limit 5"));
  CHECK(has(e, "result: id string, total int"));
  Plan c = build_plan("agg count()", schema());
  CHECK(has(explain_plan(c), "(none, rows are only counted)"));
}

TEST_CASE("check_pipeline_syntax catches what needs no schema", "[spec]") {
  CHECK_NOTHROW(check_pipeline_syntax("groupby a | agg sum(b) as s | filter s > 1"));
  auto msg = [](const char* spec) -> std::string {
    try {
      check_pipeline_syntax(spec);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(has(msg("groupby a | select a"), "groupby must be followed by agg"));
  CHECK(has(msg("agg top(a, 2)"), "aggregate 'top' is not available"));
  CHECK_NOTHROW(check_pipeline_syntax("agg median(a)"));
  CHECK(has(msg("filter max(a) > 1"), "only allowed in an agg stage (not in filter)"));
  CHECK(has(msg("agg sum(sum(a))"), "inside another aggregate"));
  CHECK(has(msg("sort a | agg count()"), "aggregation after 'sort' is not supported; move agg "
                                         "before it"));
  CHECK_NOTHROW(check_pipeline_syntax("agg count() | groupby a | agg count()"));
  CHECK_NOTHROW(check_pipeline_syntax("agg count() as n | sort n | limit 1 | agg sum(n)"));
  CHECK(has(msg("agg count() as n | groupby n | select n"), "groupby must be followed by agg"));
}

TEST_CASE("an agg after an agg is a post stage over the first one's rows", "[spec]") {
  Plan p = build_plan("groupby region, id | agg sum(v1) as t, count() as n | groupby region | agg median(t) as m, "
                      "count_distinct(id), sum(n) / count() as per | filter m > 1 | agg count() as c",
                      schema());
  CHECK(p.scan.aggregate);
  CHECK(p.group_keys == 2);
  CHECK(names(p.finalized_output) == std::vector<std::string>{"region", "id", "t", "n"});
  REQUIRE(p.post.size() == 3);
  REQUIRE(p.post[0].kind == PostStage::Agg);
  CHECK(p.post[0].text == "groupby region | agg median(t) as m, count_distinct(id), sum(n) / count() as per");
  const Plan& a = *p.post[0].agg;
  CHECK(a.group_keys == 1);
  REQUIRE(a.scan.keys.size() == 3);  // region, then the holistic arguments t and id
  CHECK(a.scan.keys[0].code[0].arg == 0);  // region: slot 0 of the first agg's rows
  CHECK(a.scan.keys[1].code[0].arg == 2);  // t
  CHECK(a.scan.keys[2].code[0].arg == 1);  // id
  REQUIRE(a.holistic.size() == 2);
  CHECK(a.holistic[0].key == 1);
  CHECK(a.holistic[1].key == 2);
  REQUIRE(a.scan.aggs.size() == 2);  // sum(n) and count(); the holistic ones come from lists
  CHECK(a.scan.aggs[0].text == "sum(n)");
  CHECK(a.scan.aggs[1].kind == AggKind::CountStar);
  CHECK(a.agg_sources == std::vector<int>{~0, ~1, 0, 1});
  CHECK(names(p.post[0].output) == std::vector<std::string>{"region", "m", "count_distinct(id)", "per"});
  CHECK(p.post[0].output[3].type == T(Type::Float));
  CHECK(p.post[1].kind == PostStage::Filter);
  CHECK(p.post[1].exprs[0].code[0].arg == 1);  // m
  REQUIRE(p.post[2].kind == PostStage::Agg);
  CHECK(p.post[2].text == "agg count() as c");
  CHECK(p.post[2].agg->group_keys == 0);
  CHECK(names(p.output) == std::vector<std::string>{"c"});
  const std::string e = explain_plan(p);
  CHECK(has(e, "then: groupby region | agg median(t) as m, count_distinct(id), sum(n) / count() as per\n"
               "    group by: region string (output ordered by the keys unless sorted)\n"
               "    aggregate: sum(n) -> int\n"
               "    aggregate: count() -> int\n"
               "    holistic: median(t) -> float (from the values of t)\n"
               "    holistic: count_distinct(id) -> int (from the values of id)\n"
               "    finalize: m = median(t), count_distinct(id), per = sum(n) / count()\n"
               "  then: filter m > 1\n"
               "  then: agg count() as c\n"
               "    aggregate: all rows as one group\n"
               "    aggregate: count() -> int\n"
               "    finalize: c = count()\n"));
  // Sums of ints may pass 64 bits: a later agg's keys and values over them are 128-bit.
  Plan w = build_plan("groupby id | agg sum(v1) as t | groupby t | agg max(t) + 1 as m, count() + 1 as n", schema());
  const Plan& wa = *w.post[0].agg;
  CHECK(wa.scan.keys[0].code[0].wide == 1);
  CHECK(wa.finalize[0].code.back().wide == 1);  // max(t) + 1
  CHECK(wa.finalize[1].code.back().wide == 0);  // count() + 1
}

TEST_CASE("casts of constants are folded at bind time", "[spec]") {
  // x is float: the literal 1 becomes the float constant 1.0, with no Cast per row.
  Plan p = build_plan("filter x > 1 and price < 2 and v1 in (1.5, 2)", schema());
  int casts = 0;
  for (const Instr& in : p.scan.filter.code) casts += in.op == Op::Cast;
  CHECK(casts == 1);  // only v1 -> decimal(1) against 1.5; against 2 both are int
  REQUIRE(p.scan.filter.consts.size() == 4);
  CHECK(p.scan.filter.consts[0].f == 1.0);
  CHECK(p.scan.filter.consts[1].i == 200);  // 2 as decimal(2)
}

// Found by fuzzing (tests/fuzz/corpus/spec/crash-deep-nesting): deep nesting was a stack
// overflow in the recursive-descent parser; now it is a syntax error, and ordinary depth binds.
TEST_CASE("spec: deeply nested expressions are a syntax error, not a crash") {
  const std::vector<OutputColumn> cols = {{"id", ColumnType{Type::Int, 0}}};
  const std::string deep = "select " + std::string(5000, '(') + "id" + std::string(5000, ')');
  REQUIRE_THROWS_AS(check_pipeline_syntax(deep), UsageError);
  std::string nots = "filter ";
  for (int i = 0; i < 3000; ++i) nots += "not ";
  REQUIRE_THROWS_AS(check_pipeline_syntax(nots + "true"), UsageError);
  std::string minus = "select ";
  for (int i = 0; i < 3000; ++i) minus += "- ";
  REQUIRE_THROWS_AS(check_pipeline_syntax(minus + "1"), UsageError);
  // The documented limit: 255 levels of parentheses, calls, not or signs bind; one more does not.
  auto nested = [](const std::string& open, const std::string& close, int levels) {
    std::string e = "id";
    for (int i = 0; i < levels; ++i) e = open + e + close;
    return "select " + e + " as x";
  };
  for (const auto& [open, close] : std::vector<std::pair<std::string, std::string>>{
           {"(", ")"}, {"abs(", ")"}, {"-", ""}, {"+", ""}}) {
    INFO(open);
    CHECK(build_plan(nested(open, close, 255), cols).output.size() == 1);
    CHECK(testing::plan_error(nested(open, close, 256), cols).find("more than 255 levels") != std::string::npos);
  }
  std::string few_nots;
  for (int i = 0; i < 255; ++i) few_nots += "not ";
  CHECK(build_plan("filter " + few_nots + "id > 1", cols).output.size() == 1);
  CHECK(testing::plan_error("filter not " + few_nots + "id > 1", cols).find("more than 255 levels") != std::string::npos);
}
