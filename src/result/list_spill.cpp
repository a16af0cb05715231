#include "result/list_spill.hpp"

#include <algorithm>
#include <cstring>
#include <queue>

#include <fmt/format.h>

#include "runtime/parallel.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/int128.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {

// Bytes a run's writer buffers before appending them to its file.
constexpr size_t kWriteBufferBytes = 256 << 10;
// Bounds of a run's read buffer in the merge (its share of the budget).
constexpr size_t kMinReadBytes = 16 << 10, kMaxReadBytes = 1 << 20;

// Strings in the order holistic aggregates sort them.
int compare_strings(StrRef a, StrRef b) {
  return agg_compare(Value::of_str(a.ptr, a.len), Value::of_str(b.ptr, b.len), Type::String);
}

template <class V>
struct Item {
  uint32_t id;
  uint64_t rows;
  V v;
};
bool value_less(uint64_t a, uint64_t b) { return a < b; }
bool value_less(int128 a, int128 b) { return a < b; }
bool value_less(StrRef a, StrRef b) { return compare_strings(a, b) < 0; }
bool value_equal(uint64_t a, uint64_t b) { return a == b; }
bool value_equal(int128 a, int128 b) { return a == b; }
bool value_equal(StrRef a, StrRef b) { return compare_strings(a, b) == 0; }

// A record's value: its bytes, and written at `to`.
size_t value_bytes(uint64_t) { return 8; }
size_t value_bytes(int128) { return 16; }
size_t value_bytes(StrRef s) { return 4 + s.len; }
void put_value(char* to, uint64_t k) { std::memcpy(to, &k, 8); }
void put_value(char* to, int128 v) { std::memcpy(to, &v, 16); }
void put_value(char* to, StrRef s) {
  std::memcpy(to, &s.len, 4);
  if (s.len) std::memcpy(to + 4, s.ptr, s.len);
}

// Sorts the items by (id, value), merges equal ones and writes them to
// `file` as records; adds each id's rows to `rows`. Returns the bytes written.
template <class V>
uint64_t write_run(std::vector<Item<V>>& items, SpillFile& file, std::vector<uint64_t>& rows, int threads) {
  // By id first, counted then scattered (a comparison sort of every item
  // had been most of a spill), then each id's bucket by value: on a thread
  // each, or on every thread for one bigger than a thread's share.
  uint32_t ids = 0;
  for (const Item<V>& it : items) ids = std::max(ids, it.id + 1);
  std::vector<uint64_t> start(static_cast<size_t>(ids) + 1, 0);
  for (const Item<V>& it : items) ++start[it.id + 1];
  for (size_t g = 1; g < start.size(); ++g) start[g] += start[g - 1];
  {
    std::vector<Item<V>> by_id(items.size());
    std::vector<uint64_t> at(start.begin(), start.end() - 1);
    for (const Item<V>& it : items) by_id[at[it.id]++] = it;
    items.swap(by_id);
  }
  auto by_value = [](const Item<V>& x, const Item<V>& y) { return value_less(x.v, y.v); };
  const uint64_t big = std::max<uint64_t>(1 << 16, items.size() / static_cast<uint64_t>(std::max(threads, 1)));
  for (size_t g = 0; g < ids; ++g)
    if (start[g + 1] - start[g] > big)
      parallel_stable_sort(items.begin() + static_cast<ptrdiff_t>(start[g]),
                           items.begin() + static_cast<ptrdiff_t>(start[g + 1]), by_value, threads);
  constexpr size_t kIdsPerTask = 256;
  parallel_for((ids + kIdsPerTask - 1) / kIdsPerTask, threads, [&](size_t task, int) {
    for (size_t g = task * kIdsPerTask; g < std::min<size_t>(ids, (task + 1) * kIdsPerTask); ++g)
      if (start[g + 1] - start[g] <= big)
        std::sort(items.begin() + static_cast<ptrdiff_t>(start[g]), items.begin() + static_cast<ptrdiff_t>(start[g + 1]),
                  by_value);
  });
  if (ids > rows.size()) rows.resize(std::max<size_t>(ids, 2 * rows.size()), 0);
  std::vector<char> buf(kWriteBufferBytes);
  size_t used = 0;
  uint64_t written = 0;
  for (size_t i = 0, e; i < items.size(); i = e) {
    uint64_t n = items[i].rows;
    for (e = i + 1; e < items.size() && items[e].id == items[i].id && value_equal(items[e].v, items[i].v); ++e)
      n += items[e].rows;
    const uint32_t id = items[i].id;
    rows[id] += n;
    const size_t bytes = 12 + value_bytes(items[i].v);
    if (used + bytes > buf.size()) {
      file.append(buf.data(), used);
      written += used;
      used = 0;
      if (bytes > buf.size()) buf.resize(bytes);
    }
    std::memcpy(buf.data() + used, &id, 4);
    std::memcpy(buf.data() + used + 4, &n, 8);
    put_value(buf.data() + used + 12, items[i].v);
    used += bytes;
  }
  file.append(buf.data(), used);
  return written + used;
}

}  // namespace

