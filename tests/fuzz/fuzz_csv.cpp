// libFuzzer target: the partitioned CSV scan, and the fixed-offset batches of
// the CUDA executor, must find exactly the rows (fields and errors) of one
// sequential pass, for any bytes, dialect and chunk size; the host's fast
// path for rows without quotes must split the rows it takes as parse_row does.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/batch_feed.hpp"
#include "cpu/byte_scan.hpp"
#include "exec/partitioner.hpp"
#include "plain_row_check.hpp"
#include "warpcsv/core/tokenize.hpp"

using namespace warpcsv;

namespace {
struct Row {
  uint64_t begin, next;
  uint32_t fields;
  RowError error;
  bool operator==(const Row& o) const {
    return begin == o.begin && next == o.next && fields == o.fields && error == o.error;
  }
};

std::vector<Row> sequential(const Dialect& d, const char* p, uint64_t n) {
  std::vector<Row> rows;
  for (uint64_t pos = 0; pos < n;) {
    RowResult r = parse_row(d, p, pos, n, true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
    if (r.incomplete || r.next <= pos) __builtin_trap();  // at EOF a row always ends and moves on
    rows.push_back(Row{pos, r.next, r.fields, r.error});
    pos = r.next;
  }
  return rows;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const char delims[] = {',', ';', '\t', '|'};
  const int escape = data[0] & 1 ? '\\' : -1;
  const int comment = data[0] & 2 ? '#' : -1;
  const Dialect d = make_dialect(delims[(data[0] >> 2) & 3], data[0] & 16 ? '\'' : '"', escape, comment);
  const uint64_t chunk = 1 + data[1] % 64;
  const char* p = reinterpret_cast<const char*>(data + 2);
  const uint64_t n = size - 2;
  const std::vector<Row> expected = sequential(d, p, n);

  // The host's fast path for rows without quotes takes each row as parse_row
  // does, or declines it, also when the bytes end halfway through the row.
  for (const Row& row : expected) {
    bool taken = false;
    if (!plain_row_agrees(d, p, row.begin, n, true, &taken)) __builtin_trap();
    if (!plain_row_agrees(d, p, row.begin, row.begin + (row.next - row.begin) / 2, false, &taken)) __builtin_trap();
  }

  // Partitioned: windows of the whole input at EOF, rows walked per partition.
  Window w;
  w.data = p;
  w.size = n;
  w.at_eof = true;
  PartitionedWindow pw = partition_window(d, w, chunk, 1);
  std::vector<Row> got;
  for (size_t j = 0; j < pw.ready; ++j) {
    uint64_t pos = pw.first_row[j];
    if (pos == kNoRow) continue;
    while (pos < pw.end(j)) {
      RowResult r = parse_row(d, p, pos, n, true, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
      got.push_back(Row{pos, r.next, r.fields, r.error});
      pos = r.next;
    }
  }
  if (!(got == expected)) __builtin_trap();
  // The fast transition vector must equal the byte-by-byte one.
  if (transition_vector(d, p, n) != tv_of_bytes(d, p, n)) __builtin_trap();
  // Each partition's text flag is what its bytes say: with AVX2 whether they
  // are not valid UTF-8 without a NUL, else whether a byte is 0 or >= 0x80.
  for (size_t j = 0; j < pw.maybe_bad_text.size(); ++j) {
    bool odd = false;
    for (uint64_t i = pw.begin[j]; i < pw.end(j); ++i) odd |= data[2 + i] == 0 || data[2 + i] >= 0x80;
#if defined(WARPCSV_HAVE_AVX2_SCAN)
    uint64_t at = 0;
    if (cpu_has_avx2()) odd = find_byte_issue(p + pw.begin[j], pw.end(j) - pw.begin[j], &at) != ByteIssue::None;
#endif
    if (odd != (pw.maybe_bad_text[j] != 0)) __builtin_trap();
  }

  // Fixed-offset batches, as the CUDA executor cuts them: each batch's own
  // vector composed in order gives its start state, and walking only its own
  // bytes from there (as the kernels do) finds exactly the sequential row starts.
  StateChain chain(kRowStart);
  const uint64_t batch = 1 + data[1] / 4 % 48;
  for (uint64_t b = 0, i = 0; b < n; b += batch, ++i) chain.publish(i, tv_of_bytes(d, p + b, std::min(batch, n - b)));
  std::vector<uint64_t> starts;
  for (uint64_t b = 0, i = 0; b < n; b += batch, ++i) {
    BatchSpan span;
    span.index = i;
    span.from = b;
    span.own = std::min(batch, n - b);
    span.n = n - b;
    span.at_eof = true;
    span.has_prev = b > 0;
    if (b > 0) note_batch_edge(span, p[b - 1], p[b]);
    const uint8_t state = chain.wait_state(i);
    if (batch_starts_row(span, state)) starts.push_back(b);
    uint8_t s = state;
    for (uint64_t k = 0; k < span.own; ++k) {
      s = csv_step(d, s, static_cast<uint8_t>(p[b + k]));
      const uint64_t at = k + 1;
      if (s == kRowStart && at < span.own && !(p[b + k] == '\r' && p[b + at] == '\n')) starts.push_back(b + at);
    }
  }
  if (starts.size() != expected.size()) __builtin_trap();
  for (size_t r = 0; r < starts.size(); ++r)
    if (starts[r] != expected[r].begin) __builtin_trap();
  return 0;
}
