// A host fast path for the commonest row: no quote character in it. Field
// boundaries come from SSE2 byte-compare masks, 16 bytes at a time, instead
// of a byte loop. Any row it cannot handle exactly as core/tokenize.hpp's
// parse_row would (quotes, comments, empty lines, the end of the buffer) is
// left to parse_row: the caller gets false.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/tokenize.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace warpcsv {

template <class Sink>
inline bool parse_plain_row(const Dialect& d, const char* p, uint64_t pos, uint64_t end, Sink&& sink,
                            RowResult& r) {
#if defined(__SSE2__)
  if (pos >= end || d.delimiter_len > 1) return false;
  const char first = p[pos];
  if (first == '\n' || first == '\r' || (d.comment >= 0 && static_cast<uint8_t>(first) == d.comment))
    return false;
  const __m128i delim = _mm_set1_epi8(static_cast<char>(d.delimiter));
  const __m128i quote = _mm_set1_epi8(static_cast<char>(d.quote));
  const __m128i lf = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r');
  uint32_t fields = 0;
  uint64_t field_begin = pos;
  for (uint64_t i = pos; i + 16 <= end; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, delim), _mm_cmpeq_epi8(v, quote)),
                                     _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
    uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(hit));
    while (mask) {
      const uint64_t at = i + static_cast<uint64_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      const uint8_t c = static_cast<uint8_t>(p[at]);
      if (c == d.quote) return false;
      sink(fields, field_begin, at, uint8_t{0});
      ++fields;
      field_begin = at + 1;
      if (c == d.delimiter) continue;
      uint64_t next = at + 1;  // a line terminator: LF, CR or CRLF
      if (c == '\r') {
        if (next >= end) return false;
        if (p[next] == '\n') ++next;
      }
      r = RowResult{};
      r.error = RowError::None;
      r.next = next;
      r.fields = fields;
      r.lines = 1;
      return true;
    }
  }
#else
  (void)d, (void)p, (void)pos, (void)end, (void)sink, (void)r;
#endif
  return false;
}

}  // namespace warpcsv
