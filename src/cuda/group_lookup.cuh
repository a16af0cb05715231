// Where a row's group is, for the row kernel: the resident group table's
// probe (find_or_insert, stored keys compared through L2, a word at a time
// where a batch's bytes allow), and a row block's shared-memory caches of
// short keys and of hot groups' state words. Included by kernels.cu alone.
#pragma once
#include <cstdint>
#include <cstring>

#include "cuda/agg_words.hpp"
#include "cuda/gpu_plan.hpp"
#include "warpcsv/core/hash.hpp"

namespace warpcsv {
namespace cuda {

namespace {

constexpr uint32_t kSlotBusy = 0xffffffffu;  // a group is being inserted here
constexpr uint32_t kSlotDead = 0xfffffffeu;  // insertion failed (table full)
constexpr int kCacheProbes = 8;

// ---- bytes read a word at a time ------------------------------------------

// The 8 bytes at p (any alignment) from three aligned 4-byte loads, so bytes
// up to p + 12 must be readable: through the read-only cache for a batch's
// bytes, through L2 for the table's arena (another block may have just
// written it).
template <bool ThroughL2>
__device__ __forceinline__ u64 word_at(const char* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(a & ~uintptr_t{3});
  const uint32_t shift = static_cast<uint32_t>(a & 3) * 8;
  const uint32_t w0 = ThroughL2 ? __ldcg(w) : __ldg(w);
  const uint32_t w1 = ThroughL2 ? __ldcg(w + 1) : __ldg(w + 1);
  const uint32_t w2 = ThroughL2 ? __ldcg(w + 2) : __ldg(w + 2);
  return static_cast<u64>(__funnelshift_r(w1, w2, shift)) << 32 | __funnelshift_r(w0, w1, shift);
}

// The 8 bytes at p in a batch buffer (padded past its end).
__device__ __forceinline__ u64 batch_word(const char* p) { return word_at<false>(p); }

// A short string key, kKeyWords little-endian words with the bytes past its
// length zero.
constexpr uint32_t kShortKeyBytes = 8 * kKeyWords;
struct KeyWords {
  u64 w[kKeyWords];
  uint32_t len;
};

// The n <= kShortKeyBytes bytes at p in a batch buffer, from seven aligned
// 4-byte loads (bytes up to p + 28 must be readable).
__device__ __forceinline__ KeyWords batch_key_words(const char* p, uint32_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uint32_t* w = reinterpret_cast<const uint32_t*>(a & ~uintptr_t{3});
  const uint32_t shift = static_cast<uint32_t>(a & 3) * 8;
  uint32_t u[2 * kKeyWords + 1];
#pragma unroll
  for (int i = 0; i < 2 * kKeyWords + 1; ++i) u[i] = __ldg(w + i);
  KeyWords k;
#pragma unroll
  for (int i = 0; i < kKeyWords; ++i) {
    const u64 word = static_cast<u64>(__funnelshift_r(u[2 * i + 1], u[2 * i + 2], shift)) << 32 |
                     __funnelshift_r(u[2 * i], u[2 * i + 1], shift);
    const uint32_t have = n > 8u * i ? n - 8u * i : 0;
    k.w[i] = have >= 8 ? word : word & low_bytes_mask(have);
  }
  k.len = n;
  return k;
}

// Whether the n bytes at `stored` in the table's arena (padded by
// kArenaReadPad) equal the n bytes at `row`, a batch's bytes when
// `row_in_batch` (read a word at a time) or any other memory.
__device__ __forceinline__ bool arena_bytes_equal(const char* stored, const char* row, uint32_t n,
                                                  bool row_in_batch) {
  if (!row_in_batch) {
    for (uint32_t i = 0; i < n; ++i)
      if (__ldcg(stored + i) != row[i]) return false;
    return true;
  }
  for (uint32_t i = 0; i < n; i += 8) {
    const u64 mask = n - i >= 8 ? ~0ull : low_bytes_mask(n - i);
    if ((word_at<true>(stored + i) ^ batch_word(row + i)) & mask) return false;
  }
  return true;
}

// ---- the resident group table ----------------------------------------------

__device__ __forceinline__ uint32_t load_slot(const uint32_t* p) {
  return *reinterpret_cast<const volatile uint32_t*>(p);
}

// A stored group key, read through L2 (another block may have just written it).
__device__ __forceinline__ Value load_stored_key(const GpuTable& t, uint64_t at) {
  const longlong2* src = reinterpret_cast<const longlong2*>(t.keys + at);
  const longlong2 raw[2] = {__ldcg(src), __ldcg(src + 1)};
  Value s;
  memcpy(&s, raw, sizeof(Value));
  return s;
}

// Whether group g has hash h and a row's keys, with the core's grouping
// equality. Bit k of `batch_keys`: key k's string lies in the batch buffer.
// The hash and the first key are loaded together: most groups that get here
// match.
__device__ bool stored_group_equal(const GpuTable& t, const GpuPlan& p, uint64_t g, uint64_t h, const Value* keys,
                                   uint32_t batch_keys) {
  const u64 stored_h = __ldcg(t.hashes + g);
  const Value first = p.nkeys > 0 ? load_stored_key(t, g * p.nkeys) : Value::make_null();
  if (stored_h != h) return false;
  for (int k = 0; k < p.nkeys; ++k) {
    const Value s = k == 0 ? first : load_stored_key(t, g * p.nkeys + k);
    const Value& v = keys[k];
    if (s.null || v.null) {
      if (s.null != v.null) return false;
      continue;
    }
    const Type ty = p.key_types[k];
    if (ty == Type::String) {
      if (s.s.len != v.s.len) return false;
      const char* a = t.arena + reinterpret_cast<uintptr_t>(s.s.ptr);
      if (!arena_bytes_equal(a, v.s.ptr, v.s.len, (batch_keys >> k) & 1u)) return false;
    } else if (!key_equal(s, v, ty)) {
      return false;
    }
  }
  return true;
}

// The group of these keys, inserted when new; -1 when the table is full.
// `batch_keys` as for stored_group_equal.
__device__ int64_t find_or_insert(const GpuTable& t, const GpuPlan& p, const Value* keys, uint64_t h,
                                  uint32_t batch_keys, uint32_t& flags) {
  uint64_t slot = h & t.mask;
  for (uint64_t probe = 0; probe <= t.mask; ++probe, slot = (slot + 1) & t.mask) {
    uint32_t cur = load_slot(t.slots + slot);
    if (cur == 0) {
      cur = atomicCAS(t.slots + slot, 0u, kSlotBusy);
      if (cur == 0) {
        const u64 g = atomicAdd(&t.counters->groups, 1ull);
        if (g >= t.gcap) {
          atomicExch(t.slots + slot, kSlotDead);
          flags |= kFlagCapacity;
          return -1;
        }
        t.hashes[g] = h;
        for (int k = 0; k < p.nkeys; ++k) {
          Value v = keys[k];
          if (!v.null && p.key_types[k] == Type::String) {
            u64 off = atomicAdd(&t.counters->arena_used, static_cast<u64>(v.s.len));
            if (off + v.s.len > t.arena_cap) {
              flags |= kFlagCapacity;
              off = 0;
              v.s.len = 0;
            } else {
              for (uint32_t i = 0; i < v.s.len; ++i) t.arena[off + i] = v.s.ptr[i];
            }
            v.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(off));
          }
          t.keys[g * p.nkeys + k] = v;
        }
        __threadfence();
        atomicExch(t.slots + slot, static_cast<uint32_t>(g + 1));
        return static_cast<int64_t>(g);
      }
    }
    while (cur == kSlotBusy) {
      __nanosleep(32);
      cur = load_slot(t.slots + slot);
    }
    if (cur == kSlotDead) continue;
    const uint64_t g = cur - 1;
    if (stored_group_equal(t, p, g, h, keys, batch_keys)) return static_cast<int64_t>(g);
  }
  flags |= kFlagCapacity;
  return -1;
}

// ---- the row block's shared-memory caches ----------------------------------

// Where a row looks before the global table: the block's caches of hot
// groups' state words (by group) and, when the plan groups by one string
// column, of short keys' groups (by the key's words), then the GPU's
// directory of short keys, so that a row of a plain batch finds its group
// without the global table's probe and key compare.
struct KeyCacheEntry {
  u64 w[kKeyWords];
  uint32_t len;
  uint32_t group;  // group + 1; 0 empty, kSlotBusy being written
};
struct BlockCaches {
  uint32_t cap;  // hot groups, a power of two; 0: none
  uint32_t* groups;
  u64* words;
  uint32_t key_cap;  // short keys, a power of two; 0: none
  KeyCacheEntry* keys;
  uint32_t* key_states;  // key_cap states of GpuPlan::short_key_state_words words (short_key_state.hpp); null: none
  uint32_t dir_cap;  // the directory's entries, a power of two; 0: none
  KeyDirEntry* dir;
  uint32_t* batch_states;  // the batch's states of short keys' groups in the GPU's memory; null: none
};
constexpr int kKeyCacheProbes = 4;
constexpr uint32_t kNoEntry = 0xffffffffu;

__device__ __forceinline__ uint32_t key_cache_index(const KeyWords& k, uint32_t cap) {
  const u64 x = (k.w[0] ^ (k.w[1] * 0x9e3779b97f4a7c15ull) ^ (k.w[2] * 0xc2b2ae3d27d4eb4full) ^ k.len) *
                0xff51afd7ed558ccdull;
  return static_cast<uint32_t>(x >> 40) & (cap - 1);
}

// The entry of key k in the block's cache (-1: none) and its group; else
// `empty_at` is an empty entry on its probe path (or kNoEntry). An entry's
// words are read after its group, which its writer publishes after them.
__device__ __forceinline__ int32_t key_cache_entry(const BlockCaches& c, const KeyWords& k, uint32_t& empty_at,
                                                   uint64_t& group) {
  empty_at = kNoEntry;
  uint32_t i = key_cache_index(k, c.key_cap);
  for (int probe = 0; probe < kKeyCacheProbes; ++probe, i = (i + 1) & (c.key_cap - 1)) {
    const volatile KeyCacheEntry* e = c.keys + i;
    const uint32_t g = e->group;
    if (g == 0) {
      empty_at = i;
      return -1;
    }
    if (g == kSlotBusy) continue;
    __threadfence_block();
    bool same = e->len == k.len;
#pragma unroll
    for (int w = 0; w < kKeyWords; ++w) same &= e->w[w] == k.w[w];
    if (same) {
      group = g - 1;
      return static_cast<int32_t>(i);
    }
  }
  return -1;
}

// Puts key k's group g at the entry key_cache_entry left empty, unless another
// thread took it meanwhile (false). The entry's words are written with atomics, as
// its group is: readers never read a word a plain store is writing.
__device__ __forceinline__ bool key_cache_insert(const BlockCaches& c, const KeyWords& k, uint32_t at, uint64_t g) {
  if (at == kNoEntry || g + 1 >= kSlotDead) return false;
  KeyCacheEntry* e = c.keys + at;
  if (atomicCAS(&e->group, 0u, kSlotBusy) != 0) return false;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) atomicExch(&e->w[w], k.w[w]);
  atomicExch(&e->len, k.len);
  __threadfence_block();
  atomicExch(&e->group, static_cast<uint32_t>(g + 1));
  return true;
}

// ---- the GPU's directory of short keys -------------------------------------
// A key the block's cache lacks costs one L2 round trip here (a bucket of two
// 32-byte entries in one line, read at once) instead of the table's three
// (slot; hash and key; the arena's bytes). The directory is filled with 0xff
// bytes before each batch, and each entry is written once a batch, its group
// last. Readers do not wait for the group before the words: a read that races
// the writing sees 0xff words or length for the parts not yet written, which
// no row's key has (keys are UTF-8 and zero past their length), so it never
// matches; it only misses.
constexpr uint32_t kDirEmpty = 0xffffffffu;
constexpr uint32_t kDirBusy = 0xfffffffeu;

// The group of key k (hash h) in the directory, or -1; then `empty_at` is an
// empty entry of its bucket (or kNoEntry).
__device__ __forceinline__ int64_t key_dir_find(const BlockCaches& c, const KeyWords& k, u64 h, uint32_t& empty_at) {
  const uint32_t first = (static_cast<uint32_t>(h >> 32) & (c.dir_cap / 2 - 1)) * 2;
  const longlong2* p = reinterpret_cast<const longlong2*>(c.dir + first);
  longlong2 raw[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) raw[i] = __ldcg(p + i);
  empty_at = kNoEntry;
  int64_t found = -1;
#pragma unroll
  for (int e = 1; e >= 0; --e) {
    const u64 tail = static_cast<u64>(raw[2 * e + 1].y);
    const uint32_t len = static_cast<uint32_t>(tail), group = static_cast<uint32_t>(tail >> 32);
    if (group == kDirEmpty) empty_at = first + e;
    const bool same = group < kDirBusy && len == k.len && static_cast<u64>(raw[2 * e].x) == k.w[0] &&
                      static_cast<u64>(raw[2 * e].y) == k.w[1] && static_cast<u64>(raw[2 * e + 1].x) == k.w[2];
    if (same) found = group;
  }
  static_assert(kKeyWords == 3 && sizeof(KeyDirEntry) == 32, "a directory entry is two 16-byte halves");
  return found;
}

// Puts key k's group g at the entry key_dir_find left empty, unless another
// thread took it meanwhile.
__device__ __forceinline__ void key_dir_insert(const BlockCaches& c, const KeyWords& k, uint32_t at, uint64_t g) {
  if (at == kNoEntry || g >= kDirBusy) return;
  KeyDirEntry* e = c.dir + at;
  if (atomicCAS(&e->group, kDirEmpty, kDirBusy) != kDirEmpty) return;
#pragma unroll
  for (int w = 0; w < kKeyWords; ++w) atomicExch(&e->w[w], k.w[w]);
  atomicExch(&e->len, k.len);
  __threadfence();
  atomicExch(&e->group, static_cast<uint32_t>(g));
}

// The group of a short key (kw its words, `key` the same key for the table),
// found in the block's cache (when it has one), else in the directory, else in the global
// table, then cached where it was missed. -1 when the table raised `flags`
// (full: the batch runs again on the CPU). `entry` is the key's entry in the
// block's cache, or -1 when it has none and none could be made.
__device__ __forceinline__ int64_t short_key_lookup(const GpuPlan& p, const GpuTable& t, const BlockCaches& caches,
                                                    const KeyWords& kw, const Value& key, int32_t& entry,
                                                    uint32_t& flags) {
  uint32_t empty_at = kNoEntry;
  uint64_t g = 0;
  entry = caches.key_cap ? key_cache_entry(caches, kw, empty_at, g) : -1;
  if (entry >= 0) return static_cast<int64_t>(g);
  const u64 h = hash_combine(kGroupKeysSeed, hash_three_words(kw.w[0], kw.w[1], kw.w[2], kw.len));
  uint32_t dir_empty_at = kNoEntry;
  int64_t found = caches.dir_cap ? key_dir_find(caches, kw, h, dir_empty_at) : -1;
  if (found < 0) {
    uint32_t table_flags = 0;
    found = find_or_insert(t, p, &key, h, 1u, table_flags);
    flags |= table_flags;
    if (found < 0 || table_flags) return -1;
    if (caches.dir_cap) key_dir_insert(caches, kw, dir_empty_at, static_cast<uint64_t>(found));
  }
  if (key_cache_insert(caches, kw, empty_at, static_cast<uint64_t>(found))) entry = static_cast<int32_t>(empty_at);
  return found;
}

// The state words a row's update of group g goes to: the block's cache of
// hot groups when it has (or gets) a place for g, else the global table's.
__device__ __forceinline__ u64* group_words(const BlockCaches& c, const GpuTable& t, int nwords, uint64_t g) {
  if (c.cap) {
    uint32_t i = (static_cast<uint32_t>(g) * 2654435761u) & (c.cap - 1);
    for (int probe = 0; probe < kCacheProbes; ++probe, i = (i + 1) & (c.cap - 1)) {
      uint32_t k = c.groups[i];
      if (k == 0) k = atomicCAS(c.groups + i, 0u, static_cast<uint32_t>(g + 1));
      if (k == 0 || k == static_cast<uint32_t>(g + 1)) return c.words + static_cast<uint64_t>(i) * nwords;
    }
  }
  return t.words + g * nwords;
}

}  // namespace

}  // namespace cuda
}  // namespace warpcsv
