// A row of a plain batch (no quote, escape or comment byte, valid UTF-8, a
// delimiter of one byte) split at its delimiters, four bytes at a time.
// Included by the row kernel's files alone.
#pragma once
#include <cstdint>

namespace warpcsv {
namespace cuda {

namespace {

// Calls take(field, begin, end) for each field of the row that starts at
// `pos` and ends just before `next`, the next row's start, with its LF, CR or
// CRLF. Returns the number of fields; 0 for an empty line.
template <class Take>
__device__ __forceinline__ uint32_t split_plain_fields(const char* data, uint32_t pos, uint32_t next,
                                                       uint8_t delimiter, Take&& take) {
  uint32_t end = next - 1;
  if (end > pos && data[end] == '\n' && data[end - 1] == '\r') --end;
  if (end == pos) return 0;
  const uint32_t* words = reinterpret_cast<const uint32_t*>(data);  // aligned, padded past the end
  const uint32_t pattern = 0x01010101u * delimiter;
  uint32_t field = 0, begin = pos;
  for (uint32_t a = pos & ~3u; a < end; a += 4) {
    const uint32_t x = __ldg(words + a / 4) ^ pattern;
    uint32_t m = ~(((x & 0x7f7f7f7fu) + 0x7f7f7f7fu) | x) & 0x80808080u;  // the delimiters' high bits
    if (a < pos) m &= ~0u << (8 * (pos - a));
    if (end - a < 4) m &= ~0u >> (8 * (4 - (end - a)));
    for (; m; m &= m - 1) {
      const uint32_t at = a + (__ffs(static_cast<int>(m)) - 1) / 8;
      take(field++, begin, at);
      begin = at + 1;
    }
  }
  take(field++, begin, end);
  return field;
}

}  // namespace

}  // namespace cuda
}  // namespace warpcsv
