// One holistic argument's values as a thread or a GPU lists them, each with
// its row's group: the input of exec/holistic.hpp's order statistics.
#pragma once
#include <cstdint>
#include <vector>

#include "runtime/grow_array.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// One holistic argument's non-null values in the rows a thread or a GPU
// listed, each with its row's agg group. Numbers, dates, timestamps and bools
// are held as their holistic_key (core/agg.hpp): 12 bytes a value with its
// group, or 8 while every key is one of an int32's (narrow: held as its
// distance from kNarrowBase). An int or decimal past 64 bits makes the list
// wide (128-bit values from then on); strings are copied into the list's arena.
class ArgList {
  // Filled in order and read in order: 4 KiB pages (fresh 2 MiB pages cost
  // more to fault in, and the TLB gains nothing on such reads).
  template <class T>
  using ListArray = GrowArray<T, false>;

 public:
  enum class Form : uint8_t { Keys, Wide, Strings };

  explicit ArgList(Type t);
  ArgList(ArgList&&) = default;
  ArgList& operator=(ArgList&&) = default;

  Type type() const { return type_; }
  Form form() const { return form_; }
  size_t size() const { return groups_.size(); }
  // Bytes the list holds (its arrays as allocated, its strings).
  size_t memory_bytes() const {
    return groups_.capacity() * sizeof(uint32_t) + keys_.capacity() * sizeof(uint64_t) +
           narrow_keys_.capacity() * sizeof(uint32_t) + wide_.capacity() * sizeof(int128) +
           strs_.capacity() * sizeof(StrRef) + weights_.capacity() * sizeof(uint64_t) +
           index_.capacity() * sizeof(uint32_t) + strings_.bytes() + top_keys_.capacity() * sizeof(uint64_t) +
           top_counts_.capacity();
  }
  bool weighted() const { return weights_.size() != 0; }

  // Lists a non-null value of group g. A list compacts itself when it has
  // grown enough (see compact); once that paid, it merges each value into
  // its equal as it comes.
  void add(uint32_t g, const Value& v) {
    if (top_n_) {
      if (holistic_key_fits(v, type_)) return add_top(g, holistic_key(v, type_));
      list_tops();  // a value past 64 bits: every value is listed from now on
    }
    if (!index_.empty()) return add_merged(g, v);
    append(g, v);
    if (size() >= next_compaction_) compact();
  }

  uint32_t group(size_t i) const { return groups_[i]; }
  uint32_t* groups() { return groups_.data(); }
  const uint32_t* groups() const { return groups_.data(); }
  Value value(size_t i) const {
    switch (form_) {
      case Form::Keys: return holistic_value_of_key(key(i), type_);
      case Form::Wide: return Value::of_int(wide_[i]);
      default: return Value::of_str(strs_[i].ptr, strs_[i].len);
    }
  }
  // Form::Keys: value i's key; the keys of a list that is not narrow, and
  // the distances from kNarrowBase of one that is.
  uint64_t key(size_t i) const { return narrow_ ? kNarrowBase + narrow_keys_[i] : keys_[i]; }
  bool narrow() const { return narrow_; }
  uint64_t* keys() { return keys_.data(); }
  const uint64_t* keys() const { return keys_.data(); }
  const uint32_t* narrow_keys() const { return narrow_keys_.data(); }
  // The holistic_key of INT32_MIN: ints, decimals, dates and bools of an
  // int32's range lie within 2^32 of it.
  static constexpr uint64_t kNarrowBase = (uint64_t{1} << 63) - (uint64_t{1} << 31);
  uint64_t weight(size_t i) const { return weighted() ? weights_[i] : 1; }

