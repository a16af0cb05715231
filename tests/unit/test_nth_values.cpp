// The nth values of `top N` in the scan (AggKind::NthValue, exec/holistic.*)
// against a sort per group: from one list sorted by (group, value), as a
// GPU hands it back, and from threads' unsorted lists, as the CPU executor
// fills them; ranks past a group's values are null, groups without values
// too. Also strings listed as their keys, as a GPU lists them, against the
// threads' lists of the strings themselves.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "exec/group_table.hpp"
#include "exec/holistic.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

// `pipeline` over an int column g and a column `arg` of type t.
Plan plan_over(const std::string& pipeline, const char* arg, Type t) {
  return build_plan(pipeline, {{"g", ColumnType{Type::Int, 0}}, {arg, ColumnType{t, 0}}});
}

// Groups 0..ngroups-1 of `plan`'s one int key, numbered in that order, with empty lists.
HolisticGroups empty_groups(const Plan& plan, size_t ngroups) {
  HolisticGroups hg;
  hg.layout = std::make_unique<GroupLayout>(GroupLayout::from_plan(plan));
  hg.layout->key_types.resize(plan.group_keys);
  hg.layout->narrow_keys.resize(plan.group_keys);
  hg.groups = std::make_unique<GroupTable>(hg.layout.get());
  for (size_t g = 0; g < ngroups; ++g) {
    const Value k = Value::of_int(static_cast<int64_t>(g));
    REQUIRE(hg.groups->group_of(hg.groups->find_or_insert(&k, hg.groups->hash_keys(&k))) == g);
  }
  hg.from_lists = true;
  hg.lists.resize(1);
  return hg;
}

using Listed = std::vector<std::pair<uint32_t, Value>>;  // (group, value) in row order

// The groups with the values listed as a GPU hands them back: one list of
// keys, sorted by group and key.
HolisticGroups from_gpu_list(const Plan& plan, size_t ngroups, Type t, const Listed& items) {
  HolisticGroups hg = empty_groups(plan, ngroups);
  std::vector<std::pair<uint32_t, uint64_t>> keyed;
  for (const auto& [g, v] : items) keyed.emplace_back(g, holistic_key(v, t));
  std::sort(keyed.begin(), keyed.end());
  ArgList list(t);
  uint32_t* groups = nullptr;
  uint64_t* keys = nullptr;
  list.fill_sorted(keyed.size(), &groups, &keys);
  for (size_t i = 0; i < keyed.size(); ++i) groups[i] = keyed[i].first, keys[i] = keyed[i].second;
  hg.lists[0].push_back(std::move(list));
  finish_holistic_lists(plan, hg, 2);
  return hg;
}

// The same values as the CPU executor's threads list them: three lists, unsorted.
HolisticGroups from_thread_lists(const Plan& plan, size_t ngroups, Type t, const Listed& items) {
  HolisticGroups hg = empty_groups(plan, ngroups);
  for (int w = 0; w < 3; ++w) hg.lists[0].emplace_back(t);
  for (size_t i = 0; i < items.size(); ++i) hg.lists[0][i % 3].add(items[i].first, items[i].second);
  finish_holistic_lists(plan, hg, 2);
  return hg;
}

// The same values into the plan's own lists (HolisticGroups::lists_for: a
// small top keeps each group's top values alone), three of them, sealed as
// the CPU executor seals them; *listed counts the values they listed.
HolisticGroups from_plan_lists(const Plan& plan, size_t ngroups, const Listed& items, size_t* listed) {
  HolisticGroups hg = empty_groups(plan, ngroups);
  for (int w = 0; w < 3; ++w) hg.lists[0].push_back(std::move(HolisticGroups::lists_for(plan).at(0)));
  for (size_t i = 0; i < items.size(); ++i) hg.lists[0][i % 3].add(items[i].first, items[i].second);
  *listed = 0;
  for (ArgList& l : hg.lists[0]) {
    l.seal();
    *listed += l.size();
  }
  finish_holistic_lists(plan, hg, 2);
  return hg;
}

}  // namespace

