// The CSV dialect as a state machine over byte classes, and the partition
// state-transition vectors that resolve the quote state at every partition
// start exactly (ParPaRaw, VLDB 2020; cuDF's row-context scan): each partition
// computes its end state for every possible start state, and composing the
// vectors in order gives each partition its true start state.
#pragma once
#include <cstdint>
#include <string>

#include "warpcsv/core/hd.hpp"

namespace warpcsv {

// Tokenizer states. RowStart and FieldStart differ only so a comment character
// counts at the start of a line alone.
enum CsvState : uint8_t {
  kRowStart = 0,
  kFieldStart,
  kUnquoted,
  kQuoted,
  kQuoteInQuoted,  // saw a quote inside quotes: end of field or a doubled quote
  kEscape,         // saw the escape character inside quotes
  kComment,
  // The first 1, 2 or 3 bytes of a delimiter of several bytes, outside quotes:
  // whether they are a delimiter or text depends on the bytes still to come.
  kDelimMatched1,
  kDelimMatched2,
  kDelimMatched3,
  kNumStates
};

// The states a delimiter of one byte can reach; the others stay unreached.
constexpr int kOneByteDelimiterStates = kDelimMatched1;
constexpr int kMaxDelimiterBytes = 4;

enum CharClass : uint8_t {
  kClassOther = 0,
  kClassDelim,
  kClassQuote,
  kClassEscape,
  kClassNewline,  // LF or CR
  kClassComment,
  // The other bytes of a delimiter of several bytes, one class per distinct
  // byte value (the first byte's class is kClassDelim).
  kClassDelimByte1,
  kClassDelimByte2,
  kClassDelimByte3,
  kNumClasses
};

// The high bit of each zero byte of `w`, exactly (no borrow between bytes).
WCSV_HD constexpr uint64_t zero_byte_bits(uint64_t w) {
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  return ~(((w & kLow7) + kLow7) | w | kLow7);
}

// The high bit of each byte of `w` that is LF or CR. Every row terminator is
// one, so the rows that start in a range of bytes are at most one more than
// the LF and CR bytes in it.
WCSV_HD constexpr uint64_t newline_bits(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  return zero_byte_bits(w ^ (kOnes * '\n')) | zero_byte_bits(w ^ (kOnes * '\r'));
}

// Plain table form of a dialect; copyable to device constant memory as is.
struct Dialect {
  uint8_t char_class[256];
  uint8_t next[kNumStates][kNumClasses];
  uint8_t delimiter;  // the delimiter's first byte
  uint8_t delimiter_bytes[kMaxDelimiterBytes];
  uint8_t delimiter_len;  // 1 to kMaxDelimiterBytes
  uint8_t states;         // the states this dialect can reach: kOneByteDelimiterStates + delimiter_len - 1
  uint8_t quote;
  int16_t escape;   // -1: none
  int16_t comment;  // -1: none
  // Bytes that end an unquoted field's run: delimiter, quote, CR, LF.
  uint8_t stops_unquoted[256];
};

// Builds the table for a delimiter of 1 to kMaxDelimiterBytes bytes (the
// caller checks that none of them is the quote, escape, comment, CR or LF),
// a quote, an optional escape and an optional comment byte.
inline Dialect make_dialect(const std::string& delimiter, char quote, int escape, int comment) {
  Dialect d{};
  // The options check the length; past kMaxDelimiterBytes bytes are not read.
  const size_t len = delimiter.size() < kMaxDelimiterBytes ? delimiter.size() : kMaxDelimiterBytes;
  d.delimiter_len = static_cast<uint8_t>(len == 0 ? 1 : len);
  d.delimiter_bytes[0] = len == 0 ? ',' : static_cast<uint8_t>(delimiter[0]);
  for (size_t i = 1; i < len; ++i) d.delimiter_bytes[i] = static_cast<uint8_t>(delimiter[i]);
  d.delimiter = d.delimiter_bytes[0];
  d.states = static_cast<uint8_t>(kOneByteDelimiterStates + d.delimiter_len - 1);
  d.quote = static_cast<uint8_t>(quote);
  d.escape = static_cast<int16_t>(escape == quote ? -1 : escape);
  d.comment = static_cast<int16_t>(comment);
  for (int c = 0; c < 256; ++c) d.char_class[c] = kClassOther;
  if (d.comment >= 0) d.char_class[d.comment] = kClassComment;
  if (d.escape >= 0) d.char_class[d.escape] = kClassEscape;
  d.char_class[static_cast<uint8_t>('\n')] = kClassNewline;
  d.char_class[static_cast<uint8_t>('\r')] = kClassNewline;
  d.char_class[d.quote] = kClassQuote;
  // The byte each delimiter class stands for.
  uint8_t class_byte[kNumClasses] = {};
  int next_class = kClassDelimByte1;
  d.char_class[d.delimiter] = kClassDelim;
  class_byte[kClassDelim] = d.delimiter;
  for (int i = 1; i < d.delimiter_len; ++i) {
    const uint8_t b = d.delimiter_bytes[i];
    if (d.char_class[b] != kClassOther) continue;  // a byte seen before
    d.char_class[b] = static_cast<uint8_t>(next_class);
    class_byte[next_class++] = b;
  }

  for (int c = 0; c < 256; ++c) {
    const uint8_t k = d.char_class[c];
    d.stops_unquoted[c] = k == kClassDelim || k == kClassQuote || k == kClassNewline;
  }

  // Every state, unreached ones included, starts as a self-loop.
  for (int s = 0; s < kNumStates; ++s)
    for (int k = 0; k < kNumClasses; ++k) d.next[s][k] = static_cast<uint8_t>(s);
  const uint8_t after_delim_byte = d.delimiter_len > 1 ? kDelimMatched1 : kFieldStart;
  auto set = [&](CsvState s, uint8_t other, uint8_t delim, uint8_t q, uint8_t esc, uint8_t nl,
                 uint8_t comment_c) {
    d.next[s][kClassOther] = other;
    d.next[s][kClassDelim] = delim == kFieldStart ? after_delim_byte : delim;
    d.next[s][kClassQuote] = q;
    d.next[s][kClassEscape] = esc;
    d.next[s][kClassNewline] = nl;
    d.next[s][kClassComment] = comment_c;
    for (int k = kClassDelimByte1; k < kNumClasses; ++k) d.next[s][k] = other;
  };
  // Outside quotes the escape character is an ordinary byte; a quote in the
  // middle of an unquoted field stays literal (the row tokenizer flags it).
  set(kRowStart, kUnquoted, kFieldStart, kQuoted, kUnquoted, kRowStart, kComment);
  set(kFieldStart, kUnquoted, kFieldStart, kQuoted, kUnquoted, kRowStart, kUnquoted);
  set(kUnquoted, kUnquoted, kFieldStart, kUnquoted, kUnquoted, kRowStart, kUnquoted);
  set(kQuoted, kQuoted, kQuoted, kQuoteInQuoted, kEscape, kQuoted, kQuoted);
  set(kQuoteInQuoted, kUnquoted, kFieldStart, kQuoted, kUnquoted, kRowStart, kUnquoted);
  set(kEscape, kQuoted, kQuoted, kQuoted, kQuoted, kQuoted, kQuoted);
  set(kComment, kComment, kComment, kComment, kComment, kRowStart, kComment);

  // A delimiter of several bytes, matched as a string search automaton (KMP):
  // after `matched` bytes, a byte either extends the match, falls back to a
  // shorter match that is also a prefix ("|||" with "||"), or shows the bytes
  // were text of an unquoted field. Matches are leftmost and do not overlap,
  // as the row tokenizer finds them.
  int border[kMaxDelimiterBytes + 1] = {};  // border[m]: longest proper border of the first m bytes
  for (int m = 2; m <= d.delimiter_len; ++m) {
    int b = border[m - 1];
    while (b > 0 && d.delimiter_bytes[b] != d.delimiter_bytes[m - 1]) b = border[b];
    border[m] = d.delimiter_bytes[b] == d.delimiter_bytes[m - 1] ? b + 1 : 0;
  }
  for (int matched = 1; matched < d.delimiter_len; ++matched) {
    const int s = kDelimMatched1 + matched - 1;
    for (int k = 0; k < kNumClasses; ++k) {
      if (k == kClassNewline) {
        d.next[s][k] = kRowStart;
        continue;
      }
      const bool delim_class = k == kClassDelim || k >= kClassDelimByte1;
      if (!delim_class) {  // text: a quote here is a stray one, an escape or comment byte is text
        d.next[s][k] = kUnquoted;
        continue;
      }
      const uint8_t byte = class_byte[k];
      int m = matched;
      while (m > 0 && d.delimiter_bytes[m] != byte) m = border[m];
      if (d.delimiter_bytes[m] == byte) ++m;
      d.next[s][k] = static_cast<uint8_t>(m == d.delimiter_len ? kFieldStart
                                          : m == 0             ? kUnquoted
                                                               : kDelimMatched1 + m - 1);
    }
  }
  return d;
}

inline Dialect make_dialect(char delimiter, char quote, int escape, int comment) {
  return make_dialect(std::string(1, delimiter), quote, escape, comment);
}

WCSV_HD WCSV_FORCEINLINE uint8_t csv_step(const Dialect& d, uint8_t state, uint8_t byte) {
  return d.next[state][d.char_class[byte]];
}

// A state-transition vector: 4 bits per start state, the end state after
// reading some bytes from that start state.
using TransitionVector = uint64_t;

WCSV_HD inline uint8_t tv_get(TransitionVector tv, uint8_t start) {
  return static_cast<uint8_t>((tv >> (4 * start)) & 15u);
}
WCSV_HD inline TransitionVector tv_set(TransitionVector tv, uint8_t start, uint8_t end) {
  return (tv & ~(TransitionVector{15} << (4 * start))) | (static_cast<TransitionVector>(end) << (4 * start));
}
WCSV_HD inline TransitionVector tv_identity() {
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s) tv |= static_cast<TransitionVector>(s) << (4 * s);
  return tv;
}
// The vector of reading `first`'s bytes, then `second`'s.
WCSV_HD inline TransitionVector tv_compose(TransitionVector first, TransitionVector second) {
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s)
    tv |= static_cast<TransitionVector>(tv_get(second, tv_get(first, static_cast<uint8_t>(s)))) << (4 * s);
  return tv;
}

// Transition vector of bytes [p, p+n): the dialect's states advanced
// together (unreached states keep the identity).
WCSV_HD inline TransitionVector tv_of_bytes(const Dialect& d, const char* p, uint64_t n) {
  uint8_t st[kNumStates];
  for (int s = 0; s < kNumStates; ++s) st[s] = static_cast<uint8_t>(s);
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t cls = d.char_class[static_cast<uint8_t>(p[i])];
    for (int s = 0; s < d.states; ++s) st[s] = d.next[st[s]][cls];
  }
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s) tv |= static_cast<TransitionVector>(st[s]) << (4 * s);
  return tv;
}

}  // namespace warpcsv
