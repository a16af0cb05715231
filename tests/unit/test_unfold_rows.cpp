// The Unfold post stage (result/unfold_rows.hpp): a group's row (keys...,
// v_1..v_N, n) of `top N` run in the scan becomes the group's first
// min(N, n) rows, those past its non-null values with a null value.
#include <string>
#include <vector>

#include "catch.hpp"
#include "result/unfold_rows.hpp"

using namespace warpcsv;

namespace {

// The unfolded rows of `row` as text: "key|value" a row, null as "-".
std::string unfolded(const PostStage& st, const std::vector<Value>& row) {
  std::string out;
  std::vector<Value> cells(st.group_keys + 1);
  for (size_t r = 0, n = unfolded_rows(st, row.data()); r < n; ++r) {
    unfold_row(st, row.data(), r, cells.data());
    for (size_t c = 0; c < cells.size(); ++c) {
      const Value& v = cells[c];
      out += c ? "|" : r ? "\n" : "";
      out += v.null ? "-" : c == 0 ? std::string(v.s.ptr, v.s.len) : std::to_string(static_cast<int64_t>(v.i));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("unfold: a group's row of top N becomes min(N, rows) rows, nulls past its values", "[top]") {
  PostStage st;
  st.kind = PostStage::Unfold;
  st.group_keys = 1;
  st.limit = 3;
  const std::string key = "east";
  const Value k = Value::of_str(key.data(), static_cast<uint32_t>(key.size()));
  const Value null = Value::make_null();
  auto row = [&](Value a, Value b, Value c, int64_t n) { return std::vector<Value>{k, a, b, c, Value::of_int(n)}; };
  // More rows than N, all with values: the first N.
  CHECK(unfolded(st, row(Value::of_int(9), Value::of_int(7), Value::of_int(7), 12)) == "east|9\neast|7\neast|7");
  // Fewer rows than N: one row each.
  CHECK(unfolded(st, row(Value::of_int(-4), Value::of_int(-5), null, 2)) == "east|-4\neast|-5");
  CHECK(unfolded(st, row(Value::of_int(1), null, null, 1)) == "east|1");
  // Rows whose value is null come after the values: a null each, up to N rows.
  CHECK(unfolded(st, row(Value::of_int(3), null, null, 2)) == "east|3\neast|-");
  CHECK(unfolded(st, row(Value::of_int(3), null, null, 40)) == "east|3\neast|-\neast|-");
  CHECK(unfolded(st, row(null, null, null, 2)) == "east|-\neast|-");
  // A group of no rows (an empty count, or none) stands for none.
  CHECK(unfolded(st, row(null, null, null, 0)).empty());
  CHECK(unfolded(st, {k, null, null, null, null}).empty());
}