TEST_CASE("nth values: from sorted and unsorted lists, the value at each rank of each group", "[top]") {
  for (const char* pipeline : {"groupby g | top 3 by v desc | select g, v", "groupby g | top 5 by v | select v"}) {
    INFO(pipeline);
    const Plan plan = plan_over(pipeline, "v", Type::Int);
    const size_t nh = plan.holistic.size();
    REQUIRE(nh >= 3);
    // Group 0 has no values, group 1 one, the others a few to hundreds, with ties.
    constexpr size_t kGroups = 60;
    std::mt19937_64 rng(11);
    std::vector<std::pair<uint32_t, int64_t>> items;
    std::vector<std::vector<int64_t>> sorted(kGroups);
    items.emplace_back(1, -7);
    for (int i = 0; i < 6000; ++i) {
      const auto g = static_cast<uint32_t>(2 + rng() % (rng() % 2 ? 4 : kGroups - 2));
      items.emplace_back(g, static_cast<int64_t>(rng() % 41) - 20);
    }
    for (const auto& [g, v] : items) sorted[g].push_back(v);
    for (auto& s : sorted) std::sort(s.begin(), s.end());

    Listed values;
    for (const auto& [g, v] : items) values.emplace_back(g, Value::of_int(v));
    const HolisticGroups from_gpu = from_gpu_list(plan, kGroups, Type::Int, values);
    const HolisticGroups from_threads = from_thread_lists(plan, kGroups, Type::Int, values);
    size_t listed = 0;
    const HolisticGroups from_plan = from_plan_lists(plan, kGroups, values, &listed);
    // top 3 keeps three values a group in each list; top 5 is past what a list keeps so.
    if (nh == 3) CHECK(listed <= 3 * kGroups * 3);
    else CHECK(listed == values.size());

    for (size_t g = 0; g < kGroups; ++g)
      for (size_t h = 0; h < nh; ++h) {
        const HolisticSpec& spec = plan.holistic[h];
        const std::vector<int64_t>& s = sorted[g];
        const auto rank = static_cast<size_t>(spec.rank);
        INFO("group " << g << " of " << s.size() << " values, rank " << rank);
        for (const HolisticGroups* hg : {&from_gpu, &from_threads, &from_plan}) {
          const Value got = hg->values[g * nh + h];
          if (rank > s.size()) {
            CHECK(got.null);
            continue;
          }
          REQUIRE_FALSE(got.null);
          CHECK(static_cast<int64_t>(got.i) == (spec.from_largest ? s[s.size() - rank] : s[rank - 1]));
        }
      }
  }
}

TEST_CASE("holistic lists: strings listed as their keys (a GPU's) give the values of the strings listed", "[top]") {
  const Plan plan =
      plan_over("groupby g | agg count_distinct(s), median(s), quantile(s, 0.9), count()", "s", Type::String);
  const size_t nh = plan.holistic.size();
  REQUIRE(nh == 3);
  constexpr size_t kGroups = 40;
  std::mt19937_64 rng(5);
  std::vector<std::string> pool = {"a", "ab", "abc", "b", "id001", "id010", "id100", "zzzzzzzz", "\xc3\xa9t\xc3\xa9"};
  std::vector<std::pair<uint32_t, std::string>> items;
  for (int i = 0; i < 5000; ++i)
    items.emplace_back(static_cast<uint32_t>(1 + rng() % (kGroups - 1)), pool[rng() % (i % 3 ? 4 : pool.size())]);
  auto str = [](const std::string& t) { return Value::of_str(t.data(), static_cast<uint32_t>(t.size())); };

  Listed values;
  for (const auto& [g, v] : items) values.emplace_back(g, str(v));
  const HolisticGroups from_gpu = from_gpu_list(plan, kGroups, Type::String, values);
  const HolisticGroups from_threads = from_thread_lists(plan, kGroups, Type::String, values);

  size_t strings_seen = 0;
  for (size_t g = 0; g < kGroups; ++g)
    for (size_t h = 0; h < nh; ++h) {
      INFO("group " << g << ", " << plan.holistic[h].text);
      const Value a = from_gpu.values[g * nh + h], b = from_threads.values[g * nh + h];
      REQUIRE(a.null == b.null);
      if (a.null) continue;
      if (plan.holistic[h].result.type == Type::String) {
        ++strings_seen;
        CHECK(std::string(a.s.ptr, a.s.len) == std::string(b.s.ptr, b.s.len));
      } else {
        CHECK(a.i == b.i);
      }
    }
  CHECK(strings_seen == 2 * (kGroups - 1));  // group 0 has no values: nulls
}

