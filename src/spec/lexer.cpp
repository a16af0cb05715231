// The lexer of the pipeline language (see lexer.hpp).
#include "spec/lexer.hpp"

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "spec/ast.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace spec {

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) {
  return ident_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

bool is_reserved(const std::string& low) {
  static const char* const kWords[] = {"and", "or", "not", "in", "is", "null",
                                       "true", "false", "as", "asc", "desc"};
  for (const char* w : kWords)
    if (low == w) return true;
  return false;
}

namespace {

class Lexer {
 public:
  explicit Lexer(const std::string& src) : src_(src) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      while (i_ < n() && std::isspace(static_cast<unsigned char>(src_[i_]))) ++i_;
      if (i_ >= n()) break;
      out.push_back(next());
    }
    out.push_back(Token{Tok::End, n(), n(), "", ""});
    return out;
  }

 private:
  int n() const { return static_cast<int>(src_.size()); }
  char at(int k) const { return k < n() ? src_[k] : '\0'; }

  [[noreturn]] void fail(int pos, const std::string& detail) {
    throw_at(src_, pos, "syntax error", detail);
  }

  Token make(Tok k, int start, std::string value = "") {
    return Token{k, start, i_, src_.substr(start, i_ - start), std::move(value)};
  }

  Token next() {
    int s = i_;
    char c = src_[i_];
    switch (c) {
      case '|':
        if (at(i_ + 1) == '|') {
          i_ += 2;
          return make(Tok::Concat, s);
        }
        ++i_;
        return make(Tok::Pipe, s);
      case ',': ++i_; return make(Tok::Comma, s);
      case '(': ++i_; return make(Tok::LParen, s);
      case ')': ++i_; return make(Tok::RParen, s);
      case '+': ++i_; return make(Tok::Plus, s);
      case '-': ++i_; return make(Tok::Minus, s);
      case '*': ++i_; return make(Tok::Star, s);
      case '/': ++i_; return make(Tok::Slash, s);
      case '%': ++i_; return make(Tok::Percent, s);
      case '=':
        i_ += at(i_ + 1) == '=' ? 2 : 1;
        return make(Tok::Eq, s);
      case '!':
        if (at(i_ + 1) == '=') {
          i_ += 2;
          return make(Tok::Ne, s);
        }
        fail(s, "unexpected '!'; write 'not' for negation or '!=' for inequality");
      case '<':
        if (at(i_ + 1) == '=') { i_ += 2; return make(Tok::Le, s); }
        if (at(i_ + 1) == '>') { i_ += 2; return make(Tok::Ne, s); }
        ++i_;
        return make(Tok::Lt, s);
      case '>':
        if (at(i_ + 1) == '=') { i_ += 2; return make(Tok::Ge, s); }
        ++i_;
        return make(Tok::Gt, s);
      case '"':
      case '\'':
        return string_lit(c);
      case '`':
        return quoted_ident();
      case '$': {
        ++i_;
        if (!std::isdigit(static_cast<unsigned char>(at(i_))))
          fail(s, "expected a column number after '$' (like $3), found " + found_here());
        while (std::isdigit(static_cast<unsigned char>(at(i_)))) ++i_;
        if (ident_char(at(i_))) fail(i_, "unexpected character '" + std::string(1, at(i_)) +
                                             "' after column number; write $N, like $3");
        return make(Tok::Dollar, s, src_.substr(s + 1, i_ - s - 1));
      }
      default:
        break;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && std::isdigit(static_cast<unsigned char>(at(i_ + 1)))))
      return number();
    if (ident_start(c)) {
      while (ident_char(at(i_))) ++i_;
      // alias.column: a lookup column named after its join's alias, one name
      while (at(i_) == '.' && ident_start(at(i_ + 1)))
        for (++i_; ident_char(at(i_));) ++i_;
      return make(Tok::Ident, s, src_.substr(s, i_ - s));
    }
    if (c == '&')
      fail(s, std::string("unexpected '") + (at(i_ + 1) == '&' ? "&&" : "&") +
                  "'; join conditions with 'and', like v1 > 1 and v2 < 3");
    fail(s, std::string("unexpected character '") + c +
                "'; column names with special characters go in backticks, like `my col`");
  }

  std::string found_here() {
    if (i_ >= n()) return "end of spec";
    return "'" + std::string(1, src_[i_]) + "'";
  }

  Token number() {
    int s = i_;
    bool dot = false, exp = false;
    while (std::isdigit(static_cast<unsigned char>(at(i_)))) ++i_;
    if (at(i_) == '.') {
      dot = true;
      ++i_;
      while (std::isdigit(static_cast<unsigned char>(at(i_)))) ++i_;
    }
    if ((at(i_) == 'e' || at(i_) == 'E') &&
        (std::isdigit(static_cast<unsigned char>(at(i_ + 1))) ||
         ((at(i_ + 1) == '+' || at(i_ + 1) == '-') &&
          std::isdigit(static_cast<unsigned char>(at(i_ + 2)))))) {
      exp = true;
      i_ += 2;
      while (std::isdigit(static_cast<unsigned char>(at(i_)))) ++i_;
    }
    if (ident_char(at(i_)) || at(i_) == '.')
      fail(i_, "unexpected '" + std::string(1, at(i_)) + "' in the number '" +
                   src_.substr(s, i_ - s + 1) +
                   "'; column names that start with a digit go in backticks, like `2x`");
    return make(exp ? Tok::Float : dot ? Tok::Dec : Tok::Int, s);
  }

  Token string_lit(char q) {
    int s = i_++;
    std::string v;
    for (;;) {
      if (i_ >= n())
        fail(s, std::string("unterminated string: add the closing ") + q);
      char c = src_[i_++];
      if (c == q) break;
      if (c == '\\') {
        if (i_ >= n()) fail(s, std::string("unterminated string: add the closing ") + q);
        char e = src_[i_++];
        switch (e) {
          case 'n': v += '\n'; break;
          case 't': v += '\t'; break;
          case 'r': v += '\r'; break;
          case '\\': case '"': case '\'': v += e; break;
          default:
            fail(i_ - 2, std::string("unknown escape '\\") + e +
                             "' in string; use \\\" \\' \\\\ \\n or \\t");
        }
        continue;
      }
      v += c;
    }
    return make(Tok::Str, s, v);
  }

  Token quoted_ident() {
    int s = i_++;
    std::string v;
    for (;;) {
      if (i_ >= n()) fail(s, "unterminated column name: add the closing `");
      char c = src_[i_++];
      if (c == '`') {
        if (at(i_) == '`') {  // `` inside backticks is one backtick
          v += '`';
          ++i_;
          continue;
        }
        break;
      }
      v += c;
    }
    if (v.empty()) fail(s, "empty column name ``; write the name between the backticks");
    return make(Tok::QIdent, s, v);
  }

  const std::string& src_;
  int i_ = 0;
};

}  // namespace

std::vector<Token> lex_pipeline(const std::string& src) { return Lexer(src).run(); }

}  // namespace spec
}  // namespace warpcsv
