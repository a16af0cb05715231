// The row-boundary scan's shortcut for a segment of a batch that holds no
// quote, escape or comment byte under a delimiter of one byte ("plain"):
// then every start state outside quotes and comments ends where the last
// byte's class puts it, whatever came before; a quoted state stays quoted
// (an escape state returns to it); and a comment ends at the first line end
// (the host's tv_of_bytes_at_quotes reasons the same way). So the segment's
// transition and its row starts come from bit masks of its line ends, with
// no walk of the state machine. Plain C++ without CUDA, so CPU builds test it
// against the walk.
#pragma once
#include <cstdint>

#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/hd.hpp"

namespace warpcsv {
namespace cuda {

constexpr uint64_t kPlainSegmentBytes = 64;  // the segment kernels' kSegBytes

// The bytes that make a segment not plain (-1: none).
struct NonPlainBytes {
  int quote, escape, comment;
  bool one_byte_delimiter;
  WCSV_HD explicit NonPlainBytes(const Dialect& d)
      : quote(d.quote), escape(d.escape), comment(d.comment), one_byte_delimiter(d.delimiter_len == 1) {}
};

struct PlainSegment {
  uint64_t line_ends;  // bit i: byte i is LF or CR (the segment's bytes only)
  uint64_t cr_lf;      // bit i: byte i is the CR of a CRLF (one line end, which starts its row at the LF)
  uint8_t last;        // the segment's last byte
};

// Whether any byte of v is b (the lowest set bit of the test is exact).
WCSV_HD WCSV_FORCEINLINE bool word_has_byte(uint64_t v, int b) {
  const uint64_t x = v ^ (0x0101010101010101ull * static_cast<uint8_t>(b));
  return b >= 0 && ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull) != 0;
}

// One bit per byte (bit k for byte k) from the bytes' high bits.
WCSV_HD WCSV_FORCEINLINE uint64_t byte_bits(uint64_t high_bits) {
  return ((high_bits >> 7) * 0x0102040810204080ull) >> 56;
}

// Whether segment `seg` of bytes [0, n) is plain, and then its bits. The
// segment's 64 bytes are read whole (data is 8-byte aligned and readable to
// the end of the last segment): bytes past n only make a segment not plain.
WCSV_HD WCSV_FORCEINLINE bool plain_segment(const char* data, uint64_t n, uint64_t seg, const NonPlainBytes& np,
                                            PlainSegment& out) {
  if (!np.one_byte_delimiter) return false;
  const uint64_t base = seg * kPlainSegmentBytes;
  const uint64_t len = n - base < kPlainSegmentBytes ? n - base : kPlainSegmentBytes;
  const uint64_t* words = reinterpret_cast<const uint64_t*>(data + base);
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  uint64_t lf = 0, cr = 0;
  bool special = false;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < 8; ++k) {
    const uint64_t w = words[k];
    special |= word_has_byte(w, np.quote) || word_has_byte(w, np.escape) || word_has_byte(w, np.comment);
    lf |= byte_bits(zero_byte_bits(w ^ (kOnes * '\n'))) << (8 * k);
    cr |= byte_bits(zero_byte_bits(w ^ (kOnes * '\r'))) << (8 * k);
  }
  if (special) return false;
  const uint64_t own = len >= 64 ? ~0ull : (1ull << len) - 1;
  const bool lf_after = len == 64 && base + 64 < n && data[base + 64] == '\n';
  out.line_ends = (lf | cr) & own;
  out.cr_lf = cr & ((lf >> 1) | (static_cast<uint64_t>(lf_after) << 63)) & own;
  out.last = static_cast<uint8_t>(data[base + len - 1]);
  return true;
}

// The state a plain segment ends in from `start`: one step by its last
// byte's class (`next(state, class)`, the dialect's table), a comment's
// track only past a line end.
template <class Next>
WCSV_HD WCSV_FORCEINLINE uint8_t plain_segment_end(const PlainSegment& s, uint8_t start, uint8_t last_class,
                                                   Next next) {
  if (start != kComment) return next(start, last_class);
  return s.line_ends ? next(static_cast<uint8_t>(kRowStart), last_class) : static_cast<uint8_t>(kComment);
}

// Bit i: a row starts at base + i + 1, after byte i of a plain segment at
// `base` entered in state `start`, for rows that start before `row_end`.
// Inside quotes no line end starts a row; anywhere else each does (a
// comment's too), but the CR of a CRLF.
WCSV_HD WCSV_FORCEINLINE uint64_t plain_segment_row_starts(const PlainSegment& s, uint8_t start, uint64_t base,
                                                           uint64_t row_end) {
  if (start == kQuoted || start == kEscape) return 0;
  uint64_t starts = s.line_ends & ~s.cr_lf;
  const uint64_t before_end = row_end - base - 1;  // a line end at byte i < this starts a row
  if (before_end < 64) starts &= (1ull << before_end) - 1;
  return starts;
}

}  // namespace cuda
}  // namespace warpcsv
