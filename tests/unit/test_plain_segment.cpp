// The segment kernels' shortcut for plain segments (cuda/plain_segment.hpp)
// against the state machine's walk, as k_segment_tv and k_segment_rows walk a
// segment: random bytes of each one-byte-delimiter dialect, segments cut at
// every 64 bytes of [0, n), every start state. A plain segment's end state
// and row starts must be the walk's; a segment the shortcut declines must
// hold a quote, escape or comment byte.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/plain_segment.hpp"

using namespace warpcsv;
using namespace warpcsv::cuda;

namespace {

struct Walk {
  uint8_t end;
  std::vector<uint64_t> starts;  // rows that start in (base, row_end)
};

// k_segment_rows's walk of segment [base, base + len) from `start`.
Walk walk(const Dialect& d, const std::string& text, uint64_t base, uint64_t len, uint64_t row_end, uint8_t start) {
  Walk w{start, {}};
  for (uint64_t i = base; i < base + len; ++i) {
    const char c = text[i];
    w.end = csv_step(d, w.end, static_cast<uint8_t>(c));
    const uint64_t at = i + 1;
    if (w.end == kRowStart && at < row_end && !(c == '\r' && text[at] == '\n')) w.starts.push_back(at);
  }
  return w;
}

}  // namespace

TEST_CASE("plain segments: end states and row starts are the state machine's") {
  struct Case {
    char delimiter, quote;
    int escape, comment;
  };
  const std::vector<Case> dialects = {{',', '"', -1, -1}, {';', '\'', -1, '#'}, {'\t', '"', '\\', -1},
                                      {'|', '"', '\\', '#'}};
  std::mt19937_64 rng(17);
  uint64_t plain_seen = 0, declined = 0;
  for (const Case& c : dialects) {
    const Dialect d = make_dialect(c.delimiter, c.quote, c.escape, c.comment);
    const NonPlainBytes np(d);
    // Mostly plain bytes, line ends of every kind, and now and then a byte that is not plain.
    std::string plain_alphabet = std::string(1, c.delimiter) + "\n\r\nab \xc3\xa9xyz";
    std::string rare = std::string(1, c.quote);
    if (c.escape >= 0) rare += static_cast<char>(c.escape);
    if (c.comment >= 0) rare += static_cast<char>(c.comment);
    for (int i = 0; i < 3000; ++i) {
      const uint64_t n = 1 + rng() % 300;
      std::string text;
      while (text.size() < n + 64) {
        if (rng() % 60 == 0) text += rare[rng() % rare.size()];
        else if (rng() % 3 == 0) text.append("\r\n");
        else text += plain_alphabet[rng() % plain_alphabet.size()];
      }
      // Whole 8-byte words to the end of the last segment, as the GPU's padded buffers.
      std::vector<uint64_t> buffer((text.size() + 7) / 8 + 8, 0);
      std::memcpy(buffer.data(), text.data(), text.size());
      const char* data = reinterpret_cast<const char*>(buffer.data());
      const uint64_t row_end = n;
      for (uint64_t seg = 0; seg * 64 < row_end; ++seg) {
        const uint64_t base = seg * 64, len = row_end - base < 64 ? row_end - base : 64;
        PlainSegment ps;
        if (!plain_segment(data, row_end, seg, np, ps)) {
          ++declined;
          CHECK(text.substr(base, 64).find_first_of(rare) != std::string::npos);
          continue;
        }
        ++plain_seen;
        const uint8_t last_class = d.char_class[static_cast<uint8_t>(text[base + len - 1])];
        for (uint8_t start = 0; start < kOneByteDelimiterStates; ++start) {
          const Walk w = walk(d, text, base, len, row_end, start);
          INFO("dialect '" << c.delimiter << "', segment " << seg << " of " << n << " bytes, start " << int(start));
          CHECK(plain_segment_end(ps, start, last_class,
                                  [&](uint8_t s, uint8_t k) { return d.next[s][k]; }) == w.end);
          std::vector<uint64_t> starts;
          for (uint64_t m = plain_segment_row_starts(ps, start, base, row_end); m; m &= m - 1)
            starts.push_back(base + static_cast<uint64_t>(__builtin_ctzll(m)) + 1);
          CHECK(starts == w.starts);
        }
      }
    }
  }
  CHECK(plain_seen > 5000);
  CHECK(declined > 500);
}
