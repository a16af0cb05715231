// The CSV dialect as a state machine over byte classes, and the partition
// state-transition vectors that resolve the quote state at every partition
// start exactly (ParPaRaw, VLDB 2020; cuDF's row-context scan): each partition
// computes its end state for every possible start state, and composing the
// vectors in order gives each partition its true start state.
#pragma once
#include <cstdint>

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
  kNumStates
};

enum CharClass : uint8_t {
  kClassOther = 0,
  kClassDelim,
  kClassQuote,
  kClassEscape,
  kClassNewline,  // LF or CR
  kClassComment,
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
  uint8_t delimiter;
  uint8_t quote;
  int16_t escape;   // -1: none
  int16_t comment;  // -1: none
  // Bytes that end an unquoted field's run: delimiter, quote, CR, LF.
  uint8_t stops_unquoted[256];
};

// Builds the table for a delimiter, quote, optional escape and comment byte.
inline Dialect make_dialect(char delimiter, char quote, int escape, int comment) {
  Dialect d{};
  d.delimiter = static_cast<uint8_t>(delimiter);
  d.quote = static_cast<uint8_t>(quote);
  d.escape = static_cast<int16_t>(escape == quote ? -1 : escape);
  d.comment = static_cast<int16_t>(comment);
  for (int c = 0; c < 256; ++c) d.char_class[c] = kClassOther;
  if (d.comment >= 0) d.char_class[d.comment] = kClassComment;
  if (d.escape >= 0) d.char_class[d.escape] = kClassEscape;
  d.char_class[static_cast<uint8_t>('\n')] = kClassNewline;
  d.char_class[static_cast<uint8_t>('\r')] = kClassNewline;
  d.char_class[d.quote] = kClassQuote;
  d.char_class[d.delimiter] = kClassDelim;

  for (int c = 0; c < 256; ++c) {
    const uint8_t k = d.char_class[c];
    d.stops_unquoted[c] = k == kClassDelim || k == kClassQuote || k == kClassNewline;
  }

  auto set = [&](CsvState s, uint8_t other, uint8_t delim, uint8_t q, uint8_t esc, uint8_t nl,
                 uint8_t comment_c) {
    d.next[s][kClassOther] = other;
    d.next[s][kClassDelim] = delim;
    d.next[s][kClassQuote] = q;
    d.next[s][kClassEscape] = esc;
    d.next[s][kClassNewline] = nl;
    d.next[s][kClassComment] = comment_c;
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
  return d;
}

WCSV_HD WCSV_FORCEINLINE uint8_t csv_step(const Dialect& d, uint8_t state, uint8_t byte) {
  return d.next[state][d.char_class[byte]];
}

// A state-transition vector: 3 bits per start state, the end state after
// reading some bytes from that start state.
using TransitionVector = uint32_t;

WCSV_HD inline uint8_t tv_get(TransitionVector tv, uint8_t start) {
  return static_cast<uint8_t>((tv >> (3 * start)) & 7u);
}
WCSV_HD inline TransitionVector tv_identity() {
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s) tv |= s << (3 * s);
  return tv;
}
// The vector of reading `first`'s bytes, then `second`'s.
WCSV_HD inline TransitionVector tv_compose(TransitionVector first, TransitionVector second) {
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s)
    tv |= static_cast<uint32_t>(tv_get(second, tv_get(first, static_cast<uint8_t>(s))))
          << (3 * s);
  return tv;
}

// Transition vector of bytes [p, p+n): all start states advanced together.
WCSV_HD inline TransitionVector tv_of_bytes(const Dialect& d, const char* p, uint64_t n) {
  uint8_t st[kNumStates];
  for (int s = 0; s < kNumStates; ++s) st[s] = static_cast<uint8_t>(s);
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t cls = d.char_class[static_cast<uint8_t>(p[i])];
    for (int s = 0; s < kNumStates; ++s) st[s] = d.next[st[s]][cls];
  }
  TransitionVector tv = 0;
  for (uint32_t s = 0; s < kNumStates; ++s) tv |= static_cast<uint32_t>(st[s]) << (3 * s);
  return tv;
}

}  // namespace warpcsv
