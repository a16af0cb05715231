// find_byte_issue (core/utf8.hpp): the first NUL byte or invalid UTF-8 sequence of a row, its
// per-row use (check_row_bytes), the CPU's faster versions and per-partition pre-test
// (cpu/byte_scan.hpp) and how a bad row's bytes are shown (make_row_issue).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cpu/byte_scan.hpp"
#include "exec/partitioner.hpp"
#include "io/row_issue.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/core/utf8.hpp"

using namespace warpcsv;

namespace {

struct Found {
  ByteIssue kind;
  uint64_t at;
};

Found find(const std::string& s) {
  uint64_t at = 12345;
  const ByteIssue k = find_byte_issue(s.data(), s.size(), &at);
  return {k, k == ByteIssue::None ? UINT64_MAX : at};
}

// The reference: the first NUL, or the first invalid sequence by the existing validator,
// whichever comes first.
Found reference(const std::string& s) {
  const size_t nul = s.find('\0');
  const size_t bad = utf8_invalid_at(s.data(), s.size());
  if (nul == std::string::npos && bad == s.size()) return {ByteIssue::None, UINT64_MAX};
  if (nul != std::string::npos && nul < bad) return {ByteIssue::Nul, nul};
  return {ByteIssue::InvalidUtf8, bad};
}

bool naive_odd(const std::string& s) {
  for (unsigned char c : s)
    if (c == 0 || c >= 0x80) return true;
  return false;
}

// What TextCheck (and the partitioner's flag) must say of bytes checked whole: with AVX2,
// whether they are not valid UTF-8 without a NUL; without, whether a byte is 0 or >= 0x80.
bool maybe_bad(const std::string& s) {
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  if (cpu_has_avx2()) return find(s).kind != ByteIssue::None;
#endif
  return naive_odd(s);
}

// Requires `finder` to give find_byte_issue's kind and position for s; returns the kind.
ByteIssue require_same_issue(const std::string& s, ByteIssue (*finder)(const char*, uint64_t, uint64_t*)) {
  uint64_t want_at = 1, got_at = 2;
  const ByteIssue want = find_byte_issue(s.data(), s.size(), &want_at);
  const ByteIssue got = finder(s.data(), s.size(), &got_at);
  REQUIRE(got == want);
  if (want != ByteIssue::None) REQUIRE(got_at == want_at);
  return want;
}

// How random_text mixes its bytes: one in `any` is any byte (style 0), one in
// `odd` a NUL (style 1) or a stray continuation byte (style 2; style 3 has
// neither), one in `piece` a UTF-8 character of `pieces`, one such in `cut`
// cut short; the rest printable ASCII.
struct TextMix {
  uint64_t any, odd, piece, cut;
};

std::string random_text(std::mt19937_64& rng, size_t len, int style, const TextMix& m,
                        const std::vector<std::string>& pieces) {
  std::string s;
  while (s.size() < len) {
    const uint64_t r = rng();
    if (style == 0 && r % m.any == 0) {
      s += static_cast<char>((r >> 8) & 0xff);
    } else if (r % m.odd == 0 && style != 3) {
      s += static_cast<char>(style == 1 ? 0 : 0x80 + (r >> 8) % 128);
    } else if (r % m.piece == 1) {
      const std::string& p = pieces[(r >> 8) % pieces.size()];
      s += (r >> 16) % m.cut == 0 ? p.substr(0, p.size() - 1) : p;
    } else {
      s += static_cast<char>(0x20 + (r >> 8) % 95);
    }
  }
  return s;
}

const char* name(ByteIssue k) {
  return k == ByteIssue::None ? "none" : k == ByteIssue::Nul ? "nul" : "invalid";
}

}  // namespace

