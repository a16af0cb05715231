// libFuzzer target: the partitioned CSV scan must find exactly the rows, fields
// and errors of one sequential pass, for any bytes, dialect and chunk size.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "exec/partitioner.hpp"
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
  return 0;
}
