#include "result/order.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/parallel.hpp"
#include "result/radix_sort.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/agg.hpp"
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
  const KeyRank k = key_rank(v, t);
  SortItem s{k.p0, k.p1, idx, k.len, k.rank, k.complete};
  if (desc && k.rank == 0) {
    s.p0 = ~s.p0;
    s.p1 = ~s.p1;
    if (t == Type::String) s.len = ~s.len;
  }
  return s;
}

// --- Packed codes ---------------------------------------------------------
//
// Each key becomes an integer code whose order is the key's (nulls last in
// both directions): integral values less the column's least, floats by
// their holistic keys (core/agg.hpp: order-preserving bits, -0.0 as 0.0,
// NaN last), strings of at most 16 bytes by their bytes, other strings by
// their rank among the column's distinct strings. The codes of all keys,
// most significant first, packed into 64 or 128 bits, sort with a radix sort
// by the bits that vary: q10's six keys take 113 bits. Keys that need more
// fall back to comparing.

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

// A string's first 16 bytes as a big-endian integer, zero-padded: for
// strings of at most 16 bytes without a NUL, in the strings' order.
uint128 padded_bytes(StrRef s) {
  unsigned char b[16] = {0};
  std::memcpy(b, s.ptr, std::min<uint32_t>(s.len, 16));
  uint128 x = 0;
  for (unsigned char c : b) x = (x << 8) | c;
  return x;
}

// One key column's codes: code(r) in [0, range], nulls range + 1.
struct ColumnCodes {
  Type type;
  bool desc;
  // Strings of at most 16 bytes without a NUL are coded by their bytes
  // (`direct`: no dictionary), shifted right by `shift` bytes when all have
  // one length; others by rank in the column's dictionary (str_code).
  bool direct = false;
  int shift = 0;
  bool has_null = false;
  bool any_value = false;
  uint128 least = 0;  // the least value as coded: integers, float order bits or string bytes
  uint128 range = 0;  // the greatest non-null code
  UninitVector<uint32_t> str_code;  // dictionary strings: each row's code
  int bits = 0;

  uint128 raw(const Value& v) const {
    if (type == Type::Float) return holistic_key(v, Type::Float);
    if (type == Type::String) return padded_bytes(v.s) >> (8 * shift);
    return static_cast<uint128>(v.i);
  }
  uint128 code(const Value& v, size_t r) const {
    if (type == Type::String && !direct) return str_code[r];
    if (v.null) return any_value ? range + 1 : 0;
    const uint128 c = raw(v) - least;
    return desc ? range - c : c;
  }
  void set_bits() { bits = bit_width(range + (has_null && any_value ? 1 : 0)); }
};

// What one pass over a part of the rows saw of a column.
struct Span {
  uint128 lo = 0, hi = 0;  // integers as two's complement, biased below
  uint32_t min_len = ~0u, max_len = 0;
  bool any = false, null = false, nul_byte = false;
};

// The least and greatest values of every column, on threads (integers are
// biased by 2^127 so that unsigned order is their order).
std::vector<Span> measure_spans(size_t n, const KeyRows& keys, int threads, const std::vector<ColumnCodes>& cols) {
  const size_t parts = range_parts(n, threads), ncols = cols.size();
  const uint128 bias = uint128{1} << 127;
  std::vector<std::vector<Span>> spans(ncols, std::vector<Span>(parts));
  parallel_for(parts, threads, [&](size_t p, int) {
    for (size_t r = n * p / parts, e = n * (p + 1) / parts; r < e; ++r)
      for (size_t k = 0; k < ncols; ++k) {
        const Value& v = keys.at(r, k);
        Span& s = spans[k][p];
        if (v.null || cols[k].type == Type::Null) {
          s.null = s.null || v.null;
          continue;
        }
        uint128 x;
        if (cols[k].type == Type::String) {
          s.min_len = std::min(s.min_len, v.s.len);
          s.max_len = std::max(s.max_len, v.s.len);
          s.nul_byte = s.nul_byte || std::memchr(v.s.ptr, 0, v.s.len) != nullptr;
          x = padded_bytes(v.s);
        } else if (cols[k].type == Type::Float) {
          x = holistic_key(v, Type::Float);
        } else {
          x = static_cast<uint128>(v.i) ^ bias;
        }
        s.lo = s.any ? std::min(s.lo, x) : x;
        s.hi = s.any ? std::max(s.hi, x) : x;
        s.any = true;
      }
  });
  std::vector<Span> all(ncols);
  for (size_t k = 0; k < ncols; ++k)
    for (const Span& s : spans[k]) {
      Span& a = all[k];
      a.null = a.null || s.null;
      if (!s.any) continue;
      a.lo = a.any ? std::min(a.lo, s.lo) : s.lo;
      a.hi = a.any ? std::max(a.hi, s.hi) : s.hi;
      a.min_len = std::min(a.min_len, s.min_len);
      a.max_len = std::max(a.max_len, s.max_len);
      a.nul_byte = a.nul_byte || s.nul_byte;
      a.any = true;
    }
  return all;
}

