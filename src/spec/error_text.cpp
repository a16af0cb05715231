// Where an error in the pipeline's text is: its line and position, and the
// text around it with a caret under the spot (messages of the parser and binder).
#include <algorithm>
#include <cstdint>
#include <string>

#include "spec/ast.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace spec {

namespace {

// The terminal columns src[from, to) takes, so that a caret under text with
// accents or CJK lands under its character.
int display_width(const std::string& src, int from, int to) {
  return static_cast<int>(terminal_width(src.data() + from, static_cast<size_t>(to - from)));
}

// Byte offset -> (line start, line end, 1-based line, 1-based column in characters).
void locate(const std::string& src, int pos, int* ls, int* le, int* line, int* col) {
  int n = static_cast<int>(src.size());
  if (pos > n) pos = n;
  *ls = pos;
  while (*ls > 0 && src[*ls - 1] != '\n') --*ls;
  *le = pos;
  while (*le < n && src[*le] != '\n') ++*le;
  *line = 1;
  for (int k = 0; k < *ls; ++k) *line += src[k] == '\n';
  *col = display_width(src, *ls, pos) + 1;
}

}  // namespace

std::string message_at(const std::string& src, int pos, const std::string& head,
                       const std::string& detail) {
  int ls, le, line, col;
  locate(src, pos, &ls, &le, &line, &col);
  bool multi = src.find('\n') != std::string::npos;
  // "position", not "column": a column is the data's.
  std::string where = multi ? "line " + std::to_string(line) + ", position " + std::to_string(col)
                            : "position " + std::to_string(col);
  // Show at most ~100 columns around the position so the caret stays readable.
  constexpr int kWindow = 100, kBefore = 60;
  int from = ls, to = le;
  std::string pre, post;
  if (to - from > kWindow) {
    if (pos - from > kBefore) {
      from = pos - kBefore;
      pre = "...";
    }
    if (to - from > kWindow) {
      to = from + kWindow;
      post = "...";
    }
  }
  while (from < pos && is_continuation_byte(src[static_cast<size_t>(from)])) ++from;  // cut between characters
  while (to < le && is_continuation_byte(src[static_cast<size_t>(to)])) ++to;
  std::string text = src.substr(from, to - from);
  for (char& c : text)
    if (c == '\t' || c == '\r') c = ' ';
  std::string caret(pre.size() + static_cast<size_t>(display_width(src, from, pos)), ' ');
  return head + " at " + where + ": " + detail + "\n  " + pre + text + post + "\n  " + caret +
         "^";
}

void throw_at(const std::string& src, int pos, const std::string& head,
              const std::string& detail) {
  throw UsageError(message_at(src, pos, head, detail));
}

}  // namespace spec
}  // namespace warpcsv
