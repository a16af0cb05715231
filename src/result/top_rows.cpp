#include "result/top_rows.hpp"

#include <algorithm>

#include "result/row_key.hpp"
#include "warpcsv/core/eval.hpp"

namespace warpcsv {

namespace {
// Nulls last in either direction, as the sort stage orders.
int compare_nulls_last(const Value& a, const Value& b, Type t, bool desc) {
  if (a.null || b.null) return a.null == b.null ? 0 : a.null ? 1 : -1;
  const int c = compare_values(a, b, t);
  return desc ? -c : c;
}
}  // namespace

TopRowsPerGroup::TopRowsPerGroup(const PostStage& stage, const std::vector<OutputColumn>& columns,
                                 size_t compact_slack)
    : stage_(stage), nkeys_(stage.group_keys), norder_(stage.exprs.size() - stage.group_keys), width_(columns.size()),
      compact_slack_(compact_slack) {
  rows_.columns = columns;
  for (size_t k = 0; k < stage.exprs.size(); ++k) {
    const ColumnType t = stage.exprs[k].result;
    (k < nkeys_ ? key_types_ : order_types_).push_back(t.type);
    rows_.columns.push_back(OutputColumn{"", t});
  }
  cells_.resize(rows_.width());
}

bool TopRowsPerGroup::order_before(const Value* a, uint64_t seq_a, uint32_t b) const {
  const Value* rb = rows_.row(b) + width_ + nkeys_;
  for (size_t k = 0; k < norder_; ++k) {
    const int c = compare_nulls_last(a[k], rb[k], order_types_[k], stage_.descending[k]);
    if (c != 0) return c < 0;
  }
  return seq_a < seq_[b];
}

bool TopRowsPerGroup::before(uint32_t a, uint32_t b) const {
  return order_before(rows_.row(a) + width_ + nkeys_, seq_[a], b);
}

void TopRowsPerGroup::keep_first(Group& g, size_t n) {
  std::sort(g.rows.begin(), g.rows.end(), [&](uint32_t a, uint32_t b) { return before(a, b); });
  if (g.rows.size() > n) {
    live_ -= g.rows.size() - n;
    g.rows.resize(n);
  }
  g.full = n > 0 && g.rows.size() == n;
}

void TopRowsPerGroup::add(const Value* row, const Value* keys, const Value* order) {
  key_.clear();
  append_row_key(key_, keys, key_types_);
  Group& g = groups_[key_];
  const uint64_t seq = next_seq_++;
  const size_t n = static_cast<size_t>(stage_.limit);
  if (g.full && !order_before(order, seq, g.rows[n - 1])) return;
  std::copy(row, row + width_, cells_.begin());
  std::copy(keys, keys + nkeys_, cells_.begin() + static_cast<ptrdiff_t>(width_));
  std::copy(order, order + norder_, cells_.begin() + static_cast<ptrdiff_t>(width_ + nkeys_));
  g.rows.push_back(static_cast<uint32_t>(rows_.rows()));
  rows_.append_owned(cells_.data());
  seq_.push_back(seq);
  ++live_;
  if (g.rows.size() >= 2 * std::max<size_t>(n, 1)) keep_first(g, n);
  if (rows_.rows() > 2 * live_ + compact_slack_) compact();
}

// Drops the rows no group keeps any more (and their strings).
void TopRowsPerGroup::compact() {
  Table kept;
  kept.columns = rows_.columns;
  std::vector<uint64_t> seq;
  seq.reserve(live_);
  for (auto& [key, g] : groups_) {
    for (uint32_t& r : g.rows) {
      const uint32_t at = static_cast<uint32_t>(kept.rows());
      kept.append_owned(rows_.row(r));
      seq.push_back(seq_[r]);
      r = at;
    }
  }
  rows_ = std::move(kept);
  seq_.swap(seq);
}

Table TopRowsPerGroup::take_sorted() {
  std::vector<Group*> order;
  order.reserve(groups_.size());
  for (auto& [key, g] : groups_) order.push_back(&g);
  auto keys_of = [&](const Group* g) { return rows_.row(g->rows.front()) + width_; };
  std::sort(order.begin(), order.end(), [&](const Group* a, const Group* b) {
    const Value *ka = keys_of(a), *kb = keys_of(b);
    for (size_t k = 0; k < nkeys_; ++k) {
      const int c = compare_nulls_last(ka[k], kb[k], key_types_[k], false);
      if (c != 0) return c < 0;
    }
    return false;
  });
  Table out;
  out.columns.assign(rows_.columns.begin(), rows_.columns.begin() + static_cast<ptrdiff_t>(width_));
  for (Group* g : order) {
    keep_first(*g, static_cast<size_t>(stage_.limit));
    for (uint32_t r : g->rows) out.append_owned(rows_.row(r));  // the row's own columns: the first width_
  }
  groups_.clear();
  return out;
}

}  // namespace warpcsv
