// The row kernel's short way for a row of a plain batch when the plan reads
// a string key and one int or decimal column (GpuPlan::short_keys): the row
// is split at its delimiters into registers, its value parsed to 32 bits,
// and its key's entry found (or made) in the block's key cache by the key's
// words. While the table holds few groups, the entry's 32-bit state takes
// the row with native shared-memory atomics and is folded into the group's
// words at the end of the batch; with more (up to the directory's reach), or
// with no entry to be had, the batch's state of the group in the GPU's
// memory takes it, folded in after the batch (past those states' groups, the
// group's words). Any other row (a null or wide value, a long key, a bad
// field) goes the general way, process_row. Included by kernels.cu alone.
#pragma once
#include <cstdint>

#include "cuda/gpu_plan.hpp"
#include "cuda/group_lookup.cuh"
#include "cuda/row_split.cuh"
#include "cuda/short_key_state.hpp"
#include "warpcsv/core/field.hpp"

namespace warpcsv {
namespace cuda {

namespace {

// The bounds of the row's two fields that the plan reads, the key's and the
// value's. False for an empty line or not ncols fields.
struct KeyValueBounds {
  uint32_t kb = 0, ke = 0, vb = 0, ve = 0;
};

__device__ __forceinline__ bool split_key_value(const char* data, uint32_t pos, uint32_t next, uint8_t delimiter,
                                                int ncols, const int8_t* col_to_slot, int key_slot,
                                                KeyValueBounds& f) {
  const uint32_t fields = split_plain_fields(data, pos, next, delimiter, [&](uint32_t field, uint32_t b, uint32_t e) {
    const int s = field < static_cast<uint32_t>(ncols) ? col_to_slot[field] : -1;
    if (s == key_slot) f.kb = b, f.ke = e;
    else if (s >= 0) f.vb = b, f.ve = e;
  });
  return fields == static_cast<uint32_t>(ncols);
}

// The int or decimal of 32 bits in a field, as field_to_value reads it;
// false for text that is empty (null), not such a number, or wider.
__device__ __forceinline__ bool field_to_int32(ColumnType t, bool inferred, const char* p, uint32_t n, int32_t& out) {
  if (n == 0 || (inferred && has_leading_zero(p, n))) return false;
  int64_t v;
  const bool ok = t.type == Type::Int ? parse_int64(p, n, &v) : parse_decimal(p, n, t.scale, &v);
  if (!ok || v < INT32_MIN || v > INT32_MAX) return false;
  out = static_cast<int32_t>(v);
  return true;
}

// A row of value v into a state of its group.
template <StateIn Where>
__device__ __forceinline__ void add_to_state(const GpuPlan& p, const ShortKeyAgg* aggs, uint32_t* st, int32_t v) {
  atomicAdd(st + kShortKeyRowsWord, 1u);
  for (int a = 0; a < p.naggs; ++a) short_key_update<Where>(aggs[a], st, v);
}

// Aggregates a row of a plain batch the short way; false when the row must
// go the general way (nothing of it was counted or aggregated). `flags` gets
// what the group table raised (the batch then runs again on the CPU). The
// key's entry in the block's cache gives its group, or the directory or the
// table does (and the entry is made where there is room); then a state of
// the group takes the row (or its words do).
__device__ __forceinline__ bool short_key_row(const GpuBatch& b, const GpuPlan& p, const ShortKeyAgg* aggs,
                                              uint8_t delimiter, const int8_t* col_to_slot, const GpuTable& t,
                                              uint32_t pos, uint32_t next, const BlockCaches& caches,
                                              uint32_t& flags) {
  KeyValueBounds f;
  const int key_slot = p.key_direct[0];
  if (next <= pos || !split_key_value(b.data, pos, next, delimiter, p.ncols, col_to_slot, key_slot, f)) return false;
  const uint32_t kn = f.ke - f.kb;
  int32_t v;
  if (kn == 0 || kn > kShortKeyBytes ||
      !field_to_int32(p.slot_types[p.value_slot], p.slot_inferred[p.value_slot], b.data + f.vb, f.ve - f.vb, v))
    return false;
  const KeyWords kw = batch_key_words(b.data + f.kb, kn);
  int32_t e;
  const int64_t g = short_key_lookup(p, t, caches, kw, Value::of_str(b.data + f.kb, kn), e, flags);
  if (g < 0) return true;  // the table is full: flags say so, and the CPU runs the batch again
  if (e >= 0 && caches.key_states) {
    add_to_state<StateIn::Block>(p, aggs, caches.key_states + static_cast<uint32_t>(e) * p.short_key_state_words, v);
  } else if (caches.batch_states && g < kBatchStateGroups) {
    add_to_state<StateIn::Batch>(p, aggs, caches.batch_states + static_cast<uint32_t>(g) * p.short_key_state_words, v);
  } else {
    u64* w = t.words + static_cast<uint64_t>(g) * p.nwords;
    for (int a = 0; a < p.naggs; ++a) short_key_update_words(aggs[a], w + aggs[a].word, v);
  }
  return true;
}

// Folds the block's entries' states into their groups' words (after the
// block's rows, past a barrier).
__device__ __forceinline__ void fold_short_keys(const GpuPlan& p, const ShortKeyAgg* aggs, const GpuTable& t,
                                                const BlockCaches& caches) {
  for (uint32_t i = threadIdx.x; i < caches.key_cap; i += blockDim.x) {
    const uint32_t g = caches.keys[i].group;
    const uint32_t* st = caches.key_states + i * p.short_key_state_words;
    const uint32_t rows = st[kShortKeyRowsWord];
    if (g == 0 || g == kSlotBusy || rows == 0) continue;
    u64* w = t.words + static_cast<uint64_t>(g - 1) * p.nwords;
    for (int a = 0; a < p.naggs; ++a) short_key_fold(aggs[a], st, rows, w + aggs[a].word);
  }
}

// Folds a batch's states of groups (BlockCaches::batch_states) into their
// words and makes them fresh for the next batch; with `fold` false, only the
// latter, for every group.
__device__ __forceinline__ void fold_batch_states(const GpuPlan& p, const GpuTable& t, uint32_t* states, bool fold) {
  const uint64_t made = fold ? *reinterpret_cast<volatile unsigned long long*>(&t.counters->groups) : kBatchStateGroups;
  const uint32_t n = static_cast<uint32_t>(made < kBatchStateGroups ? made : kBatchStateGroups);
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < n; g += gridDim.x * blockDim.x) {
    uint32_t* st = states + g * static_cast<uint32_t>(p.short_key_state_words);
    const uint32_t rows = st[kShortKeyRowsWord];
    if (fold && rows == 0) continue;
    for (int a = 0; a < p.naggs; ++a) {
      if (fold) short_key_fold(p.short_aggs[a], st, rows, t.words + static_cast<uint64_t>(g) * p.nwords + p.short_aggs[a].word);
      short_key_init(p.short_aggs[a], st);
    }
    st[kShortKeyRowsWord] = 0;
  }
}

}  // namespace

}  // namespace cuda
}  // namespace warpcsv