TEST_CASE("find_byte_issue: ASCII text of every length has no issue") {
  std::string s;
  for (int n = 0; n < 100; ++n) {
    INFO("length " << n);
    CHECK(find(s).kind == ByteIssue::None);
    s += static_cast<char>(1 + n % 127);  // every byte 0x01..0x7F
  }
  const std::string csv = "id1,id2,v1\nid001,id045,12\r\n\"quoted, field\",\t,\x7f\n";
  CHECK(find(csv).kind == ByteIssue::None);
}

TEST_CASE("find_byte_issue: a NUL at every position of a 40-byte buffer") {
  for (size_t i = 0; i < 40; ++i) {
    std::string s(40, 'a');
    s[i] = '\0';
    const Found f = find(s);
    INFO("NUL at " << i);
    CHECK(f.kind == ByteIssue::Nul);
    CHECK(f.at == i);
    // Several NULs: the first one is reported.
    s[39] = '\0';
    CHECK(find(s).at == i);
  }
  // Also right after valid multibyte text, and inside what would be a sequence.
  CHECK(find(std::string("\xc3\xa9\0x", 4)).at == 2);
  const Found cut = find(std::string("ab\xc3\0", 4));  // the cut sequence comes first
  CHECK(cut.kind == ByteIssue::InvalidUtf8);
  CHECK(cut.at == 2);
}

TEST_CASE("find_byte_issue: every class of invalid UTF-8, at several offsets") {
  struct Case {
    const char* what;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"Latin-1 e acute", "\xe9"},
      {"lone continuation", "\x80"},
      {"lone last continuation", "\xbf"},
      {"0xFE", "\xfe"},
      {"0xFF", "\xff"},
      {"5-byte lead", "\xf8\x88\x80\x80\x80"},
      {"2-byte lead then ASCII", "\xc3(x"},
      {"3-byte lead then ASCII", "\xe2(\xa1"},
      {"3-byte, second continuation missing", "\xe2\x82(x"},
      {"4-byte, third continuation missing", "\xf0\x9f\x98(x"},
      {"overlong 2-byte /", "\xc0\xaf"},
      {"overlong 2-byte NUL", "\xc0\x80"},
      {"overlong 2-byte 0x7F", "\xc1\xbf"},
      {"overlong 3-byte", "\xe0\x80\xaf"},
      {"overlong 3-byte 0x7FF", "\xe0\x9f\xbf"},
      {"overlong 4-byte", "\xf0\x80\x80\xaf"},
      {"overlong 4-byte 0xFFFF", "\xf0\x8f\xbf\xbf"},
      {"surrogate D800", "\xed\xa0\x80"},
      {"surrogate DFFF", "\xed\xbf\xbf"},
      {"above U+10FFFF", "\xf4\x90\x80\x80"},
      {"lead F5", "\xf5\x80\x80\x80"},
  };
  for (const Case& c : cases) {
    for (size_t offset : {0, 1, 7, 8, 9, 15, 16, 23}) {
      const std::string s = std::string(offset, 'x') + c.bytes + "tail,text\n";
      const Found f = find(s);
      INFO(c.what << " at offset " << offset);
      CHECK(f.kind == ByteIssue::InvalidUtf8);
      CHECK(f.at == offset);
    }
  }
  // Sequences cut short by the end of the buffer.
  const std::vector<std::string> truncated = {"\xc3", "\xe2", "\xe2\x82", "\xf0", "\xf0\x9f", "\xf0\x9f\x98"};
  for (const std::string& t : truncated) {
    for (size_t offset : {0, 5, 8, 13}) {
      const std::string s = std::string(offset, 'y') + "\xc3\xa9" + t;  // after a valid e acute
      const Found f = find(s);
      INFO("truncated sequence of " << t.size() << " bytes at offset " << offset + 2);
      CHECK(f.kind == ByteIssue::InvalidUtf8);
      CHECK(f.at == offset + 2);
    }
  }
}

