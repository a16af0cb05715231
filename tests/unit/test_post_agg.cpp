// A groupby/agg after an earlier agg (PostStage::Agg, result/post_agg.hpp):
// the post stages are fed rows of the first agg's output directly, and the
// written text is checked against a reference computed here from the rows.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/post.hpp"
#include "result/post_agg.hpp"
#include "unit/writer_output.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

// The input of every pipeline here: the first agg's output is (k, v, c).
const std::vector<OutputColumn> kSchema = {{"k", ColumnType{Type::String, 0}}, {"v", ColumnType{Type::Int, 0}}};
const std::string kFirst = "groupby k, v | agg count() as c | ";

struct Row {
  std::optional<std::string> k;
  std::optional<int64_t> v;
};

// Rows of (k, v, 1) with some nulls; k may be longer than a key holds inline.
std::vector<Row> random_rows(uint64_t seed, size_t n, int keys) {
  std::mt19937_64 rng(seed);
  std::vector<Row> rows;
  for (size_t i = 0; i < n; ++i) {
    Row r;
    if (rng() % 9) r.k = (rng() % 2 ? "key-with-a-long-name-" : "k") + std::to_string(rng() % keys);
    if (rng() % 7) r.v = static_cast<int64_t>(rng() % 41) - 20;
    rows.push_back(r);
  }
  return rows;
}

// The first agg's row (k, v, 1) for `r`: its string is in `buffer`, which
// the next row overwrites, so nothing may keep pointing at it.
std::vector<Value> first_agg_row(const Row& r, std::string& buffer) {
  buffer.assign(64, '#');
  if (r.k) buffer.replace(0, r.k->size(), *r.k);
  return {r.k ? Value::of_str(buffer.data(), static_cast<uint32_t>(r.k->size())) : Value::make_null(),
          r.v ? Value::of_int(*r.v) : Value::make_null(), Value::of_int(1)};
}

// Pushes `rows` through the post stages of `pipeline` (after kFirst) and
// gives the CSV written.
std::string run_post(const std::string& pipeline, const std::vector<Row>& rows, int threads = 2) {
  const Plan plan = build_plan(kFirst + pipeline, kSchema);
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  auto writer = make_writer(OutputFormat::Csv, tmp, true);
  {
    PostPipeline post(plan, *writer, threads);
    std::string buffer;
    for (const Row& r : rows) post.push(first_agg_row(r, buffer).data());
    post.finish();
  }
  std::string out = testing::written(tmp);
  std::fclose(tmp);
  return out;
}

// Groups of the rows by k in output order: strings ascending, null last.
using Groups = std::map<std::pair<bool, std::string>, std::vector<const Row*>>;
Groups group_by_k(const std::vector<Row>& rows) {
  Groups g;
  for (const Row& r : rows) g[{!r.k, r.k.value_or("")}].push_back(&r);
  return g;
}

std::string text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }
std::string float_text(double d) { return format_value(Value::of_float(d), ColumnType{Type::Float, 0}); }

// The non-null values of v, in input order.
std::vector<int64_t> values(const std::vector<const Row*>& rows) {
  std::vector<int64_t> out;
  for (const Row* r : rows)
    if (r->v) out.push_back(*r->v);
  return out;
}

// As DuckDB's median: the mean of the middle two of an even count.
std::optional<double> median(std::vector<int64_t> xs) {
  if (xs.empty()) return std::nullopt;
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? static_cast<double>(xs[n / 2]) : (static_cast<double>(xs[n / 2 - 1]) + xs[n / 2]) / 2;
}

}  // namespace

TEST_CASE("post agg: groups in key order (null last) with every aggregate, holistic ones included", "[post_agg]") {
  const std::vector<Row> rows = random_rows(1, 3000, 40);
  const std::string pipeline =
      "groupby k | agg count() as n, count(v) as nv, sum(v) as s, min(v) as lo, max(v) as hi, first(v) as f, "
      "last(v) as l, count_distinct(v) as cd, median(v) as med, sum(v) * 2 - count() as e, min(k) as mk";
  std::string want = "k,n,nv,s,lo,hi,f,l,cd,med,e,mk\n";
  for (const auto& [key, members] : group_by_k(rows)) {
    const std::vector<int64_t> xs = values(members);
    std::optional<int64_t> sum, lo, hi;
    for (int64_t x : xs) {
      sum = sum.value_or(0) + x;
      lo = std::min(lo.value_or(x), x);
      hi = std::max(hi.value_or(x), x);
    }
    std::vector<int64_t> distinct = xs;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const std::optional<double> med = median(xs);
    const std::string k = key.first ? "" : key.second;
    want += k + "," + std::to_string(members.size()) + "," + std::to_string(xs.size()) + "," + text(sum) + "," +
            text(lo) + "," + text(hi) + "," + (xs.empty() ? "" : std::to_string(xs.front())) + "," +
            (xs.empty() ? "" : std::to_string(xs.back())) + "," + std::to_string(distinct.size()) + "," +
            (med ? float_text(*med) : "") + "," +
            (sum ? std::to_string(*sum * 2 - static_cast<int64_t>(members.size())) : "") + "," + k + "\n";
  }
  CHECK(run_post(pipeline, rows) == want);
  CHECK(run_post(pipeline, rows, 1) == want);
}

