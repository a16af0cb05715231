// A string field as the delimited writers print it: CSV quotes a field that
// holds the delimiter, a quote, CR or LF, or starts or ends with a space or
// tab, or is empty (RFC 4180; "" keeps an empty string apart from null);
// TSV escapes tabs, newlines, CRs and backslashes. The host's writers and a
// GPU formatting the result's rows print the same bytes with these.
#pragma once
#include <cstdint>

#include "warpcsv/core/hd.hpp"

namespace warpcsv {

enum class FieldEscape : uint8_t { Csv, Tsv };

// How a delimited writer separates and escapes its fields.
struct DelimitedText {
  char sep = ',';
  FieldEscape escape = FieldEscape::Csv;
};

WCSV_HD inline bool csv_needs_quotes(const char* p, uint32_t n, char sep) {
  if (n == 0 || p[0] == ' ' || p[0] == '\t' || p[n - 1] == ' ' || p[n - 1] == '\t') return true;
  for (uint32_t i = 0; i < n; ++i)
    if (p[i] == sep || p[i] == '"' || p[i] == '\n' || p[i] == '\r') return true;
  return false;
}

WCSV_HD inline bool tsv_escaped(char c) { return c == '\t' || c == '\n' || c == '\r' || c == '\\'; }

// The bytes of the field's text: n when it is written as it is.
WCSV_HD inline uint32_t field_text_bytes(const char* p, uint32_t n, DelimitedText d) {
  uint32_t extra = 0;
  if (d.escape == FieldEscape::Csv) {
    if (!csv_needs_quotes(p, n, d.sep)) return n;
    extra = 2;
    for (uint32_t i = 0; i < n; ++i) extra += p[i] == '"';
  } else {
    for (uint32_t i = 0; i < n; ++i) extra += tsv_escaped(p[i]);
  }
  return n + extra;
}

// Writes the field's text (field_text_bytes of it) into out.
WCSV_HD inline uint32_t write_field_text(const char* p, uint32_t n, DelimitedText d, char* out) {
  uint32_t k = 0;
  if (d.escape == FieldEscape::Csv) {
    if (!csv_needs_quotes(p, n, d.sep)) {
      for (uint32_t i = 0; i < n; ++i) out[i] = p[i];
      return n;
    }
    out[k++] = '"';
    for (uint32_t i = 0; i < n; ++i) {
      if (p[i] == '"') out[k++] = '"';
      out[k++] = p[i];
    }
    out[k++] = '"';
    return k;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (!tsv_escaped(c)) {
      out[k++] = c;
      continue;
    }
    out[k++] = '\\';
    out[k++] = c == '\t' ? 't' : c == '\n' ? 'n' : c == '\r' ? 'r' : '\\';
  }
  return k;
}

}  // namespace warpcsv
