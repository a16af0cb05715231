#include "result/order.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "exec/parallel.hpp"
#include "result/radix_sort.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

namespace {

// An order-preserving 128-bit prefix of a sort key, so most comparisons
// touch only the (sequential) sort items instead of the rows' keys: strings
// by their first 16 bytes, integral types by their value. Floats get none.
struct SortItem {
  uint64_t p0, p1;
  uint32_t idx;
  uint32_t len;   // strings: byte length (ties of complete prefixes)
  uint8_t rank;   // 0: value with prefix, 1: value without prefix, 2: null (last)
  bool complete;  // the prefix is the whole value: equal prefixes (and lengths) mean equal
};

SortItem sort_item(const Value& v, Type t, bool desc, uint32_t idx) {
  SortItem s{0, 0, idx, 0, 0, true};
  if (v.null) {
    s.rank = 2;
    return s;
  }
  if (t == Type::String) {
    unsigned char b[16] = {0};
    std::memcpy(b, v.s.ptr, std::min<uint32_t>(v.s.len, 16));
    s.len = desc ? ~v.s.len : v.s.len;
    s.complete = v.s.len <= 16;
    for (int i = 0; i < 8; ++i) {
      s.p0 = (s.p0 << 8) | b[i];
      s.p1 = (s.p1 << 8) | b[8 + i];
    }
  } else if (t == Type::Float) {
    s.rank = 1;
    return s;
  } else {
    const uint128 u = static_cast<uint128>(v.i) ^ (static_cast<uint128>(1) << 127);
    s.p0 = static_cast<uint64_t>(u >> 64);
    s.p1 = static_cast<uint64_t>(u);
  }
  if (desc) {
    s.p0 = ~s.p0;
    s.p1 = ~s.p1;
  }
  return s;
}

// --- Packed codes ---------------------------------------------------------
//
// Each key becomes an integer code whose order is the key's (nulls last in
// both directions): integral values less the column's least, floats by their
// order-preserving bits, strings by their rank among the column's distinct
// strings. The codes of all keys, most significant first, packed into 64 or
// 128 bits, sort with a radix sort by the bits that vary: q10's six keys take
// 62 bits. Keys that need more fall back to comparing.

// A float's bits as an unsigned integer in the float's order: -0.0 is 0.0,
// every NaN alike and after +inf (compare_values' order).
uint64_t float_order_bits(double f) {
  if (f != f) return ~uint64_t{0};
  if (f == 0.0) f = 0.0;
  uint64_t b;
  std::memcpy(&b, &f, 8);
  return (b >> 63) ? ~b : b | (uint64_t{1} << 63);
}

int bit_width(uint128 v) {
  int b = 0;
  while (v) {
    ++b;
    v >>= 1;
  }
  return b;
}

// The distinct strings of one part of a column, each row's as an index.
class LocalDict {
 public:
  uint32_t find_or_add(StrRef s) {
    if (slots_.empty() || 2 * (strs_.size() + 1) > slots_.size()) grow();
    const uint64_t h = hash_bytes(s.ptr, s.len);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const uint32_t at = slots_[i];
      if (at == 0) {
        strs_.push_back(s);
        hashes_.push_back(h);
        slots_[i] = static_cast<uint32_t>(strs_.size());
        return slots_[i] - 1;
      }
      if (hashes_[at - 1] == h && detail::cmp_bytes(strs_[at - 1], s) == 0) return at - 1;
    }
  }
  const std::vector<StrRef>& strings() const { return strs_; }

 private:
  void grow() {
    slots_.assign(std::max<size_t>(1024, slots_.size() * 2), 0);
    mask_ = slots_.size() - 1;
    for (size_t j = 0; j < strs_.size(); ++j) {
      size_t i = hashes_[j] & mask_;
      while (slots_[i]) i = (i + 1) & mask_;
      slots_[i] = static_cast<uint32_t>(j + 1);
    }
  }
  std::vector<uint32_t> slots_;  // index + 1 into strs_; 0 is empty
  std::vector<StrRef> strs_;
  std::vector<uint64_t> hashes_;
  size_t mask_ = 0;
};

// One key column's codes: code(r) in [0, span].
struct ColumnCodes {
  Type type;
  bool desc;
  bool has_null = false;
  int128 min = 0;                  // integral: the least value
  uint64_t fmin = 0;               // floats: the least order bits
  uint128 range = 0;               // the greatest non-null code
  bool any_value = false;
  UninitVector<uint32_t> str_code;  // strings: each row's rank (desc: reversed)
  int bits = 0;

