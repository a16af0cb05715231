// A host fast path for a partition's transition vector (core/dialect.hpp's
// tv_of_bytes, the same result): the start states' tracks are stepped only
// while they differ (they merge within a few bytes, to the quoted and the
// unquoted track), and runs of bytes no state reacts to are skipped 16 at a
// time by SSE2 compares. Quoted input read byte by byte for every start state
// was the partitioner's cost.
#pragma once
#include <cstdint>

#include "warpcsv/core/dialect.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace warpcsv {

// The offset of the first byte in p[i, n) whose class is not kClassOther, or n.
inline uint64_t next_special_byte(const Dialect& d, const char* p, uint64_t i, uint64_t n) {
#if defined(__SSE2__)
  // The bytes with a class: the delimiter's, the quote, LF, CR, and the escape and comment bytes (or LF again).
  const char esc = d.escape >= 0 ? static_cast<char>(d.escape) : '\n';
  const char com = d.comment >= 0 ? static_cast<char>(d.comment) : '\n';
  const __m128i k0 = _mm_set1_epi8(static_cast<char>(d.delimiter_bytes[0]));
  const __m128i k1 = _mm_set1_epi8(static_cast<char>(d.delimiter_bytes[d.delimiter_len > 1 ? 1 : 0]));
  const __m128i k2 = _mm_set1_epi8(static_cast<char>(d.delimiter_bytes[d.delimiter_len > 2 ? 2 : 0]));
  const __m128i k3 = _mm_set1_epi8(static_cast<char>(d.delimiter_bytes[d.delimiter_len > 3 ? 3 : 0]));
  const __m128i q = _mm_set1_epi8(static_cast<char>(d.quote));
  const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
  const __m128i e = _mm_set1_epi8(esc), c = _mm_set1_epi8(com);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i delim = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, k0), _mm_cmpeq_epi8(v, k1)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, k2), _mm_cmpeq_epi8(v, k3)));
    const __m128i other = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, lf)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_or_si128(_mm_cmpeq_epi8(v, e),
                                                                                         _mm_cmpeq_epi8(v, c))));
    const uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(delim, other)));
    if (mask) return i + static_cast<uint64_t>(__builtin_ctz(mask));
  }
#endif
  while (i < n && d.char_class[static_cast<uint8_t>(p[i])] == kClassOther) ++i;
  return i;
}

inline TransitionVector tv_of_bytes_fast(const Dialect& d, const char* p, uint64_t n) {
  // The distinct states the start states' tracks are in, and each start state's track.
  uint8_t at[kNumStates], track_of[kNumStates];
  int tracks = d.states;
  for (int s = 0; s < d.states; ++s) at[s] = track_of[s] = static_cast<uint8_t>(s);
  uint64_t i = 0;
  while (i < n) {
    const uint8_t cls = d.char_class[static_cast<uint8_t>(p[i++])];
    bool other_fixed = true;  // whether every track stays where it is on bytes of no class
    for (int t = 0; t < tracks; ++t) {
      at[t] = d.next[at[t]][cls];
      other_fixed = other_fixed && d.next[at[t]][kClassOther] == at[t];
    }
    if (tracks > 1) {  // tracks that met are one from here
      uint8_t kept[kNumStates], renumber[kNumStates];
      int n_kept = 0;
      for (int t = 0; t < tracks; ++t) {
        int k = 0;
        while (k < n_kept && kept[k] != at[t]) ++k;
        if (k == n_kept) kept[n_kept++] = at[t];
        renumber[t] = static_cast<uint8_t>(k);
      }
      if (n_kept < tracks) {
        for (int s = 0; s < d.states; ++s) track_of[s] = renumber[track_of[s]];
        for (int k = 0; k < n_kept; ++k) at[k] = kept[k];
        tracks = n_kept;
      }
    }
    if (other_fixed) i = next_special_byte(d, p, i, n);
  }
  TransitionVector tv = tv_identity();
  for (int s = 0; s < d.states; ++s) tv = tv_set(tv, static_cast<uint8_t>(s), at[track_of[s]]);
  return tv;
}

}  // namespace warpcsv
