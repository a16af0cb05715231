// Lookup joins: a lookup file's rows as flat arrays with a hash index of
// their keys, probed per row, and the loop over a row's joined copies. The
// same code runs on CPU threads and in the GPU's row kernel.
#pragma once
#include <cstdint>

#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/program.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

constexpr int kMaxJoinKeys = 8;   // keys of one join
constexpr int kMaxScanJoins = 8;  // joins before the scan ends
constexpr uint32_t kNoLookupRow = 0xffffffffu;

// A lookup table. Row r's values are cells[r * width, (r + 1) * width): its
// keys (converted to the join's key types) first, then the columns the
// joined rows take. The buckets hold, per distinct key, its first row in file
// order (a LookupBucket); `next` chains the rows of one key in file order.
// They are kLookupParts parts of 2^bucket_bits buckets, a key's part the top
// bits of its hash, so that threads build the parts apart.
constexpr int kLookupPartBits = 6;
constexpr uint32_t kLookupParts = 1u << kLookupPartBits;
struct LookupView {
  const Value* cells;
  const uint32_t* next;
  const uint64_t* buckets;  // LookupBuckets
  uint32_t bucket_bits;  // per part
  uint32_t width;
  uint32_t nkeys;
};

WCSV_HD inline uint32_t lookup_part(uint64_t h) { return static_cast<uint32_t>(h >> (64 - kLookupPartBits)); }

// A bucket: its key's first row (low 32 bits; kNoLookupRow when empty),
// whether the key has more rows (bit 63), and 31 bits of the key's hash
// (bits 32-62), so that a probe reads no row of another key but by chance
// and a key of one row needs no `next`.
using LookupBucket = uint64_t;
constexpr LookupBucket kEmptyBucket = kNoLookupRow;
constexpr LookupBucket kBucketHasMore = 1ull << 63;
WCSV_HD inline uint32_t bucket_row(LookupBucket b) { return static_cast<uint32_t>(b); }
WCSV_HD inline LookupBucket bucket_tag(uint64_t h) { return (h << 1 >> 33) << 32; }
WCSV_HD inline bool bucket_matches(LookupBucket b, uint64_t h) {
  return bucket_row(b) != kNoLookupRow && (b & ~kBucketHasMore & ~uint64_t{0xffffffffu}) == bucket_tag(h);
}
WCSV_HD inline LookupBucket make_bucket(uint32_t row, uint64_t h, bool more) {
  return row | bucket_tag(h) | (more ? kBucketHasMore : 0);
}

WCSV_HD inline uint64_t lookup_hash(const Value* keys, const Type* types, uint32_t n) {
  uint64_t h = 0x7a3c5e1b9d2f4861ull;
  for (uint32_t k = 0; k < n; ++k) h = hash_combine(h, hash_value(keys[k], types[k]));
  return h;
}

// The bucket where the probe for hash h starts.
WCSV_HD inline const LookupBucket* home_bucket(const LookupView& t, uint64_t h) {
  const uint32_t mask = (1u << t.bucket_bits) - 1;
  return t.buckets + (static_cast<uint64_t>(lookup_part(h)) << t.bucket_bits) + (static_cast<uint32_t>(h) & mask);
}

// The bucket of the key equal to `keys` (hash h), its row the first in file
// order, or kEmptyBucket. A null key matches nothing, as in SQL.
WCSV_HD inline LookupBucket lookup_first(const LookupView& t, const Value* keys, const Type* types, uint64_t h) {
  for (uint32_t k = 0; k < t.nkeys; ++k)
    if (keys[k].null) return kEmptyBucket;
  const uint32_t mask = (1u << t.bucket_bits) - 1;
  const LookupBucket* buckets = t.buckets + (static_cast<uint64_t>(lookup_part(h)) << t.bucket_bits);
  for (uint32_t b = static_cast<uint32_t>(h) & mask;; b = (b + 1) & mask) {
    const LookupBucket bucket = buckets[b];
    if (bucket_row(bucket) == kNoLookupRow) return kEmptyBucket;
    if (!bucket_matches(bucket, h)) continue;
    const Value* cells = t.cells + static_cast<uint64_t>(bucket_row(bucket)) * t.width;
    bool same = true;
    for (uint32_t k = 0; k < t.nkeys && same; ++k) same = key_equal(cells[k], keys[k], types[k]);
    if (same) return bucket;
  }
}

// One join as a scan runs it: its key programs over the row's slots, and the
// slots its lookup rows fill.
struct JoinView {
  LookupView table;
  ProgramView keys[kMaxJoinKeys];
  Type key_types[kMaxJoinKeys];
  int32_t first_slot;
  int32_t width;  // slots filled: table.width - table.nkeys
  bool left;
};

// Sets the join's slots from lookup row r (kNoLookupRow: nulls, a left join's unmatched row).
WCSV_HD inline void fill_join_slots(const JoinView& j, Value* slots, uint32_t r) {
  const Value* cells = r == kNoLookupRow ? nullptr : j.table.cells + static_cast<uint64_t>(r) * j.table.width + j.table.nkeys;
  for (int32_t c = 0; c < j.width; ++c) slots[j.first_slot + c] = cells ? cells[c] : Value::make_null();
}

// The bucket of join `j`'s key that matches the row in `slots`
// (kEmptyBucket: none); sets ctx.status when a key fails.
WCSV_HD inline LookupBucket probe_join(const JoinView& j, const Value* slots, EvalContext& ctx) {
  Value keys[kMaxJoinKeys];
  const uint32_t n = j.table.nkeys, scratch_used = ctx.scratch_used;
  for (uint32_t k = 0; k < n; ++k) keys[k] = eval_program(j.keys[k], slots, ctx);
  if (ctx.status != EvalStatus::Ok) return kEmptyBucket;
  const LookupBucket b = lookup_first(j.table, keys, j.key_types, lookup_hash(keys, j.key_types, n));
  ctx.scratch_used = scratch_used;  // the keys' strings are not needed past the probe
  return b;
}

// Calls emit() once per joined copy of the row in `slots`: every combination
// of the joins' matching lookup rows, the first join's outermost, each in
// file order; a left join without a match gives one copy with nulls, an
// inner join none. With no joins, emit() runs once. Stops early when emit()
// returns false or a key fails (ctx.status); returns false then.
template <class Emit>
WCSV_HD bool for_each_joined_row(const JoinView* joins, int njoins, Value* slots, EvalContext& ctx, Emit&& emit) {
  // The lookup row each join is at; a left join's one unmatched copy and a
  // key's only row have no next.
  constexpr uint32_t kNoNext = kNoLookupRow - 1;
  uint32_t at[kMaxScanJoins];
  int d = 0;
  bool entering = true;
  for (;;) {
    if (entering) {
      if (d == njoins) {
        if (!emit()) return false;
        entering = false;
        --d;
        continue;
      }
      const LookupBucket b = probe_join(joins[d], slots, ctx);
      if (ctx.status != EvalStatus::Ok) return false;
      const uint32_t r = bucket_row(b);
      if (r == kNoLookupRow && !joins[d].left) {
        entering = false;
        --d;
        continue;
      }
      at[d] = b & kBucketHasMore ? r : kNoNext;
      fill_join_slots(joins[d], slots, r);
      ++d;
    } else {
      if (d < 0) return true;
      const uint32_t r = at[d] == kNoNext ? kNoLookupRow : joins[d].table.next[at[d]];
      if (r == kNoLookupRow) {
        --d;
        continue;
      }
      at[d] = r;
      fill_join_slots(joins[d], slots, r);
      ++d;
      entering = true;
    }
  }
}

}  // namespace warpcsv
