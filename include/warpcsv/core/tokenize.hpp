// Splits one CSV row into fields. It follows exactly the state machine of
// dialect.hpp (so row boundaries agree with the transition vectors) and only
// adds what the machine does not need: field extents, flags and errors.
#pragma once
#include <cstdint>

#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/utf8.hpp"

namespace warpcsv {

enum FieldFlags : uint8_t {
  kFieldQuoted = 1,
  kFieldEscaped = 2,  // holds doubled quotes or escape sequences: unescape before use
};

enum class RowError : uint8_t {
  None,
  StrayQuote,         // a quote inside an unquoted field
  TextAfterQuote,     // bytes between a closing quote and the delimiter
  UnterminatedQuote,  // input ended inside quotes
  // Not found by parse_row: the executors check a row's bytes with
  // find_byte_issue (core/utf8.hpp) and report whichever problem comes first.
  NulByte,            // a NUL byte (binary data or UTF-16?)
  InvalidUtf8,        // bytes that are not UTF-8 (Latin-1 or another 8-bit encoding?)
};

struct RowResult {
  uint64_t next;        // position after the row and its terminator
  uint32_t fields;      // number of fields
  uint32_t lines;       // line terminators consumed, embedded ones included
  RowError error;
  uint64_t error_pos;   // where the error was found
  bool incomplete;      // ran into `end` before the row ended, and not at EOF
  bool comment;         // a comment line (no fields)
  bool empty;           // an empty line (no bytes before the terminator)
};

enum class DelimiterMatch : uint8_t { No, Whole, Cut };

// Whether the delimiter whose first byte is p[i] is there whole. Cut: the
// bytes up to `end` begin it, and the input goes on past `end`.
WCSV_HD inline DelimiterMatch delimiter_at(const Dialect& d, const char* p, uint64_t i, uint64_t end,
                                           bool at_eof) {
  for (int k = 1; k < d.delimiter_len; ++k) {
    if (i + k >= end) return at_eof ? DelimiterMatch::No : DelimiterMatch::Cut;
    if (static_cast<uint8_t>(p[i + k]) != d.delimiter_bytes[k]) return DelimiterMatch::No;
  }
  return DelimiterMatch::Whole;
}

// Parses the row starting at p[pos] (a row start). For every field calls
// sink(index, begin, end, flags) with the bytes inside any quotes. Bytes up to
// `end` exist; `at_eof` says whether input ends there.
template <class Sink>
WCSV_HD WCSV_FORCEINLINE RowResult parse_row(const Dialect& d, const char* p, uint64_t pos,
                                             uint64_t end, bool at_eof, Sink&& sink) {
  RowResult r{};
  r.error = RowError::None;
  uint64_t i = pos;
  auto flag = [&](RowError e, uint64_t at) {
    if (r.error == RowError::None) {
      r.error = e;
      r.error_pos = at;
    }
  };
  auto finish_line = [&](uint64_t at) -> bool {  // consume a terminator at p[at]; false: need more
    if (p[at] == '\r') {
      if (at + 1 >= end && !at_eof) return false;
      i = (at + 1 < end && p[at + 1] == '\n') ? at + 2 : at + 1;
    } else {
      i = at + 1;
    }
    r.lines += 1;
    return true;
  };
  // Moves i over the text of an unquoted field (or after a closing quote, when
  // `quotes_are_text`) to the delimiter or line end after it; a stray quote
  // is flagged. A first delimiter byte that does not start the whole
  // delimiter is text; one whose rest may lie past `end` stops at `end`.
  auto skip_text = [&](bool quotes_are_text) {
    for (;;) {
      while (i < end && !d.stops_unquoted[static_cast<uint8_t>(p[i])]) ++i;
      if (i >= end) return;
      const uint8_t c = static_cast<uint8_t>(p[i]);
      if (c == d.quote) {
        if (!quotes_are_text) flag(RowError::StrayQuote, i);
        ++i;
        continue;
      }
      if (c != d.delimiter || d.delimiter_len == 1) return;
      const DelimiterMatch m = delimiter_at(d, p, i, end, at_eof);
      if (m == DelimiterMatch::Whole) return;
      if (m == DelimiterMatch::Cut) {
        i = end;
        return;
      }
      ++i;
    }
  };
  if (i >= end) {
    r.incomplete = !at_eof;
    r.empty = true;
    r.next = i;
    return r;
  }
  if (d.comment >= 0 && static_cast<uint8_t>(p[i]) == d.comment) {
    while (i < end && p[i] != '\n' && p[i] != '\r') ++i;
    r.comment = true;
    if (i >= end) {
      r.incomplete = !at_eof;
      r.next = i;
      return r;
    }
    if (!finish_line(i)) r.incomplete = true;
    r.next = i;
    return r;
  }
  if (p[i] == '\n' || p[i] == '\r') {
    r.empty = true;
    if (!finish_line(i)) r.incomplete = true;
    r.next = i;
    return r;
  }
  for (;;) {
    uint64_t fb = i, fe;
    uint8_t flags = 0;
    if (i < end && static_cast<uint8_t>(p[i]) == d.quote) {
      flags = kFieldQuoted;
      fb = ++i;
      for (;;) {
        if (i >= end) {
          if (!at_eof) {
            r.incomplete = true;
            r.next = end;
            return r;
          }
          flag(RowError::UnterminatedQuote, fb - 1);
          fe = end;
          break;
        }
        const uint8_t c = static_cast<uint8_t>(p[i]);
        if (c == d.quote) {
          if (i + 1 >= end && !at_eof) {
            r.incomplete = true;
            r.next = end;
            return r;
          }
          if (i + 1 < end && static_cast<uint8_t>(p[i + 1]) == d.quote) {
            flags |= kFieldEscaped;
            i += 2;
            continue;
          }
          fe = i++;
          break;
        }
        if (d.escape >= 0 && c == d.escape) {
          flags |= kFieldEscaped;
          i += 2;
          if (i > end) i = end;
          continue;
        }
        if (c == '\n' || (c == '\r' && !(i + 1 < end && p[i + 1] == '\n'))) r.lines += 1;
        ++i;
      }
      // After the closing quote the machine goes on as an unquoted field.
      const uint64_t after_quote = i;
      skip_text(true);
      if (i > after_quote) flag(RowError::TextAfterQuote, after_quote);
    } else {
      skip_text(false);
      fe = i;
    }
    sink(r.fields, fb, fe, flags);
    r.fields += 1;
    if (i >= end) {
      if (!at_eof) {
        r.incomplete = true;
        r.next = end;
        return r;
      }
      r.next = i;
      return r;
    }
    if (static_cast<uint8_t>(p[i]) == d.delimiter) {  // skip_text stops only at a whole delimiter
      i += d.delimiter_len;
      continue;
    }
    if (!finish_line(i)) r.incomplete = true;
    r.next = i;
    return r;
  }
}

// Records byte problem `b` found at `pos` in `r` unless `r` already has an
// error at an earlier position: a row with several problems reports the first
// one. Returns whether `r` now holds a byte error.
WCSV_HD inline bool record_byte_issue(ByteIssue b, uint64_t pos, RowResult& r) {
  if (b == ByteIssue::None) return false;
  if (r.error != RowError::None && r.error_pos <= pos) return false;
  r.error = b == ByteIssue::Nul ? RowError::NulByte : RowError::InvalidUtf8;
  r.error_pos = pos;
  return true;
}

// Checks the bytes of the row p[row_begin, row_end) for a NUL or invalid
// UTF-8 and records the first in `r` (record_byte_issue).
WCSV_HD inline bool check_row_bytes(const char* p, uint64_t row_begin, uint64_t row_end, RowResult& r) {
  uint64_t at = 0;
  const ByteIssue b = find_byte_issue(p + row_begin, row_end - row_begin, &at);
  return record_byte_issue(b, row_begin + at, r);
}

// Copies a field's bytes to `out`, resolving doubled quotes and escapes.
// Returns the unescaped length (never longer than the input).
WCSV_HD inline uint32_t unescape_field(const Dialect& d, const char* p, uint32_t n, char* out) {
  uint32_t o = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t c = static_cast<uint8_t>(p[i]);
    if (c == d.quote && i + 1 < n && static_cast<uint8_t>(p[i + 1]) == d.quote) {
      out[o++] = p[i++];
    } else if (d.escape >= 0 && c == d.escape && i + 1 < n) {
      const char e = p[++i];
      // \0 stays a 0: text never holds a NUL byte (a row with one is a bad row).
      out[o++] = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    } else {
      out[o++] = p[i];
    }
  }
  return o;
}

}  // namespace warpcsv
