#include "exec/holistic.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/core/int128.hpp"

namespace warpcsv {

namespace {

// A number value as the nearest double.
double to_double(const Value& v, Type t, int scale) {
  return t == Type::Float ? v.f : decimal_to_double(v.i, scale);
}

bool continuous(Type t) { return t == Type::Int || t == Type::Decimal || t == Type::Float || t == Type::Bool; }

// A median or quantile from the values at its sorted positions pos.lo and
// pos.lo + 1: numbers interpolate, other types take the lower one.
Value quantile_value(ColumnType arg, const Value& lo, const Value& hi, const QuantilePosition& pos) {
  if (!continuous(arg.type)) return lo;
  return Value::of_float(interpolate(lo, hi, arg.type, arg.scale, pos));
}

// Where an nth value lies among `rows` sorted values (0: the smallest);
// false past them.
bool nth_position(const HolisticSpec& spec, uint64_t rows, uint64_t* at) {
  if (spec.rank < 1 || static_cast<uint64_t>(spec.rank) > rows) return false;
  *at = spec.from_largest ? rows - static_cast<uint64_t>(spec.rank) : static_cast<uint64_t>(spec.rank) - 1;
  return true;
}

// One holistic aggregate over a group's values fed in ascending order, each
// once: a run of them in memory, or spilled runs merged. `rows`: the rows the
// group's values stand for together (count_distinct needs none).
class OrderStatistic {
 public:
  OrderStatistic(const HolisticSpec& spec, ColumnType arg, uint64_t rows) : spec_(&spec), arg_(arg) {
    if (spec.kind == AggKind::CountDistinct) return;
    if (spec.kind == AggKind::NthValue) {
      done_ = !nth_position(spec, rows, &want_);  // null past the values
    } else if (rows == 0) {
      done_ = true;  // null
    } else {
      pos_ = quantile_position(rows, spec.q_units, spec.q_scale);
      want_ = pos_.lo;
    }
  }
  // Whether later values can no longer change the result.
  bool done() const { return done_; }
  // The next value, standing for `weight` rows; `differs`: it is another
  // value than the one before (the first always is). value() gives it,
  // called only when it is taken; `keep`, where set, holds the bytes of a
  // string taken (the caller's own go away).
  template <class ValueFn>
  void add(uint64_t weight, bool differs, ValueFn&& value, StringArena* keep) {
    if (spec_->kind == AggKind::CountDistinct) {
      distinct_ += differs;
      return;
    }
    if (taken_) {  // the value after a quantile's lower one, to interpolate towards
      hi_ = value();
      done_ = true;
      return;
    }
    if (before_ + weight <= want_) {
      before_ += weight;
      return;
    }
    lo_ = value();
    if (keep && arg_.type == Type::String) {
      const StrRef kept = keep->add(lo_.s);
      lo_ = Value::of_str(kept.ptr, kept.len);
    }
    taken_ = true;
    hi_ = lo_;
    done_ = spec_->kind == AggKind::NthValue || !continuous(arg_.type) || want_ + 1 < before_ + weight;
  }
  Value result() const {
    if (spec_->kind == AggKind::CountDistinct) return Value::of_int(distinct_);
    if (!taken_) return Value::make_null();
    if (spec_->kind == AggKind::NthValue) return lo_;
    return quantile_value(arg_, lo_, hi_, pos_);
  }

 private:
  const HolisticSpec* spec_;
  ColumnType arg_;
  QuantilePosition pos_{};
  uint64_t want_ = 0;    // the sorted position of the value taken
  uint64_t before_ = 0;  // rows of the values before the current one
  int64_t distinct_ = 0;
  bool taken_ = false, done_ = false;
  Value lo_, hi_;
};

// A holistic aggregate over one group's values, sorted ascending. A Run has
// size(), value(i), weight(i) (the rows value i stands for) and differs(i)
// (whether value i is another value than value i - 1).
template <class Run>
Value holistic_value(const HolisticSpec& spec, const Run& run, ColumnType arg) {
  const size_t n = run.size();
  uint64_t rows = 0;
  if (spec.kind != AggKind::CountDistinct)
    for (size_t i = 0; i < n; ++i) rows += run.weight(i);
  OrderStatistic stat(spec, arg, rows);
  for (size_t i = 0; i < n && !stat.done(); ++i)
    stat.add(run.weight(i), i == 0 || run.differs(i), [&] { return run.value(i); }, nullptr);
  return stat.result();
}

// Writes every item of some pieces into its group's bucket, counted first
// and then scattered, on threads (much cheaper than a stable sort of every
// item by (group, value); docs/performance.md, "Holistic aggregates"). Each piece counts
// its own items per group while those counters are fewer than the items,
// so that it writes without atomics; else the pieces share one atomic
// counter per group (10M groups from 16 threads' lists), and a bucket's
// items come in any order (buckets are sorted by value next).
class Scatter {
 public:
  Scatter(size_t pieces, size_t ngroups, uint64_t items)
      : ngroups_(ngroups), shared_(pieces > 1 && pieces * ngroups > items),
        count_(shared_ ? 1 : pieces, std::vector<uint64_t>(ngroups, 0)) {}

