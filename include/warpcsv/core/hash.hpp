// Hashing and equality of group keys, the same on host and device.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

WCSV_HD WCSV_FORCEINLINE uint64_t hash_mix(uint64_t h) {  // splitmix64 finalizer
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

constexpr uint64_t kHashBytesSeed = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kHashBytesLength = 0xff51afd7ed558ccdull;
constexpr uint64_t kHashBytesTail = 0x632be59bd9b4e019ull;

WCSV_HD inline uint64_t hash_bytes(const char* p, uint32_t n) {
  uint64_t h = kHashBytesSeed ^ (static_cast<uint64_t>(n) * kHashBytesLength);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = hash_mix(h ^ w);
  }
  uint64_t tail = 0;
  for (uint32_t k = 0; i + k < n; ++k)
    tail |= static_cast<uint64_t>(static_cast<uint8_t>(p[i + k])) << (8 * k);
  return hash_mix(h ^ tail ^ kHashBytesTail);
}

// The low k bytes of a word set (k <= 8).
WCSV_HD inline uint64_t low_bytes_mask(uint32_t k) { return k == 0 ? 0 : ~0ull >> (64 - 8 * k); }

// hash_bytes of n <= 24 bytes held in three little-endian words, w0 the
// first eight: the bytes past n must be zero.
WCSV_HD inline uint64_t hash_three_words(uint64_t w0, uint64_t w1, uint64_t w2, uint32_t n) {
  uint64_t h = kHashBytesSeed ^ (static_cast<uint64_t>(n) * kHashBytesLength);
  if (n >= 8) h = hash_mix(h ^ w0);
  if (n >= 16) h = hash_mix(h ^ w1);
  if (n >= 24) h = hash_mix(h ^ w2);
  const uint64_t tail = n < 8 ? w0 : n < 16 ? w1 : n < 24 ? w2 : 0;
  return hash_mix(h ^ tail ^ kHashBytesTail);
}

// hash_bytes of n <= 15 bytes held in two little-endian words, lo the first
// eight: the bytes past n must be zero.
WCSV_HD inline uint64_t hash_short_words(uint64_t lo, uint64_t hi, uint32_t n) {
  return hash_three_words(lo, hi, 0, n);
}

// Loads the n <= 15 bytes at p as two words with the bytes past n zeroed;
// p[0, 16) must be readable. Little-endian, as hosts and GPUs are.
WCSV_HD inline void load_short_bytes(const char* p, uint32_t n, uint64_t* lo, uint64_t* hi) {
  memcpy(lo, p, 8);
  memcpy(hi, p + 8, 8);
  *lo &= low_bytes_mask(n < 8 ? n : 8);
  *hi &= low_bytes_mask(n > 8 ? n - 8 : 0);
}

// hash_bytes(p, n) for n <= 15 from two 8-byte loads, without a loop over
// the bytes; p[0, 16) must be readable.
WCSV_HD inline uint64_t hash_short_bytes(const char* p, uint32_t n) {
  uint64_t lo, hi;
  load_short_bytes(p, n, &lo, &hi);
  return hash_short_words(lo, hi, n);
}

// Hash of one key value; nulls hash alike, -0.0 like 0.0, every NaN alike.
WCSV_HD inline uint64_t hash_value(const Value& v, Type t) {
  if (v.null) return 0x5bd1e9955bd1e995ull;
  switch (t) {
    case Type::String: return hash_bytes(v.s.ptr, v.s.len);
    case Type::Float: {
      double d = v.f;
      if (d == 0.0) d = 0.0;
      uint64_t bits;
      if (d != d) bits = 0x7ff8000000000000ull;
      else memcpy(&bits, &d, 8);
      return hash_mix(bits ^ 0x2545f4914f6cdd1dull);
    }
    default: {
      const uint128 u = static_cast<uint128>(v.i);
      return hash_mix(static_cast<uint64_t>(u) ^ hash_mix(static_cast<uint64_t>(u >> 64) + 1));
    }
  }
}

// The start of a group's hash, before each key's hash is combined in.
constexpr uint64_t kGroupKeysSeed = 0x243f6a8885a308d3ull;

WCSV_HD WCSV_FORCEINLINE uint64_t hash_combine(uint64_t seed, uint64_t h) {
  return hash_mix(seed ^ (h + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)));
}

// Grouping equality: null equals null; NaN equals NaN; -0.0 equals 0.0.
WCSV_HD inline bool key_equal(const Value& a, const Value& b, Type t) {
  if (a.null || b.null) return a.null == b.null;
  switch (t) {
    case Type::String:
      if (a.s.len != b.s.len) return false;
      for (uint32_t i = 0; i < a.s.len; ++i)
        if (a.s.ptr[i] != b.s.ptr[i]) return false;
      return true;
    case Type::Float: return a.f == b.f || (a.f != a.f && b.f != b.f);
    default: return a.i == b.i;
  }
}

}  // namespace warpcsv
