// keep_first_rows (result/first_rows.hpp) against a naive reference: the
// first row of each set of equal rows, in order, and positions moved with them.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "result/first_rows.hpp"
#include "result/row_key.hpp"

using namespace warpcsv;

namespace {

// Rows of an int, a string and a float column, from `distinct` choices each,
// with nulls, -0.0 and 0.0, and NaNs among them.
Table random_rows(std::mt19937_64& rng, size_t rows, uint64_t distinct) {
  Table t;
  t.columns = {{"i", {Type::Int, 0}}, {"s", {Type::String, 0}}, {"f", {Type::Float, 0}}};
  const std::vector<std::string> words = {"", "a", "b", "a longer string of many bytes", "Zürich"};
  for (size_t r = 0; r < rows; ++r) {
    Value v[3];
    const uint64_t pick = rng() % distinct;
    v[0] = pick % 97 == 0 ? Value::make_null() : Value::of_int(static_cast<int64_t>(pick % 1000) - 500);
    const std::string& w = words[pick % words.size()];
    v[1] = Value::of_str(w.data(), static_cast<uint32_t>(w.size()));
    const double fs[] = {0.0, -0.0, NAN, 1.5, -2.25};
    v[2] = pick % 89 == 0 ? Value::make_null() : Value::of_float(fs[(pick / 7) % 5]);
    t.append_owned(v);
  }
  return t;
}

}  // namespace

TEST_CASE("keep_first_rows: first occurrences in order, positions moved, as a naive set of row keys gives") {
  std::mt19937_64 rng(41);
  const std::vector<Type> types = {Type::Int, Type::String, Type::Float};
  // Few distinct rows, and more than the kept rows' first table holds (it grows).
  for (const auto& [rows, distinct] : std::vector<std::pair<size_t, uint64_t>>{{1, 1}, {50, 3}, {5000, 40}, {20000, 20000}}) {
    Table t = random_rows(rng, rows, distinct);
    std::vector<std::string> expect;
    std::set<std::string> seen;
    std::vector<size_t> positions, expect_positions;
    for (size_t p = 0; p <= rows; p += 1 + rows / 13) positions.push_back(p);
    size_t p = 0;
    for (size_t r = 0; r < rows; ++r) {
      for (; p < positions.size() && positions[p] <= r; ++p) expect_positions.push_back(expect.size());
      std::string key;
      append_row_key(key, t.row(r), types);
      if (seen.insert(key).second) expect.push_back(key);
    }
    for (; p < positions.size(); ++p) expect_positions.push_back(expect.size());
    INFO(rows << " rows of " << distinct << " choices");
    REQUIRE(keep_first_rows(t, types, positions) == expect.size());
    REQUIRE(t.rows() == expect.size());
    for (size_t r = 0; r < expect.size(); ++r) {
      std::string key;
      append_row_key(key, t.row(r), types);
      CHECK(key == expect[r]);
    }
    CHECK(positions == expect_positions);
  }
}

TEST_CASE("keep_sorted_first: a stable sort's first rows, in input order, positions moved with them") {
  std::mt19937_64 rng(43);
  for (size_t keep : {size_t{0}, size_t{1}, size_t{7}, size_t{500}, size_t{5000}}) {
    Table t = random_rows(rng, 3000, 300);
    const size_t n = t.rows();
    // By s descending, then i ascending, nulls last either way; ties in input order.
    auto before = [&](size_t a, size_t b) {
      const Value &sa = t.row(a)[1], &sb = t.row(b)[1], &ia = t.row(a)[0], &ib = t.row(b)[0];
      const std::string xa(sa.s.ptr, sa.s.len), xb(sb.s.ptr, sb.s.len);
      if (xa != xb) return xa > xb;
      if (ia.null != ib.null) return ib.null;
      return !ia.null && ia.i < ib.i;
    };
    std::vector<size_t> order(n);
    for (size_t r = 0; r < n; ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(), before);
    order.resize(std::min(n, keep));
    std::sort(order.begin(), order.end());
    std::vector<size_t> positions = {0, 5, 5, 999, 2999, 3000}, expect_positions;
    for (size_t p : positions)
      expect_positions.push_back(static_cast<size_t>(std::lower_bound(order.begin(), order.end(), p) - order.begin()));
    std::vector<std::string> expect;
    for (size_t r : order) {
      std::string key;
      append_row_key(key, t.row(r), {Type::Int, Type::String, Type::Float});
      expect.push_back(key);
    }
    const SortedCut cut{{1, 0}, {Type::String, Type::Int}, {true, false}, keep};
    INFO("keep " << keep);
    REQUIRE(keep_sorted_first(t, cut, positions) == expect.size());
    for (size_t r = 0; r < expect.size(); ++r) {
      std::string key;
      append_row_key(key, t.row(r), {Type::Int, Type::String, Type::Float});
      CHECK(key == expect[r]);
    }
    CHECK(positions == expect_positions);
  }
}

