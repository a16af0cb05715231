// Test helpers for the differential tests: a seeded random table generator that
// remembers the logical value of every cell, its CSV text (quotes with embedded
// delimiters, newlines and doubled quotes, CRLF, nulls, ragged and malformed rows, NUL
// bytes and invalid UTF-8), and a deliberately naive RFC 4180 splitter, written
// independently of the core. Options off by default draw no random numbers, so a seed
// gives the same file as before they existed.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace warpcsv::testing {

// One generated row as the reference sees it. Decimals are scaled by 10^4.
struct Record {
  std::optional<std::string> k1;  // string key
  int64_t k2 = 0;                 // int key, never null
  std::optional<int64_t> v1;      // int
  std::optional<int64_t> v2;      // decimal, value = v2 / 10^4
  std::optional<std::string> s;   // free text
  std::optional<double> f;        // float (exponent notation)
  bool bad = false;               // ragged or malformed: rejected by the tool
  // With DatasetOptions::byte_issues: a NUL (1) or invalid UTF-8 (2) put into the row (then
  // `bad` too), and where its first byte is: offset in Dataset::text, physical line (the
  // header is line 1; LF, CRLF and CR each end a line) and 1-based byte column.
  int bad_bytes = 0;
  uint64_t bad_offset = 0, bad_line = 0, bad_column = 0;
};

struct DatasetOptions {
  size_t rows = 400;
  int key_cardinality = 6;  // distinct k1 values
  int k2_range = 20;        // k2 in [-k2_range, k2_range]
  bool crlf = false;        // CRLF line ends (else LF); `mixed` overrides
  bool mixed_eol = false;   // LF, CRLF and CR chosen per row
  bool final_newline = true;
  bool bad_rows = false;  // sprinkle ragged and malformed rows
  bool empty_lines = false;
  // Sprinkle NUL bytes and invalid UTF-8 sequences (bad rows), and valid 2-, 3- and 4-byte
  // UTF-8 characters in the free text of good rows.
  bool byte_issues = false;
  // The field delimiter (1 to 4 bytes); a field holding any of its bytes is quoted.
  std::string delimiter = ",";
};

struct Dataset {
  std::vector<Record> records;  // in file order, bad ones included
  std::string text;             // the CSV file, header first
};

constexpr int64_t kDecScale = 10000;

namespace detail {

inline std::string csv_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Quotes when needed, and sometimes when not (a quoted plain value must read the same).
inline std::string csv_field(std::mt19937_64& rng, const std::string& s, const std::string& delimiter) {
  const bool special = s.find_first_of("\"\r\n" + delimiter) != std::string::npos;
  return special || rng() % 4 == 0 ? csv_quote(s) : s;
}

// The shortest text of a value scaled by 10^4 ("-12.5", "3", "0.0001").
inline std::string decimal_text(int64_t scaled) {
  const bool neg = scaled < 0;
  const int64_t mag = neg ? -scaled : scaled;
  std::string ip = std::to_string(mag / kDecScale);
  std::string fp = std::to_string(mag % kDecScale);
  fp = std::string(4 - fp.size(), '0') + fp;
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  std::string out = (neg && mag != 0 ? "-" : "") + ip;
  if (!fp.empty()) out += "." + fp;
  return out;
}

inline std::string float_text(double mantissa, int exp) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3fe%d", mantissa, exp);
  return buf;
}

}  // namespace detail

// The k1 values: plain words first, then ones that need quoting or care.
inline std::vector<std::string> key_pool(int n) {
  std::vector<std::string> pool = {"alpha",      "beta",           "has,comma", "line\nbreak",
                                   "say \"hi\"", "crlf\r\ninside", "gamma",     "\xc3\xbcml\xc3\xa4ut",
                                   " spaced ",   "delta"};
  for (int i = static_cast<int>(pool.size()); i < n; ++i)
    pool.push_back("key" + std::to_string(i * 7919 % 1000));
  pool.resize(static_cast<size_t>(n));
  return pool;
}

