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
// order (kNoLookupRow: empty); `next` chains the rows of one key in file
// order. They are kLookupParts parts of 2^bucket_bits buckets, a key's part
// the top bits of its hash, so that threads build the parts apart.
constexpr int kLookupPartBits = 6;
constexpr uint32_t kLookupParts = 1u << kLookupPartBits;
struct LookupView {
  const Value* cells;
  const uint64_t* hashes;  // per row: the hash of its keys
  const uint32_t* next;
  const uint32_t* buckets;
  uint32_t bucket_bits;  // per part
  uint32_t width;
  uint32_t nkeys;
};

WCSV_HD inline uint32_t lookup_part(uint64_t h) { return static_cast<uint32_t>(h >> (64 - kLookupPartBits)); }

WCSV_HD inline uint64_t lookup_hash(const Value* keys, const Type* types, uint32_t n) {
  uint64_t h = 0x7a3c5e1b9d2f4861ull;
  for (uint32_t k = 0; k < n; ++k) h = hash_combine(h, hash_value(keys[k], types[k]));
  return h;
}

// The first row (file order) whose keys equal `keys`, or kNoLookupRow. A
// null key matches nothing, as in SQL.
WCSV_HD inline uint32_t lookup_first(const LookupView& t, const Value* keys, const Type* types, uint64_t h) {
  for (uint32_t k = 0; k < t.nkeys; ++k)
    if (keys[k].null) return kNoLookupRow;
  const uint32_t mask = (1u << t.bucket_bits) - 1;
  const uint32_t* buckets = t.buckets + (static_cast<uint64_t>(lookup_part(h)) << t.bucket_bits);
  for (uint32_t b = static_cast<uint32_t>(h) & mask;; b = (b + 1) & mask) {
    const uint32_t r = buckets[b];
    if (r == kNoLookupRow) return kNoLookupRow;
    if (t.hashes[r] != h) continue;
    const Value* cells = t.cells + static_cast<uint64_t>(r) * t.width;
    bool same = true;
    for (uint32_t k = 0; k < t.nkeys && same; ++k) same = key_equal(cells[k], keys[k], types[k]);
    if (same) return r;
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

// The lookup row of join `j` that first matches the row in `slots`; sets ctx.status when a key fails.
WCSV_HD inline uint32_t probe_join(const JoinView& j, const Value* slots, EvalContext& ctx) {
  Value keys[kMaxJoinKeys];
  const uint32_t n = j.table.nkeys, scratch_used = ctx.scratch_used;
  for (uint32_t k = 0; k < n; ++k) keys[k] = eval_program(j.keys[k], slots, ctx);
  if (ctx.status != EvalStatus::Ok) return kNoLookupRow;
  const uint32_t r = lookup_first(j.table, keys, j.key_types, lookup_hash(keys, j.key_types, n));
  ctx.scratch_used = scratch_used;  // the keys' strings are not needed past the probe
  return r;
}

// Calls emit() once per joined copy of the row in `slots`: every combination
// of the joins' matching lookup rows, the first join's outermost, each in
// file order; a left join without a match gives one copy with nulls, an
// inner join none. With no joins, emit() runs once. Stops early when emit()
// returns false or a key fails (ctx.status); returns false then.
template <class Emit>
WCSV_HD bool for_each_joined_row(const JoinView* joins, int njoins, Value* slots, EvalContext& ctx, Emit&& emit) {
  constexpr uint32_t kLeftNulls = kNoLookupRow - 1;  // a left join's one unmatched copy
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
      uint32_t r = probe_join(joins[d], slots, ctx);
      if (ctx.status != EvalStatus::Ok) return false;
      if (r == kNoLookupRow) {
        if (!joins[d].left) {
          entering = false;
          --d;
          continue;
        }
        r = kLeftNulls;
      }
      at[d] = r;
      fill_join_slots(joins[d], slots, r == kLeftNulls ? kNoLookupRow : r);
      ++d;
    } else {
      if (d < 0) return true;
      const uint32_t r = at[d] == kLeftNulls ? kNoLookupRow : joins[d].table.next[at[d]];
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