// Codes column k's strings by rank among its distinct strings: each part
// of the rows keeps a dictionary of its own, merged and sorted after.
void rank_strings(size_t n, const KeyRows& keys, size_t k, int threads, ColumnCodes& col) {
  const size_t parts = range_parts(n, threads);
  std::vector<LocalDict> dicts(parts);
  col.str_code.resize(n);
  parallel_for(parts, threads, [&](size_t p, int) {
    for (size_t r = n * p / parts, e = n * (p + 1) / parts; r < e; ++r) {
      const Value& v = keys.at(r, k);
      if (!v.null) col.str_code[r] = dicts[p].find_or_add(v.s);
    }
  });
  LocalDict merged;
  std::vector<std::vector<uint32_t>> to_rank(parts);
  for (size_t p = 0; p < parts; ++p)
    for (const StrRef& s : dicts[p].strings()) to_rank[p].push_back(merged.find_or_add(s));
  const std::vector<StrRef>& strs = merged.strings();
  std::vector<uint32_t> sorted(strs.size());
  std::iota(sorted.begin(), sorted.end(), 0u);
  parallel_stable_sort(sorted.begin(), sorted.end(),
                       [&](uint32_t a, uint32_t b) { return detail::cmp_bytes(strs[a], strs[b]) < 0; }, threads);
  std::vector<uint32_t> rank(strs.size());
  for (size_t i = 0; i < sorted.size(); ++i) rank[sorted[i]] = static_cast<uint32_t>(i);
  const uint32_t d = static_cast<uint32_t>(strs.size());
  for (auto& t : to_rank)
    for (uint32_t& x : t) x = col.desc ? d - 1 - rank[x] : rank[x];
  col.direct = false;
  col.any_value = d > 0;
  col.range = d ? d - 1 : 0;
  col.set_bits();
  parallel_for(parts, threads, [&](size_t p, int) {
    for (size_t r = n * p / parts, e = n * (p + 1) / parts; r < e; ++r)
      col.str_code[r] = keys.at(r, k).null ? d : to_rank[p][col.str_code[r]];
  });
}

// Every column's code range; returns the bits of all codes together, or -1
// when a column's codes alone need 128 bits. Short strings are coded by
// their bytes unless all codes then need more than 128 bits; then strings
// are ranked.
int measure_columns(size_t n, const KeyRows& keys, int threads, std::vector<ColumnCodes>& cols) {
  const std::vector<Span> spans = measure_spans(n, keys, threads, cols);
  const uint128 bias = uint128{1} << 127;
  int bits = 0;
  for (size_t k = 0; k < cols.size(); ++k) {
    ColumnCodes& col = cols[k];
    const Span& s = spans[k];
    col.has_null = s.null;
    col.any_value = s.any;
    if (!s.any) {
      col.set_bits();
      continue;
    }
    if (col.type == Type::String) {
      col.direct = s.max_len <= 16 && !s.nul_byte;
      if (col.direct) {
        col.shift = s.min_len == s.max_len ? static_cast<int>(16 - s.max_len) : 0;
        col.least = s.lo >> (8 * col.shift);
        col.range = (s.hi >> (8 * col.shift)) - col.least;
        col.direct = col.range < ~uint128{0} >> 1;
      }
      if (!col.direct) continue;  // ranked below
    } else {
      col.least = col.type == Type::Float ? s.lo : s.lo ^ bias;
      col.range = s.hi - s.lo;
      if (col.range >= ~uint128{0} >> 1) return -1;
    }
    col.set_bits();
    bits += col.bits;
  }
  const bool too_wide = bits > 128;
  for (size_t k = 0; k < cols.size(); ++k)
    if (cols[k].type == Type::String && spans[k].any && (!cols[k].direct || too_wide))
      rank_strings(n, keys, k, threads, cols[k]);
  bits = 0;
  for (const ColumnCodes& c : cols) bits += c.bits;
  return bits;
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
  const int bits = measure_columns(n, keys, threads, cols);
  if (bits < 0 || bits > 128) return {};
  auto code_of = [&](size_t r) {
    uint128 c = 0;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (cols[k].bits == 0) continue;
      c = (c << cols[k].bits) | cols[k].code(keys.at(r, k), r);
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

KeyRank key_rank(const Value& v, Type t) {
  KeyRank k{0, 0, 0, 0, true};
  if (v.null) {
    k.rank = 2;
  } else if (t == Type::String) {
    unsigned char b[16] = {0};
    std::memcpy(b, v.s.ptr, std::min<uint32_t>(v.s.len, 16));
    k.len = v.s.len;
    k.complete = v.s.len <= 16;
    for (int i = 0; i < 8; ++i) {
      k.p0 = (k.p0 << 8) | b[i];
      k.p1 = (k.p1 << 8) | b[8 + i];
    }
  } else if (t == Type::Float) {
    k.rank = 1;
  } else {
    const uint128 u = static_cast<uint128>(v.i) ^ (static_cast<uint128>(1) << 127);
    k.p0 = static_cast<uint64_t>(u >> 64);
    k.p1 = static_cast<uint64_t>(u);
  }
  return k;
}

int compare_ranked(const KeyRank& ra, const Value& a, const KeyRank& rb, const Value& b, Type t) {
  if (ra.rank != rb.rank) return ra.rank < rb.rank ? -1 : 1;
  if (ra.rank == 2) return 0;  // nulls tie
  if (ra.rank == 0) {
    if (ra.p0 != rb.p0) return ra.p0 < rb.p0 ? -1 : 1;
    if (ra.p1 != rb.p1) return ra.p1 < rb.p1 ? -1 : 1;
    if (ra.complete && rb.complete) return ra.len < rb.len ? -1 : ra.len > rb.len ? 1 : 0;
  }
  return compare_values(a, b, t);
}

int compare_sort_keys(const Value* a, const Value* b, const std::vector<Type>& types, const std::vector<bool>& desc) {
  for (size_t k = 0; k < types.size(); ++k) {
    const int c = compare_ranked(key_rank(a[k], types[k]), a[k], key_rank(b[k], types[k]), b[k], types[k]);
    if (c != 0) return desc[k] && !a[k].null && !b[k].null ? -c : c;  // nulls last either way
  }
  return 0;
}

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
