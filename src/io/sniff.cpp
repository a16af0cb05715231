// --delimiter auto: choose the field separator from the first bytes of the input. Each
// candidate reads the sample with the tool's own tokenizer (so quoted delimiters and line
// breaks count as data, exactly as the run will read them), and wins by how consistently it
// splits rows into the same number (> 1) of fields: the idea of Python's csv.Sniffer and of
// DuckDB's sniffer, cut down to the four separators people use.
#include <map>
#include <string>

#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {

namespace {

const char kCandidates[] = {',', ';', '\t', '|'};

// Position after the BOMs and `skip` raw lines (quotes not honoured, as --skip reads them).
size_t skip_prefix(const char* p, size_t n, int64_t skip) {
  size_t pos = bom_bytes(p, n);
  for (int64_t k = 0; k < skip && pos < n; ++k) {
    while (pos < n && p[pos] != '\n' && p[pos] != '\r') ++pos;
    if (pos < n) pos += (p[pos] == '\r' && pos + 1 < n && p[pos + 1] == '\n') ? 2 : 1;
  }
  return pos;
}

// How one candidate splits the sample.
SniffResult score(char delim, const char* p, size_t pos, size_t n, bool at_eof, char quote,
                  int escape, int comment) {
  const Dialect d = make_dialect(delim, quote, escape, comment);
  std::map<uint32_t, uint32_t> counts;  // field count -> rows (including trailing-delimiter rows)
  std::map<uint32_t, uint32_t> trailing;  // field count of rows ending in an empty unquoted field
  SniffResult s;
  s.delimiter = delim;
  while (pos < n) {
    bool last_empty = false;
    RowResult r = parse_row(d, p, pos, n, at_eof, [&](uint32_t, uint64_t b, uint64_t e, uint8_t f) {
      last_empty = b == e && !(f & kFieldQuoted);
    });
    // A partial last row counts only when it is all there is (one very long row).
    if (r.incomplete && s.rows > 0) break;
    pos = r.next;
    if (r.comment || r.empty) {
      if (r.incomplete) break;
      continue;
    }
    ++s.rows;
    // A malformed row under this delimiter is evidence against it: never consistent.
    if (r.error == RowError::None) {
      ++counts[r.fields];
      if (last_empty && r.fields > 1) ++trailing[r.fields];
    }
    if (r.incomplete) break;
  }
  // The most common field count above 1; a row with one extra, empty, last field also fits it.
  for (const auto& [fields, rows] : counts) {
    if (fields < 2) continue;
    auto t = trailing.find(fields + 1);
    const uint32_t fit = rows + (t == trailing.end() ? 0 : t->second);
    if (fit > s.consistent || (fit == s.consistent && fields > s.fields)) {
      s.consistent = fit;
      s.fields = fields;
    }
  }
  s.found = s.consistent > 0;
  return s;
}

// Whether `a` splits the rows better than `b`.
bool better(const SniffResult& a, const SniffResult& b) {
  if (!a.found) return false;
  if (!b.found) return true;
  const uint64_t lhs = uint64_t{a.consistent} * b.rows, rhs = uint64_t{b.consistent} * a.rows;
  if (lhs != rhs) return lhs > rhs;
  return a.fields > b.fields;
}

}  // namespace

SniffResult sniff_delimiter(const char* p, size_t n, bool at_eof, char quote, int escape,
                            int comment, int64_t skip_lines) {
  const size_t start = skip_prefix(p, n, skip_lines);
  SniffResult best;
  uint32_t rows = 0;
  for (char c : kCandidates) {
    if (c == quote || c == escape || c == comment) continue;
    SniffResult s = score(c, p, start, n, at_eof, quote, escape, comment);
    rows = s.rows > rows ? s.rows : rows;
    if (better(s, best)) best = s;
  }
  if (!best.found) {  // a one-column file: every row is one field whatever the delimiter
    best = SniffResult{};
    best.rows = rows;
    best.consistent = rows;
  }
  return best;
}

std::string describe_sniff(const SniffResult& s) {
  const std::string name = s.delimiter == '\t' ? "'\\t'" : std::string("'") + s.delimiter + "'";
  if (!s.found)
    return "--delimiter auto: no candidate (, ; \\t |) splits the rows; read as one column with " +
           name + " (" + std::to_string(s.rows) + " rows sampled)";
  return "--delimiter auto: " + name + " (" + std::to_string(s.fields) + " fields in " +
         std::to_string(s.consistent) + " of " + std::to_string(s.rows) + " sampled rows)";
}

}  // namespace warpcsv
