// A GPU formats the result's rows itself (cuda/group_text.hpp): from random
// groups' keys and state words, the text it makes must be the bytes the
// host gives for the same groups, finalized by finalize_run and written by
// the CSV or TSV writer; the plans it cannot format must be told apart.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/agg_words.hpp"
#include "cuda/group_text.hpp"
#include "exec/group_table.hpp"
#include "result/group_rows.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/spec.hpp"
#include "writer_output.hpp"

using namespace warpcsv;
using namespace warpcsv::cuda;

namespace {

const std::vector<OutputColumn> kSchema = {
    {"s", ColumnType{Type::String, 0}}, {"k", ColumnType{Type::Int, 0}},  {"d", ColumnType{Type::Decimal, 2}},
    {"t", ColumnType{Type::Date, 0}},   {"b", ColumnType{Type::Bool, 0}}, {"u", ColumnType{Type::String, 0}},
    {"f", ColumnType{Type::Float, 0}}};

// Strings that CSV quotes or TSV escapes, and some that neither touches.
const char* const kStrings[] = {"plain", "", " lead", "trail ", "a,b", "say \"hi\"", "two\nlines", "tab\there",
                                "back\\slash", "cr\rx", "Zürich", "\t", "\"", "x"};

Value random_key(std::mt19937_64& rng, Type type, std::string& arena) {
  if (rng() % 9 == 0) return Value::make_null();
  switch (type) {
    case Type::String: {
      const std::string s = kStrings[rng() % (sizeof kStrings / sizeof kStrings[0])];
      Value v = Value::of_int(0);
      v.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(arena.size()));  // an offset, as a GPU gathers it
      v.s.len = static_cast<uint32_t>(s.size());
      arena += s;
      return v;
    }
    case Type::Bool: return Value::of_int(rng() % 2);
    case Type::Float: {
      static const double kOdd[] = {0.0, -0.0, 1e300, -2.5e-310, 0.1, 1.0 / 3};
      return Value::of_float(rng() % 3 ? kOdd[rng() % 6] : std::ldexp(static_cast<double>(rng() % 100000) - 50000,
                                                                      static_cast<int>(rng() % 80) - 40));
    }
    case Type::Date: return Value::of_int(static_cast<int64_t>(rng() % 40000) - 20000);
    default: {
      const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 64);
      return Value::of_int(rng() % 5 ? x : static_cast<int128>(x) * (int128{1} << 60));
    }
  }
}

// Words of aggregate `a` after a few random rows, as a GPU table holds them.
void random_words(std::mt19937_64& rng, const AggDesc& a, u64* w) {
  GpuAgg g{};
  g.op = a.op;
  g.in_type = g.in_type2 = a.in_type;
  g.in_scale = g.in_scale2 = a.in_scale;
  agg_init_words(a.op, w);
  const int rows = static_cast<int>(rng() % 4);  // none: a sum, min or max is null
  for (int r = 0; r < rows; ++r) {
    const int64_t x = static_cast<int64_t>(rng()) >> (rng() % 64);
    Value v = rng() % 6 ? Value::of_int(x) : Value::make_null();
    if (a.in_type == Type::Float && !v.null) v = Value::of_float(std::ldexp(static_cast<double>(x % 100000), -10));
    agg_update_words(g, w, v, v);
  }
}

struct Groups {
  std::vector<Value> keys;  // nkeys a group, strings as offsets into arena
  std::vector<u64> words;
  std::string arena;
  std::vector<int> agg_words;
  int nwords = 0;
};

Groups random_groups(std::mt19937_64& rng, const GroupLayout& layout, size_t n) {
  Groups g;
  for (const AggDesc& a : layout.aggs) {
    g.agg_words.push_back(g.nwords);
    g.nwords += agg_words(a.op);
  }
  g.words.resize(n * static_cast<size_t>(g.nwords));
  for (size_t r = 0; r < n; ++r) {
    for (const Type t : layout.key_types) g.keys.push_back(random_key(rng, t, g.arena));
    for (size_t a = 0; a < layout.aggs.size(); ++a)
      random_words(rng, layout.aggs[a], g.words.data() + r * static_cast<size_t>(g.nwords) + g.agg_words[a]);
  }
  return g;
}

// The host's bytes for the groups: finalize_run, then the writer.
std::string host_text(const Plan& plan, const GroupLayout& layout, const Groups& g, size_t n, OutputFormat fmt) {
  std::vector<Value> keys = g.keys;
  const size_t nkeys = layout.key_types.size();
  GroupRun run;
  run.n = n;
  run.keys = KeyRows{reinterpret_cast<const char*>(keys.data()), nkeys * sizeof(Value)};
  run.string_base = g.arena.data();
  run.fill_state = [&](size_t r, char* block) {
    for (size_t a = 0; a < layout.aggs.size(); ++a) {
      agg_init(layout.aggs[a], block);
      REQUIRE(state_from_words(layout.aggs[a], g.words.data() + r * static_cast<size_t>(g.nwords) + g.agg_words[a],
                               block));
    }
  };
  Table rows;
  finalize_run(plan, layout, run, rows, 2);
  std::vector<std::vector<Value>> cells;
  for (size_t r = 0; r < n; ++r) cells.emplace_back(rows.row(r), rows.row(r) + rows.width());
  return testing::write_all(fmt, plan.output, cells, false);
}

