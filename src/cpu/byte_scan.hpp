// The CPU's passes over raw bytes, with SSE2 and, where the CPU has it, AVX2:
// whether bytes may hold a NUL or invalid UTF-8, where the first such issue
// is (core/utf8.hpp's find_byte_issue, faster), and the partitioner's one
// pass that looks for the quote byte and checks the text (scan_bytes). Text
// with accents or other scripts has a byte >= 0x80 every few bytes: checking
// each character in turn took a tenth of a narrow-row scan.
#pragma once
#include <cstdint>
#include <cstring>

#include "warpcsv/core/utf8.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace warpcsv {

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


// find_byte_issue with SSE2: the same result, 16 bytes a step up to each byte
// that is 0 or >= 0x80 (found by a movemask, as in has_nul_or_high_byte),
// which is then checked as the core does. The last bytes are one load that
// overlaps bytes already seen.
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

#if defined(WARPCSV_HAVE_AVX2_SCAN)
// Whether p[0..n) is valid UTF-8 without a NUL, 32 bytes a step with no
// branch per character: the lookup method of Keiser and Lemire ("Validating
// UTF-8 in less than one instruction per byte", 2021), as simdjson and
// simdutf use it. Each byte pair (previous, current) is classified by three
// 16-entry tables (the previous byte's high and low nibble, the current
// byte's high nibble); a bit set in all three is an error. The tables catch
// too short and too long sequences, overlong forms, surrogates and code
// points above U+10FFFF; the third and fourth bytes of a sequence are checked
// apart, from the bytes two and three back.
namespace utf8_avx2 {

enum : uint8_t {
  kTooShort = 1 << 0,    // a lead byte, or ASCII, then not a continuation where one is due
  kTooLong = 1 << 1,     // ASCII then a continuation
  kOverlong3 = 1 << 2,   // 11100000 100_____
  kTooLarge = 1 << 3,    // 11110100 1001____ and above
  kSurrogate = 1 << 4,   // 11101101 101_____
  kOverlong2 = 1 << 5,   // 1100000_ 10______
  kTooLarge1000 = 1 << 6,  // 11110101 1000____ and above
  kOverlong4 = 1 << 6,   // 11110000 1000____
  kTwoConts = 1 << 7,    // a continuation then a continuation: allowed only inside 3- and 4-byte forms
  kCarry = kTooShort | kTooLong | kTwoConts,  // errors that do not depend on the previous byte's low nibble
};

__attribute__((target("avx2"))) inline __m256i table(uint8_t t0, uint8_t t1, uint8_t t2, uint8_t t3, uint8_t t4,
                                                    uint8_t t5, uint8_t t6, uint8_t t7, uint8_t t8, uint8_t t9,
                                                    uint8_t t10, uint8_t t11, uint8_t t12, uint8_t t13,
                                                    uint8_t t14, uint8_t t15) {
  const __m128i half = _mm_setr_epi8(
      static_cast<char>(t0), static_cast<char>(t1), static_cast<char>(t2), static_cast<char>(t3),
      static_cast<char>(t4), static_cast<char>(t5), static_cast<char>(t6), static_cast<char>(t7),
      static_cast<char>(t8), static_cast<char>(t9), static_cast<char>(t10), static_cast<char>(t11),
      static_cast<char>(t12), static_cast<char>(t13), static_cast<char>(t14), static_cast<char>(t15));
  return _mm256_broadcastsi128_si256(half);  // a shuffle looks up within each 128-bit lane
}

// The 32 bytes that end n bytes before the end of `cur`: prev's last n, then cur's first 32 - n.
template <int N>
__attribute__((target("avx2"))) inline __m256i bytes_back(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 16 - N);
}

// What a check carries from one piece of bytes to the next, in plain bytes so
// that code built without AVX2 can hold it.
struct Carry {
  alignas(32) uint8_t prev[32] = {};        // the last 32 bytes checked
  alignas(32) uint8_t incomplete[32] = {};  // nonzero: a sequence the next bytes must finish
  bool bad = false;                         // a NUL or invalid UTF-8 was seen
};

struct Validator {
  __m256i error, prev, incomplete, byte_1_high, byte_1_low, byte_2_high, low_nibble, last_leads;