  uint128 code(const Value& v) const {
    if (v.null) return any_value ? range + 1 : 0;
    uint128 c;
    if (type == Type::String) return 0;  // str_code holds them
    if (type == Type::Float) c = float_order_bits(v.f) - fmin;
    else c = static_cast<uint128>(v.i) - static_cast<uint128>(min);
    return desc ? range - c : c;
  }
};

// Computes every column's codes' range (and strings' ranks) in one pass over
// the rows on threads; false when a column's codes need 128 bits or more.
bool measure_columns(size_t n, const KeyRows& keys, int threads, std::vector<ColumnCodes>& cols) {
  const size_t parts = range_parts(n, threads), ncols = cols.size();
  struct Span {
    int128 lo = 0, hi = 0;
    uint64_t flo = 0, fhi = 0;
    bool any = false, null = false;
  };
  std::vector<std::vector<Span>> spans(ncols, std::vector<Span>(parts));
  std::vector<std::vector<LocalDict>> dicts(ncols);
  for (size_t k = 0; k < ncols; ++k)
    if (cols[k].type == Type::String) {
      dicts[k].resize(parts);
      cols[k].str_code.resize(n);
    }
  parallel_for(parts, threads, [&](size_t p, int) {
    for (size_t r = n * p / parts, e = n * (p + 1) / parts; r < e; ++r)
      for (size_t k = 0; k < ncols; ++k) {
        const Value& v = keys.at(r, k);
        Span& s = spans[k][p];
        if (v.null) {
          s.null = true;
          continue;
        }
        switch (cols[k].type) {
          case Type::Null: break;
          case Type::String: cols[k].str_code[r] = dicts[k][p].find_or_add(v.s); break;
          case Type::Float: {
            const uint64_t b = float_order_bits(v.f);
            s.flo = s.any ? std::min(s.flo, b) : b;
            s.fhi = s.any ? std::max(s.fhi, b) : b;
            s.any = true;
            break;
          }
          default:
            s.lo = s.any ? std::min(s.lo, v.i) : v.i;
            s.hi = s.any ? std::max(s.hi, v.i) : v.i;
            s.any = true;
        }
      }
  });
  // Strings: one dictionary of the parts' strings, sorted, turns each part's
  // indexes into ranks.
  std::vector<std::vector<std::vector<uint32_t>>> to_rank(ncols);
  for (size_t k = 0; k < ncols; ++k) {
    ColumnCodes& col = cols[k];
    Span all;
    for (const Span& s : spans[k]) {
      all.null = all.null || s.null;
      if (!s.any) continue;
      all.lo = all.any ? std::min(all.lo, s.lo) : s.lo;
      all.hi = all.any ? std::max(all.hi, s.hi) : s.hi;
      all.flo = all.any ? std::min(all.flo, s.flo) : s.flo;
      all.fhi = all.any ? std::max(all.fhi, s.fhi) : s.fhi;
      all.any = true;
    }
    col.has_null = all.null;
    if (col.type == Type::String) {
      LocalDict merged;
      to_rank[k].resize(parts);
      for (size_t p = 0; p < parts; ++p)
        for (const StrRef& str : dicts[k][p].strings()) to_rank[k][p].push_back(merged.find_or_add(str));
      const std::vector<StrRef>& strs = merged.strings();
      std::vector<uint32_t> sorted(strs.size());
      std::iota(sorted.begin(), sorted.end(), 0u);
      parallel_stable_sort(sorted.begin(), sorted.end(),
                           [&](uint32_t a, uint32_t b) { return detail::cmp_bytes(strs[a], strs[b]) < 0; }, threads);
      std::vector<uint32_t> rank(strs.size());
      for (size_t i = 0; i < sorted.size(); ++i) rank[sorted[i]] = static_cast<uint32_t>(i);
      const uint32_t d = static_cast<uint32_t>(strs.size());
      for (auto& t : to_rank[k])
        for (uint32_t& x : t) x = col.desc ? d - 1 - rank[x] : rank[x];
      col.any_value = d > 0;
      col.range = d ? d - 1 : 0;
    } else if (col.type != Type::Null) {
      col.any_value = all.any;
      col.min = all.lo;
      col.fmin = all.flo;
      col.range = col.type == Type::Float ? uint128{all.fhi - all.flo}
                                          : static_cast<uint128>(all.hi) - static_cast<uint128>(all.lo);
    }
    if (col.range >= ~uint128{0} >> 1) return false;
    col.bits = bit_width(col.range + (col.has_null && col.any_value ? 1 : 0));
  }
  parallel_for(parts, threads, [&](size_t p, int) {
    for (size_t r = n * p / parts, e = n * (p + 1) / parts; r < e; ++r)
      for (size_t k = 0; k < ncols; ++k) {
        if (cols[k].type != Type::String) continue;
        const uint32_t d = static_cast<uint32_t>(cols[k].range + (cols[k].any_value ? 1 : 0));
        cols[k].str_code[r] = keys.at(r, k).null ? d : to_rank[k][p][cols[k].str_code[r]];
      }
  });
  return true;
}