TEST_CASE("find_byte_issue: valid multibyte text has no issue") {
  const std::vector<std::string> texts = {
      "caf\xc3\xa9",                          // e acute (2 bytes)
      "\xc2\x80\xdf\xbf",                     // U+0080, U+07FF
      "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",  // U+0800, U+D7FF, U+E000, U+FFFF
      "\xe2\x82\xac 12",                      // euro sign
      "\xe5\xb1\xb1\xe7\x94\xb0,\xe6\x9d\xb1\xe4\xba\xac",  // CJK
      "\xf0\x9f\x98\x80 smile \xf0\x9f\x8e\x89",  // emoji (4 bytes)
      "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",     // U+10000, U+10FFFF
      "\xef\xbb\xbf" "a,b",                   // a BOM is valid UTF-8
  };
  for (const std::string& t : texts) {
    for (size_t offset = 0; offset < 17; ++offset) {
      const std::string s = std::string(offset, 'z') + t + std::string(offset % 9, 'w');
      INFO("text " << t << " at offset " << offset);
      CHECK(find(s).kind == ByteIssue::None);
      // An invalid byte after the valid text is found where it is.
      const Found f = find(s + "\xff");
      CHECK(f.kind == ByteIssue::InvalidUtf8);
      CHECK(f.at == s.size());
    }
  }
}

TEST_CASE("find_byte_issue_sse2 equals find_byte_issue: one issue at every position of rows up to 100 bytes") {
  const std::vector<std::string> issues = {std::string(1, '\0'), "\xe9", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80",
                                           "\xf4\x90\x80\x80", "\xc0\xaf"};
  const std::string valid = "\xc3\xa9";
  for (size_t n = 0; n <= 100; ++n) {
    for (size_t i = 0; i <= n; ++i) {
      for (size_t k = 0; k <= issues.size(); ++k) {
        // Text of n ASCII bytes with a valid 2-byte character, then maybe an issue, at i.
        std::string s(n, 'r');
        s.insert(n / 3, valid);
        if (k < issues.size()) s.insert(i + (i > n / 3 ? valid.size() : 0), issues[k]);
        INFO("length " << s.size() << ", issue " << k << " at " << i);
        const ByteIssue k1 = require_same_issue(s, find_byte_issue_sse2);
        CHECK((k1 == ByteIssue::None) == (k == issues.size()));
      }
    }
  }
}

TEST_CASE("find_byte_issue agrees with utf8_invalid_at and a NUL search on 100k random strings") {
  std::mt19937_64 rng(20261130);
  // Byte sources: ASCII-heavy text with some multibyte characters, and raw random bytes.
  const std::vector<std::string> pieces = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
                                           "\xf4\x8f\xbf\xbf"};
  size_t counts[3] = {0, 0, 0};
  for (int iter = 0; iter < 100000; ++iter) {
    const size_t len = rng() % 70;
    const int style = static_cast<int>(rng() % 4);
    const std::string s = random_text(rng, len, style, TextMix{1, 64, 16, 8}, pieces);
    const Found want = reference(s);
    const Found got = find(s);
    ++counts[static_cast<int>(want.kind)];
    if (got.kind != want.kind || got.at != want.at) {
      std::string hex;
      for (unsigned char c : s) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 15], hex += ' ';
      INFO("bytes: " << hex);
      CHECK(name(got.kind) == std::string(name(want.kind)));
      REQUIRE(got.at == want.at);
    }
    // The CPU's SSE2 version gives the same answer, and its pre-test never misses a string with an issue.
    uint64_t at2 = 12345;
    const ByteIssue k2 = find_byte_issue_sse2(s.data(), s.size(), &at2);
    REQUIRE(name(k2) == std::string(name(want.kind)));
    if (k2 != ByteIssue::None) REQUIRE(at2 == want.at);
    REQUIRE(has_nul_or_high_byte(s.data(), s.size()) == naive_odd(s));
  }
  // Each outcome was exercised many times.
  INFO("none " << counts[0] << ", NUL " << counts[1] << ", invalid " << counts[2]);
  CHECK(counts[0] > 5000);
  CHECK(counts[1] > 5000);
  CHECK(counts[2] > 5000);
}

