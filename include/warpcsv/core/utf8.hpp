// UTF-8 validation, shared by the JSON writer and the input checks.
#pragma once
#include <cstddef>
#include <cstdint>

#include "warpcsv/core/hd.hpp"

namespace warpcsv {

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

}  // namespace warpcsv