TEST_CASE("post agg: a filter after it, then a third agg without keys", "[post_agg]") {
  const std::vector<Row> rows = random_rows(2, 2000, 25);
  const std::string got =
      run_post("groupby k | agg sum(v) as s | filter s > 0 | agg count() as groups, sum(s) as total, max(k) as last_k",
               rows);
  int64_t groups = 0, total = 0;
  std::string last_k;
  for (const auto& [key, members] : group_by_k(rows)) {
    const std::vector<int64_t> xs = values(members);
    int64_t s = 0;
    for (int64_t x : xs) s += x;
    if (xs.empty() || s <= 0) continue;
    ++groups;
    total += s;
    if (!key.first) last_k = std::max(last_k, key.second);
  }
  REQUIRE(groups > 0);
  CHECK(got == "groups,total,last_k\n" + std::to_string(groups) + "," + std::to_string(total) + "," + last_k + "\n");
}

TEST_CASE("post agg: no rows give one row without keys (as the first agg does), none with keys", "[post_agg]") {
  // count() of no rows is 0, count_distinct 0, every other aggregate null.
  CHECK(run_post("agg count() as n, sum(v) as s, median(v) as m, count_distinct(k) as d, min(k) as mk", {}) ==
        "n,s,m,d,mk\n0,,,0,\n");
  CHECK(run_post("groupby k | agg count() as n, median(v)", {}) == "k,n,median(v)\n");
  // Rows, all filtered out before it.
  CHECK(run_post("filter c > 5 | agg count() as n, max(v) as m", random_rows(3, 50, 5)) == "n,m\n0,\n");
}

TEST_CASE("post agg: a key that is an expression, and a key of a later agg grouping by an aggregate", "[post_agg]") {
  const std::vector<Row> rows = random_rows(4, 1500, 12);
  // groups by the sign of v (null v: a null key), then how many such groups have each size.
  const std::string got = run_post("groupby v > 0 as pos | agg count() as n | groupby n % 2 == 0 as even | agg "
                                   "count() as groups, sum(n) as rows",
                                   rows);
  std::map<int, int64_t> by_sign;  // 0 false, 1 true, 2 null (last)
  for (const Row& r : rows) ++by_sign[r.v ? (*r.v > 0 ? 1 : 0) : 2];
  std::map<bool, std::pair<int64_t, int64_t>> by_parity;  // false before true
  for (const auto& [sign, n] : by_sign) {
    auto& p = by_parity[n % 2 == 0];
    ++p.first;
    p.second += n;
  }
  std::string want = "even,groups,rows\n";
  for (const auto& [even, p] : by_parity)
    want += (even ? "true," : "false,") + std::to_string(p.first) + "," + std::to_string(p.second) + "\n";
  CHECK(got == want);
}

TEST_CASE("post agg: groups finalized a run at a time give the rows of one run", "[post_agg]") {
  const Plan plan = build_plan(kFirst + "groupby k | agg count() as n, median(v) as m, max(k) as mk", kSchema);
  REQUIRE(plan.post.size() == 1);
  REQUIRE(plan.post[0].kind == PostStage::Agg);
  const std::vector<Row> rows = random_rows(5, 4000, 300);
  auto rows_text = [&](size_t run_rows, int threads) {
    PostAggregate agg(*plan.post[0].agg, threads);
    std::string buffer;
    for (const Row& r : rows) REQUIRE(agg.add(first_agg_row(r, buffer).data()));
    std::string out;
    size_t runs = 0;
    agg.finish(run_rows, [&](const Table& t) {
      ++runs;
      CHECK(t.rows() <= run_rows);
      for (size_t r = 0; r < t.rows(); ++r)
        for (size_t c = 0; c < t.width(); ++c) {
          const Value& v = t.row(r)[c];
          out += (v.null ? "" : format_value(v, t.columns[c].type)) + (c + 1 < t.width() ? "," : "\n");
        }
      return true;
    });
    CHECK(runs == (group_by_k(rows).size() + run_rows - 1) / run_rows);
    return out;
  };
  const std::string one = rows_text(1 << 20, 1);
  CHECK(std::count(one.begin(), one.end(), '\n') == static_cast<long>(group_by_k(rows).size()));
  CHECK(rows_text(7, 1) == one);
  CHECK(rows_text(7, 3) == one);
}

TEST_CASE("post agg: a key or argument that fails to evaluate is an input error naming the stage", "[post_agg]") {
  const std::vector<Row> rows = {Row{std::string("a"), 3}};
  REQUIRE_THROWS_AS(run_post("groupby v * 100000000000000000000 as u | agg count()", rows), InputError);
  try {
    run_post("agg sum(v * 100000000000000000000)", rows);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("evaluation failed in 'agg sum(v * 100000000000000000000)'") !=
          std::string::npos);
  }
}