TEST_CASE("SortedCutBar: the rows a scan turns away at the bar change nothing a sort then limit keeps") {
  std::mt19937_64 rng(47);
  const std::vector<Type> types = {Type::Int, Type::String, Type::Float};
  for (size_t keep : {size_t{1}, size_t{7}, size_t{500}}) {
    std::mt19937_64 same_rng = rng;
    Table all = random_rows(rng, 3000, 300);  // many ties: the bar must let none of them in
    Table whole = random_rows(same_rng, 3000, 300);
    const SortedCut cut{{1, 0}, {Type::String, Type::Int}, {true, false}, keep};
    std::vector<size_t> none;
    keep_sorted_first(whole, cut, none);
    // As a scan keeps them: row by row past the bar, cut whenever keep + 16 rows are held.
    Table scanned;
    scanned.columns = all.columns;
    SortedCutBar bar;
    size_t admitted = 0;
    for (size_t r = 0; r < all.rows(); ++r) {
      if (bar.admits(all.row(r), cut)) {
        scanned.append_owned(all.row(r));
        ++admitted;
      }
      if (scanned.rows() >= keep + 16) keep_sorted_first(scanned, cut, none, &bar);
    }
    keep_sorted_first(scanned, cut, none);
    INFO("keep " << keep << ", admitted " << admitted);
    REQUIRE(scanned.rows() == whole.rows());
    for (size_t r = 0; r < whole.rows(); ++r) {
      std::string a, b;
      append_row_key(a, scanned.row(r), types);
      append_row_key(b, whole.row(r), types);
      CHECK(a == b);
    }
    if (keep < 100) CHECK(admitted < all.rows() / 2);
  }
}

TEST_CASE("keep_group_tops: each group's first rows by a stable sort, in input order, and the bars") {
  std::mt19937_64 rng(48);
  const std::vector<Type> types = {Type::Int, Type::String, Type::Float};
  // Grouped by f (NaN, -0.0 and 0.0, nulls among them), the top by s descending then i.
  const GroupTopCut cut{{2}, {Type::Float}, SortedCut{{1, 0}, {Type::String, Type::Int}, {true, false}, 0}};
  for (size_t keep : {size_t{0}, size_t{1}, size_t{3}, size_t{40}}) {
    GroupTopCut c = cut;
    c.order.keep = keep;
    std::mt19937_64 same_rng = rng;
    Table t = random_rows(rng, 3000, 300);
    Table streamed = random_rows(same_rng, 3000, 300);
    // The reference: each group's rows by a stable sort, its first `keep`, in input order.
    std::map<std::string, std::vector<size_t>> groups;
    for (size_t r = 0; r < t.rows(); ++r) {
      std::string key;
      append_row_key(key, t.row(r) + 2, {Type::Float});
      groups[key].push_back(r);
    }
    std::vector<size_t> expect_rows;
    for (auto& [key, rows] : groups) {
      std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
        const Value ka[2] = {t.row(a)[1], t.row(a)[0]}, kb[2] = {t.row(b)[1], t.row(b)[0]};
        return compare_sort_keys(ka, kb, c.order.types, c.order.desc) < 0;
      });
      rows.resize(std::min(rows.size(), keep));
      expect_rows.insert(expect_rows.end(), rows.begin(), rows.end());
    }
    std::sort(expect_rows.begin(), expect_rows.end());
    std::vector<std::string> expect;
    for (size_t r : expect_rows) {
      std::string key;
      append_row_key(key, t.row(r), types);
      expect.push_back(key);
    }
    std::vector<size_t> positions = {0, 7, 7, 1500, 3000}, expect_positions;
    for (size_t p : positions)
      expect_positions.push_back(
          static_cast<size_t>(std::lower_bound(expect_rows.begin(), expect_rows.end(), p) - expect_rows.begin()));
    INFO("keep " << keep);
    REQUIRE(keep_group_tops(t, c, positions) == expect.size());
    CHECK(positions == expect_positions);
    // As a scan keeps them: row by row past the bars, cut whenever 50 rows more are held.
    Table scanned;
    scanned.columns = streamed.columns;
    GroupTopBars bars;
    size_t admitted = 0;
    std::vector<size_t> none;
    for (size_t r = 0; r < streamed.rows(); ++r) {
      if (bars.admits(streamed.row(r), c)) {
        scanned.append_owned(streamed.row(r));
        ++admitted;
      }
      if (scanned.rows() % 50 == 0) keep_group_tops(scanned, c, none, &bars);
    }
    keep_group_tops(scanned, c, none);
    REQUIRE(scanned.rows() == expect.size());
    for (size_t r = 0; r < expect.size(); ++r) {
      std::string a, b;
      append_row_key(a, t.row(r), types);
      append_row_key(b, scanned.row(r), types);
      CHECK(a == expect[r]);
      CHECK(b == expect[r]);
    }
    if (keep > 0 && keep < 10) CHECK(admitted < streamed.rows() / 2);
  }
}

TEST_CASE("RowKeySet: new keys are new once, as a std::set says, across its growth") {
  std::mt19937_64 rng(44);
  RowKeySet set;
  std::set<std::string> reference;
  for (int i = 0; i < 60000; ++i) {
    // Keys of several lengths, the empty one and ones with NUL bytes among them.
    std::string key(rng() % 20, '\0');
    for (char& c : key) c = static_cast<char>(rng() % 3);
    if (i % 5 == 0) key = std::to_string(rng() % 5000);
    CHECK(set.insert(key) == reference.insert(key).second);
  }
}
