// Small helpers shared by the parser, binder and --explain: type names, name
// suggestions by edit distance, list formatting.
#pragma once
#include <cctype>
#include <string>
#include <vector>

#include "warpcsv/core/types.hpp"

namespace warpcsv {
namespace spec {

// ASCII lower case (names and keywords compare case-insensitively).
inline std::string to_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
// Type as users write it in --schema ("int", "decimal(2)", "string").
std::string type_name(ColumnType t);
// Levenshtein distance (case-insensitive).
int edit_distance(const std::string& a, const std::string& b);
// Up to `k` of `names` closest to `name`, best first; only plausible ones.
std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& names, size_t k);
// "'a', 'b' or 'c'" (first `max` names).
std::string join_quoted(const std::vector<std::string>& names, size_t max,
                        const std::string& last_sep = ", ");
// "a, b, c".
std::string join_plain(const std::vector<std::string>& names);
// A column name as messages show it: cut after 80 bytes.
std::string shown_name(const std::string& name);
// A word as a command line to paste needs it: in single quotes unless plain (data.csv, NA, -).
std::string shell_word(const std::string& word);

}  // namespace spec
}  // namespace warpcsv