  __attribute__((target("avx2"))) explicit Validator(const Carry& c) {
    error = _mm256_setzero_si256();
    prev = _mm256_load_si256(reinterpret_cast<const __m256i*>(c.prev));
    incomplete = _mm256_load_si256(reinterpret_cast<const __m256i*>(c.incomplete));
    low_nibble = _mm256_set1_epi8(0x0f);
    // The last three bytes may start a sequence the next 32 bytes must finish.
    last_leads = _mm256_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                  -1, -1, -1, -1, -1, -1, -1, -1, -1, static_cast<char>(0xf0 - 1),
                                  static_cast<char>(0xe0 - 1), static_cast<char>(0xc0 - 1));
    byte_1_high = table(kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong, kTooLong,  // 0___
                        kTwoConts, kTwoConts, kTwoConts, kTwoConts,                                      // 10__
                        kTooShort | kOverlong2,                                                          // 1100
                        kTooShort,                                                                       // 1101
                        kTooShort | kOverlong3 | kSurrogate,                                             // 1110
                        kTooShort | kTooLarge | kTooLarge1000 | kOverlong4);                             // 1111
    constexpr uint8_t kLarge = kCarry | kTooLarge | kTooLarge1000;
    byte_1_low = table(kCarry | kOverlong3 | kOverlong2 | kOverlong4,  // ____0000
                       kCarry | kOverlong2,                            // ____0001
                       kCarry, kCarry,                                 // ____001_
                       kCarry | kTooLarge,                             // ____0100
                       kLarge, kLarge, kLarge,                         // ____0101, ____011_
                       kLarge, kLarge, kLarge, kLarge, kLarge,         // ____1000 to ____1100
                       kLarge | kSurrogate,                            // ____1101
                       kLarge, kLarge);                                // ____111_
    constexpr uint8_t kCont = kTooLong | kOverlong2 | kTwoConts;
    byte_2_high = table(kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort, kTooShort,
                        kCont | kOverlong3 | kTooLarge1000 | kOverlong4,  // 1000____
                        kCont | kOverlong3 | kTooLarge,                   // 1001____
                        kCont | kSurrogate | kTooLarge,                   // 101_____
                        kCont | kSurrogate | kTooLarge,
                        kTooShort, kTooShort, kTooShort, kTooShort);      // 11______
  }

  __attribute__((target("avx2"))) void add(__m256i in) {
    error = _mm256_or_si256(error, _mm256_cmpeq_epi8(in, _mm256_setzero_si256()));  // a NUL
    if (_mm256_movemask_epi8(in) == 0) {
      error = _mm256_or_si256(error, incomplete);  // ASCII cannot finish what the last bytes started
      incomplete = _mm256_setzero_si256();
    } else {
      const __m256i prev1 = bytes_back<1>(in, prev);
      const __m256i high1 = _mm256_and_si256(_mm256_srli_epi16(prev1, 4), low_nibble);
      const __m256i high2 = _mm256_and_si256(_mm256_srli_epi16(in, 4), low_nibble);
      const __m256i special = _mm256_and_si256(
          _mm256_and_si256(_mm256_shuffle_epi8(byte_1_high, high1),
                           _mm256_shuffle_epi8(byte_1_low, _mm256_and_si256(prev1, low_nibble))),
          _mm256_shuffle_epi8(byte_2_high, high2));
      // Bytes two back of 111_____ or three back of 1111____ make this byte a continuation that must be.
      const __m256i third = _mm256_subs_epu8(bytes_back<2>(in, prev), _mm256_set1_epi8(0xe0 - 0x80));
      const __m256i fourth = _mm256_subs_epu8(bytes_back<3>(in, prev), _mm256_set1_epi8(0xf0 - 0x80));
      const __m256i must_continue =
          _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8(static_cast<char>(0x80)));
      error = _mm256_or_si256(error, _mm256_xor_si256(must_continue, special));
      incomplete = _mm256_subs_epu8(in, last_leads);
    }
    prev = in;
  }
  __attribute__((target("avx2"))) void save(Carry& c) const {
    _mm256_store_si256(reinterpret_cast<__m256i*>(c.prev), prev);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c.incomplete), incomplete);
    c.bad = c.bad || _mm256_testz_si256(error, error) == 0;
  }
};

// Checks p[0..n), the bytes after those `c` carries, and updates it. A last
// piece of fewer than 32 bytes is padded with spaces: ASCII, which finishes no
// sequence and mends no error, so a piece of any length only ever errs on the
// side of "bad" (a character cut between pieces that are not multiples of 32).
__attribute__((target("avx2"))) inline void check(Carry& c, const char* p, uint64_t n) {
  Validator v(c);
  uint64_t i = 0;
  for (; i + 32 <= n; i += 32) v.add(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
  if (i < n) {
    char last[32];
    std::memset(last, ' ', sizeof last);
    std::memcpy(last, p + i, n - i);
    v.add(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(last)));
  }
  v.save(c);
}