// find_byte_issue_fast: where the CPU has AVX2, a check 32 bytes a step (cpu/byte_scan.hpp) says
// "no issue"; else the SSE2 search finds it. Its answer must be the core's, for every kind of
// invalid sequence, on either side of a 32-byte step and in the last, padded bytes.
TEST_CASE("find_byte_issue_fast equals find_byte_issue: every kind of issue at every position of text up to 200 bytes") {
  const std::vector<std::string> issues = {
      std::string(1, '\0'), "\x80",          "\xbf\x80",        "\xc3",             "\xc3\xc3",   "\xc0\x80",
      "\xc1\xbf",           "\xe0\x80\x80",  "\xe0\x9f\xbf",    "\xed\xa0\x80",    "\xed\xbf\xbf", "\xe2\x82",
      "\xf0\x80\x80\x80",   "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xf8",      "\xff",
      "\xf0\x9f\x98",       "\xe2\x82\xac\x80", "\xc3\xa9\xa9"};
  const std::vector<std::string> valid = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
                                          "\xf4\x8f\xbf\xbf", "\xee\x80\x80", "\xc2\x80", "\xef\xbf\xbf"};
  std::mt19937_64 rng(2026);
  size_t cases = 0, clean = 0;
  for (size_t n = 0; n <= 200; n += (n < 80 ? 1 : 7)) {
    // n bytes of text: ASCII with a valid character every few bytes, so that some cross a 32-byte step.
    std::string text;
    while (text.size() < n) text += rng() % 3 ? std::string(1, static_cast<char>('a' + rng() % 26)) : valid[rng() % valid.size()];
    for (size_t i = 0; i <= text.size(); ++i) {
      if (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;  // inside a character
      for (size_t k = 0; k <= issues.size(); ++k) {
        std::string s = text;
        if (k < issues.size()) s.insert(i, issues[k]);
        INFO("length " << s.size() << ", issue " << k << " at " << i);
        const ByteIssue k1 = require_same_issue(s, find_byte_issue_fast);
        CHECK((k1 == ByteIssue::None) == (k == issues.size()));
#if defined(WARPCSV_HAVE_AVX2_SCAN)
        if (cpu_has_avx2() && s.size() >= 32) REQUIRE(utf8_without_nul_avx2(s.data(), s.size()) == (k1 == ByteIssue::None));
#endif
        ++cases;
        clean += k1 == ByteIssue::None;
      }
    }
  }
  CHECK(cases > 50000);
  CHECK(clean > 2000);
}

TEST_CASE("find_byte_issue_fast equals find_byte_issue on 20k random strings up to 700 bytes") {
  std::mt19937_64 rng(20261204);
  const std::vector<std::string> pieces = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
                                           "\xf4\x8f\xbf\xbf", "\xd0\x96"};
  size_t counts[3] = {0, 0, 0};
  for (int iter = 0; iter < 20000; ++iter) {
    const size_t len = rng() % 700;
    const int style = static_cast<int>(rng() % 4);
    const std::string s = random_text(rng, len, style, TextMix{8, 512, 4, 256}, pieces);
    const Found want = reference(s);
    uint64_t at = 12345;
    const ByteIssue got = find_byte_issue_fast(s.data(), s.size(), &at);
    ++counts[static_cast<int>(want.kind)];
    INFO("length " << s.size() << ", style " << style);
    REQUIRE(name(got) == std::string(name(want.kind)));
    if (got != ByteIssue::None) REQUIRE(at == want.at);
  }
  INFO("none " << counts[0] << ", NUL " << counts[1] << ", invalid " << counts[2]);
  CHECK(counts[0] > 3000);
  CHECK(counts[1] > 1000);
  CHECK(counts[2] > 3000);
}

