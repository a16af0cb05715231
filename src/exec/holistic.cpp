#include "exec/holistic.hpp"

#include <algorithm>
#include <cmath>

#include "exec/parallel.hpp"
#include "warpcsv/core/int128.hpp"

namespace warpcsv {

namespace {

// A number value as the nearest double.
double to_double(const Value& v, Type t, int scale) {
  return t == Type::Float ? v.f : decimal_to_double(v.i, scale);
}

bool continuous(Type t) { return t == Type::Int || t == Type::Decimal || t == Type::Float || t == Type::Bool; }

// Where holistic values come from: `size()` sources (the scan's groups, or
// the CPU executor's rows), source i in agg group group(i), with holistic
// argument k value(i, k), standing for weight(i) rows.
struct ScanGroupSource {
  const GroupTable& in;
  const std::vector<uint32_t>& group_of;
  const std::vector<int64_t>& weights;
  size_t size() const { return in.size(); }
  uint32_t group(size_t i) const { return group_of[i]; }
  const Value& value(size_t i, int k) const { return in.keys(i)[k]; }
  uint64_t weight(size_t i) const { return static_cast<uint64_t>(weights[i]); }
};
struct RowSource {
  const HolisticRows& rows;
  const GroupTable& groups;  // the agg groups: an argument that is an agg key is read there
  size_t group_keys;
  size_t size() const { return rows.group.size(); }
  uint32_t group(size_t i) const { return rows.group[i]; }
  const Value& value(size_t i, int k) const {
    const size_t key = static_cast<size_t>(k);
    return key < group_keys ? groups.keys(rows.group[i])[key] : rows.args[i * rows.stride + key - group_keys];
  }
  uint64_t weight(size_t i) const { return rows.weight.empty() ? 1 : rows.weight[i]; }
};

// A source's argument in a group's bucket: an order-preserving prefix of
// the value (sort_prefix), which source it is, and the rows it stands for.
struct BucketItem {
  uint64_t prefix;
  uint64_t source;
  uint64_t weight;
};

// The value of `spec` over one group: its bucket's items it[0..n), ascending
// by argument `k` (nulls left out). `whole`: equal prefixes are equal values.
template <class Source>
Value holistic_value(const HolisticSpec& spec, const Source& src, int k, ColumnType arg, const BucketItem* it,
                     size_t n, bool whole) {
  auto value = [&](size_t i) -> const Value& { return src.value(it[i].source, k); };
  if (spec.kind == AggKind::CountDistinct) {
    int64_t distinct = n > 0;
    for (size_t i = 1; i < n; ++i)
      distinct += it[i - 1].prefix != it[i].prefix || (!whole && !key_equal(value(i - 1), value(i), arg.type));
    return Value::of_int(distinct);
  }
  uint64_t rows = 0;
  for (size_t i = 0; i < n; ++i) rows += it[i].weight;
  if (rows == 0) return Value::make_null();
  const QuantilePosition pos = quantile_position(rows, spec.q_units, spec.q_scale);
  // The values at sorted positions pos.lo and pos.lo + 1.
  size_t i = 0;
  uint64_t before = 0;  // rows of the values before i
  while (before + it[i].weight <= pos.lo) before += it[i++].weight;
  const Value& lo = value(i);
  if (!continuous(arg.type)) return lo;
  const bool next_same = pos.lo + 1 < before + it[i].weight || i + 1 == n;
  const Value& hi = next_same ? lo : value(i + 1);
  return Value::of_float(interpolate(lo, hi, arg.type, arg.scale, pos));
}

// An order-preserving 64-bit prefix of a value of type t: all of an int,
// date, timestamp, bool or float (agg_compare's order, but -0 is 0: they are
// one value here); the high half of every int and decimal when some are
// `wide` (beyond 64 bits: mixing whole values with high halves misorders
// them); a string's 8 bytes from `skip` (a prefix every value shares: ids
// like id0000002644 differ only after it).
uint64_t sort_prefix(const Value& v, Type t, uint32_t skip, bool wide) {
  constexpr uint64_t kSign = 1ull << 63;
  if (t == Type::Float) return static_cast<uint64_t>(agg_float_key(v.f == 0 ? 0.0 : v.f)) ^ kSign;
  if (t == Type::String) {
    uint64_t p = 0;
    for (uint32_t i = skip; i < skip + 8; ++i) p = (p << 8) | (i < v.s.len ? static_cast<uint8_t>(v.s.ptr[i]) : 0u);
    return p;
  }
  if (wide) return static_cast<uint64_t>(static_cast<uint128>(v.i) >> 64) ^ kSign;
  return static_cast<uint64_t>(static_cast<int64_t>(v.i)) ^ kSign;
}

// How many first bytes a and b share, given that they share `from`.
uint32_t shared_prefix(StrRef a, StrRef b, uint32_t from = 0) {
  uint32_t i = std::min({from, a.len, b.len});
  const uint32_t n = std::min(a.len, b.len);
  while (i < n && a.ptr[i] == b.ptr[i]) ++i;
  return i;
}

// The sources whose argument `k` is not null, in one bucket per agg group
// (group g's items are items[start[g], start[g + 1])), in source order.
// Counted, then scattered, on threads: a stable sort of every item by
// (group, value) took 1.1 of 2.4 s for 10M rows in 10k groups.
struct Buckets {
  std::vector<BucketItem> items;
  std::vector<uint64_t> start;
  bool whole = true;  // every prefix is the whole value: strings of at most 8 bytes past the
                      // shared prefix (no NUL gets into a value), floats, numbers that fit 64 bits
  uint32_t skip = 0;  // strings: the first bytes every value shares, left out of the prefixes
};
template <class Source>
Buckets bucket_by_group(const Source& src, int k, Type t, size_t ngroups, int threads) {
  const size_t n = src.size();
  // Ranges count their own items per group, so that each scatters on its own:
  // ngroups counters each, which pays while they are fewer than the items.
  const size_t ranges = ngroups * range_parts(n, threads) <= n ? range_parts(n, threads) : 1;
  auto range_begin = [&](size_t r) { return n * r / ranges; };
  std::vector<std::vector<uint64_t>> cursor(ranges, std::vector<uint64_t>(ngroups, 0));
  struct RangeFacts {
    bool not_whole = false;  // a number beyond 64 bits
    const Value* first = nullptr;  // strings: the first, the bytes all share with it, the longest
    uint32_t shared = UINT32_MAX, longest = 0;
  };
  std::vector<RangeFacts> facts(ranges);
  parallel_for(ranges, threads, [&](size_t r, int) {
    std::vector<uint64_t>& count = cursor[r];
    RangeFacts& f = facts[r];
    for (size_t i = range_begin(r); i < range_begin(r + 1); ++i) {
      const Value& v = src.value(i, k);
      if (v.null) continue;
      ++count[src.group(i)];
      if (t == Type::String) {
        if (!f.first) f.first = &v;
        f.shared = std::min(f.shared, shared_prefix(f.first->s, v.s));
        f.longest = std::max(f.longest, v.s.len);
      } else if (t != Type::Float && (v.i < INT64_MIN || v.i > INT64_MAX)) {
        f.not_whole = true;
      }
    }
  });
  Buckets b;
  uint32_t skip = UINT32_MAX, longest = 0;
  const Value* first = nullptr;
  for (const RangeFacts& f : facts) {
    b.whole &= !f.not_whole;
    if (!f.first) continue;
    if (!first) first = f.first;
    skip = std::min({skip, f.shared, shared_prefix(first->s, f.first->s)});
    longest = std::max(longest, f.longest);
  }
  if (t == Type::String) {
    b.skip = first ? skip : 0;
    b.whole = longest <= static_cast<uint64_t>(b.skip) + 8;
  }
  b.start.assign(ngroups + 1, 0);
  uint64_t at = 0;
  for (size_t g = 0; g < ngroups; ++g) {  // group-major: each range's items of g follow the previous range's
    b.start[g] = at;
    for (size_t r = 0; r < ranges; ++r) {
      const uint64_t c = cursor[r][g];
      cursor[r][g] = at;
      at += c;
    }
  }
  b.start[ngroups] = at;
  b.items.resize(at);
  parallel_for(ranges, threads, [&](size_t r, int) {
    std::vector<uint64_t>& next = cursor[r];
    for (size_t i = range_begin(r); i < range_begin(r + 1); ++i) {
      const Value& v = src.value(i, k);
      if (!v.null) b.items[next[src.group(i)]++] = BucketItem{sort_prefix(v, t, b.skip, !b.whole), i, src.weight(i)};
    }
  });
  return b;
}

// Sorts a bucket's items by value (equal values may end in any order).
// Prefixes decide where they differ. Strings that share theirs are keyed
// again by their next 8 bytes, run by run: comparing through the strings
// costs two cache misses each, and 5M URLs sharing their first 8 bytes took
// 24 s. Wide decimals that share theirs compare their values.
template <class Source>
struct BucketSort {
  const Source& src;
  int k;
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
        return agg_compare(src.value(x.source, k), src.value(y.source, k), t) < 0;
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
        const StrRef first = src.value(r.at[a].source, k).s;
        uint32_t shared = first.len, longest = 0;
        for (size_t i = a + 1; i < e; ++i) {
          const StrRef v = src.value(r.at[i].source, k).s;
          shared = std::min(shared, shared_prefix(first, v, r.shared + 8));
          longest = std::max(longest, v.len);
        }
        if (std::max(longest, first.len) == shared) continue;  // all equal
        for (size_t i = a; i < e; ++i) r.at[i].prefix = sort_prefix(src.value(r.at[i].source, k), t, shared, false);
        todo.push_back(Run{r.at + a, e - a, shared});
      }
    }
  }
};

