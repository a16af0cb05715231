#include "result/first_rows.hpp"

#include <algorithm>
#include <cstdint>

#include "result/order.hpp"
#include "result/row_key.hpp"
#include "runtime/grow_array.hpp"
#include "runtime/prefetch.hpp"
#include "warpcsv/core/hash.hpp"

namespace warpcsv {

namespace {

uint64_t row_hash(const Value* row, const std::vector<Type>& types) {
  uint64_t h = kGroupKeysSeed;
  for (size_t c = 0; c < types.size(); ++c) h = hash_combine(h, hash_value(row[c], types[c]));
  return h;
}

bool rows_equal(const Value* a, const Value* b, const std::vector<Type>& types) {
  for (size_t c = 0; c < types.size(); ++c)
    if (!key_equal(a[c], b[c], types[c])) return false;
  return true;
}

// The rows kept so far, by hash: open addressing over slots that hold a kept
// row's number + 1 (0: empty) under the top 32 bits of its hash, so that a
// probe compares only rows whose bits match. Grown as rows are kept, so that
// few distinct rows stay in the caches however many rows come.
class KeptRows {
 public:
  // The slot where row `row` (hash h) is, or would go; *found: whether a kept row equals it.
  size_t find(const Table& t, const Value* row, uint64_t h, const std::vector<Type>& types, bool* found) const {
    const uint64_t tag = h >> 32 << 32;
    for (size_t s = home(h >> 32);; s = (s + 1) & mask_) {
      const uint64_t slot = slots_[s];
      *found = slot != 0 && (slot >> 32 << 32) == tag && rows_equal(t.row((slot & 0xffffffffu) - 1), row, types);
      if (slot == 0 || *found) return s;
    }
  }
  // Hints that rows of hash h come soon: their first slot, then (once that
  // is in) the row it holds, which find() compares.
  void prefetch_slot(uint64_t h) const { prefetch_read(&slots_[home(h >> 32)]); }
  void prefetch_row(const Table& t, uint64_t h) const {
    const uint64_t slot = slots_[home(h >> 32)];
    if (slot != 0) prefetch_read(t.row((slot & 0xffffffffu) - 1));
  }
  // Notes kept row `kept` (hash h) at slot s, which find() gave.
  void add(size_t s, uint64_t h, size_t kept) {
    slots_[s] = h >> 32 << 32 | (kept + 1);
    if (++size_ * 2 > slots_.size()) grow();
  }

 private:
  void grow() {
    GrowArray<uint64_t> old;
    old.assign_zero(slots_.size() * 2);
    std::swap(old, slots_);
    mask_ = slots_.size() - 1;
    for (size_t i = 0; i < old.size(); ++i)
      if (old[i] != 0) place(old[i]);
  }
  void place(uint64_t slot) {
    size_t s = home(slot >> 32);
    while (slots_[s] != 0) s = (s + 1) & mask_;
    slots_[s] = slot;
  }
  // A row's first slot, from the hash bits its slot keeps (so that growing can place it again).
  size_t home(uint64_t top) const { return static_cast<size_t>(top) & mask_; }

  GrowArray<uint64_t> slots_ = zeros(1024);  // large: 2 MiB pages
  size_t mask_ = 1023, size_ = 0;
  static GrowArray<uint64_t> zeros(size_t n) {
    GrowArray<uint64_t> a;
    a.assign_zero(n);
    return a;
  }
};

// Drops rows of a table in place as they are visited in order, and moves
// positions (row counts into the table) to the kept rows' count with them.
class RowCompactor {
 public:
  RowCompactor(Table& t, std::vector<size_t>& positions) : t_(t), positions_(positions), width_(t.width()) {}
  // Row r is next: the positions at or before it count the rows kept so far.
  void visit(size_t r) {
    for (; moved_ < positions_.size() && positions_[moved_] <= r; ++moved_) positions_[moved_] = kept_;
  }
  void keep(size_t r) {
    if (kept_ != r) std::copy_n(t_.row(r), width_, t_.row(kept_));
    ++kept_;
  }
  size_t kept() const { return kept_; }
  // Ends the table at the kept rows. Most rows dropped: the kept ones move
  // to a table of their own, and the memory of the others (their strings
  // too) goes, as the partitions' tables wait for their turn to go out.
  size_t finish() {
    for (; moved_ < positions_.size(); ++moved_) positions_[moved_] = kept_;
    if (kept_ * 4 < t_.rows()) {
      Table kept;
      kept.columns = t_.columns;
      kept.cells.reserve(kept_ * width_);
      for (size_t r = 0; r < kept_; ++r) kept.append_owned(t_.row(r));
      t_ = std::move(kept);
    } else {
      t_.cells.resize(kept_ * width_);
    }
    return kept_;
  }