struct NarrowItem {
  uint64_t key;
  uint32_t idx;
};
struct WideItem {
  uint64_t lo, hi;
  uint32_t idx;
};

// The order by packed codes; empty when the keys need more than 128 bits.
std::vector<uint32_t> order_by_codes(size_t n, const KeyRows& keys, const std::vector<Type>& types,
                                     const std::vector<bool>& desc, int threads) {
  std::vector<ColumnCodes> cols(types.size());
  for (size_t k = 0; k < types.size(); ++k) {
    cols[k].type = types[k];
    cols[k].desc = desc[k];
  }
  if (!measure_columns(n, keys, threads, cols)) return {};
  int bits = 0;
  for (const ColumnCodes& c : cols) bits += c.bits;
  if (bits > 128) return {};
  auto code_of = [&](size_t r) {
    uint128 c = 0;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k].bits == 0) continue;
      c = (c << cols[k].bits) |
          (cols[k].type == Type::String ? uint128{cols[k].str_code[r]} : cols[k].code(keys.at(r, k)));
    }
    return c;
  };
  std::vector<uint32_t> order(n);
  if (bits <= 64) {
    UninitVector<NarrowItem> items(n), spare;
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) items[r] = NarrowItem{static_cast<uint64_t>(code_of(r)), static_cast<uint32_t>(r)};
    });
    for (auto& c : cols) UninitVector<uint32_t>().swap(c.str_code);
    radix_sort(items, spare, bits, threads,
               [](const NarrowItem& it, int shift) { return static_cast<uint8_t>(it.key >> shift); });
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) order[i] = items[i].idx;
    });
  } else {
    UninitVector<WideItem> items(n), spare;
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t r = b; r < e; ++r) {
        const uint128 c = code_of(r);
        items[r] = WideItem{static_cast<uint64_t>(c), static_cast<uint64_t>(c >> 64), static_cast<uint32_t>(r)};
      }
    });
    for (auto& c : cols) UninitVector<uint32_t>().swap(c.str_code);
    radix_sort(items, spare, bits, threads, [](const WideItem& it, int shift) {
      return static_cast<uint8_t>(shift < 64 ? it.lo >> shift : it.hi >> (shift - 64));
    });
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) order[i] = items[i].idx;
    });
  }
  return order;
}

// One stable pass per key, the last key first (least significant digit
// first, like a radix sort), so each pass compares one key's prefix in
// sequential memory and looks at the rows only when two prefixes tie.
std::vector<uint32_t> order_by_comparing(size_t n, const KeyRows& keys, const std::vector<Type>& types,
                                         const std::vector<bool>& desc, int threads) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  UninitVector<SortItem> items(n);
  for (size_t k = types.size(); k-- > 0;) {
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) items[i] = sort_item(keys.at(order[i], k), types[k], desc[k], order[i]);
    });
    const Type type = types[k];
    const bool down = desc[k];
    auto less = [&](const SortItem& a, const SortItem& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      if (a.rank == 2) return false;  // nulls tie
      if (a.rank == 0) {
        if (a.p0 != b.p0 || a.p1 != b.p1) return a.p0 != b.p0 ? a.p0 < b.p0 : a.p1 < b.p1;
        // Equal prefixes of whole values: the shorter string first, else equal.
        if (a.complete && b.complete) return a.len < b.len;
      }
      const int c = compare_values(keys.at(a.idx, k), keys.at(b.idx, k), type);
      return down ? c > 0 : c < 0;
    };
    parallel_stable_sort(items.begin(), items.end(), less, threads);
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) order[i] = items[i].idx;
    });
  }
  return order;
}

}  // namespace

std::vector<uint32_t> sort_order(size_t n, const KeyRows& keys, const std::vector<Type>& types,
                                 const std::vector<bool>& desc, int threads, SortMethod method) {
  if (n < 2 || types.empty()) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    return order;
  }
  if (method != SortMethod::Comparing) {
    std::vector<uint32_t> order = order_by_codes(n, keys, types, desc, threads);
    if (!order.empty()) return order;
  }
  return order_by_comparing(n, keys, types, desc, threads);
}

}  // namespace warpcsv
