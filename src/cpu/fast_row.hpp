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

// The splitter with the dialect's bytes held (as SSE2 vectors): a loop over
// many rows builds it once, not once a row.
class PlainRowSplitter {
 public:
  explicit PlainRowSplitter(const Dialect& d)
      : usable_(d.delimiter_len <= 1), comment_(d.comment), delimiter_(static_cast<uint8_t>(d.delimiter)),
        quote_(static_cast<uint8_t>(d.quote)) {
#if defined(__SSE2__)
    delim_v_ = _mm_set1_epi8(static_cast<char>(d.delimiter));
    quote_v_ = _mm_set1_epi8(static_cast<char>(d.quote));
    lf_v_ = _mm_set1_epi8('\n');
    cr_v_ = _mm_set1_epi8('\r');
#endif
  }

  // The row at p[pos] as parse_row would give it, into `sink` and `r`; false
  // (the row is parse_row's) for what this path does not handle.
  template <class Sink>
  bool split(const char* p, uint64_t pos, uint64_t end, Sink&& sink, RowResult& r) const {
#if defined(__SSE2__)
    if (pos >= end || !usable_) return false;
    const char first = p[pos];
    if (first == '\n' || first == '\r' || (comment_ >= 0 && static_cast<uint8_t>(first) == comment_)) return false;
    uint32_t fields = 0;
    uint64_t field_begin = pos;
    for (uint64_t i = pos; i + 16 <= end; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, delim_v_), _mm_cmpeq_epi8(v, quote_v_)),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, lf_v_), _mm_cmpeq_epi8(v, cr_v_)));
      uint32_t mask = static_cast<uint32_t>(_mm_movemask_epi8(hit));
      while (mask) {
        const uint64_t at = i + static_cast<uint64_t>(__builtin_ctz(mask));
        mask &= mask - 1;
        const uint8_t c = static_cast<uint8_t>(p[at]);
        if (c == quote_) return false;
        sink(fields, field_begin, at, uint8_t{0});
        ++fields;
        field_begin = at + 1;
        if (c == delimiter_) continue;
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
    (void)p, (void)pos, (void)end, (void)sink, (void)r;
#endif
    return false;
  }

 private:
  bool usable_;  // a delimiter of one byte
  int comment_;
  uint8_t delimiter_, quote_;
#if defined(__SSE2__)
  __m128i delim_v_, quote_v_, lf_v_, cr_v_;
#endif
};

template <class Sink>
inline bool parse_plain_row(const Dialect& d, const char* p, uint64_t pos, uint64_t end, Sink&& sink,
                            RowResult& r) {
  return PlainRowSplitter(d).split(p, pos, end, sink, r);
}

}  // namespace warpcsv
