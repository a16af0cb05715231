// A host fast path for a partition's transition vector (core/dialect.hpp's
// tv_of_bytes, the same result): the start states' tracks are stepped only
// while they differ (they merge within a few bytes, to the quoted and the
// unquoted track), and only the bytes some state reacts to (found 64 at a
// time by SSE2 compares) and the byte after each are stepped. Quoted input
// read byte by byte for every start state was the partitioner's cost.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/dialect.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace warpcsv {

// Bytes of a block with a class (any but kClassOther): the delimiter's, the
// quote, LF, CR, and the escape and comment bytes.
class SpecialBytes {
 public:
  explicit SpecialBytes(const Dialect& d) : d_(d) {
#if defined(__SSE2__)
    const uint8_t values[] = {d.delimiter_bytes[0],
                              d.delimiter_bytes[d.delimiter_len > 1 ? 1 : 0],
                              d.delimiter_bytes[d.delimiter_len > 2 ? 2 : 0],
                              d.delimiter_bytes[d.delimiter_len > 3 ? 3 : 0],
                              static_cast<uint8_t>(d.quote),
                              '\n',
                              '\r',
                              static_cast<uint8_t>(d.escape >= 0 ? d.escape : '\n'),
                              static_cast<uint8_t>(d.comment >= 0 ? d.comment : '\n')};
    for (int k = 0; k < kValues; ++k) v_[k] = _mm_set1_epi8(static_cast<char>(values[k]));
#endif
  }
  // Bit i: whether p[i] is special, for the n <= 64 bytes at p.
  uint64_t mask(const char* p, uint64_t n) const {
#if defined(__SSE2__)
    if (n == 64) {
      uint64_t m = 0;
      for (int part = 0; part < 4; ++part) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
        __m128i hit = _mm_cmpeq_epi8(b, v_[0]);
        for (int k = 1; k < kValues; ++k) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(b, v_[k]));
        m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(hit))) << (16 * part);
      }
      return m;
    }
#endif
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; ++i)
      if (d_.char_class[static_cast<uint8_t>(p[i])] != kClassOther) m |= uint64_t{1} << i;
    return m;
  }

 private:
  const Dialect& d_;
#if defined(__SSE2__)
  static constexpr int kValues = 9;
  __m128i v_[kValues];
#endif
};

// Bit i: whether p[i] is `byte`, for the n <= 64 bytes at p.
inline uint64_t byte_mask(const char* p, uint64_t n, char byte) {
#if defined(__SSE2__)
  if (n == 64) {
    const __m128i v = _mm_set1_epi8(byte);
    uint64_t m = 0;
    for (int part = 0; part < 4; ++part) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * part));
      m |= static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(b, v)))) << (16 * part);
    }
    return m;
  }
#endif
  uint64_t m = 0;
  for (uint64_t i = 0; i < n; ++i)
    if (p[i] == byte) m |= uint64_t{1} << i;
  return m;
}

