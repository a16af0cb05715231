// A GPU's group table put in output order and brought to the host a run of
// groups at a time (result_order.cu): the order is a stable radix sort of a
// permutation of the groups, one pass per varying digit of every key, last
// key first, so it is the order the host's sort gives (core's
// compare_values, nulls last) without moving the groups.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/gpu_plan.hpp"

namespace warpcsv {
namespace cuda {

// What one pass sorts by: a 64-bit digit of each group's key, as an unsigned
// integer in the key's order. Nulls give 0 except in Null.
enum class Digit : uint8_t {
  Null,         // 1 for null, else 0
  Length,       // a string's byte length
  StringWord,   // bytes [8 * word, 8 * word + 8) of a string, big-endian, zero-padded
  IntLow,       // the low 64 bits of a 128-bit integer, unsigned
  IntLowFlip,   // an integer that fits 64 bits, its sign bit flipped (its holistic key)
  IntHighFlip,  // the high 64 bits, its sign bit flipped
  IntWide,      // 1 for an integer that does not fit 64 bits (never sorted by)
  Float,        // a float's holistic key: order bits, -0.0 as 0.0, NaNs last
};

// The device arrays of an ordering: two buffers each of the permutation and
// of the digits (the radix sort's double buffers), and CUB's storage.
struct OrderArrays {
  uint32_t* perm[2];
  unsigned long long* digits[2];
  unsigned long long* span;  // 2 words: the least and the greatest digit of the last launch_digits
  void* temp;
  size_t temp_bytes;
  uint64_t n;
};

// Bytes of CUB storage an ordering of n groups needs (sort, and the string
// offsets' scan).
size_t order_temp_bytes(uint64_t n);

// perm[0] = 0, 1, ..., n - 1.
void launch_identity(const OrderArrays& o, const GpuShape& shape, cudaStream_t stream);

// digits[cur][i] = digit `d` (word `word`) of key `key` of group perm[cur][i];
// o.span = its least and greatest.
void launch_digits(const GpuTable& t, int nkeys, int key, Digit d, int word, const OrderArrays& o, int cur,
                   const GpuShape& shape, cudaStream_t stream);

// The bits a digit span of v needs (0 for 0): launch_sort_digits's `bits`.
inline int digit_bits(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

// Sorts (digits[cur] - least, perm[cur]) stably by the digits' low `bits`
// bits (least from o.span); returns the buffer that holds the result.
int launch_sort_digits(const OrderArrays& o, int cur, int bits, const GpuShape& shape, cudaStream_t stream);

// offsets[i] = the bytes of the string keys (`string_keys`: a bit per key)
// of groups perm[0, i), for i in [0, n]; offsets has n + 1 words.
void launch_string_offsets(const GpuTable& t, int nkeys, uint32_t string_keys, const uint32_t* perm, uint64_t n,
                           unsigned long long* offsets, void* temp, size_t temp_bytes, const GpuShape& shape,
                           cudaStream_t stream);

// Groups perm[begin, begin + count) in a row each: keys (string keys'
// bytes copied into `arena`, their StrRef::ptr an offset into it) and state
// words. `offsets` as launch_string_offsets made it.
struct GroupGather {
  Value* keys;              // count * nkeys
  unsigned long long* words;  // count * nwords
  char* arena;
  uint64_t* hashes = nullptr;  // count, when set: the groups' hashes
};
void launch_gather_groups(const GpuTable& t, int nkeys, int nwords, uint32_t string_keys, const uint32_t* perm,
                          const unsigned long long* offsets, uint64_t begin, uint64_t count, const GroupGather& out,
                          const GpuShape& shape, cudaStream_t stream);

// Bounds that cut the key order into count + 1 ranges: `count` rows of
// `nkeys` keys in ascending order (string keys as offsets into `arena`).
// Range r holds the keys from bound r - 1 (or the least) up to, not
// including, bound r.
constexpr int kMaxKeyRanges = 64;
struct KeyBounds {
  const Value* keys;
  const char* arena;
  int count;
  int nkeys;
  Type types[kMaxKeys];
};

// o.digits[0][i] = the key range of group i (groups [0, o.n) of `t`), with
// o.span set to (0, b.count) for launch_sort_digits; counts[r] (zeroed
// first, b.count + 1 words) += the groups in range r.
void launch_key_ranges(const GpuTable& t, const KeyBounds& b, const OrderArrays& o, unsigned long long* counts,
                       const GpuShape& shape, cudaStream_t stream);

}  // namespace cuda
}  // namespace warpcsv