TEST_CASE("holistic lists: a list keeping each group's top values lists them all once a value past 64 bits comes",
          "[top]") {
  const Plan plan = plan_over("groupby g | top 2 by v desc | select g, v", "v", Type::Int);
  REQUIRE(plan.holistic.size() == 2);
  // Group 0: 1..500 then 2^70 then 501..600; group 1: 600 values, none past 64 bits.
  Listed values;
  for (int i = 1; i <= 600; ++i) {
    if (i == 501) values.emplace_back(0, Value::of_int(static_cast<int128>(1) << 70));
    values.emplace_back(0, Value::of_int(i));
    values.emplace_back(1, Value::of_int(-i));
  }
  size_t listed = 0;
  const HolisticGroups hg = from_plan_lists(plan, 2, values, &listed);
  CHECK(listed > 12);  // the list of the wide value kept its values from then on
  CHECK(listed < values.size());
  const size_t nh = plan.holistic.size();
  for (size_t h = 0; h < nh; ++h) {
    const int64_t rank = plan.holistic[h].rank;
    CHECK(hg.values[0 * nh + h].i == (rank == 1 ? static_cast<int128>(1) << 70 : 600));
    CHECK(hg.values[1 * nh + h].i == -rank);
  }
}

TEST_CASE("holistic lists: keys of an int32's range held narrow give the values of keys held whole", "[top]") {
  // Groups 0..39 with values from INT32_MIN to INT32_MAX and ties; group 40 takes the one value past
  // an int32 that turns a list whole, and is left out of the comparison.
  constexpr size_t kGroups = 41;
  const Value past = Value::of_int(int64_t{1} << 40);
  const Plan plan =
      plan_over("groupby g | agg median(v) as m, quantile(v, 0.3) as q, count_distinct(v) as d", "v", Type::Int);
  const size_t nh = plan.holistic.size();
  REQUIRE(nh == 3);
  std::mt19937_64 rng(23);
  Listed values;
  for (int i = 0; i < 9000; ++i) {
    const int64_t v = i % 50 == 0 ? (i % 100 ? INT32_MIN : INT32_MAX) : static_cast<int64_t>(rng() % 2001) - 1000;
    values.emplace_back(static_cast<uint32_t>(rng() % (kGroups - 1)), Value::of_int(v));
  }
  // into 3 lists, with the value past an int32 first in none, the first, or each of them
  auto finish = [&](int whole_lists) {
    HolisticGroups hg = empty_groups(plan, kGroups);
    for (int w = 0; w < 3; ++w) {
      hg.lists[0].push_back(std::move(HolisticGroups::lists_for(plan).at(0)));
      if (w < whole_lists) hg.lists[0].back().add(kGroups - 1, past);
    }
    for (size_t i = 0; i < values.size(); ++i) hg.lists[0][i % 3].add(values[i].first, values[i].second);
    for (int w = 0; w < 3; ++w) CHECK(hg.lists[0][static_cast<size_t>(w)].narrow() == (w >= whole_lists));
    finish_holistic_lists(plan, hg, 2);
    return hg;
  };
  const HolisticGroups narrow = finish(0), mixed = finish(1), whole = finish(3);
  for (size_t g = 0; g + 1 < kGroups; ++g)
    for (size_t h = 0; h < nh; ++h) {
      INFO("group " << g << ", " << plan.holistic[h].text);
      const bool is_float = plan.holistic[h].result.type == Type::Float;
      for (const HolisticGroups* hg : {&narrow, &mixed}) {
        const Value a = hg->values[g * nh + h], b = whole.values[g * nh + h];
        REQUIRE(a.null == b.null);
        if (is_float) CHECK(a.f == b.f);
        else CHECK(a.i == b.i);
      }
    }
}