  void count(size_t piece, uint32_t g) {
    if (shared_) __atomic_fetch_add(&count_[0][g], 1, __ATOMIC_RELAXED);
    else ++count_[piece][g];
  }
  // Once every item is counted: start[g] is group g's first slot, and the
  // cursors are set for slot().
  void place() {
    start.assign(ngroups_ + 1, 0);
    uint64_t at = 0;
    for (size_t g = 0; g < ngroups_; ++g) {  // group-major: each piece's items of g follow the previous piece's
      start[g] = at;
      for (auto& c : count_) {
        const uint64_t n = c[g];
        c[g] = at;
        at += n;
      }
    }
    start[ngroups_] = at;
  }
  // Where piece `piece` writes its next item of group g.
  uint64_t slot(size_t piece, uint32_t g) {
    if (shared_) return __atomic_fetch_add(&count_[0][g], 1, __ATOMIC_RELAXED);
    return count_[piece][g]++;
  }

  std::vector<uint64_t> start;  // ngroups + 1

 private:
  size_t ngroups_;
  bool shared_;
  std::vector<std::vector<uint64_t>> count_;
};

// A piece of a source's segment [begin, end), the unit of work on threads.
struct Piece {
  size_t seg;
  uint64_t begin, end;
};
// Pieces of segments whose sizes are size(s) for s < segments: about one
// per thread over all of them, at least one per non-empty segment.
template <class Size>
std::vector<Piece> pieces_of(size_t segments, Size size, int threads) {
  uint64_t total = 0;
  for (size_t s = 0; s < segments; ++s) total += size(s);
  const uint64_t per = std::max<uint64_t>(1 << 14, total / static_cast<uint64_t>(std::max(1, threads)) + 1);
  std::vector<Piece> pieces;
  for (size_t s = 0; s < segments; ++s)
    for (uint64_t b = 0, n = size(s); b < n; b += per) pieces.push_back(Piece{s, b, std::min(n, b + per)});
  return pieces;
}

// ---- lists of holistic keys --------------------------------------------------

// Numbers, dates, timestamps and bools that fit 64 bits (every list of the
// argument in Form::Keys) sort as plain integers: their keys are the values.
struct KeyWeight {
  uint64_t key, weight;
};
struct NarrowKey {  // a key of narrow lists: its distance from ArgList::kNarrowBase
  uint32_t distance;
};
uint64_t key_of(uint64_t k) { return k; }
uint64_t key_of(const KeyWeight& k) { return k.key; }
uint64_t key_of(NarrowKey k) { return ArgList::kNarrowBase + k.distance; }
uint64_t weight_of(uint64_t) { return 1; }
uint64_t weight_of(NarrowKey) { return 1; }
uint64_t weight_of(const KeyWeight& k) { return k.weight; }

template <class Item>
struct KeyRun {
  const Item* it;
  size_t n;
  Type t;
  size_t size() const { return n; }
  Value value(size_t i) const { return holistic_value_of_key(key_of(it[i]), t); }
  uint64_t weight(size_t i) const { return weight_of(it[i]); }
  bool differs(size_t i) const { return key_of(it[i]) != key_of(it[i - 1]); }
};

// The specs over one argument, by index into plan.holistic.
std::vector<size_t> specs_over(const Plan& plan, int key) {
  std::vector<size_t> hs;
  for (size_t h = 0; h < plan.holistic.size(); ++h)
    if (plan.holistic[h].key == key) hs.push_back(h);
  return hs;
}

// Buckets of more items than this are sorted on every thread, one after
// another; smaller ones on a thread each.
uint64_t big_bucket(uint64_t items, int threads) {
  return std::max<uint64_t>(1 << 16, items / static_cast<uint64_t>(std::max(threads, 1)));
}

// Calls fn(g, first, n) for each group g's bucket of items (items[start[g],
// start[g + 1])), on threads.
template <class Item, class Fn>
void for_each_bucket(Item* items, const std::vector<uint64_t>& start, int threads, Fn&& fn) {
  const size_t ngroups = start.size() - 1;
  constexpr size_t kGroupsPerTask = 64;
  parallel_for((ngroups + kGroupsPerTask - 1) / kGroupsPerTask, threads, [&](size_t task, int) {
    for (size_t g = task * kGroupsPerTask; g < std::min(ngroups, (task + 1) * kGroupsPerTask); ++g)
      fn(g, items + start[g], static_cast<size_t>(start[g + 1] - start[g]));
  });
}

// The aggregates `hs` over an argument of type `arg` from its items, bucketed by
// group (start) and, unless `sorted`, sorted here. Without weights, a lone
// median or quantile over an argument selects its two values (nth_element)
// instead of sorting, and nth values alone (`top N` in the scan) are read at
// their positions: unless sorted, the span of positions they read is
// selected and only that sorted.
template <class Item>
void key_bucket_values(const Plan& plan, const std::vector<size_t>& hs, ColumnType arg, Item* items,
                       const std::vector<uint64_t>& start, bool sorted, int threads, std::vector<Value>& values) {
  const size_t nh = plan.holistic.size();
  auto by_key = [](const Item& x, const Item& y) { return key_of(x) < key_of(y); };
  constexpr bool unweighted = !std::is_same_v<Item, KeyWeight>;
  const AggKind kind = plan.holistic[hs[0]].kind;
  const bool select =
      !sorted && unweighted && hs.size() == 1 && (kind == AggKind::Median || kind == AggKind::Quantile);
  const bool pick_nth = unweighted && std::all_of(hs.begin(), hs.end(), [&](size_t h) {
                          return plan.holistic[h].kind == AggKind::NthValue;
                        });
  // Big buckets are sorted first, unless selected (a selection is linear,
  // ten times faster than the sort on one big bucket).
  const uint64_t big = big_bucket(start.back(), threads);
  if (!sorted && !select && !pick_nth)
    for (size_t g = 0; g + 1 < start.size(); ++g)
      if (start[g + 1] - start[g] > big) parallel_stable_sort(items + start[g], items + start[g + 1], by_key, threads);
  for_each_bucket(items, start, threads, [&](size_t g, Item* first, size_t n) {
    if (pick_nth) {
      uint64_t lo = n, hi = 0, at = 0;
      for (size_t h : hs)
        if (nth_position(plan.holistic[h], n, &at)) lo = std::min(lo, at), hi = std::max(hi, at);
      if (lo > hi) return;  // every rank past the values: null, as set
      if (!sorted) {
        std::nth_element(first, first + lo, first + n, by_key);
        std::partial_sort(first + lo + 1, first + hi + 1, first + n, by_key);
      }
      for (size_t h : hs)
        if (nth_position(plan.holistic[h], n, &at))
          values[g * nh + h] = holistic_value_of_key(key_of(first[at]), arg.type);
      return;
    }
    if (!select) {
      if (!sorted && n <= big) std::sort(first, first + n, by_key);
      for (size_t h : hs) values[g * nh + h] = holistic_value(plan.holistic[h], KeyRun<Item>{first, n, arg.type}, arg);
      return;
    }
    if (n == 0) return;  // null, as set
    const HolisticSpec& spec = plan.holistic[hs[0]];
    const QuantilePosition pos = quantile_position(n, spec.q_units, spec.q_scale);
    std::nth_element(first, first + pos.lo, first + n, by_key);
    const Value lo = holistic_value_of_key(key_of(first[pos.lo]), arg.type);
    Value hi = lo;
    if (pos.rest && pos.lo + 1 < n)
      hi = holistic_value_of_key(key_of(*std::min_element(first + pos.lo + 1, first + n, by_key)), arg.type);
    values[g * nh + hs[0]] = quantile_value(arg, lo, hi, pos);
  });
}

// The aggregates `hs` from lists of keys: a GPU's one list, sorted by group
// and key, is read in place; threads' lists are bucketed by group first.
void key_list_values(const Plan& plan, const std::vector<size_t>& hs, ColumnType arg, std::vector<ArgList>& lists,
                     size_t ngroups, int threads, std::vector<Value>& values) {
  if (lists.size() == 1 && lists[0].sorted_by_group() && !lists[0].weighted()) {
    ArgList& l = lists[0];  // a GPU's, never narrow
    const size_t n = l.size();
    std::vector<uint64_t> start(ngroups + 1, n);
    // start[g]: the first value of a group >= g (groups without values get empty buckets).
    parallel_ranges(ngroups, threads, [&](size_t b, size_t e) {
      const uint32_t* groups = l.groups();
      for (size_t g = b; g < e; ++g)
        start[g] = static_cast<uint64_t>(std::lower_bound(groups, groups + n, static_cast<uint32_t>(g)) - groups);
    });
    key_bucket_values(plan, hs, arg, l.keys(), start, true, threads, values);
    return;
  }
  const std::vector<Piece> pieces = pieces_of(lists.size(), [&](size_t s) { return lists[s].size(); }, threads);
  uint64_t total = 0;
  bool weighted = false, narrow = true;
  for (const ArgList& l : lists) {
    total += l.size();
    weighted |= l.weighted();
    narrow &= l.narrow();
  }
  Scatter sc(pieces.size(), ngroups, total);
  parallel_for(pieces.size(), threads, [&](size_t p, int) {
    const ArgList& l = lists[pieces[p].seg];
    for (uint64_t i = pieces[p].begin; i < pieces[p].end; ++i) sc.count(p, l.group(i));
  });
  sc.place();
  auto scatter = [&](auto* items) {
    parallel_for(pieces.size(), threads, [&](size_t p, int) {
      const ArgList& l = lists[pieces[p].seg];
      using Item = std::remove_pointer_t<decltype(items)>;
      const auto place = [&](auto key_at) {
        for (uint64_t i = pieces[p].begin; i < pieces[p].end; ++i) {
          Item& dst = items[sc.slot(p, l.group(i))];
          if constexpr (std::is_same_v<Item, KeyWeight>) dst = KeyWeight{key_at(i), l.weight(i)};
          else if constexpr (std::is_same_v<Item, NarrowKey>) dst = NarrowKey{l.narrow_keys()[i]};
          else dst = key_at(i);
        }
      };
      if (l.narrow()) place([&](uint64_t i) { return ArgList::kNarrowBase + l.narrow_keys()[i]; });
      else place([&](uint64_t i) { return l.keys()[i]; });
    });
  };
  if (narrow && !weighted) {  // half the bytes to move and select
    UninitVector<NarrowKey> items(total);
    scatter(items.data());
    key_bucket_values(plan, hs, arg, items.data(), sc.start, false, threads, values);
  } else if (weighted) {
    UninitVector<KeyWeight> items(total);
    scatter(items.data());
    key_bucket_values(plan, hs, arg, items.data(), sc.start, false, threads, values);
  } else {
    UninitVector<uint64_t> items(total);
    scatter(items.data());
    key_bucket_values(plan, hs, arg, items.data(), sc.start, false, threads, values);
  }
}

// ---- any values: prefixes of the values, and their sources -------------------

// Where the values of an argument come from: segments of values, value (s, i)
// of agg group group(s, i), standing for weight(s, i) rows.
struct ScanGroupSource {  // the scan's groups, keyed by the agg's keys and then the argument
  const GroupTable& in;
  const std::vector<uint32_t>& group_of;
  const std::vector<int64_t>& weights;
  int k;
  size_t segments() const { return 1; }
  size_t size(size_t) const { return in.size(); }
  uint32_t group(size_t, size_t i) const { return group_of[i]; }
  Value value(size_t, size_t i) const { return in.key(i, k); }
  uint64_t weight(size_t, size_t i) const { return static_cast<uint64_t>(weights[i]); }
};
struct ListSource {  // the threads' lists of one argument
  const std::vector<ArgList>& lists;
  size_t segments() const { return lists.size(); }
  size_t size(size_t s) const { return lists[s].size(); }
  uint32_t group(size_t s, size_t i) const { return lists[s].group(i); }
  Value value(size_t s, size_t i) const { return lists[s].value(i); }
  uint64_t weight(size_t s, size_t i) const { return lists[s].weight(i); }
};

// A value in a group's bucket: an order-preserving prefix of it
// (sort_prefix), where it is (segment << 40 | index), and the rows it stands for.
struct BucketItem {
  uint64_t prefix;
  uint64_t source;
  uint64_t weight;
};
constexpr int kSegmentShift = 40;
template <class Source>
Value value_at(const Source& src, uint64_t source) {
  return src.value(static_cast<size_t>(source >> kSegmentShift), source & ((1ull << kSegmentShift) - 1));
}

// An order-preserving 64-bit prefix of a value of type t: the holistic key
// of a number that fits 64 bits; the high half of every int and decimal when
// some are `wide` (beyond 64 bits: mixing whole values with high halves
// misorders them); a string's 8 bytes from `skip` (a prefix every value
// shares: ids like id0000002644 differ only after it).
uint64_t sort_prefix(const Value& v, Type t, uint32_t skip, bool wide) {
  if (t == Type::String) return skip < v.s.len ? string_prefix8(v.s.ptr + skip, v.s.len - skip) : 0;
  if (wide) return static_cast<uint64_t>(static_cast<uint128>(v.i) >> 64) ^ (1ull << 63);
  return holistic_key(v, t);
}

// How many first bytes a and b share, given that they share `from`.
uint32_t shared_prefix(StrRef a, StrRef b, uint32_t from = 0) {
  uint32_t i = std::min({from, a.len, b.len});
  const uint32_t n = std::min(a.len, b.len);
  while (i < n && a.ptr[i] == b.ptr[i]) ++i;
  return i;
}

// The non-null values of a source in one bucket per agg group (group g's
// are items[start[g], start[g + 1])).
struct Buckets {
  UninitVector<BucketItem> items;
  std::vector<uint64_t> start;
  bool whole = true;  // every prefix is the whole value: strings of at most 8 bytes past the
                      // shared prefix (no NUL gets into a value), floats, numbers that fit 64 bits
  uint32_t skip = 0;  // strings: the first bytes every value shares, left out of the prefixes
};
template <class Source>
Buckets bucket_by_group(const Source& src, Type t, size_t ngroups, int threads) {
  const std::vector<Piece> pieces = pieces_of(src.segments(), [&](size_t s) { return src.size(s); }, threads);
  struct PieceFacts {
    uint64_t values = 0;
    bool not_whole = false;  // a number beyond 64 bits
    Value first{};           // strings: the first, the bytes all share with it, the longest
    bool has_first = false;
    uint32_t shared = UINT32_MAX, longest = 0;
  };
  std::vector<PieceFacts> facts(pieces.size());
  parallel_for(pieces.size(), threads, [&](size_t p, int) {
    PieceFacts& f = facts[p];
    for (uint64_t i = pieces[p].begin; i < pieces[p].end; ++i) {
      const Value v = src.value(pieces[p].seg, i);
      if (v.null) continue;
      ++f.values;
      if (t == Type::String) {
        if (!f.has_first) f.first = v, f.has_first = true;
        f.shared = std::min(f.shared, shared_prefix(f.first.s, v.s));
        f.longest = std::max(f.longest, v.s.len);
      } else if (!holistic_key_fits(v, t)) {
        f.not_whole = true;
      }
    }
  });
  Buckets b;
  uint64_t total = 0;
  uint32_t skip = UINT32_MAX, longest = 0;
  const Value* first = nullptr;
  for (const PieceFacts& f : facts) {
    total += f.values;
    b.whole &= !f.not_whole;
    if (!f.has_first) continue;
    if (!first) first = &f.first;
    skip = std::min({skip, f.shared, shared_prefix(first->s, f.first.s)});
    longest = std::max(longest, f.longest);
  }
  if (t == Type::String) {
    b.skip = first ? skip : 0;
    b.whole = longest <= static_cast<uint64_t>(b.skip) + 8;
  }
  Scatter sc(pieces.size(), ngroups, total);
  parallel_for(pieces.size(), threads, [&](size_t p, int) {
    for (uint64_t i = pieces[p].begin; i < pieces[p].end; ++i)
      if (!src.value(pieces[p].seg, i).null) sc.count(p, src.group(pieces[p].seg, i));
  });
  sc.place();
  b.items.resize(total);
  parallel_for(pieces.size(), threads, [&](size_t p, int) {
    const size_t s = pieces[p].seg;
    for (uint64_t i = pieces[p].begin; i < pieces[p].end; ++i) {
      const Value v = src.value(s, i);
      if (!v.null)
        b.items[sc.slot(p, src.group(s, i))] = BucketItem{sort_prefix(v, t, b.skip, !b.whole),
                                                          (static_cast<uint64_t>(s) << kSegmentShift) | i,
                                                          src.weight(s, i)};
    }
  });
  b.start = std::move(sc.start);
  return b;
}

// Sorts a bucket's items by value (equal values may end in any order).
// Prefixes decide where they differ. Strings that share theirs are keyed
// again by their next 8 bytes, run by run: comparing through the strings
// costs two cache misses each, which made strings sharing their first 8
// bytes (URLs) ten times slower. Wide decimals that share theirs compare
// their values.
template <class Source>
struct BucketSort {
  const Source& src;
  Type t;
  bool whole;
  uint32_t skip;
  uint64_t big;  // more items than this: sorted on every thread
  int threads;

