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
  for (const bool rising : {true, false}) {
    INFO((rising ? "values rising: every row is kept for a while" : "random values with ties"));
    TopRowsPerGroup top(plan.post[0], columns);
    std::mt19937_64 rng(rising ? 1 : 2);
    std::map<int64_t, std::vector<std::pair<int64_t, std::string>>> reference;  // per key: (v, s) in input order
    for (int i = 0; i < 30000; ++i) {
      const int64_t k = static_cast<int64_t>(rng() % 7), v = rising ? i : static_cast<int64_t>(rng() % 50);
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
