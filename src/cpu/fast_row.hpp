// A host fast path for the commonest row: no quote character in it. Field
// boundaries come from SSE2 byte-compare masks, 16 bytes at a time, instead
// of a byte loop. Any row it cannot handle exactly as core/tokenize.hpp's
// parse_row would (quotes, comments, empty lines, the end of the buffer) is
// left to parse_row: the caller gets false. Also the one pass over a
// partition's bytes that finds a byte (the quote) and says whether NUL /
// UTF-8 checks are needed there (scan_bytes).
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/core/utf8.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
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

// Whether p[0..n) holds a byte that is 0 or >= 0x80: only such bytes can make
// a NUL or invalid UTF-8 (core/utf8.hpp find_byte_issue). SSE2, 64 bytes a
// step: an unsigned minimum finds a 0, an OR the high bit; a scalar loop
// without SSE2 and for fewer than 16 bytes.
inline bool has_nul_or_high_byte_sse2(const char* p, uint64_t n) {
  uint64_t i = 0;
#if defined(__SSE2__)
  if (n >= 16) {
    auto load = [&](uint64_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)); };
    __m128i low = _mm_set1_epi8(-1), high = _mm_setzero_si128();
    for (; i + 64 <= n; i += 64) {
      const __m128i a = load(i), b = load(i + 16), c = load(i + 32), d = load(i + 48);
      low = _mm_min_epu8(low, _mm_min_epu8(_mm_min_epu8(a, b), _mm_min_epu8(c, d)));
      high = _mm_or_si128(high, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)));
    }
    for (; i + 16 <= n; i += 16) {
      const __m128i a = load(i);
      low = _mm_min_epu8(low, a);
      high = _mm_or_si128(high, a);
    }
    if (i < n) {  // the last bytes: one load that overlaps bytes already seen
      const __m128i a = load(n - 16);
      low = _mm_min_epu8(low, a);
      high = _mm_or_si128(high, a);
    }
    return _mm_movemask_epi8(_mm_or_si128(high, _mm_cmpeq_epi8(low, _mm_setzero_si128()))) != 0;
  }
#endif
  for (; i < n; ++i) {
    const uint8_t c = static_cast<uint8_t>(p[i]);
    if (c == 0 || c >= 0x80) return true;
  }
  return false;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define WARPCSV_HAVE_AVX2_SCAN 1
// The same with AVX2, 128 bytes a step: the partitioner's pass then costs
// about what the memchr for the quote alone did. Used when the CPU has AVX2.
__attribute__((target("avx2"))) inline bool has_nul_or_high_byte_avx2(const char* p, uint64_t n) {
  if (n < 32) return has_nul_or_high_byte_sse2(p, n);
  __m256i low = _mm256_set1_epi8(-1), high = _mm256_setzero_si256();
  uint64_t i = 0;
  for (; i + 128 <= n; i += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 64));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 96));
    low = _mm256_min_epu8(low, _mm256_min_epu8(_mm256_min_epu8(a, b), _mm256_min_epu8(c, d)));
    high = _mm256_or_si256(high, _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d)));
  }
  for (; i + 32 <= n; i += 32) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    low = _mm256_min_epu8(low, a);
    high = _mm256_or_si256(high, a);
  }
  if (i < n) {  // the last bytes: one load that overlaps bytes already seen
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + n - 32));
    low = _mm256_min_epu8(low, a);
    high = _mm256_or_si256(high, a);
  }
  return _mm256_movemask_epi8(_mm256_or_si256(high, _mm256_cmpeq_epi8(low, _mm256_setzero_si256()))) != 0;
}

inline bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

inline bool has_nul_or_high_byte(const char* p, uint64_t n) {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  if (cpu_has_avx2()) return has_nul_or_high_byte_avx2(p, n);
#endif
  return has_nul_or_high_byte_sse2(p, n);
}

// find_byte_issue (core/utf8.hpp) with SSE2: the same result, 16 bytes a step
// up to each byte that is 0 or >= 0x80 (found by a movemask, as in
// has_nul_or_high_byte), which is then checked as the core does. The last
// bytes are one load that overlaps bytes already seen. For rows on the CPU.
inline ByteIssue find_byte_issue_sse2(const char* p, uint64_t n, uint64_t* at) {
#if defined(__SSE2__)
  if (n < 16) return find_byte_issue(p, n, at);
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  const __m128i zero = _mm_setzero_si128();
  auto odd_mask = [&](uint64_t from) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + from));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(v, _mm_cmpeq_epi8(v, zero))));
  };
  uint64_t i = 0;
  while (i < n) {
    uint32_t m;
    uint64_t base = i;
    if (i + 16 <= n) {
      m = odd_mask(i);
    } else {
      base = n - 16;  // the last bytes: bits below i are bytes already checked
      m = odd_mask(base) & ~((1u << (i - base)) - 1u);
    }
    if (m == 0) {
      i = base + 16;
      continue;
    }
    i = base + static_cast<uint64_t>(__builtin_ctz(m));
    if (u[i] == 0) {
      *at = i;
      return ByteIssue::Nul;
    }
    const size_t len = utf8_sequence(u + i, static_cast<size_t>(n - i));
    if (len == 0) {
      *at = i;
      return ByteIssue::InvalidUtf8;
    }
    i += len;
  }
  return ByteIssue::None;
#else
  return find_byte_issue(p, n, at);
#endif
}

// What one pass over bytes found.
struct ByteScan {
  bool has_byte = false;     // the byte looked for
  bool nul_or_high = false;  // a byte that is 0 or >= 0x80 (up to where the scan stopped)
};

// kScanBlock bytes at a time, so that the second test of a block reads it
// from L1: memory is read once for both.
constexpr uint64_t kScanBlock = 16 << 10;

// One pass over p[0..n) for the partitioner: whether it holds the byte `c`
// (c < 0: none is looked for; memchr) and whether it holds a byte 0 or
// >= 0x80 (has_nul_or_high_byte). It stops at the block that holds `c`: then
// `nul_or_high` covers only the bytes up to that block's end (the caller reads
// the rest byte by byte anyway).
inline ByteScan scan_bytes(const char* p, uint64_t n, int c) {
  ByteScan out;
  for (uint64_t b = 0; b < n; b += kScanBlock) {
    const uint64_t m = n - b < kScanBlock ? n - b : kScanBlock;
    if (!out.nul_or_high) out.nul_or_high = has_nul_or_high_byte(p + b, m);
    if (c >= 0 && std::memchr(p + b, c, m) != nullptr) {
      out.has_byte = true;
      break;
    }
    if (c < 0 && out.nul_or_high) break;
  }
  return out;
}

}  // namespace warpcsv