  template <class Cmp>
  void sort_items(BucketItem* at, size_t n, Cmp cmp) const {
    if (n > big) parallel_stable_sort(at, at + n, cmp, threads);
    else std::sort(at, at + n, cmp);
  }
  void sort(BucketItem* at, size_t n) const {
    auto by_prefix = [](const BucketItem& x, const BucketItem& y) { return x.prefix < y.prefix; };
    if (whole) return sort_items(at, n, by_prefix);
    if (t != Type::String)
      return sort_items(at, n, [&](const BucketItem& x, const BucketItem& y) {
        if (x.prefix != y.prefix) return x.prefix < y.prefix;
        return agg_compare(value_at(src, x.source), value_at(src, y.source), t) < 0;
      });
    struct Run {
      BucketItem* at;
      size_t n;
      uint32_t shared;  // bytes every string of the run shares
    };
    std::vector<Run> todo{{at, n, skip}};
    while (!todo.empty()) {
      const Run r = todo.back();
      todo.pop_back();
      sort_items(r.at, r.n, by_prefix);
      for (size_t a = 0, e; a < r.n; a = e) {
        for (e = a + 1; e < r.n && r.at[e].prefix == r.at[a].prefix;) ++e;
        if (e - a == 1) continue;
        // Items of one prefix share 8 more bytes, maybe many more (URLs): past
        // all they share, those that go on are keyed by their next 8 bytes.
        const StrRef first = value_at(src, r.at[a].source).s;
        uint32_t shared = first.len, longest = 0;
        for (size_t i = a + 1; i < e; ++i) {
          const StrRef v = value_at(src, r.at[i].source).s;
          shared = std::min(shared, shared_prefix(first, v, r.shared + 8));
          longest = std::max(longest, v.len);
        }
        if (std::max(longest, first.len) == shared) continue;  // all equal
        for (size_t i = a; i < e; ++i) r.at[i].prefix = sort_prefix(value_at(src, r.at[i].source), t, shared, false);
        todo.push_back(Run{r.at + a, e - a, shared});
      }
    }
  }
};

template <class Source>
struct BucketRun {
  const Source& src;
  const BucketItem* it;
  size_t n;
  Type t;
  bool whole;  // equal prefixes are equal values
  size_t size() const { return n; }
  Value value(size_t i) const { return value_at(src, it[i].source); }
  uint64_t weight(size_t i) const { return it[i].weight; }
  bool differs(size_t i) const {
    return it[i - 1].prefix != it[i].prefix || (!whole && !key_equal(value(i - 1), value(i), t));
  }
};

// The aggregates `hs` over an argument of type `arg` whose values `src` gives.
template <class Source>
void source_values(const Plan& plan, const std::vector<size_t>& hs, ColumnType arg, const Source& src,
                   size_t ngroups, int threads, std::vector<Value>& values) {
  const size_t nh = plan.holistic.size();
  Buckets b = bucket_by_group(src, arg.type, ngroups, threads);
  const uint64_t big = big_bucket(b.items.size(), threads);
  const BucketSort<Source> sorter{src, arg.type, b.whole, b.skip, big, threads};
  for (size_t g = 0; g < ngroups; ++g)
    if (b.start[g + 1] - b.start[g] > big) sorter.sort(b.items.data() + b.start[g], b.start[g + 1] - b.start[g]);
  for_each_bucket(b.items.data(), b.start, threads, [&](size_t g, BucketItem* first, size_t n) {
    if (n <= big) sorter.sort(first, n);
    for (size_t h : hs)
      values[g * nh + h] = holistic_value(plan.holistic[h], BucketRun<Source>{src, first, n, arg.type, b.whole}, arg);
  });
}

// The aggregates `hs` over argument a (of type `arg`) from its spilled runs,
// merged: each group's values once, in ascending order. `group_of_id`: the
// group of each spilled id; `keep` holds the strings taken.
void spilled_list_values(const Plan& plan, const std::vector<size_t>& hs, ColumnType arg, size_t a,
                         const SpilledLists& spilled, const std::vector<uint32_t>& group_of_id, StringArena& keep,
                         std::vector<Value>& values) {
  const size_t nh = plan.holistic.size();
  std::vector<OrderStatistic> stats;
  size_t group = 0;
  auto finish_group = [&] {
    for (size_t k = 0; k < hs.size(); ++k) values[group * nh + hs[k]] = stats[k].result();
    stats.clear();
  };
  uint32_t at_id = kNoSpilledId;
  spilled.merge(a, [&](uint32_t id, const Value& v, uint64_t rows) {
    if (id != at_id) {
      if (!stats.empty()) finish_group();
      WCSV_EXPECTS(id < group_of_id.size() && group_of_id[id] != kNoSpilledId, "a spilled value's group is known");
      at_id = id;
      group = group_of_id[id];
      for (size_t h : hs) stats.emplace_back(plan.holistic[h], arg, spilled.rows(a, id));
    }
    for (OrderStatistic& s : stats)
      if (!s.done()) s.add(rows, true, [&] { return v; }, &keep);
  });
  if (!stats.empty()) finish_group();
}

// Every argument's aggregates from spilled runs, an argument a thread.
void spilled_values(const Plan& plan, HolisticGroups& hg, int threads) {
  std::vector<uint32_t> group_of_id;
  for (size_t g = 0; g < hg.spilled_ids.size(); ++g) {
    const uint32_t id = hg.spilled_ids[g];
    if (id == kNoSpilledId) continue;
    if (id >= group_of_id.size()) group_of_id.resize(static_cast<size_t>(id) + 1, kNoSpilledId);
    group_of_id[id] = static_cast<uint32_t>(g);
  }
  std::vector<StringArena> kept(hg.lists.size());
  parallel_for(hg.lists.size(), threads, [&](size_t a, int) {
    const int key = static_cast<int>(plan.group_keys + a);
    spilled_list_values(plan, specs_over(plan, key), plan.scan.keys[static_cast<size_t>(key)].result, a, *hg.spilled,
                        group_of_id, kept[a], hg.values);
  });
  for (StringArena& k : kept) hg.key_strings.absorb(std::move(k));
}

// Rows of plan.holistic.size() values for `ngroups` groups, each as over no values.
std::vector<Value> empty_values(const Plan& plan, size_t ngroups) {
  const size_t nh = plan.holistic.size();
  std::vector<Value> values(ngroups * nh, Value::make_null());
  for (size_t h = 0; h < nh; ++h)
    if (plan.holistic[h].kind == AggKind::CountDistinct)
      for (size_t o = 0; o < ngroups; ++o) values[o * nh + h] = Value::of_int(0);
  return values;
}

}  // namespace

QuantilePosition quantile_position(uint64_t n, int64_t units, int scale) {
  const uint64_t one = static_cast<uint64_t>(pow10_i128(scale));                   // at most 10^18
  const uint128 pos = static_cast<uint128>(n - 1) * static_cast<uint64_t>(units);  // below 2^124
  return QuantilePosition{static_cast<uint64_t>(pos / one), static_cast<uint64_t>(pos % one), one};
}

double interpolate(const Value& a, const Value& b, Type t, int scale, const QuantilePosition& pos) {
  double d;
  if (pos.rest == 0) {
    d = to_double(a, t, scale);
  } else if (t == Type::Float) {
    const double frac = static_cast<double>(pos.rest) / static_cast<double>(pos.one);
    const double span = b.f - a.f;
    if (a.f == b.f) d = a.f;
    else if (pos.rest * 2 == pos.one) d = a.f * 0.5 + b.f * 0.5;
    else if (std::isfinite(span)) d = a.f + span * frac;
    else d = a.f * (1 - frac) + b.f * frac;  // an infinity, or a span past the doubles: -inf and 1 give -inf
  } else {
    // (a one + (b - a) rest) / (one 10^scale), when every step fits.
    int128 diff = 0, num = 0, lo = 0, step = 0;
    const uint128 unit = static_cast<uint128>(pow10_i128(scale));
    const bool den_fits = unit <= ((static_cast<uint128>(1) << 127) - 1) / pos.one;
    if (den_fits && checked_sub(b.i, a.i, &diff) && checked_mul(a.i, static_cast<int128>(pos.one), &lo) &&
        checked_mul(diff, static_cast<int128>(pos.rest), &step) && checked_add(lo, step, &num)) {
      d = int128_div_to_double(num, static_cast<uint128>(pos.one) * unit);
    } else {
      const double da = to_double(a, t, scale);
      d = da + (to_double(b, t, scale) - da) * (static_cast<double>(pos.rest) / static_cast<double>(pos.one));
    }
  }
  return d == 0 ? 0.0 : d;  // -0.0 and 0.0 group together, so which one a group kept is not fixed
}

std::vector<ArgList> HolisticGroups::lists_for(const Plan& plan) {
  std::vector<ArgList> lists;
  for (size_t k = plan.group_keys; k < plan.scan.keys.size(); ++k) {
    ArgList& l = lists.emplace_back(plan.scan.keys[k].result.type);
    // Order statistics alone, all from one end, of ranks keep_top can hold.
    const std::vector<size_t> hs = specs_over(plan, static_cast<int>(k));
    const auto nth_from = [&](bool largest) {
      return std::all_of(hs.begin(), hs.end(), [&](size_t h) {
        const HolisticSpec& s = plan.holistic[h];
        return s.kind == AggKind::NthValue && s.from_largest == largest && s.rank >= 1 &&
               s.rank <= static_cast<int64_t>(ArgList::kMaxTopKept);
      });
    };
    if (hs.empty() || l.form() != ArgList::Form::Keys) continue;
    const bool largest = plan.holistic[hs[0]].from_largest;
    if (!nth_from(largest)) continue;
    int64_t most = 0;
    for (size_t h : hs) most = std::max(most, plan.holistic[h].rank);
    l.keep_top(static_cast<uint32_t>(most), largest);
  }
  return lists;
}

// ---- the two ways in -------------------------------------------------------------

HolisticGroups regroup_holistic(const Plan& plan, const GroupTable& in, int threads) {
  HolisticGroups r;
  const GroupLayout& scan_layout = in.layout();
  r.layout = std::make_unique<GroupLayout>(scan_layout);
  r.layout->key_types.resize(plan.group_keys);
  r.groups = std::make_unique<GroupTable>(r.layout.get());
  GroupTable& out = *r.groups;

  const size_t n = in.size();
  std::vector<uint32_t> group_of(n);
  std::vector<int64_t> weight(n);
  const uint32_t weight_offset = scan_layout.aggs[static_cast<size_t>(plan.holistic_weight)].offset;
  // On threads: each folds the scan groups whose agg keys hash to its part
  // into a table of its own; the parts share no group and are appended whole.
  const size_t nparts = threads <= 1 || n < (1u << 15) ? 1 : static_cast<size_t>(threads);
  std::vector<uint64_t> hash(n);
  std::vector<uint16_t> part_of(n);
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    std::vector<Value> keys(in.layout().key_types.size() + 1);
    for (size_t g = b; g < e; ++g) {
      in.keys_of(g, keys.data());
      hash[g] = out.hash_keys(keys.data());  // the agg's keys come first
      part_of[g] = static_cast<uint16_t>(hash_part(hash[g], nparts));
      weight[g] = reinterpret_cast<const CountState*>(in.state(g) + weight_offset)->n;
    }
  });
  std::vector<GroupTable> parts;
  for (size_t p = 0; p < nparts; ++p) parts.emplace_back(r.layout.get());
  parallel_for(nparts, threads, [&](size_t p, int) {
    GroupTable& t = parts[p];
    std::vector<Value> keys(in.layout().key_types.size() + 1);
    for (size_t g = 0; g < n; ++g) {
      if (part_of[g] != p) continue;
      in.keys_of(g, keys.data());
      char* dst = t.find_or_insert(keys.data(), hash[g]);
      group_of[g] = static_cast<uint32_t>(t.group_of(dst));
      bool copied = false;
      for (const auto& a : scan_layout.aggs) copied |= agg_merge(a, dst, in.state(g));
      if (copied) t.stabilize_strings(dst);
    }
  });
  std::vector<uint32_t> first(nparts, 0);
  for (size_t p = 1; p < nparts; ++p) first[p] = first[p - 1] + static_cast<uint32_t>(parts[p - 1].size());
  out.append_disjoint(parts, threads);
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    for (size_t g = b; g < e; ++g) group_of[g] += first[part_of[g]];
  });
  out.ensure_group_without_keys();
  r.values = empty_values(plan, out.size());
  std::vector<bool> done(plan.scan.keys.size(), false);
  for (const HolisticSpec& spec : plan.holistic) {  // each argument once, for the aggregates over it
    if (done[static_cast<size_t>(spec.key)]) continue;
    done[static_cast<size_t>(spec.key)] = true;
    source_values(plan, specs_over(plan, spec.key), plan.scan.keys[static_cast<size_t>(spec.key)].result,
                  ScanGroupSource{in, group_of, weight, spec.key}, out.size(), threads, r.values);
  }
  return r;
}

