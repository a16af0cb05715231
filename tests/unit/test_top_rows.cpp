// TopRowsPerGroup (result/top_rows.hpp) against a plain stable sort per
// group, on inputs long enough to drop rows and compact its table many times.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "result/top_rows.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

TEST_CASE("top rows per group: the first N of each group in order, ties in input order", "[top]") {
  const std::vector<OutputColumn> schema = {{"k", ColumnType{Type::Int, 0}}, {"v", ColumnType{Type::Int, 0}},
                                            {"s", ColumnType{Type::String, 0}}};
  const Plan plan = build_plan("groupby k | top 3 by v desc", schema);
  REQUIRE(plan.post.size() == 1);
  REQUIRE(plan.post[0].kind == PostStage::Top);
  std::vector<OutputColumn> columns = plan.scan_output;
  for (OutputColumn& c : columns) c.as_written = false;  // these rows carry no field text
  // Many groups, compacted often: compact() renumbers the rows group by
  // group, so a row's new number can be another's old one. (The last three
  // cases failed when each group's bar was kept as a row number.)
  struct Case {
    bool rising;
    int groups, rows;
    size_t compact_slack;
    uint64_t seed;
  };
  for (const Case c : {Case{true, 7, 30000, 4096, 1}, Case{false, 7, 30000, 4096, 2}, Case{false, 3000, 300000, 0, 3},
                       Case{false, 3000, 300000, 0, 7}, Case{false, 3000, 300000, 0, 8}}) {
    const bool rising = c.rising;
    INFO((rising ? "values rising: every row is kept for a while" : "random values with ties") << ", " << c.groups
                                                                                                << " groups");
    TopRowsPerGroup top(plan.post[0], columns, c.compact_slack);
    std::mt19937_64 rng(c.seed);
    std::map<int64_t, std::vector<std::pair<int64_t, std::string>>> reference;  // per key: (v, s) in input order
    for (int i = 0; i < c.rows; ++i) {
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(c.groups));
      const int64_t v = rising ? i : static_cast<int64_t>(rng() % (c.groups > 7 ? 1000000 : 50));
      const std::string s = "row" + std::to_string(i);
      Value row[3] = {Value::of_int(k), Value::of_int(v), Value::of_str(s.data(), static_cast<uint32_t>(s.size()))};
      top.add(row, row, row + 1);  // keys: k; order: v (the stage's own programs read the same columns)
      reference[k].emplace_back(v, s);
    }
    std::string expect, got;
    for (auto& [k, rows] : reference) {
      std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      for (size_t r = 0; r < 3 && r < rows.size(); ++r)
        expect += std::to_string(k) + "," + std::to_string(rows[r].first) + "," + rows[r].second + "\n";
    }
    const Table t = top.take_sorted();
    for (size_t r = 0; r < t.rows(); ++r) {
      const Value* row = t.row(r);
      got += std::to_string(static_cast<int64_t>(row[0].i)) + "," + std::to_string(static_cast<int64_t>(row[1].i)) +
             "," + std::string(row[2].s.ptr, row[2].s.len) + "\n";
    }
    CHECK(got == expect);
  }
}