// Each of `ngroups` agg groups' holistic aggregates (rows of
// plan.holistic.size() values) from `src`.
template <class Source>
std::vector<Value> holistic_values(const Plan& plan, const Source& src, size_t ngroups, int threads) {
  const size_t nh = plan.holistic.size();
  std::vector<Value> values(ngroups * nh, Value::make_null());
  for (size_t h = 0; h < nh; ++h)
    if (plan.holistic[h].kind == AggKind::CountDistinct)
      for (size_t o = 0; o < ngroups; ++o) values[o * nh + h] = Value::of_int(0);
  std::vector<bool> done(plan.scan.keys.size(), false);
  for (const HolisticSpec& spec : plan.holistic) {  // each argument once, for the aggregates over it
    const int k = spec.key;
    if (done[static_cast<size_t>(k)]) continue;
    done[static_cast<size_t>(k)] = true;
    const ColumnType arg = plan.scan.keys[static_cast<size_t>(k)].result;
    Buckets b = bucket_by_group(src, k, arg.type, ngroups, threads);
    // A bucket of more than a thread's share is sorted on every thread, the
    // rest on one thread each.
    const uint64_t big = std::max<uint64_t>(1 << 16, b.items.size() / static_cast<uint64_t>(std::max(threads, 1)));
    const BucketSort<Source> sorter{src, k, arg.type, b.whole, b.skip, big, threads};
    for (size_t g = 0; g < ngroups; ++g)
      if (b.start[g + 1] - b.start[g] > big) sorter.sort(b.items.data() + b.start[g], b.start[g + 1] - b.start[g]);
    constexpr size_t kGroupsPerTask = 64;
    parallel_for((ngroups + kGroupsPerTask - 1) / kGroupsPerTask, threads, [&](size_t task, int) {
      for (size_t o = task * kGroupsPerTask; o < std::min(ngroups, (task + 1) * kGroupsPerTask); ++o) {
        BucketItem* first = b.items.data() + b.start[o];
        const size_t n = b.start[o + 1] - b.start[o];
        if (n <= big) sorter.sort(first, n);
        for (size_t h = 0; h < nh; ++h)
          if (plan.holistic[h].key == k)
            values[o * nh + h] = holistic_value(plan.holistic[h], src, k, arg, first, n, b.whole);
      }
    });
  }
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
    for (size_t g = b; g < e; ++g) {
      hash[g] = out.hash_keys(in.keys(g));
      part_of[g] = static_cast<uint16_t>(((hash[g] * 0x9e3779b97f4a7c15ull) >> 32) % nparts);
      weight[g] = reinterpret_cast<const CountState*>(in.state(g) + weight_offset)->n;
    }
  });
  std::vector<GroupTable> parts;
  for (size_t p = 0; p < nparts; ++p) parts.emplace_back(r.layout.get());
  parallel_for(nparts, threads, [&](size_t p, int) {
    GroupTable& t = parts[p];
    for (size_t g = 0; g < n; ++g) {
      if (part_of[g] != p) continue;
      char* dst = t.find_or_insert(in.keys(g), hash[g]);
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
  r.values = holistic_values(plan, ScanGroupSource{in, group_of, weight}, out.size(), threads);
  return r;
}

void HolisticRows::compact(const std::vector<Type>& types) {
  const size_t n = group.size();
  auto arg = [&](size_t i, size_t a) -> const Value& { return args[i * stride + a]; };
  // Open addressing over the rows kept so far (index + 1; 0 is empty).
  size_t cap = 64;
  while (cap < 2 * n) cap *= 2;
  std::vector<uint32_t> slot(cap, 0);
  std::vector<uint32_t> g2;
  std::vector<Value> a2;
  std::vector<uint64_t> w2;
  for (size_t i = 0; i < n; ++i) {
    uint64_t h = hash_mix(group[i] + 0x9e3779b97f4a7c15ull);
    for (size_t a = 0; a < stride; ++a) h = hash_combine(h, hash_value(arg(i, a), types[a]));
    const uint64_t w = weight.empty() ? 1 : weight[i];
    size_t s = h & (cap - 1);
    for (;; s = (s + 1) & (cap - 1)) {
      if (slot[s] == 0) {
        slot[s] = static_cast<uint32_t>(g2.size() + 1);
        g2.push_back(group[i]);
        a2.insert(a2.end(), args.begin() + static_cast<std::ptrdiff_t>(i * stride),
                  args.begin() + static_cast<std::ptrdiff_t>((i + 1) * stride));
        w2.push_back(w);
        break;
      }
      const size_t j = slot[s] - 1;
      bool same = g2[j] == group[i];
      for (size_t a = 0; same && a < stride; ++a) same = key_equal(a2[j * stride + a], arg(i, a), types[a]);
      if (same) {
        w2[j] += w;
        break;
      }
    }
  }
  next_compaction = g2.size() * 2 <= n ? std::max(kFirstCompaction, 2 * g2.size()) : SIZE_MAX;
  group.swap(g2);
  args.swap(a2);
  weight.swap(w2);
}

void finish_holistic_rows(const Plan& plan, HolisticGroups& hg, int threads) {
  GroupTable& out = *hg.groups;
  out.ensure_group_without_keys();
  hg.values = holistic_values(plan, RowSource{hg.rows, out, plan.group_keys}, out.size(), threads);
}

void HolisticRows::absorb(HolisticRows&& other) {
  if (group.empty()) {  // the first: taken over, not copied
    group.swap(other.group);
    args.swap(other.args);
    weight.swap(other.weight);
  } else {
    if (weight.empty() != other.weight.empty()) {  // one of them has weights: both get them
      if (weight.empty()) weight.assign(group.size(), 1);
      else other.weight.assign(other.group.size(), 1);
    }
    group.insert(group.end(), other.group.begin(), other.group.end());
    args.insert(args.end(), other.args.begin(), other.args.end());
    weight.insert(weight.end(), other.weight.begin(), other.weight.end());
  }
  other.weight.clear();
  other.weight.shrink_to_fit();
  strings.absorb(std::move(other.strings));
  other.group.clear();
  other.group.shrink_to_fit();
  other.args.clear();
  other.args.shrink_to_fit();
}

}  // namespace warpcsv
