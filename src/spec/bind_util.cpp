// Helpers for messages: type names, suggestions by edit distance, lists.
#include "spec/bind_util.hpp"

#include "warpcsv/io.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace warpcsv {
namespace spec {

// The same names --schema accepts, so a message's type can be pasted back.
std::string type_name(ColumnType t) { return schema_type_name(t); }

int edit_distance(const std::string& a, const std::string& b) {
  auto low = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int sub = prev[j - 1] + (low(a[i - 1]) == low(b[j - 1]) ? 0 : 1);
      cur[j] = std::min(std::min(prev[j] + 1, cur[j - 1] + 1), sub);
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> closest_names(const std::string& name,
                                       const std::vector<std::string>& names, size_t k) {
  std::vector<std::pair<int, size_t>> scored;
  for (size_t i = 0; i < names.size(); ++i) {
    // Plausible: at most about half the longer name changed. The lengths
    // alone rule most out, and very long names are not compared: the edit
    // distance is quadratic, and thousands of long names delayed the error by seconds.
    int limit = std::max<int>(2, static_cast<int>(std::max(name.size(), names[i].size()) / 2));
    const size_t shorter = std::min(name.size(), names[i].size()), longer = std::max(name.size(), names[i].size());
    if (longer - shorter > static_cast<size_t>(limit) || longer > 256) continue;
    int d = edit_distance(name, names[i]);
    if (d <= limit) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < k; ++i)
    out.push_back(names[scored[i].second]);
  return out;
}

std::string join_quoted(const std::vector<std::string>& names, size_t max,
                        const std::string& last_sep) {
  std::string out;
  size_t n = std::min(max, names.size());
  for (size_t i = 0; i < n; ++i) {
    if (i) out += i + 1 == n ? last_sep : ", ";
    out += "'" + shown_name(names[i]) + "'";
  }
  return out;
}

std::string shown_name(const std::string& name) {
  constexpr size_t kShown = 80;  // a 10 MB header name filled 10 MB of stderr
  return name.size() <= kShown ? name : name.substr(0, kShown) + "...(" + std::to_string(name.size()) + " bytes)";
}

std::string shell_word(const std::string& word) {
  bool plain = !word.empty();
  for (char c : word)
    plain = plain && c != 0 && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+,:=@%", c));
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string join_plain(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + shown_name(names[i]);
  return out;
}

}  // namespace spec
}  // namespace warpcsv
