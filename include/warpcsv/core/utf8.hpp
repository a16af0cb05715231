// UTF-8 validation, shared by the JSON writer and the input checks (the CPU
// executor's bad-row check and the CUDA kernels call find_byte_issue), and
// the columns text takes on a terminal.
#pragma once
#include <cstddef>
#include <cstdint>

#include "warpcsv/core/hd.hpp"

namespace warpcsv {

// A UTF-8 continuation byte: not the first byte of a character.
WCSV_HD inline bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at p (1..4), or 0 if it is invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
WCSV_HD inline size_t utf8_sequence(const unsigned char* p, size_t n) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Offset of the first byte that is not valid UTF-8, or n when all of it is.
WCSV_HD inline size_t utf8_invalid_at(const char* p, size_t n) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n;) {
    const size_t len = utf8_sequence(u + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

// What makes a data row unusable as text.
enum class ByteIssue : uint8_t { None, Nul, InvalidUtf8 };

// The high bit of each byte of `w` that is >= 0x80, and of its lowest zero
// byte: nothing below the lowest such byte borrows in w - 0x0101..., so the
// result is zero for a word of bytes 0x01..0x7F only, and its lowest set bit
// marks the first byte that is 0 or >= 0x80.
WCSV_HD constexpr uint64_t nul_or_high_bits(uint64_t w) {
  return ((w - 0x0101010101010101ull) | w) & 0x8080808080808080ull;
}

// The first NUL byte or invalid UTF-8 sequence in p[0..n): its kind, and its
// offset in *at (set only when there is one). A NUL is reported where it is;
// an invalid sequence at the offset of its first byte (a sequence cut short by
// a NUL is invalid at its lead byte, which comes first). ASCII text goes 8
// bytes at a time.
WCSV_HD inline ByteIssue find_byte_issue(const char* p, uint64_t n, uint64_t* at) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t i = 0;
  while (i < n) {
    if (n - i >= 8) {
      uint64_t w;
#if defined(__CUDA_ARCH__)
      memcpy(&w, u + i, 8);  // no alignment assumed
#else
      __builtin_memcpy(&w, u + i, 8);
#endif
      const uint64_t flagged = nul_or_high_bits(w);
      if (flagged == 0) {
        i += 8;
        continue;
      }
#if defined(__CUDA_ARCH__)
      i += static_cast<uint64_t>(__ffsll(static_cast<long long>(flagged)) - 1) >> 3;
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      i += static_cast<uint64_t>(__builtin_ctzll(flagged)) >> 3;  // the bytes before it are plain ASCII
#endif
    }
    const unsigned char c = u[i];
    if (c == 0) {
      *at = i;
      return ByteIssue::Nul;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    const size_t len = utf8_sequence(u + i, static_cast<size_t>(n - i));
    if (len == 0) {
      *at = i;
      return ByteIssue::InvalidUtf8;
    }
    i += len;
  }
  return ByteIssue::None;
}

// The terminal columns p[0, n) takes, so that aligned tables and carets line
// up: two for a character of the wide (East Asian, emoji) ranges, none for a
// combining mark, a zero-width space or joiner or a variation selector, one
// for any other (an invalid byte too).
inline size_t terminal_width(const char* p, size_t n) {
  size_t width = 0;
  for (size_t i = 0; i < n;) {
    const unsigned char* u = reinterpret_cast<const unsigned char*>(p + i);
    const size_t len = u[0] < 0x80 ? 1 : utf8_sequence(u, n - i);
    if (len <= 1) {
      width += 1;
      i += 1;
      continue;
    }
    uint32_t cp = u[0] & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) cp = cp << 6 | (u[k] & 0x3F);
    const bool zero = (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
                      (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x200B && cp <= 0x200F) ||
                      (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
                      (cp >= 0xFE20 && cp <= 0xFE2F);
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
                      (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
                      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
    width += zero ? 0 : wide ? 2 : 1;
    i += len;
  }
  return width;
}

}  // namespace warpcsv