// Reads one run's records in order, a buffer at a time.
class SpilledLists::Reader {
 public:
  Reader(const Run& run, Type type, bool wide, size_t buffer_bytes)
      : in_(*run.file, buffer_bytes), form_(run.form), type_(type), wide_(wide) {}

  // The next record; false at the end of the run.
  bool next() {
    if (!in_.fill(12)) return false;
    std::memcpy(&id_, in_.data(), 4);
    std::memcpy(&rows_, in_.data() + 4, 8);
    in_.skip(12);
    switch (form_) {
      case Form::Keys:
        need(8);
        std::memcpy(&key_, in_.data(), 8);
        in_.skip(8);
        // A run of keys among wide runs of the argument compares as wide values.
        if (wide_) wide_value_ = holistic_value_of_key(key_, type_).i;
        break;
      case Form::Wide:
        need(16);
        std::memcpy(&wide_value_, in_.data(), 16);
        in_.skip(16);
        break;
      case Form::Strings: {
        need(4);
        uint32_t len;
        std::memcpy(&len, in_.data(), 4);
        in_.skip(4);
        need(len);
        str_ = StrRef{in_.data(), len};
        in_.skip(len);
        break;
      }
    }
    return true;
  }
  uint32_t id() const { return id_; }
  uint64_t rows() const { return rows_; }
  uint64_t key() const { return key_; }
  int128 wide_value() const { return wide_value_; }
  // The record's value, valid until next().
  Value value() const {
    if (type_ == Type::String) return Value::of_str(str_.ptr, str_.len);
    if (wide_) return Value::of_int(wide_value_);
    return holistic_value_of_key(key_, type_);
  }
  // Orders the records of one argument's runs by (id, value).
  int compare(const Reader& o) const {
    if (id_ != o.id_) return id_ < o.id_ ? -1 : 1;
    if (type_ == Type::String) return compare_strings(str_, o.str_);
    if (wide_) return wide_value_ < o.wide_value_ ? -1 : wide_value_ > o.wide_value_ ? 1 : 0;
    return key_ < o.key_ ? -1 : key_ > o.key_ ? 1 : 0;
  }

 private:
  void need(size_t n) {
    if (!in_.fill(n)) throw InternalError("a spill file of holistic lists ends inside a record");
  }

  SpillCursor in_;
  Form form_;
  Type type_;
  bool wide_;
  uint32_t id_ = 0;
  uint64_t rows_ = 0, key_ = 0;
  int128 wide_value_ = 0;
  StrRef str_{};
};

SpilledLists::SpilledLists(std::vector<Type> arg_types, uint64_t memory_budget)
    : dir_(spill_directory()), memory_budget_(memory_budget) {
  for (Type t : arg_types) args_.push_back(Argument{t, {}, {}});
}

std::string SpilledLists::describe_bytes() const {
  uint64_t stored = 0;
  for (const Argument& a : args_)
    for (const Run& r : a.runs) stored += r.file->stored_bytes();
  return fmt::format("{:.1f} MiB of records, {:.1f} MiB in {}", static_cast<double>(bytes_) / (1 << 20),
                     static_cast<double>(stored) / (1 << 20), dir_);
}

