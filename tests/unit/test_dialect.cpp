// The dialect state machine, partition transition vectors and the row tokenizer
// (core/dialect.hpp, core/tokenize.hpp, exec/partitioner.hpp): transitions and
// parse_row on inline cases, tv_compose laws and the host fast path on seeded
// random byte strings.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/partitioner.hpp"
#include "fuzz/plain_row_check.hpp"
#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/tokenize.hpp"

using namespace warpcsv;

namespace {

// The state after reading `s` from `start`, one byte at a time.
uint8_t run_machine(const Dialect& d, const std::string& s, uint8_t start = kRowStart) {
  uint8_t st = start;
  for (char c : s) st = csv_step(d, st, static_cast<uint8_t>(c));
  return st;
}

TransitionVector tv_str(const Dialect& d, const std::string& s) { return tv_of_bytes(d, s.data(), s.size()); }

// Random bytes drawn mostly from the dialect's special characters.
std::string random_bytes(std::mt19937_64& rng, size_t n, const std::string& alphabet) {
  std::string s(n, ' ');
  for (auto& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

struct Field {
  std::string text;  // unescaped
  uint8_t flags;
};
struct Parsed {
  RowResult r;
  std::vector<Field> fields;
};

// parse_row at `pos` with the fields collected and unescaped.
Parsed parse(const Dialect& d, const std::string& s, uint64_t pos = 0, bool at_eof = true,
             uint64_t end = ~0ull) {
  Parsed out;
  if (end == ~0ull) end = s.size();
  out.r = parse_row(d, s.data(), pos, end, at_eof, [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
    REQUIRE(i == out.fields.size());
    std::string raw = s.substr(b, e - b), text(raw.size(), '\0');
    text.resize(unescape_field(d, raw.data(), static_cast<uint32_t>(raw.size()), &text[0]));
    out.fields.push_back(Field{f & kFieldEscaped ? text : raw, f});
  });
  return out;
}

std::vector<std::string> texts(const Parsed& p) {
  std::vector<std::string> v;
  for (const auto& f : p.fields) v.push_back(f.text);
  return v;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("dialect: state machine transitions") {
  const Dialect d = make_dialect(',', '"', -1, '#');
  CHECK(run_machine(d, "") == kRowStart);
  CHECK(run_machine(d, "a") == kUnquoted);
  CHECK(run_machine(d, "a,") == kFieldStart);
  CHECK(run_machine(d, "a,b\n") == kRowStart);
  CHECK(run_machine(d, "a,b\r") == kRowStart);
  CHECK(run_machine(d, "\"") == kQuoted);
  CHECK(run_machine(d, "\"a,\nb") == kQuoted);  // delimiter and newline stay inside quotes
  CHECK(run_machine(d, "\"a\"") == kQuoteInQuoted);
  CHECK(run_machine(d, "\"a\"\"") == kQuoted);  // doubled quote
  CHECK(run_machine(d, "\"a\"\"\",") == kFieldStart);
  CHECK(run_machine(d, "\"a\"\n") == kRowStart);
  CHECK(run_machine(d, "\"a\"x") == kUnquoted);  // text after the closing quote
  CHECK(run_machine(d, "ab\"c") == kUnquoted);   // a stray quote stays literal
  CHECK(run_machine(d, "#x,\"y") == kComment);   // comment only at a row start
  CHECK(run_machine(d, "#x,\"y\n") == kRowStart);
  CHECK(run_machine(d, "a#") == kUnquoted);
  CHECK(run_machine(d, "a,#") == kUnquoted);
  CHECK(run_machine(d, "\n#") == kComment);

  // The escape character matters only inside quotes.
  const Dialect e = make_dialect(',', '"', '\\', -1);
  CHECK(run_machine(e, "\\") == kUnquoted);
  CHECK(run_machine(e, "\"\\") == kEscape);
  CHECK(run_machine(e, "\"\\\"") == kQuoted);  // escaped quote does not close the field
  CHECK(run_machine(e, "\"\\\"\"") == kQuoteInQuoted);
  CHECK(run_machine(e, "\"\\\n") == kQuoted);
  // An escape equal to the quote means "no escape" (RFC 4180 doubling).
  const Dialect q = make_dialect(',', '"', '"', -1);
  CHECK(q.escape == -1);
  CHECK(run_machine(q, "\"a\"\"") == kQuoted);

  // Other delimiters: tab and semicolon; a comma is then ordinary.
  const Dialect t = make_dialect('\t', '\'', -1, -1);
  CHECK(run_machine(t, "a,b") == kUnquoted);
  CHECK(run_machine(t, "a\t") == kFieldStart);
  CHECK(run_machine(t, "'a\tb\n") == kQuoted);
  CHECK(run_machine(t, "\"a\t") == kFieldStart);  // '"' is ordinary when the quote is '\''
  CHECK(run_machine(t, "\"a\tb") == kUnquoted);
}

TEST_CASE("dialect: transition vectors compose like concatenation") {
  const std::vector<Dialect> dialects = {make_dialect(',', '"', -1, -1), make_dialect(',', '"', '\\', '#'),
                                         make_dialect(';', '\'', -1, '#')};
  const std::string alphabet = "ab,;\"'\\#\n\r ";
  std::mt19937_64 rng(12345);
  for (const Dialect& d : dialects) {
    const TransitionVector id = tv_identity();
    for (uint8_t s = 0; s < kNumStates; ++s) CHECK(tv_get(id, s) == s);
    CHECK(tv_str(d, "") == id);
    for (int iter = 0; iter < 2000; ++iter) {
      const std::string a = random_bytes(rng, rng() % 12, alphabet);
      const std::string b = random_bytes(rng, rng() % 12, alphabet);
      const std::string c = random_bytes(rng, rng() % 12, alphabet);
      const TransitionVector ta = tv_str(d, a), tb = tv_str(d, b), tc = tv_str(d, c);
      REQUIRE(tv_str(d, a + b) == tv_compose(ta, tb));
      REQUIRE(tv_compose(tv_compose(ta, tb), tc) == tv_compose(ta, tv_compose(tb, tc)));
      REQUIRE(tv_compose(ta, id) == ta);
      REQUIRE(tv_compose(id, ta) == ta);
      for (uint8_t s = 0; s < kNumStates; ++s) REQUIRE(tv_get(ta, s) == run_machine(d, a, s));
    }
  }
}

TEST_CASE("dialect: host fast path transition_vector equals tv_of_bytes") {
  const Dialect plain = make_dialect(',', '"', -1, -1);
  const Dialect full = make_dialect(',', '"', '\\', '#');
  std::mt19937_64 rng(777);
  // Without specials the fast path runs; with them the slow one. Both must agree.
  const std::vector<std::string> alphabets = {"ab,\n", "ab,\r\n", "xyz",     "a,",     "\n",
                                              "\r",    "ab,\"\n", "ab,\\\n", "ab#,\n", "\"\\#,\r\na"};
  for (const Dialect* d : {&plain, &full}) {
    CHECK(transition_vector(*d, "", 0) == tv_identity());
    for (const auto& alpha : alphabets) {
      for (int iter = 0; iter < 500; ++iter) {
        const std::string s = random_bytes(rng, 1 + rng() % 40, alpha);
        INFO("bytes: " << s);
        REQUIRE(transition_vector(*d, s.data(), s.size()) == tv_of_bytes(*d, s.data(), s.size()));
      }
    }
    // Long runs cross any internal block size.
    for (int iter = 0; iter < 20; ++iter) {
      const std::string s = random_bytes(rng, 5000 + rng() % 5000, iter % 2 ? "abc,\n" : "abc,\"\n");
      REQUIRE(transition_vector(*d, s.data(), s.size()) == tv_of_bytes(*d, s.data(), s.size()));
    }
  }
}

TEST_CASE("dialect: newline_bits marks exactly the LF and CR bytes of a word") {
  // Bytes next to LF and CR (0x09-0x0e), zero, 0x80 and 0xff test the borrow
  // and high-bit cases; whole words of them in every order of a random mix.
  const uint8_t pool[] = {0x00, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x2c, 0x7f, 0x80, 0x8a, 0x8d, 0xff};
  std::mt19937_64 rng(17);
  for (int round = 0; round < 20000; ++round) {
    uint64_t w = 0, want = 0;
    for (int b = 0; b < 8; ++b) {
      const uint8_t c = round < 10000 ? pool[rng() % sizeof pool] : static_cast<uint8_t>(rng());
      w |= static_cast<uint64_t>(c) << (8 * b);
      if (c == '\n' || c == '\r') want |= 0x80ull << (8 * b);
    }
    INFO("word " << std::hex << w);
    REQUIRE(newline_bits(w) == want);
  }
}

TEST_CASE("parse_row: quotes, doubled quotes and embedded separators") {
  const Dialect d = make_dialect(',', '"', -1, -1);

  SECTION("plain fields and terminators") {
    Parsed p = parse(d, "a,bc,\n");
    CHECK(texts(p) == Strings{"a", "bc", ""});  // trailing delimiter: an empty last field
    CHECK(p.r.next == 6);
    CHECK(p.r.lines == 1);
    CHECK(p.r.error == RowError::None);
    CHECK_FALSE(p.r.incomplete);

    p = parse(d, "a,b\r\nc");
    CHECK(texts(p) == Strings{"a", "b"});
    CHECK(p.r.next == 5);  // CRLF is one terminator
    CHECK(p.r.lines == 1);

    p = parse(d, "a,b\rc");
    CHECK(p.r.next == 4);  // a lone CR ends the row
    CHECK(p.r.lines == 1);

    p = parse(d, "x,y");  // final line without a newline
    CHECK(texts(p) == Strings{"x", "y"});
    CHECK(p.r.next == 3);
    CHECK(p.r.lines == 0);
    CHECK_FALSE(p.r.incomplete);
  }

  SECTION("quoted fields") {
    Parsed p = parse(d, "\"a,b\",\"c\nd\",\"e\r\nf\",\"g\rh\"\n");
    CHECK(texts(p) == Strings{"a,b", "c\nd", "e\r\nf", "g\rh"});
    CHECK(p.r.lines == 4);  // three embedded line breaks (CRLF counts once) and the terminator
    CHECK(p.fields[0].flags == kFieldQuoted);
    CHECK(p.r.next == 25);

    p = parse(d, "\"say \"\"hi\"\"\",\"\"\"\"\n");
    CHECK(texts(p) == Strings{"say \"hi\"", "\""});
    CHECK((p.fields[0].flags & kFieldEscaped) != 0);

    p = parse(d, "\"\",x\n");  // empty quoted field
    CHECK(texts(p) == Strings{"", "x"});
    CHECK(p.fields[0].flags == kFieldQuoted);
  }

  SECTION("errors") {
    Parsed p = parse(d, "ab\"c,d\n");
    CHECK(p.r.error == RowError::StrayQuote);
    CHECK(p.r.error_pos == 2);
    CHECK(texts(p) == Strings{"ab\"c", "d"});
    CHECK(p.r.next == 7);

    p = parse(d, "\"ab\"c,d\n");
    CHECK(p.r.error == RowError::TextAfterQuote);
    CHECK(p.r.error_pos == 4);
    CHECK(p.fields.size() == 2);
    CHECK(p.r.next == 8);

    p = parse(d, "a,\"bc\nd");  // input ends inside quotes
    CHECK(p.r.error == RowError::UnterminatedQuote);
    CHECK(p.r.error_pos == 2);
    CHECK(p.r.next == 7);
    CHECK_FALSE(p.r.incomplete);
  }

  SECTION("empty and comment lines") {
    Parsed p = parse(d, "\nx\n");
    CHECK(p.r.empty);
    CHECK(p.fields.empty());
    CHECK(p.r.next == 1);
    p = parse(d, "\r\nx\n");
    CHECK(p.r.empty);
    CHECK(p.r.next == 2);

    const Dialect c = make_dialect(',', '"', -1, '#');
    p = parse(c, "# a,\"b\r\nx\n");
    CHECK(p.r.comment);
    CHECK(p.fields.empty());
    CHECK(p.r.next == 8);
    CHECK(p.r.lines == 1);
    p = parse(c, "a,#b\n");  // not at a row start: data
    CHECK(texts(p) == Strings{"a", "#b"});
    p = parse(c, "#last");
    CHECK(p.r.comment);
    CHECK(p.r.next == 5);
  }

  SECTION("escape character") {
    const Dialect e = make_dialect(',', '"', '\\', -1);
    Parsed p = parse(e, "\"a\\\"b\",\"c\\\\d\",\"x\\ny\"\n");
    CHECK(texts(p) == Strings{"a\"b", "c\\d", "x\ny"});
    CHECK(p.r.next == 21);
    p = parse(e, "a\\b,c\n");  // outside quotes the escape is literal
    CHECK(texts(p) == Strings{"a\\b", "c"});
    CHECK(p.fields[0].flags == 0);
  }

  SECTION("incomplete at the buffer end") {
    // Each prefix of a complete row, not at EOF, must ask for more bytes.
    const std::string row = "ab,\"c\"\"d\",\"e\nf\",g\r\n";
    for (size_t cut = 0; cut < row.size(); ++cut) {
      INFO("cut at " << cut);
      Parsed p = parse(d, row, 0, false, cut);
      CHECK(p.r.incomplete);
    }
    Parsed p = parse(d, row, 0, false, row.size());
    CHECK_FALSE(p.r.incomplete);
    CHECK(texts(p) == Strings{"ab", "c\"d", "e\nf", "g"});
    CHECK(p.r.next == row.size());
    // A lone CR at the end is ambiguous (CRLF may follow) until EOF.
    CHECK(parse(d, "a\r", 0, false).r.incomplete);
    CHECK(parse(d, "a\r", 0, true).r.next == 2);
    // A row that starts mid-buffer.
    p = parse(d, "a\nb,c\n", 2);
    CHECK(texts(p) == Strings{"b", "c"});
    CHECK(p.r.next == 6);
  }
}

TEST_CASE("parse_row ends rows exactly where the state machine returns to a row start") {
  // On random rows, the bytes a row consumes drive the machine from a row start back to a
  // row start, and never through one earlier (except the LF of a CRLF).
  const Dialect d = make_dialect(',', '"', '\\', '#');
  std::mt19937_64 rng(99);
  const std::string alphabet = "ab,\"\\#\n\r";
  for (int iter = 0; iter < 3000; ++iter) {
    const std::string s = random_bytes(rng, 1 + rng() % 30, alphabet);
    INFO("bytes: " << s);
    uint64_t pos = 0;
    while (pos < s.size()) {
      Parsed p = parse(d, s, pos);
      REQUIRE(p.r.next > pos);
      REQUIRE(p.r.next <= s.size());
      uint8_t st = kRowStart;
      for (uint64_t i = pos; i < p.r.next; ++i) {
        st = csv_step(d, st, static_cast<uint8_t>(s[i]));
        const bool last = i + 1 == p.r.next;
        const bool cr_of_crlf = i + 2 == p.r.next && s[i] == '\r' && s[i + 1] == '\n';
        if (!last && !cr_of_crlf) REQUIRE(st != kRowStart);
      }
      if (p.r.error != RowError::UnterminatedQuote && p.r.next < s.size()) REQUIRE(st == kRowStart);
      pos = p.r.next;
    }
  }
}

namespace {

// Dialects whose delimiter has several bytes: a plain pair, a repeated byte
// (a match can fall back to a shorter one), a self-overlapping triple and a
// two-byte UTF-8 character.
std::vector<Dialect> multi_byte_dialects() {
  return {make_dialect(std::string(", "), '"', -1, -1), make_dialect(std::string("||"), '"', '\\', '#'),
          make_dialect(std::string("|:|"), '"', -1, '#'), make_dialect(std::string("\xc2\xa6"), '\'', -1, -1),
          make_dialect(std::string(":::"), '"', -1, -1)};
}

// Splits text without quotes on every leftmost whole delimiter, as a user
// would by hand.
Strings split_plain(const std::string& row, const std::string& delim) {
  Strings out;
  size_t from = 0;
  for (;;) {
    const size_t at = row.find(delim, from);
    if (at == std::string::npos) break;
    out.push_back(row.substr(from, at - from));
    from = at + delim.size();
  }
  out.push_back(row.substr(from));
  return out;
}

std::string delimiter_of(const Dialect& d) {
  return std::string(reinterpret_cast<const char*>(d.delimiter_bytes), d.delimiter_len);
}

}  // namespace

TEST_CASE("dialect: delimiters of several bytes keep the vectors exact") {
  std::mt19937_64 rng(4242);
  for (const Dialect& d : multi_byte_dialects()) {
    const std::string delim = delimiter_of(d);
    INFO("delimiter: " << delim);
    CHECK(d.states == kOneByteDelimiterStates + d.delimiter_len - 1);
    const std::string alphabet = delim + delim + "a\"'\\#\n";
    for (int iter = 0; iter < 3000; ++iter) {
      const std::string a = random_bytes(rng, rng() % 14, alphabet);
      const std::string b = random_bytes(rng, rng() % 14, alphabet);
      const TransitionVector ta = tv_str(d, a), tb = tv_str(d, b);
      REQUIRE(tv_str(d, a + b) == tv_compose(ta, tb));
      for (uint8_t s = 0; s < d.states; ++s) REQUIRE(tv_get(ta, s) == run_machine(d, a, s));
      // The host's fast path (no quote, escape or comment byte) agrees too.
      const std::string plain = random_bytes(rng, 1 + rng() % 30, delim + "ab\n");
      INFO("plain: " << plain);
      REQUIRE(transition_vector(d, plain.data(), plain.size()) == tv_of_bytes(d, plain.data(), plain.size()));
    }
  }
}

TEST_CASE("parse_row: delimiters of several bytes split where a whole one stands") {
  const Dialect comma_space = make_dialect(std::string(", "), '"', -1, -1);
  CHECK(texts(parse(comma_space, "a, b,c, \"d, e\"\n")) == Strings{"a", "b,c", "d, e"});
  CHECK(texts(parse(comma_space, ",x, ,\n")) == Strings{",x", ","});
  CHECK(texts(parse(comma_space, "a, , b\n")) == Strings{"a", "", "b"});
  const Dialect bars = make_dialect(std::string("||"), '"', -1, -1);
  CHECK(texts(parse(bars, "a|||b||||c\n")) == Strings{"a", "|b", "", "c"});
  CHECK(texts(parse(bars, "\"x||y\"||z\n")) == Strings{"x||y", "z"});
  // A stray quote after a first delimiter byte is text, not an opening quote.
  const Parsed stray = parse(comma_space, "a,\"b\n");
  CHECK(texts(stray) == Strings{"a,\"b"});
  CHECK(stray.r.error == RowError::StrayQuote);
  // Text after a closing quote up to a whole delimiter is flagged, once.
  const Parsed after = parse(comma_space, "\"a\",b, c\n");
  CHECK(after.fields.size() == 2);
  CHECK(after.r.error == RowError::TextAfterQuote);
  // A delimiter cut by the end of the bytes: more may come, so the row waits.
  CHECK(parse(comma_space, "a,", 0, false).r.incomplete);
  CHECK(parse(comma_space, "a,", 0, true).r.fields == 1);
  CHECK(texts(parse(comma_space, "a,", 0, true)) == Strings{"a,"});
}

TEST_CASE("parse_row with delimiters of several bytes agrees with the machine and a plain split") {
  std::mt19937_64 rng(8080);
  for (const Dialect& d : multi_byte_dialects()) {
    const std::string delim = delimiter_of(d);
    INFO("delimiter: " << delim);
    // Without quotes the fields are what splitting on the delimiter gives.
    for (int iter = 0; iter < 2000; ++iter) {
      const std::string row = random_bytes(rng, 1 + rng() % 24, delim + "ab");
      INFO("row: " << row);
      REQUIRE(texts(parse(d, row + "\n")) == split_plain(row, delim));
    }
    // With quotes and line breaks: every row ends where the machine returns to
    // a row start, and every field after the first begins where it stands at a
    // field start.
    const std::string alphabet = delim + delim + "a\"'\\#\n\r";
    for (int iter = 0; iter < 3000; ++iter) {
      const std::string s = random_bytes(rng, 1 + rng() % 30, alphabet);
      INFO("bytes: " << s);
      uint64_t pos = 0;
      while (pos < s.size()) {
        std::vector<uint64_t> field_begins;
        const RowResult r = parse_row(d, s.data(), pos, s.size(), true, [&](uint32_t, uint64_t b, uint64_t, uint8_t f) {
          field_begins.push_back(f & kFieldQuoted ? b - 1 : b);
        });
        REQUIRE(r.next > pos);
        uint8_t st = kRowStart;
        for (uint64_t i = pos; i < r.next; ++i) {
          for (size_t k = 1; k < field_begins.size(); ++k)
            if (field_begins[k] == i) REQUIRE(st == kFieldStart);
          st = csv_step(d, st, static_cast<uint8_t>(s[i]));
          const bool last = i + 1 == r.next;
          const bool cr_of_crlf = i + 2 == r.next && s[i] == '\r' && s[i + 1] == '\n';
          if (!last && !cr_of_crlf) REQUIRE(st != kRowStart);
        }
        if (r.error != RowError::UnterminatedQuote && r.next < s.size()) REQUIRE(st == kRowStart);
        pos = r.next;
      }
    }
  }
}

// The host's fast path for rows without quotes (cpu/fast_row.hpp) splits a
// row at SSE2 masks; every row it takes must come out as parse_row gives it:
// random rows of delimiters, quotes, escapes, comment bytes, CR, LF, CRLF,
// empty lines and text, in every dialect, at every start and at ends that
// cut them.
TEST_CASE("parse_plain_row gives the rows it takes as parse_row does, in every dialect") {
  std::mt19937_64 rng(31);
  const char alphabet[] = {'a', 'b', '7', ',', ';', '\t', '|', '"', '\'', '\\', '#', '\n', '\r', ' ', '\xc3', '\xa9'};
  uint64_t taken_rows = 0, declined = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const char delimiters[] = {',', ';', '\t', '|'};
    const Dialect d = make_dialect(delimiters[trial % 4], trial % 5 == 0 ? '\'' : '"', trial % 3 == 0 ? '\\' : -1,
                                   trial % 7 == 0 ? '#' : -1);
    // Half the trials mostly text, delimiters and LF, so that many rows are taken.
    const std::string plain = std::string("xxxxxx\n") + delimiters[trial % 4];
    std::string s;
    const size_t n = rng() % 120;
    for (size_t i = 0; i < n; ++i)
      s += trial % 2 == 0 && rng() % 8 != 0 ? plain[rng() % plain.size()] : alphabet[rng() % sizeof alphabet];
    for (uint64_t pos = 0; pos < s.size(); ++pos) {
      const uint64_t end = pos + rng() % (s.size() - pos + 1);
      bool taken = false;
      INFO("trial " << trial << ", row at " << pos << " of " << s.size() << ", end " << end);
      REQUIRE(plain_row_agrees(d, s.data(), pos, end, end == s.size(), &taken));
      (taken ? taken_rows : declined) += 1;
    }
  }
  CHECK(taken_rows > 10000);  // the fast path was tried, not only declined
  CHECK(declined > 10000);
}
