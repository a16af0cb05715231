#include "exec/partitioner.hpp"

#include <algorithm>
#include <cstring>

#include "cpu/byte_scan.hpp"
#include "cpu/fast_vector.hpp"
#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {
bool contains_byte(const char* p, uint64_t n, int c) {
  return c >= 0 && std::memchr(p, c, n) != nullptr;
}
bool is_delimiter_byte(const Dialect& d, char c) {
  const uint8_t k = d.char_class[static_cast<uint8_t>(c)];
  return k == kClassDelim || k >= kClassDelimByte1;
}
}  // namespace

TransitionVector transition_vector(const Dialect& d, const char* p, uint64_t n) {
  bool maybe_bad_text = false;
  return transition_vector(d, p, n, &maybe_bad_text);
}

TransitionVector transition_vector(const Dialect& d, const char* p, uint64_t n, bool* maybe_bad_text) {
  *maybe_bad_text = false;
  if (n == 0) return tv_identity();
  // One pass looks for the quote and checks the text (the rows of a
  // partition whose text is valid skip the NUL / UTF-8 check).
  const ByteScan scan = scan_bytes(p, n, d.quote);
  if (!scan.has_byte && !contains_byte(p, n, d.escape) && !contains_byte(p, n, d.comment)) {
    *maybe_bad_text = scan.maybe_bad;
    // Without those bytes, quoted tracks stay quoted, and every unquoted
    // track is in the same state after the last byte that is not part of the
    // delimiter; from there one walk gives their end. A comment track joins
    // them once a newline passes.
    uint64_t last_text = n;
    while (last_text > 0 && is_delimiter_byte(d, p[last_text - 1])) --last_text;
    if (last_text > 0) {
      uint8_t plain = d.next[kUnquoted][d.char_class[static_cast<uint8_t>(p[last_text - 1])]];
      for (uint64_t i = last_text; i < n; ++i) plain = csv_step(d, plain, static_cast<uint8_t>(p[i]));
      const bool newline = std::memchr(p, '\n', n) || std::memchr(p, '\r', n);
      TransitionVector tv = tv_identity();
      for (uint8_t s = 0; s < d.states; ++s) {
        const uint8_t end = s == kQuoted || s == kEscape ? static_cast<uint8_t>(kQuoted)
                            : s == kComment              ? (newline ? plain : static_cast<uint8_t>(kComment))
                                                         : plain;
        tv = tv_set(tv, s, end);
      }
      return tv;
    }
  }
  // Every byte is read here: block by block, each tested while in cache.
  TransitionVector tv = tv_identity();
  TextCheck text;
  for (uint64_t b = 0; b < n; b += kScanBlock) {
    const uint64_t m = n - b < kScanBlock ? n - b : kScanBlock;
    tv = tv_compose(tv, tv_of_bytes_fast(d, p + b, m));
    text.feed(p + b, m);
  }
  *maybe_bad_text = text.maybe_bad();
  return tv;
}

WindowCuts cut_window(uint64_t offset, uint64_t size, uint64_t chunk, int threads, bool fine_tail) {
  WindowCuts cuts;
  cuts.offset = offset;
  cuts.size = size;
  cuts.chunk = chunk;
  const uint64_t tail_bytes = static_cast<uint64_t>(std::max(1, threads)) * chunk;
  const uint64_t tail_from = fine_tail && chunk >= 4 && size > 2 * tail_bytes ? size - tail_bytes : size;
  for (uint64_t b = 0; b < size; b += b < tail_from ? std::min(chunk, tail_from - b) : chunk / 4)
    cuts.begin.push_back(b);
  cuts.tv.resize(cuts.begin.size());
  cuts.maybe_bad_text.assign(cuts.begin.size(), 0);
  return cuts;
}

void scan_cut(const Dialect& d, const char* data, WindowCuts& cuts, size_t j) {
  const uint64_t b = cuts.begin[j], e = j + 1 < cuts.begin.size() ? cuts.begin[j + 1] : cuts.size;
  bool bad = false;
  cuts.tv[j] = transition_vector(d, data + b, e - b, &bad);
  cuts.maybe_bad_text[j] = bad;
}

PartitionedWindow partition_window(const Dialect& d, const Window& w, uint64_t chunk, int threads,
                                   bool fine_tail) {
  WindowCuts cuts = cut_window(w.offset, w.size, chunk, threads, fine_tail);
  parallel_for(cuts.begin.size(), threads, [&](size_t j, int) { scan_cut(d, w.data, cuts, j); });
  return partition_window(d, w, std::move(cuts), threads);
}

PartitionedWindow partition_window(const Dialect& d, const Window& w, WindowCuts&& cuts, int threads) {
  WCSV_EXPECTS(cuts.offset == w.offset && cuts.size == w.size, "cuts of another window");
  PartitionedWindow pw;
  pw.size = w.size;
  pw.begin = std::move(cuts.begin);
  pw.maybe_bad_text = std::move(cuts.maybe_bad_text);
  const std::vector<TransitionVector> tv = std::move(cuts.tv);
  const size_t n = pw.begin.size();
  // Partition j starts in the state reached after partitions 0..j-1; the
  // window itself starts at a row start.
  pw.state.resize(n);
  uint8_t st = kRowStart;
  for (size_t j = 0; j < n; ++j) {
    pw.state[j] = st;
    st = tv_get(tv[j], st);
  }
  pw.first_row.assign(n, kNoRow);
  parallel_for(n, threads, [&](size_t j, int) {
    uint8_t s = pw.state[j];
    if (s == kRowStart) {
      // The LF of a CRLF split across partitions belongs to the row before.
      const uint64_t b = pw.begin[j];
      const bool lf_of_crlf = b > 0 && w.data[b] == '\n' && w.data[b - 1] == '\r';
      if (!lf_of_crlf) pw.first_row[j] = b;
      else if (b + 1 < pw.end(j)) pw.first_row[j] = b + 1;
      return;
    }
    for (uint64_t i = pw.begin[j], e = pw.end(j); i < e; ++i) {
      s = csv_step(d, s, static_cast<uint8_t>(w.data[i]));
      if (s == kRowStart) {
        // A CR followed by LF is one terminator: the row starts after the LF.
        uint64_t at = i + 1;
        if (w.data[i] == '\r' && at < w.size && w.data[at] == '\n') ++at;
        if (at < e) pw.first_row[j] = at;  // else the row starts in a later partition
        return;
      }
    }
  });
  // At the end of input, or right after a row's LF outside quotes (a CR may
  // yet be followed by its LF), the window holds whole rows only: a stream's
  // rows that have come can all go.
  if (w.at_eof || (st == kRowStart && w.size && w.data[w.size - 1] == '\n')) {
    pw.ready = n;
    pw.consumed = w.size;
    return pw;
  }
  size_t last = n;  // the last partition holding a row start
  for (size_t j = n; j-- > 0;)
    if (pw.first_row[j] != kNoRow) {
      last = j;
      break;
    }
  if (last == n || last == 0) {
    pw.ready = 0;  // not one whole row is known to end in this window
    pw.consumed = 0;
    return pw;
  }
  pw.ready = last;
  pw.consumed = pw.first_row[last];
  return pw;
}

}  // namespace warpcsv
