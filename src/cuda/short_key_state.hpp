// A row block's own state for a short key's group, beside its entry in the
// block's shared-memory key cache: 32-bit words that the block's rows update
// with the shared memory's native 32-bit atomics (its 64-bit ones are
// compare-and-swap loops), folded into the group's state words once, at the
// end of the batch. Only rows whose every aggregated value is a non-null int
// or decimal of 32 bits come here, so one row count serves count(), count(x)
// and every mean's count. With more groups than a block keeps, a batch's
// states of its groups lie in the GPU's memory, by group, in the same
// layout. Plain C++ without CUDA, so CPU builds test it against
// agg_update_words.
#pragma once
#include <cstdint>

#include "cuda/agg_words.hpp"

namespace warpcsv {
namespace cuda {

// Word 0 of an entry's state counts its rows; each aggregate's words follow.
constexpr int kShortKeyRowsWord = 0;

// The 32-bit state words of aggregate `op`; -1: not kept this way.
WCSV_HD constexpr int short_key_words(AggOp op) {
  switch (op) {
    case AggOp::CountStar:
    case AggOp::Count: return 0;  // the entry's row count
    case AggOp::Min:
    case AggOp::Max: return 1;  // the value
    case AggOp::SumExact:
    case AggOp::MeanExact: return 2;  // a 64-bit sum, low word first
    default: return -1;
  }
}

// One aggregate as the short-key rows read it (all read the row's one
// value, or none): its op, its first 32-bit state word and its first 64-bit
// group word.
struct ShortKeyAgg {
  AggOp op;
  uint8_t state;
  uint8_t word;
};

// The states' layout for aggregates ops[0..n): each one's first word in
// states[], and the state's words, even. The 64-bit sums lie at even words
// (a batch's state adds each with one 64-bit atomic), the 32-bit words at
// word 1 and past the sums. False when an aggregate is not kept this way.
inline bool short_key_layout(const AggOp* ops, int n, uint8_t* states, int& words) {
  int sums = 0;
  for (int a = 0; a < n; ++a) {
    if (short_key_words(ops[a]) < 0) return false;
    sums += short_key_words(ops[a]) == 2;
  }
  int pair = kShortKeyRowsWord + 2, single = kShortKeyRowsWord + 1;
  for (int a = 0; a < n; ++a) {
    const int w = short_key_words(ops[a]);
    states[a] = static_cast<uint8_t>(w == 2 ? pair : w == 1 ? single : kShortKeyRowsWord);
    if (w == 2) pair += 2;
    if (w == 1) single = single == kShortKeyRowsWord + 1 ? kShortKeyRowsWord + 2 + 2 * sums : single + 1;
  }
  words = pair > single ? pair : single;
  words += words % 2;
  return true;
}

WCSV_HD WCSV_FORCEINLINE void short_key_init(const ShortKeyAgg& a, uint32_t* st) {
  if (a.op == AggOp::Min) st[a.state] = static_cast<uint32_t>(INT32_MAX);
  if (a.op == AggOp::Max) st[a.state] = static_cast<uint32_t>(INT32_MIN);
  if (a.op == AggOp::SumExact || a.op == AggOp::MeanExact) st[a.state] = st[a.state + 1] = 0;
}

// Where a state lies: in a row block's shared memory, whose 64-bit atomics
// are compare-and-swap loops (a sum goes in as two 32-bit words and a
// carry), or in the GPU's memory for a batch (a sum's words are even, so one
// aligned 64-bit add takes it: a batch's sum of 32-bit values fits 64 bits).
enum class StateIn { Block, Batch };

// A row's update of aggregate `a` in a state (its row count is added apart).
template <StateIn Where>
WCSV_HD WCSV_FORCEINLINE void short_key_update(const ShortKeyAgg& a, uint32_t* st, int32_t v) {
  uint32_t* w = st + a.state;
  switch (a.op) {
    case AggOp::Min:
#if defined(__CUDA_ARCH__)
      atomicMin(reinterpret_cast<int*>(w), v);
#else
      if (v < static_cast<int32_t>(*w)) *w = static_cast<uint32_t>(v);
#endif
      return;
    case AggOp::Max:
#if defined(__CUDA_ARCH__)
      atomicMax(reinterpret_cast<int*>(w), v);
#else
      if (v > static_cast<int32_t>(*w)) *w = static_cast<uint32_t>(v);
#endif
      return;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      if (Where == StateIn::Batch) {
        const u64 x = static_cast<u64>(static_cast<int64_t>(v));
#if defined(__CUDA_ARCH__)
        atomicAdd(reinterpret_cast<unsigned long long*>(w), x);
#else
        const u64 sum = (static_cast<u64>(w[1]) << 32 | w[0]) + x;
        w[0] = static_cast<uint32_t>(sum);
        w[1] = static_cast<uint32_t>(sum >> 32);
#endif
        return;
      }
      // v sign-extended to 64 bits: the high word takes the carry and, for a
      // negative v, all ones (which a carry turns into nothing).
      const uint32_t low = static_cast<uint32_t>(v);
      const uint32_t old = word_add(w, low);
      const uint32_t high = (v < 0 ? ~0u : 0u) + (old + low < old ? 1u : 0u);
      if (high) word_add(w + 1, high);
      return;
    }
    default: return;
  }
}

// Folds an entry's state (its `rows` rows) into the group's words `w` (the
// aggregate's first word), as agg_merge_words folds a block cache's.
WCSV_HD WCSV_FORCEINLINE void short_key_fold(const ShortKeyAgg& a, const uint32_t* st, uint32_t rows, u64* w) {
  const uint32_t* s = st + a.state;
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count: add_word(w + CountWords::n, rows); return;
    case AggOp::Min:
    case AggOp::Max: extreme_update(a.op, w, static_cast<int32_t>(s[0])); return;
    case AggOp::SumExact:
    case AggOp::MeanExact: {
      const int64_t sum = static_cast<int64_t>(static_cast<uint64_t>(s[1]) << 32 | s[0]);
      add_int128(w + SumExactWords::sum, w + SumExactWords::ext, sum);
      add_word(w + SumExactWords::n, rows);
      return;
    }
    default: return;
  }
}

// A row's update of the group's words `w` directly, for a row whose key has
// no entry (agg_update_words for a non-null value v).
WCSV_HD WCSV_FORCEINLINE void short_key_update_words(const ShortKeyAgg& a, u64* w, int32_t v) {
  switch (a.op) {
    case AggOp::CountStar:
    case AggOp::Count: word_add(w + CountWords::n, 1ull); return;
    case AggOp::Min:
    case AggOp::Max: extreme_update(a.op, w, v); return;
    case AggOp::SumExact:
    case AggOp::MeanExact:
      add_int128(w + SumExactWords::sum, w + SumExactWords::ext, v);
      word_add(w + SumExactWords::n, 1ull);
      return;
    default: return;
  }
}

}  // namespace cuda
}  // namespace warpcsv