// A seeded random table with columns k1,k2,v1,v2,s,f.
inline Dataset make_dataset(uint64_t seed, const DatasetOptions& o) {
  std::mt19937_64 rng(seed);
  Dataset ds;
  const std::vector<std::string> pool = key_pool(o.key_cardinality);
  const char* eols[] = {"\n", "\r\n", "\r"};
  auto eol = [&]() -> std::string {
    if (o.mixed_eol) return eols[rng() % 3];
    return o.crlf ? "\r\n" : "\n";
  };
  const std::string& sep = o.delimiter;
  ds.text = "k1" + sep + "k2" + sep + "v1" + sep + "v2" + sep + "s" + sep + "f" + eol();
  for (size_t r = 0; r < o.rows; ++r) {
    if (o.empty_lines && rng() % 30 == 0) ds.text += eol();
    Record rec;
    if (rng() % 12) rec.k1 = pool[rng() % pool.size()];
    rec.k2 = static_cast<int64_t>(rng() % (2 * o.k2_range + 1)) - o.k2_range;
    if (rng() % 10) {
      rec.v1 = static_cast<int64_t>(rng() % 200001) - 100000;
      if (rng() % 50 == 0) rec.v1 = *rec.v1 * 1000000000;  // sums past 2^53 stay exact
    }
    if (rng() % 10) {
      // 0-4 places after the point.
      int64_t unit = 1;
      for (int i = static_cast<int>(rng() % 5); i < 4; ++i) unit *= 10;
      rec.v2 = (static_cast<int64_t>(rng() % 20000001) - 10000000) / unit * unit;
    }
    if (rng() % 8) {
      std::string t;
      const size_t len = 1 + rng() % 6;
      for (size_t i = 0; i < len; ++i) {
        const int c = static_cast<int>(rng() % 30);
        if (o.byte_issues && c == 3 && rng() % 2 == 0) {
          static const char* const kChars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xe6\x9d\xb1", "\xf0\x9f\x98\x80"};
          t += kChars[rng() % 4];
          continue;
        }
        t += c == 0 ? ',' : c == 1 ? '"' : c == 2 ? '\n' : static_cast<char>('a' + c % 26);
      }
      rec.s = t;
    }
    std::string f_text;
    if (rng() % 10) {
      const double m = static_cast<double>(static_cast<int64_t>(rng() % 20001) - 10000) / 1000.0;
      const int e = static_cast<int>(rng() % 7) - 3;
      f_text = detail::float_text(m, e);
      rec.f = std::strtod(f_text.c_str(), nullptr);
    }

    std::vector<std::string> fields = {
        rec.k1 ? detail::csv_field(rng, *rec.k1, o.delimiter) : "",
        rng() % 8 == 0 ? detail::csv_quote(std::to_string(rec.k2)) : std::to_string(rec.k2),
        rec.v1 ? std::to_string(*rec.v1) : "",
        rec.v2 ? detail::decimal_text(*rec.v2) : "",
        rec.s ? detail::csv_field(rng, *rec.s, o.delimiter) : (rng() % 3 == 0 ? "\"\"" : ""),
        f_text,
    };
    if (o.bad_rows && r > 20 && rng() % 25 == 0) {
      rec.bad = true;
      switch (rng() % 3) {
        case 0:
          fields.pop_back();
          break;  // too few fields
        case 1:
          fields.push_back("extra");
          break;  // too many
        default:
          fields[4] = "\"q\"tail";
          break;  // text after a closing quote
      }
    } else if (o.byte_issues && r > 20 && rng() % 15 == 0) {
      // A NUL or an invalid sequence at the start of a field's content (after an opening
      // quote): never inside a multibyte character or a doubled quote, so it is the row's
      // first problem. Each sequence is invalid at its first byte whatever follows it.
      static const char* const kBad[] = {"\xe9",         "\x80",         "\xff",     "\xc3",
                                         "\xe2\x82",     "\xc0\xaf",     "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                         "\xf0\x9f\x98"};
      const size_t kind = rng() % 13;  // 0-3: NUL
      const std::string bytes = kind < 4 ? std::string(1, '\0') : std::string(kBad[kind - 4]);
      const size_t f = rng() % fields.size();
      const size_t at = !fields[f].empty() && fields[f][0] == '"' ? 1 : 0;
      fields[f].insert(at, bytes);
      if (rng() % 4 == 0) fields.push_back("extra");  // ragged too: the byte comes first
      rec.bad = true;
      rec.bad_bytes = kind < 4 ? 1 : 2;
      rec.bad_offset = ds.text.size() + at;
      for (size_t i = 0; i < f; ++i) rec.bad_offset += fields[i].size() + sep.size();
    }
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) line += (i ? sep : "") + fields[i];
    ds.text += line;
    if (r + 1 < o.rows || o.final_newline) ds.text += eol();
    ds.records.push_back(rec);
  }
  if (o.byte_issues) {  // lines and columns of the injected bytes, counted like the tool does
    uint64_t line = 1, line_start = 0, at = 0;
    for (Record& rec : ds.records) {
      if (!rec.bad_bytes) continue;
      for (; at < rec.bad_offset; ++at) {
        const char c = ds.text[at];
        if (c == '\n' || (c == '\r' && ds.text[at + 1] != '\n')) {
          ++line;
          line_start = at + 1;
        }
      }
      rec.bad_line = line;
      rec.bad_column = rec.bad_offset - line_start + 1;
    }
  }
  return ds;
}

// Splits CSV text into rows of fields, sequentially and naively: RFC 4180 quotes with
// doubled quotes, LF / CRLF / CR line ends, the leftmost whole delimiter outside quotes.
// Empty lines are dropped. An empty field, quoted or not, reads as nullopt (warpcsv's rule).
inline std::vector<std::vector<std::optional<std::string>>> naive_split(const std::string& s,
                                                                        const std::string& delim = ",") {
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::vector<std::optional<std::string>> row;
  std::string field;
  bool quoted = false, in_quotes = false, line_has_bytes = false;
  auto end_field = [&]() {
    if (field.empty())
      row.push_back(std::nullopt);
    else
      row.push_back(field);
    field.clear();
    quoted = false;
  };
  auto end_row = [&]() {
    end_field();
    rows.push_back(row);
    row.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < s.size() && s[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
      line_has_bytes = true;
    } else if (s.compare(i, delim.size(), delim) == 0) {
      end_field();
      line_has_bytes = true;
      i += delim.size() - 1;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
      if (line_has_bytes) end_row();
      line_has_bytes = false;
    } else {
      field += c;
      line_has_bytes = true;
    }
  }
  if (line_has_bytes) end_row();
  return rows;
}

}  // namespace warpcsv::testing