// tv_of_bytes for a dialect of a one-byte delimiter without escape and
// comment bytes, stepping only at quotes. Between two quotes every state but
// kQuoted (which such bytes keep) ends where the last byte of the run puts it,
// whatever came before: other bytes give kUnquoted, the delimiter
// kFieldStart, a line end kRowStart. So a run is one step, by its last byte.
// The kComment start state leaves its comment at the first line end and is
// in that run's end state from there (kRowStart's step).
inline TransitionVector tv_of_bytes_at_quotes(const Dialect& d, const char* p, uint64_t n) {
  uint8_t st[kNumStates];
  for (int s = 0; s < d.states; ++s) st[s] = static_cast<uint8_t>(s);
  const void* lf = std::memchr(p, '\n', n);
  const void* cr = std::memchr(p, '\r', lf ? static_cast<const char*>(lf) - p : n);
  const uint64_t first_line_end = cr ? static_cast<const char*>(cr) - p : lf ? static_cast<const char*>(lf) - p : n;
  bool in_comment = true;  // the kComment track, before the first line end
  uint64_t done = 0;       // bytes stepped through
  auto step_run_to = [&](uint64_t end) {  // the bytes [done, end), none a quote
    if (end == done) return;
    const uint8_t cls = d.char_class[static_cast<uint8_t>(p[end - 1])];
    for (int s = 0; s < d.states; ++s)
      if (s != kComment) st[s] = d.next[st[s]][cls];
    if (!in_comment) st[kComment] = d.next[st[kComment]][cls];
    else if (first_line_end < end) st[kComment] = d.next[kRowStart][cls], in_comment = false;
    done = end;
  };
  for (uint64_t base = 0; base < n; base += 64) {
    const uint64_t len = n - base < 64 ? n - base : 64;
    for (uint64_t m = byte_mask(p + base, len, static_cast<char>(d.quote)); m; m &= m - 1) {
      const uint64_t q = base + static_cast<uint64_t>(__builtin_ctzll(m));
      step_run_to(q);
      for (int s = 0; s < d.states; ++s)
        if (s != kComment || !in_comment) st[s] = d.next[st[s]][kClassQuote];
      done = q + 1;
    }
  }
  step_run_to(n);
  TransitionVector tv = tv_identity();
  for (int s = 0; s < d.states; ++s) tv = tv_set(tv, static_cast<uint8_t>(s), st[s]);
  return tv;
}

inline TransitionVector tv_of_bytes_fast(const Dialect& d, const char* p, uint64_t n) {
  if (d.delimiter_len == 1 && d.escape < 0 && d.comment < 0) return tv_of_bytes_at_quotes(d, p, n);
  // The distinct states the start states' tracks are in, and each start state's track.
  uint8_t at[kNumStates], track_of[kNumStates];
  int tracks = d.states;
  for (int s = 0; s < d.states; ++s) at[s] = track_of[s] = static_cast<uint8_t>(s);
  auto step = [&](uint8_t cls) {
    for (int t = 0; t < tracks; ++t) at[t] = d.next[at[t]][cls];
    if (tracks == 1) return;
    uint8_t kept[kNumStates] = {}, renumber[kNumStates] = {};  // tracks that met are one from here
    int n_kept = 0;
    for (int t = 0; t < tracks; ++t) {
      int k = 0;
      while (k < n_kept && kept[k] != at[t]) ++k;
      if (k == n_kept) kept[n_kept++] = at[t];
      renumber[t] = static_cast<uint8_t>(k);
    }
    if (n_kept == tracks) return;
    for (int s = 0; s < d.states; ++s) track_of[s] = renumber[track_of[s]];
    for (int k = 0; k < n_kept; ++k) at[k] = kept[k];
    tracks = n_kept;
  };
  // After one byte of no class every state is one that such bytes keep, so
  // of a run of them only the first is stepped: the one after a special
  // byte (or the first byte of all).
  const SpecialBytes special(d);
  bool other_pending = true;
  for (uint64_t base = 0; base < n; base += 64) {
    const uint64_t len = n - base < 64 ? n - base : 64;
    uint64_t m = special.mask(p + base, len);
    if (other_pending && (m & 1) == 0) step(kClassOther);
    other_pending = false;
    while (m) {
      const uint64_t i = static_cast<uint64_t>(__builtin_ctzll(m));
      m &= m - 1;
      step(d.char_class[static_cast<uint8_t>(p[base + i])]);
      if (i + 1 == len) other_pending = true;  // the next byte is in the next block
      else if ((m & (uint64_t{1} << (i + 1))) == 0) step(kClassOther);
    }
  }
  TransitionVector tv = tv_identity();
  for (int s = 0; s < d.states; ++s) tv = tv_set(tv, static_cast<uint8_t>(s), at[track_of[s]]);
  return tv;
}

}  // namespace warpcsv