TEST_CASE("has_nul_or_high_byte: one odd byte at every position of buffers up to 300 bytes") {
  // Every variant: the dispatcher, SSE2 and, where the CPU has it, AVX2.
  std::vector<std::pair<const char*, bool (*)(const char*, uint64_t)>> variants = {
      {"dispatch", has_nul_or_high_byte}, {"sse2", has_nul_or_high_byte_sse2}};
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  if (cpu_has_avx2()) variants.push_back({"avx2", has_nul_or_high_byte_avx2});
#endif
  for (const auto& [name, test] : variants) {
    for (size_t n = 0; n <= 300; n += (n < 140 ? 1 : 13)) {
      const std::string ascii(n, 'q');
      INFO(name << ", length " << n);
      CHECK_FALSE(test(ascii.data(), n));
      for (size_t i = 0; i < n; ++i) {
        for (char odd : {'\0', '\x80', '\xff', '\xe9', '\x01'}) {
          std::string s = ascii;
          s[i] = odd;
          INFO("byte " << static_cast<int>(static_cast<unsigned char>(odd)) << " at " << i);
          REQUIRE(test(s.data(), n) == (odd != '\x01'));
          // Bytes outside the range do not count.
          CHECK_FALSE(test(s.data(), i));
          if (i + 1 <= n) CHECK_FALSE(test(s.data() + i + 1, n - i - 1));
        }
      }
    }
  }
}

TEST_CASE("count_byte: std::count's answer at every length and offset, bytes of every value") {
  std::mt19937_64 rng(9);
  std::string text(9000, '\0');  // past 255 steps of 16 bytes, where the counts are summed
  for (char& c : text) c = static_cast<char>(rng() % 4 == 0 ? '\n' : rng() % 256);
  for (size_t offset = 0; offset < 17; ++offset)
    for (size_t n = 0; offset + n <= text.size(); n += 1 + n / 4)
      for (char c : {'\n', '\0', static_cast<char>(0xff)}) {
        INFO("offset " << offset << " n " << n << " byte " << int(c));
        CHECK(count_byte(text.data() + offset, n, c) ==
              static_cast<uint64_t>(std::count(text.begin() + offset, text.begin() + offset + n, c)));
      }
}

TEST_CASE("scan_bytes: the quote and a NUL or bad UTF-8 anywhere in buffers crossing its 16 KiB blocks") {
  std::mt19937_64 rng(77);
  const std::vector<std::string> chars = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  size_t flagged = 0, clean_with_high = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t n = iter < 200 ? static_cast<size_t>(iter) : rng() % 50000;
    std::string s(n, 'a');
    for (auto& c : s) {
      c = static_cast<char>(0x20 + rng() % 95);
      if (c == '"') c = 'y';
    }
    // Valid characters here and there, some across a block's end or a 32-byte step.
    for (int k = 0; n >= 8 && k < 6; ++k) {
      const std::string& ch = chars[rng() % chars.size()];
      size_t at = rng() % 2 ? rng() % (n - 4) : (rng() % (n / kScanBlock + 1)) * kScanBlock + rng() % 8 - 4;
      if (at > n - 4) at = n - 4;
      s.replace(at, ch.size(), ch);
    }
    const bool want_quote = n && rng() % 2;
    const bool want_odd = n && rng() % 2;
    if (want_quote) s[rng() % n] = '"';
    if (want_odd) s[rng() % n] = "\0\x80\xe9\xff"[rng() % 4];
    const ByteScan got = scan_bytes(s.data(), n, '"');
    INFO("length " << n << " quote " << want_quote << " odd " << want_odd);
    const size_t quote = s.find('"');
    REQUIRE(got.has_byte == (quote != std::string::npos));
    // It stops at the block with the quote: the flag covers the bytes up to that block's end.
    const size_t covered = quote == std::string::npos ? n : std::min<size_t>(n, (quote / kScanBlock + 1) * kScanBlock);
    REQUIRE(got.maybe_bad == maybe_bad(s.substr(0, covered)));
    REQUIRE(scan_bytes(s.data(), n, -1).has_byte == false);
    const bool whole = scan_bytes(s.data(), n, -1).maybe_bad;
    REQUIRE(whole == maybe_bad(s));
    flagged += whole;
    clean_with_high += !whole && naive_odd(s);
  }
  CHECK(flagged > 500);
