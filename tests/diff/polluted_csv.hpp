// Test helpers for messy input: a clean table of four columns, and the same
// table polluted one way at a time, as a benchmark of real-world CSV loading
// (Pollock) does: a missing or an extra separator in one row, a stray quote,
// a header of several rows, a preamble before the header, another delimiter.
// Each file comes with what a loader given its dialect, the lines to skip and
// the column names must read: the clean rows, and which rows are polluted.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace warpcsv::testing {

enum class Pollution { None, MissingSeparator, ExtraSeparator, StrayQuote, MultiRowHeader, Preamble };

struct PollutedFile {
  std::string text;
  std::string delimiter;
  int skip_lines = 0;                                 // lines before the first data row
  std::vector<std::vector<std::string>> clean_rows;  // every row's fields, clean (unquoted text)
  std::optional<size_t> polluted_row;                // index into clean_rows of the row polluted
  // The polluted row's fields as a loader padding short rows reads them
  // (MissingSeparator only: two fields merged, a null at the end).
  std::vector<std::optional<std::string>> padded_fields;
};

inline const std::vector<std::string>& polluted_column_names() {
  static const std::vector<std::string> kNames = {"id", "name", "amount", "day"};
  return kNames;
}

// A table of `rows` rows with `delimiter` (1 to 4 bytes), polluted by `p` in
// row `row` (row pollutions) or in its header (MultiRowHeader, Preamble).
inline PollutedFile make_polluted(uint64_t seed, Pollution p, size_t rows, size_t row, const std::string& delimiter) {
  std::mt19937_64 rng(seed);
  PollutedFile f;
  f.delimiter = delimiter;
  static const char* const kNames[] = {"Ada", "Grace Hopper", "Linus", "Barbara", "Ken", "Dennis"};
  for (size_t r = 0; r < rows; ++r) {
    std::string name = kNames[rng() % 6];
    if (rng() % 5 == 0) name += delimiter + "Jr";  // a delimiter inside a quoted field
    const long long cents = static_cast<long long>(rng() % 100000) - 20000;
    char amount[32];
    std::snprintf(amount, sizeof amount, "%s%lld.%02lld", cents < 0 ? "-" : "", std::llabs(cents) / 100,
                  std::llabs(cents) % 100);
    char day[16];
    std::snprintf(day, sizeof day, "2024-%02d-%02d", static_cast<int>(1 + rng() % 12), static_cast<int>(1 + rng() % 28));
    f.clean_rows.push_back({std::to_string(1000 + r), name, amount, day});
  }
  auto line_of = [&](const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) line += delimiter;
      const std::string& v = fields[i];
      line += v.find_first_of(delimiter + " ") != std::string::npos ? "\"" + v + "\"" : v;
    }
    return line + "\n";
  };
  const auto& names = polluted_column_names();
  std::vector<std::string> header(names.begin(), names.end());
  if (p == Pollution::Preamble) {
    f.text += "Sales export\nGenerated 2024-05-01 by ERP\n\n";
    f.skip_lines = 3;
  }
  if (p == Pollution::MultiRowHeader) {  // a header over two or three lines: names, then units
    f.text += line_of({"", "", "amount", ""});
    f.skip_lines = 1;
    if (rng() % 2) {
      f.text += line_of({"", "", "(EUR)", "(UTC)"});
      f.skip_lines = 2;
    }
  }
  f.text += line_of(header);
  f.skip_lines += 1;
  for (size_t r = 0; r < rows; ++r) {
    std::vector<std::string> fields = f.clean_rows[r];
    std::string line = line_of(fields);
    if (r == row) {
      switch (p) {
        case Pollution::MissingSeparator: {  // "amount" and "day" run together
          const size_t at = line.rfind(delimiter);
          line.erase(at, delimiter.size());
          f.polluted_row = r;
          f.padded_fields = {fields[0], fields[1], fields[2] + fields[3], std::nullopt};
          break;
        }
        case Pollution::ExtraSeparator: {  // one more inside "amount"
          const size_t at = line.rfind(delimiter) - 2;
          line.insert(at, delimiter);
          f.polluted_row = r;
          break;
        }
        case Pollution::StrayQuote: {  // a quote inside the unquoted "day"
          line.insert(line.size() - 4, "\"");
          f.polluted_row = r;
          break;
        }
        default: break;
      }
    }
    f.text += line;
  }
  return f;
}

}  // namespace warpcsv::testing