void SpilledLists::spill(size_t a, std::vector<ArgList>& lists, const std::vector<uint32_t>& id, int threads) {
  Argument& arg = args_[a];
  size_t n = 0;
  bool wide = false;
  for (const ArgList& l : lists) {
    n += l.size();
    wide |= l.form() == ArgList::Form::Wide;
    WCSV_EXPECTS(arg.type != Type::String || l.form() == ArgList::Form::Strings,
                 "a spilled list of strings holds their bytes");
  }
  if (a == 0) ++spills_;
  if (n == 0) return;
  Run run{std::make_unique<SpillFile>(dir_), arg.type == Type::String ? Form::Strings : wide ? Form::Wide : Form::Keys};
  // Every list's values as items, each list's on a thread of its own.
  auto gather = [&](auto value_of) {
    using V = decltype(value_of(lists[0], size_t{0}));
    std::vector<Item<V>> items(n);
    std::vector<size_t> first(lists.size() + 1, 0);
    for (size_t s = 0; s < lists.size(); ++s) first[s + 1] = first[s] + lists[s].size();
    parallel_for(lists.size(), threads, [&](size_t s, int) {
      const ArgList& l = lists[s];
      for (size_t i = 0; i < l.size(); ++i)
        items[first[s] + i] = Item<V>{id[l.group(i)], l.weight(i), value_of(l, i)};
    });
    return items;
  };
  uint64_t written = 0;
  switch (run.form) {
    case Form::Keys: {
      auto items = gather([](const ArgList& l, size_t i) { return l.key(i); });
      written = write_run(items, *run.file, arg.rows, threads);
      break;
    }
    case Form::Wide: {
      auto items = gather([](const ArgList& l, size_t i) { return l.value(i).i; });
      written = write_run(items, *run.file, arg.rows, threads);
      break;
    }
    case Form::Strings: {
      auto items = gather([](const ArgList& l, size_t i) { return l.value(i).s; });
      written = write_run(items, *run.file, arg.rows, threads);
      break;
    }
  }
  bytes_ += written;
  arg.runs.push_back(std::move(run));
  lists.clear();
}

void SpilledLists::merge(size_t a, const std::function<void(uint32_t, const Value&, uint64_t)>& fn) const {
  const Argument& arg = args_[a];
  if (arg.runs.empty()) return;
  bool wide = false;
  for (const Run& r : arg.runs) wide |= r.form == Form::Wide;
  const size_t buffer = std::clamp<size_t>(memory_budget_ / std::max<size_t>(1, arg.runs.size()), kMinReadBytes,
                                           kMaxReadBytes);
  std::vector<Reader> readers;
  readers.reserve(arg.runs.size());
  for (const Run& r : arg.runs) readers.emplace_back(r, arg.type, wide, buffer);
  auto later = [&](size_t x, size_t y) { return readers[x].compare(readers[y]) > 0; };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t r = 0; r < readers.size(); ++r)
    if (readers[r].next()) heap.push(r);
  // The value being summed over the runs: its own copy, as a reader's
  // buffer moves on once the value is taken.
  std::string held_bytes;
  Value held;
  uint32_t held_id = 0;
  uint64_t held_rows = 0, held_key = 0;
  int128 held_wide = 0;
  bool holding = false;
  auto take = [&](const Reader& r) {
    held = r.value();
    if (arg.type == Type::String) {
      held_bytes.assign(held.s.ptr, held.s.len);
      held = Value::of_str(held_bytes.data(), static_cast<uint32_t>(held_bytes.size()));
    }
    held_id = r.id();
    held_rows = r.rows();
    held_key = r.key();
    held_wide = r.wide_value();
    holding = true;
  };
  auto same_as_held = [&](const Reader& r) {
    if (r.id() != held_id) return false;
    if (arg.type == Type::String) return compare_strings(r.value().s, held.s) == 0;
    return wide ? r.wide_value() == held_wide : r.key() == held_key;
  };
  while (!heap.empty()) {
    const size_t r = heap.top();
    heap.pop();
    if (holding && same_as_held(readers[r])) {
      held_rows += readers[r].rows();
    } else {
      if (holding) fn(held_id, held, held_rows);
      take(readers[r]);
    }
    if (readers[r].next()) heap.push(r);
  }
  if (holding) fn(held_id, held, held_rows);
}

}  // namespace warpcsv