// Whether the bytes checked so far are valid UTF-8 without a NUL, ending with a whole character.
inline bool valid(const Carry& c) {
  uint8_t open = 0;
  for (uint8_t b : c.incomplete) open |= b;
  return !c.bad && open == 0;
}

}  // namespace utf8_avx2

// Whether p[0..n) is valid UTF-8 without a NUL.
inline bool utf8_without_nul_avx2(const char* p, uint64_t n) {
  utf8_avx2::Carry c;
  utf8_avx2::check(c, p, n);
  return utf8_avx2::valid(c);
}
#endif

// Whether bytes fed piece by piece, in order, may hold a NUL or invalid
// UTF-8. With AVX2 the answer is exact for the bytes as a whole (a character
// cut at their start or end counts as invalid) when every piece but the last
// is a multiple of 32 bytes long; without AVX2, any byte 0 or >= 0x80 counts.
class TextCheck {
 public:
  void feed(const char* p, uint64_t n) {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
    if (avx2_) {
      if (!carry_.bad) utf8_avx2::check(carry_, p, n);
      return;
    }
#endif
    odd_ = odd_ || has_nul_or_high_byte(p, n);
  }
  bool maybe_bad() const {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
    if (avx2_) return !utf8_avx2::valid(carry_);
#endif
    return odd_;
  }
  // Whether what was fed so far is sure to be "maybe bad", whatever follows
  // (a sequence the next piece may finish does not count).
  bool bad_already() const {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
    if (avx2_) return carry_.bad;
#endif
    return odd_;
  }

 private:
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  bool avx2_ = cpu_has_avx2();
  utf8_avx2::Carry carry_;
#endif
  bool odd_ = false;
};

// find_byte_issue, fastest way the CPU has: where AVX2 says the bytes are
// valid UTF-8 without a NUL (nearly always), that is the answer; otherwise the
// SSE2 search finds the first issue and its position.
inline ByteIssue find_byte_issue_fast(const char* p, uint64_t n, uint64_t* at) {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  if (n >= 32 && cpu_has_avx2() && utf8_without_nul_avx2(p, n)) return ByteIssue::None;
#endif
  return find_byte_issue_sse2(p, n, at);
}

// What one pass over bytes found.
struct ByteScan {
  bool has_byte = false;   // the byte looked for
  bool maybe_bad = false;  // TextCheck's answer for the bytes up to where the scan stopped
};

// How many bytes of p[0..n) are `c`: SSE2 compares 16 bytes a step and
// counts matches in 16 byte lanes, summed every 255 steps (a byte loop took a
// fifth of a scan that outputs rows, to size their table).
inline uint64_t count_byte(const char* p, uint64_t n, char c) {
  uint64_t count = 0, i = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi8(c), zero = _mm_setzero_si128();
  __m128i sums = zero;
  while (i + 16 <= n) {
    __m128i lanes = zero;  // a match subtracts -1: each lane counts to 255 at most
    for (int step = 0; step < 255 && i + 16 <= n; ++step, i += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(bytes, needle));
    }
    sums = _mm_add_epi64(sums, _mm_sad_epu8(lanes, zero));
  }
  count = static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) + static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
#endif
  for (; i < n; ++i) count += p[i] == c;
  return count;
}

// kScanBlock bytes at a time, so that the second test of a block reads it
// from L1: memory is read once for both.
constexpr uint64_t kScanBlock = 16 << 10;

// One pass over p[0..n) for the partitioner: whether it holds the byte `c`
// (c < 0: none is looked for; memchr) and whether its text may hold a NUL or
// invalid UTF-8 (TextCheck). It stops at the block that holds `c`: then
// `maybe_bad` covers only the bytes up to that block's end (the caller reads
// the rest byte by byte anyway).
inline ByteScan scan_bytes(const char* p, uint64_t n, int c) {
  ByteScan out;
  TextCheck text;
  for (uint64_t b = 0; b < n; b += kScanBlock) {
    const uint64_t m = n - b < kScanBlock ? n - b : kScanBlock;
    text.feed(p + b, m);
    if (c >= 0 && std::memchr(p + b, c, m) != nullptr) {
      out.has_byte = true;
      break;
    }
    if (c < 0 && text.bad_already()) break;
  }
  out.maybe_bad = text.maybe_bad();
  return out;
}

}  // namespace warpcsv