void finish_holistic_lists(const Plan& plan, HolisticGroups& hg, int threads) {
  GroupTable& out = *hg.groups;
  out.ensure_group_without_keys();
  const size_t ngroups = out.size(), nh = plan.holistic.size();
  hg.values = empty_values(plan, ngroups);
  // An argument that is one of the agg's keys has one value in each group,
  // in each of its rows (the count() that weighs them).
  for (size_t h = 0; h < nh; ++h) {
    const HolisticSpec& spec = plan.holistic[h];
    if (static_cast<size_t>(spec.key) >= plan.group_keys) continue;
    const ColumnType arg = plan.scan.keys[static_cast<size_t>(spec.key)].result;
    const uint32_t weight_offset = out.layout().aggs[static_cast<size_t>(plan.holistic_weight)].offset;
    parallel_ranges(ngroups, threads, [&](size_t b, size_t e) {
      for (size_t g = b; g < e; ++g) {
        const Value v = out.key(g, static_cast<size_t>(spec.key));
        if (v.null) continue;
        if (spec.kind == AggKind::NthValue) {
          const int64_t rows = reinterpret_cast<const CountState*>(out.state(g) + weight_offset)->n;
          uint64_t at;
          if (nth_position(spec, static_cast<uint64_t>(rows), &at)) hg.values[g * nh + h] = v;
        } else {
          hg.values[g * nh + h] = spec.kind == AggKind::CountDistinct
                                      ? Value::of_int(1)
                                      : quantile_value(arg, v, v, quantile_position(1, spec.q_units, spec.q_scale));
        }
      }
    });
  }
  if (hg.spilled) return spilled_values(plan, hg, threads);
  for (size_t a = 0; a < hg.lists.size(); ++a) {
    const int key = static_cast<int>(plan.group_keys + a);
    const ColumnType arg = plan.scan.keys[static_cast<size_t>(key)].result;
    std::vector<ArgList>& lists = hg.lists[a];
    bool keys = true;
    for (const ArgList& l : lists) keys &= l.form() == ArgList::Form::Keys;
    const std::vector<size_t> hs = specs_over(plan, key);
    if (!keys) {
      source_values(plan, hs, arg, ListSource{lists}, ngroups, threads, hg.values);
      continue;
    }
    key_list_values(plan, hs, arg, lists, ngroups, threads, hg.values);
    if (arg.type != Type::String) continue;
    // A string value taken from its key (a count is not one) gets its bytes.
    for (size_t h : hs) {
      if (plan.holistic[h].result.type != Type::String) continue;
      for (size_t g = 0; g < ngroups; ++g) {
        Value& v = hg.values[g * nh + h];
        if (v.null) continue;
        char bytes[8];
        const uint32_t n = string_of_holistic_key(v, bytes);
        const StrRef s = hg.key_strings.add(bytes, n);
        v = Value::of_str(s.ptr, s.len);
      }
    }
  }
}

}  // namespace warpcsv