  // Values of one group with equal values become one value of their summed
  // weight, when that halves the list at least (few distinct values: a
  // million rows became 7500); the list then merges values as they come, as
  // a hash table over them. Otherwise (nearly every value distinct) it stays
  // as it is and is never compacted again.
  void compact();
  bool merging() const { return !index_.empty(); }
  // No value is added from now on: the merging index goes, and a list that
  // kept each group's top values lists them.
  void seal() {
    if (top_n_) list_tops();
    std::vector<uint32_t>().swap(index_);
  }
  // Only each group's n largest (or smallest) values are read, for order
  // statistics of a `top n` (n <= kMaxTopKept): until seal(), the list keeps
  // those alone as they come, in n values a group, and lists no other; it
  // is read only after seal(). Memory by groups, not by rows.
  void keep_top(uint32_t n, bool largest);
  static constexpr uint32_t kMaxTopKept = 4;
  size_t next_compaction() const { return next_compaction_; }
  static constexpr size_t kFirstCompaction = 1 << 20;

  // A GPU's list: `n` values whose groups and keys (Form::Keys, strings'
  // too) the caller writes into the arrays returned, sorted by group and
  // then by key (sorted_by_group).
  void fill_sorted(size_t n, uint32_t** groups, uint64_t** keys);
  bool sorted_by_group() const { return sorted_; }

 private:
  void append(uint32_t g, const Value& v) {
    if (form_ == Form::Keys && holistic_key_fits(v, type_)) {
      const uint64_t k = holistic_key(v, type_);
      if (!narrow_) {
        keys_.push_back(k);
      } else if (k - kNarrowBase <= UINT32_MAX) {
        narrow_keys_.push_back(static_cast<uint32_t>(k - kNarrowBase));
      } else {
        unnarrow();
        keys_.push_back(k);
      }
    } else if (form_ == Form::Strings) {
      strs_.push_back(strings_.add(v.s));
    } else {
      if (form_ == Form::Keys) widen();
      wide_.push_back(v.i);
    }
    groups_.push_back(g);
    if (weighted()) weights_.push_back(1);
  }
  void add_merged(uint32_t g, const Value& v);
  // keep_top: group g's kept keys, best first, take `key` if it is among
  // the best top_n_ (a key equal to the last of a full group changes none).
  void add_top(uint32_t g, uint64_t key) {
    if (g >= top_counts_.size()) grow_tops(g);
    uint8_t& n = top_counts_[g];
    uint64_t* kept = top_keys_.data() + static_cast<size_t>(g) * top_n_;
    auto better = [&](uint64_t a, uint64_t b) { return top_largest_ ? a > b : a < b; };
    if (n == top_n_) {
      if (!better(key, kept[n - 1])) return;
      --n;
    }
    size_t i = n;
    for (; i > 0 && better(key, kept[i - 1]); --i) kept[i] = kept[i - 1];
    kept[i] = key;
    ++n;
  }
  void grow_tops(uint32_t g);
  void list_tops();  // the kept keys into the list; keeping ends
  void widen();  // Form::Keys -> Form::Wide
  void unnarrow();  // narrow_keys_ -> keys_
  // The hash of (group, value), the same for equal values of one form;
  // whether value i is v of group g.
  uint64_t hash_of(uint32_t g, const Value& v) const;
  bool equal_at(size_t i, uint32_t g, const Value& v) const;
  // Whether a random sample of a long list is nearly all distinct values
  // (false for short lists, which are counted whole).
  bool sample_looks_distinct() const;
  void rebuild_index(size_t cap);

  Type type_;
  Form form_;
  bool sorted_ = false;
  ListArray<uint32_t> groups_;
  ListArray<uint64_t> keys_;
  ListArray<uint32_t> narrow_keys_;
  bool narrow_ = false;
  ListArray<int128> wide_;
  ListArray<StrRef> strs_;
  ListArray<uint64_t> weights_;  // rows each value stands for; empty: one each
  std::vector<uint32_t> index_;  // merging: open addressing over the values (index + 1; 0 is empty)
  StringArena strings_;
  size_t next_compaction_ = kFirstCompaction;
  uint32_t top_n_ = 0;  // keep_top's n; 0: every value is listed
  bool top_largest_ = false;
  GrowArray<uint64_t> top_keys_;   // group g's kept keys at g * top_n_, best first
  GrowArray<uint8_t> top_counts_;  // per group: its keys kept
};

}  // namespace warpcsv