#if defined(WARPCSV_HAVE_AVX2_SCAN)
  if (cpu_has_avx2()) CHECK(clean_with_high > 500);  // valid UTF-8 passes
#endif
}

TEST_CASE("TextCheck: pieces of 32-byte multiples give the whole's answer; other pieces never miss an issue") {
  std::mt19937_64 rng(91);
  const std::vector<std::string> chars = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf"};
  for (int iter = 0; iter < 4000; ++iter) {
    const size_t n = rng() % 3000;
    std::string s;
    while (s.size() < n) s += rng() % 3 ? std::string(1, static_cast<char>('a' + rng() % 26)) : chars[rng() % chars.size()];
    if (iter % 3 == 1 && !s.empty()) s[rng() % s.size()] = "\0\x80\xc3\xf8"[rng() % 4];
    const bool want = maybe_bad(s);
    TextCheck aligned, any;
    for (size_t at = 0; at < s.size();) {
      const size_t step = std::min(s.size() - at, 32 * (1 + rng() % 8));
      aligned.feed(s.data() + at, step);
      at += step;
    }
    for (size_t at = 0; at < s.size();) {
      const size_t step = std::min(s.size() - at, 1 + rng() % 100);
      any.feed(s.data() + at, step);
      at += step;
    }
    INFO("length " << s.size() << " iteration " << iter);
    REQUIRE(aligned.maybe_bad() == want);
    if (want) REQUIRE(any.maybe_bad());
  }
}

TEST_CASE("transition_vector: large partitions with quotes give the byte-by-byte vector and the flag") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  std::mt19937_64 rng(78);
  const char alphabet[] = "ab,\"\n\r\"\"x\xc3\xa9";
  for (int iter = 0; iter < 40; ++iter) {
    const size_t n = 1 + rng() % 70000;
    std::string s(n, 'z');
    const bool ascii = iter % 2 == 0;
    for (auto& c : s) c = alphabet[rng() % (ascii ? 9 : 11)];
    if (iter % 4 == 1) s[rng() % n] = '\0';
    bool odd = true;
    INFO("length " << n << " iteration " << iter);
    REQUIRE(transition_vector(d, s.data(), n, &odd) == tv_of_bytes(d, s.data(), n));
    REQUIRE(odd == maybe_bad(s));
  }
}

TEST_CASE("partition_window: per-partition flags for a NUL or bad UTF-8, at every chunk size") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  const std::string text = std::string("a,b\n1,\"x\xc3\xa9\"\n2,y\n3,z\0\n4,w\n", 25) + std::string(100, 'q') + "\n";
  Window w;
  w.data = text.data();
  w.size = text.size();
  w.at_eof = true;
  for (uint64_t chunk : {1, 2, 3, 7, 16, 64, 1000}) {
    const PartitionedWindow pw = partition_window(d, w, chunk, 2);
    REQUIRE(pw.maybe_bad_text.size() == pw.begin.size());
    for (size_t j = 0; j < pw.begin.size(); ++j) {
      const std::string part = text.substr(pw.begin[j], pw.end(j) - pw.begin[j]);
      INFO("chunk " << chunk << " partition " << j);
      CHECK((pw.maybe_bad_text[j] != 0) == maybe_bad(part));
    }
    // The transition vectors are those of the plain function.
    for (size_t j = 0; j < pw.begin.size(); ++j) {
      bool odd = false;
      CHECK(transition_vector(d, text.data() + pw.begin[j], pw.end(j) - pw.begin[j], &odd) ==
            tv_of_bytes(d, text.data() + pw.begin[j], pw.end(j) - pw.begin[j]));
    }
  }
}