 private:
  Table& t_;
  std::vector<size_t>& positions_;
  const size_t width_;
  size_t kept_ = 0, moved_ = 0;  // positions_[0, moved_) are counts of kept rows already
};

}  // namespace

size_t keep_first_rows(Table& t, const std::vector<Type>& types, std::vector<size_t>& positions) {
  const size_t n = t.rows(), width = t.width();
  if (n < 2 || width == 0) return n;
  KeptRows seen;
  // Rows' hashes are made kAhead rows before their probe, their slots
  // prefetched then and the rows those slots hold half way.
  constexpr size_t kAhead = 8;
  uint64_t ahead[2 * kAhead];
  for (size_t r = 0; r < std::min(n, kAhead); ++r) ahead[r] = row_hash(t.row(r), types);
  RowCompactor rows(t, positions);
  for (size_t r = 0; r < n; ++r) {
    if (r + kAhead < n) {
      const uint64_t later = ahead[(r + kAhead) % (2 * kAhead)] = row_hash(t.row(r + kAhead), types);
      seen.prefetch_slot(later);
    }
    if (r + kAhead / 2 < n) seen.prefetch_row(t, ahead[(r + kAhead / 2) % (2 * kAhead)]);
    rows.visit(r);
    const Value* row = t.row(r);
    const uint64_t h = ahead[r % (2 * kAhead)];
    bool found = false;
    const size_t s = seen.find(t, row, h, types, &found);
    if (found) continue;
    seen.add(s, h, rows.kept());
    rows.keep(r);
  }
  return rows.finish();
}

namespace {

// The columns that exprs[from, to) read as they are, with their types;
// false when one of them computes something.
bool bare_columns(const std::vector<Program>& exprs, size_t from, size_t to, std::vector<int>& columns,
                  std::vector<Type>& types) {
  for (size_t k = from; k < to; ++k) {
    if (exprs[k].bare_slot() < 0) return false;
    columns.push_back(exprs[k].bare_slot());
    types.push_back(exprs[k].result.type);
  }
  return true;
}

}  // namespace

std::optional<SortedCut> sorted_cut_of(const Plan& plan) {
  if (plan.scan.aggregate || plan.post.size() < 2 || plan.post[0].kind != PostStage::Sort ||
      plan.post[1].kind != PostStage::Limit)
    return std::nullopt;
  const PostStage& sort = plan.post[0];
  SortedCut cut;
  cut.desc = sort.descending;
  cut.keep = static_cast<size_t>(plan.post[1].limit);
  if (!bare_columns(sort.exprs, 0, sort.exprs.size(), cut.columns, cut.types)) return std::nullopt;
  return cut;
}

std::optional<GroupTopCut> group_top_cut_of(const Plan& plan) {
  if (plan.scan.aggregate || plan.post.empty() || plan.post[0].kind != PostStage::Top) return std::nullopt;
  const PostStage& top = plan.post[0];
  GroupTopCut cut;
  cut.order.desc = top.descending;
  cut.order.keep = static_cast<size_t>(top.limit);
  if (!bare_columns(top.exprs, 0, top.group_keys, cut.key_columns, cut.key_types) ||
      !bare_columns(top.exprs, top.group_keys, top.exprs.size(), cut.order.columns, cut.order.types))
    return std::nullopt;
  return cut;
}

size_t keep_sorted_first(Table& t, const SortedCut& cut, std::vector<size_t>& positions, SortedCutBar* bar) {
  const size_t n = t.rows(), nkeys = cut.columns.size();
  if (n <= cut.keep) return n;
  std::vector<Value> keys(n * nkeys);
  for (size_t r = 0; r < n; ++r)
    for (size_t k = 0; k < nkeys; ++k) keys[r * nkeys + k] = t.row(r)[cut.columns[k]];
  std::vector<uint32_t> order =
      sort_order(n, KeyRows{reinterpret_cast<const char*>(keys.data()), nkeys * sizeof(Value)}, cut.types, cut.desc, 1);
  order.resize(cut.keep);
  const uint32_t last = order.empty() ? 0 : order.back();  // the kept row that sorts last
  std::sort(order.begin(), order.end());
  RowCompactor rows(t, positions);
  size_t next = 0;  // order[next] is the next row kept
  for (size_t r = 0; r < n; ++r) {
    rows.visit(r);
    if (next < order.size() && order[next] == r) {
      rows.keep(r);
      ++next;
    }
  }
  const size_t kept = rows.finish();
  if (bar && kept > 0) {
    const size_t at = static_cast<size_t>(std::lower_bound(order.begin(), order.end(), last) - order.begin());
    bar->set(t.row(at), cut);
  }
  return kept;
}

void group_key_of(const Value* row, const GroupTopCut& cut, std::vector<Value>& values, std::string& key) {
  values.resize(cut.key_columns.size());
  for (size_t k = 0; k < values.size(); ++k) values[k] = row[cut.key_columns[k]];
  key.clear();
  append_row_key(key, values.data(), cut.key_types);
}

size_t keep_group_tops(Table& t, const GroupTopCut& cut, std::vector<size_t>& positions, GroupTopBars* bars) {
  const size_t n = t.rows(), per_group = cut.order.keep, norder = cut.order.columns.size();
  std::unordered_map<std::string, std::vector<uint32_t>> groups;
  std::vector<Value> key_values;
  std::string row_key;
  for (size_t r = 0; r < n; ++r) {
    group_key_of(t.row(r), cut, key_values, row_key);
    groups[row_key].push_back(static_cast<uint32_t>(r));
  }
  std::vector<uint8_t> kept(n, 0);
  std::vector<std::pair<const std::string*, uint32_t>> full;  // groups left with per_group rows: their last
  std::vector<Value> a(norder), b(norder);
  auto before = [&](uint32_t x, uint32_t y) {
    for (size_t k = 0; k < norder; ++k) {
      a[k] = t.row(x)[cut.order.columns[k]];
      b[k] = t.row(y)[cut.order.columns[k]];
    }
    return compare_sort_keys(a.data(), b.data(), cut.order.types, cut.order.desc) < 0;
  };
  for (auto& [key, rows] : groups) {
    if (rows.size() >= per_group) {
      std::stable_sort(rows.begin(), rows.end(), before);
      rows.resize(per_group);
      if (per_group > 0) full.emplace_back(&key, rows.back());
    }
    for (uint32_t r : rows) kept[r] = 1;
  }
  std::vector<uint32_t> kept_before(n);  // a kept row's place once the others are gone
  RowCompactor compactor(t, positions);
  for (size_t r = 0; r < n; ++r) {
    compactor.visit(r);
    kept_before[r] = static_cast<uint32_t>(compactor.kept());
    if (kept[r]) compactor.keep(r);
  }
  const size_t left = compactor.finish();
  if (bars) {
    bars->clear();
    for (const auto& [key, last] : full) bars->set(*key, t.row(kept_before[last]), cut);
  }
  return left;
}

}  // namespace warpcsv
