// The pipeline language's tokens: the lexer turns a spec into them, with
// byte positions for messages that point at the offending text.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace warpcsv {
namespace spec {

enum class Tok : uint8_t {
  End, Ident, QIdent, Dollar, Int, Dec, Float, Str, Pipe, Comma, LParen, RParen,
  Plus, Minus, Star, Slash, Percent, Eq, Ne, Lt, Le, Gt, Ge, Concat,
};

struct Token {
  Tok kind;
  int pos;
  int end;
  std::string text;   // as written
  std::string value;  // decoded: string contents, identifier name
};

// Identifier characters: ASCII letters, '_' and any byte of a UTF-8 sequence; digits after the first.
bool ident_start(char c);
bool ident_char(char c);
// A word the expression grammar reserves (`low`: lower case): a name that is one needs backquotes.
bool is_reserved(const std::string& low);

// The tokens of `src`, ending with Tok::End; throws UsageError (a syntax error, position marked).
std::vector<Token> lex_pipeline(const std::string& src);

}  // namespace spec
}  // namespace warpcsv