std::string gpu_text(const TextLayout& t, const Groups& g, size_t n) {
  std::string out;
  for (size_t r = 0; r < n; ++r) {
    const Value* keys = g.keys.data() + r * static_cast<size_t>(t.nkeys);
    const u64* words = g.words.data() + r * static_cast<size_t>(g.nwords);
    int failed = -1;
    const uint32_t len = group_row_text<false>(t, keys, words, g.arena.data(), nullptr, &failed);
    REQUIRE(failed == -1);
    const size_t at = out.size();
    out.resize(at + len + 8, '#');
    CHECK(group_row_text<true>(t, keys, words, g.arena.data(), &out[at], &failed) == len);
    CHECK(out.substr(at + len) == "########");  // nothing past its measure
    out.resize(at + len);
  }
  return out;
}

}  // namespace

TEST_CASE("GPU result text: rows made from keys and state words are the host writer's bytes") {
  const char* const pipelines[] = {
      "groupby s, k, d | agg sum(d), count(), min(k), max(d), sum(k)",
      "groupby t, b, u | agg count(), max(t), min(t) as first_day, count(d)",
      "groupby k | agg sum(k) as total, count(s) as s_count",
      "groupby s, u | agg u as again, count(), s",
      "groupby f, k | agg mean(k), std(d), var(k), corr(k, d), sum(f), mean(f), min(f), max(f)",
  };
  std::mt19937_64 rng(11);
  for (const char* pipeline : pipelines) {
    INFO(pipeline);
    const Plan plan = build_plan(pipeline, kSchema);
    const GroupLayout layout = GroupLayout::from_plan(plan);
    for (const OutputFormat fmt : {OutputFormat::Csv, OutputFormat::Tsv}) {
      const DelimitedText style = fmt == OutputFormat::Csv ? DelimitedText{',', FieldEscape::Csv}
                                                           : DelimitedText{'\t', FieldEscape::Tsv};
      const size_t n = 300;
      const Groups g = random_groups(rng, layout, n);
      TextLayout t;
      REQUIRE(make_text_layout(plan, layout, g.agg_words.data(), style, &t));
      const std::string expected = host_text(plan, layout, g, n, fmt);
      CHECK(gpu_text(t, g, n) == expected);
      // The bound a GPU sizes a run's text by holds it.
      CHECK(text_bound(t, n, g.arena.size()) >= expected.size());
    }
  }
}

TEST_CASE("GPU result text: a sum past 128 bits names the first such aggregate, as the host fails") {
  const Plan plan = build_plan("groupby k | agg count(), sum(k), sum(d)", kSchema);
  const GroupLayout layout = GroupLayout::from_plan(plan);
  std::mt19937_64 rng(5);
  Groups g = random_groups(rng, layout, 4);
  TextLayout t;
  REQUIRE(make_text_layout(plan, layout, g.agg_words.data(), DelimitedText{}, &t));
  // Group 2's sum(d) (the third aggregate) gets a third limb that is no sign extension.
  u64* w = g.words.data() + 2 * static_cast<size_t>(g.nwords) + g.agg_words[2];
  w[SumExactWords::n] = 1;
  w[SumExactWords::ext] = 5;
  int failed = -1;
  const Value* keys = g.keys.data() + 2 * static_cast<size_t>(t.nkeys);
  CHECK(group_row_text<false>(t, keys, w - g.agg_words[2], g.arena.data(), nullptr, &failed) == 0);
  CHECK(failed == 2);
  CHECK_THROWS_AS(host_text(plan, layout, g, 4, OutputFormat::Csv), InputError);
  try {
    throw_group_failure(plan, layout, true, failed);
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("sum(d) overflowed") != std::string::npos);
  }
}

TEST_CASE("GPU result text: what the host must format itself") {
  const char* const host_only[] = {
      "groupby k | agg sum(k) * 2 as twice",   // an expression
      "groupby k | agg sum(k) | limit 5",       // post stages
      "groupby k | agg median(d)",             // a holistic aggregate
  };
  for (const char* pipeline : host_only) {
    INFO(pipeline);
    const Plan plan = build_plan(pipeline, kSchema);
    const GroupLayout layout = GroupLayout::from_plan(plan);
    std::vector<int> words(layout.aggs.size(), 0);
    TextLayout t;
    CHECK_FALSE(make_text_layout(plan, layout, words.data(), DelimitedText{}, &t));
  }
}