TEST_CASE("check_row_bytes: the first problem of a row by position wins") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  auto parse = [&](const std::string& s) {
    return parse_row(d, s.data(), 0, s.size(), true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
  };
  {
    // A stray quote at column 3 beats invalid UTF-8 at column 9.
    const std::string s = "ab\"cdefg\xe9,1\n";
    RowResult r = parse(s);
    REQUIRE(r.error == RowError::StrayQuote);
    CHECK_FALSE(check_row_bytes(s.data(), 0, r.next, r));
    CHECK(r.error == RowError::StrayQuote);
    CHECK(r.error_pos == 2);
  }
  {
    // Invalid UTF-8 at column 3 beats a stray quote at column 9.
    const std::string s = "ab\xe9" "cdefg\"h,1\n";
    RowResult r = parse(s);
    REQUIRE(r.error == RowError::StrayQuote);
    CHECK(check_row_bytes(s.data(), 0, r.next, r));
    CHECK(r.error == RowError::InvalidUtf8);
    CHECK(r.error_pos == 2);
  }
  {
    // A NUL in a well-formed row, counted from the row's start in the buffer.
    const std::string s = std::string("x,y\n1,a\0b\n", 10);
    RowResult r = parse_row(d, s.data(), 4, s.size(), true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
    REQUIRE(r.error == RowError::None);
    CHECK(check_row_bytes(s.data(), 4, r.next, r));
    CHECK(r.error == RowError::NulByte);
    CHECK(r.error_pos == 7);
  }
  {
    const std::string s = "1,\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80\n";
    RowResult r = parse(s);
    CHECK_FALSE(check_row_bytes(s.data(), 0, r.next, r));
    CHECK(r.error == RowError::None);
  }
}

TEST_CASE("make_row_issue: invalid bytes show as \\xNN, valid UTF-8 as it is, with the column") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  const std::string s = "\xc3\xa9t\xc3\xa9,caf\xe9,\xf0\x9f\x98\x80\x01\n";
  RowResult r = parse_row(d, s.data(), 0, s.size(), true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
  REQUIRE(check_row_bytes(s.data(), 0, r.next, r));
  const RowIssue issue = make_row_issue(d, "in.csv", s.data(), 0, r.next, 7, r, 3, 3);
  CHECK(issue.kind == RowIssue::Malformed);
  CHECK(issue.line == 7);
  CHECK(issue.column == 10);  // byte column of 0xE9
  CHECK(issue.text == "\xc3\xa9t\xc3\xa9,caf\\xe9,\xf0\x9f\x98\x80\\x01");
  CHECK(issue.message.find("found the byte 0xe9") != std::string::npos);
  CHECK(issue.message.find("Latin-1") != std::string::npos);
  CHECK(issue.message.find("iconv -f latin1 -t utf-8 in.csv > fixed.csv") != std::string::npos);
  CHECK(describe_issue(issue).rfind("in.csv:7:10: expected UTF-8 text", 0) == 0);

  const std::string n = std::string("a,\"x\ny\0\"\n", 9);
  RowResult rn = parse_row(d, n.data(), 0, n.size(), true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
  REQUIRE(check_row_bytes(n.data(), 0, rn.next, rn));
  const RowIssue nul = make_row_issue(d, "<stdin>", n.data(), 0, rn.next, 3, rn, 2, 2);
  CHECK(nul.line == 4);  // the NUL is on the row's second line
  CHECK(nul.column == 2);
  CHECK(nul.text == "a,\"x\\ny\\x00\"");
  CHECK(nul.message.find("NUL byte") != std::string::npos);
  CHECK(nul.message.find("UTF-16") != std::string::npos);
  CHECK(nul.message.find("iconv -f UTF-16 -t UTF-8 FILE") != std::string::npos);
}
