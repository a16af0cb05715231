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

// The value of `spec` over one group: sources at[0..n), ascending by
// argument `k` (nulls left out).
template <class Source>
Value holistic_value(const HolisticSpec& spec, const Source& src, int k, ColumnType arg, const uint64_t* at,
                     size_t n) {
  auto value = [&](size_t i) -> const Value& { return src.value(at[i], k); };
  if (spec.kind == AggKind::CountDistinct) {
    int64_t distinct = 0;
    for (size_t i = 0; i < n; ++i) distinct += i == 0 || !key_equal(value(i - 1), value(i), arg.type);
    return Value::of_int(distinct);
  }
  uint64_t rows = 0;
  for (size_t i = 0; i < n; ++i) rows += src.weight(at[i]);
  if (rows == 0) return Value::make_null();
  const QuantilePosition pos = quantile_position(rows, spec.q_units, spec.q_scale);
  // The values at sorted positions pos.lo and pos.lo + 1.
  size_t i = 0;
  uint64_t before = 0;  // rows of the values before i
  while (before + src.weight(at[i]) <= pos.lo) before += src.weight(at[i++]);
  const Value& lo = value(i);
  if (!continuous(arg.type)) return lo;
  const bool next_same = pos.lo + 1 < before + src.weight(at[i]) || i + 1 == n;
  const Value& hi = next_same ? lo : value(i + 1);
  return Value::of_float(interpolate(lo, hi, arg.type, arg.scale, pos));
}

// An order-preserving 64-bit prefix of a value of type t: all of an int,
// date, timestamp, bool or float (agg_compare's order), the high half of a
// wide decimal, the first 8 bytes of a string.
uint64_t sort_prefix(const Value& v, Type t) {
  constexpr uint64_t kSign = 1ull << 63;
  if (t == Type::Float) return static_cast<uint64_t>(agg_float_key(v.f)) ^ kSign;
  if (t == Type::String) {
    uint64_t p = 0;
    for (uint32_t i = 0; i < 8; ++i) p = (p << 8) | (i < v.s.len ? static_cast<uint8_t>(v.s.ptr[i]) : 0u);
    return p;
  }
  if (v.i >= INT64_MIN && v.i <= INT64_MAX) return static_cast<uint64_t>(static_cast<int64_t>(v.i)) ^ kSign;
  return static_cast<uint64_t>(static_cast<uint128>(v.i) >> 64) ^ kSign;  // beyond int64: the high half orders it
}

// The sources whose argument `k` is not null, ordered by their agg group,
// then by the argument (agg_compare's order). Items carry a 64-bit prefix of
// the value, so most comparisons touch no value: comparing through the scan
// groups' blocks took 3.8 of 4.6 s for 10M of them, and 10M strings 6 s.
template <class Source>
std::vector<uint64_t> sorted_by_group_and_value(const Source& src, int k, Type t, int threads) {
  struct Item {
    uint32_t group;
    uint64_t prefix;
    uint64_t source;
  };
  std::vector<Item> items;
  items.reserve(src.size());
  // Whether every prefix is the whole value, so that equal prefixes are equal
  // values: strings of at most 8 bytes (no NUL gets into a value), ints that fit 64 bits.
  bool whole = true;
  for (size_t i = 0; i < src.size(); ++i) {
    const Value& v = src.value(i, k);
    if (v.null) continue;
    if (t == Type::String ? v.s.len > 8 : t != Type::Float && (v.i < INT64_MIN || v.i > INT64_MAX)) whole = false;
    items.push_back(Item{src.group(i), sort_prefix(v, t), i});
  }
  parallel_stable_sort(
      items.begin(), items.end(),
      [&](const Item& a, const Item& b) {
        if (a.group != b.group) return a.group < b.group;
        if (a.prefix != b.prefix || whole) return a.prefix < b.prefix;
        return agg_compare(src.value(a.source, k), src.value(b.source, k), t) < 0;
      },
      threads);
  std::vector<uint64_t> order(items.size());
  for (size_t i = 0; i < items.size(); ++i) order[i] = items[i].source;
  return order;
}

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
    const std::vector<uint64_t> order = sorted_by_group_and_value(src, k, arg.type, threads);
    // Runs of one agg group, on threads: a range's first run may have begun before it.
    parallel_ranges(order.size(), threads, [&](size_t b, size_t e) {
      while (b > 0 && b < e && src.group(order[b]) == src.group(order[b - 1])) ++b;
      while (b < e) {
        const uint32_t o = src.group(order[b]);
        size_t end = b;
        while (end < order.size() && src.group(order[end]) == o) ++end;
        for (size_t h = 0; h < nh; ++h)
          if (plan.holistic[h].key == k)
            values[o * nh + h] = holistic_value(plan.holistic[h], src, k, arg, order.data() + b, end - b);
        b = end;
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

bool holistic_rows_pay(const Plan& plan) {
  for (const HolisticSpec& h : plan.holistic)
    if (plan.scan.keys[static_cast<size_t>(h.key)].result.type == Type::String) return false;
  return true;
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
