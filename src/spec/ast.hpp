// The parsed pipeline: stages and expression trees that remember where in the
// spec text they came from, so the binder can point at the offending token.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpcsv/core/types.hpp"

namespace warpcsv {
namespace spec {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class BinOp : uint8_t { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, Mod, Concat };

struct Expr {
  enum Kind : uint8_t {
    Name,      // column name (bare or `quoted`)
    Dollar,    // $N, 1-based
    IntLit,
    DecLit,    // ival scaled by 10^scale
    FloatLit,
    StrLit,
    BoolLit,
    NullLit,
    Neg,
    Not,
    Binary,
    In,        // args[0] in (args[1..]); negated: not in
    IsNull,    // negated: is not null
    Like,      // args[0] like args[1]; name "like" or "ilike"; negated: not like
    Call,      // name = function name, lower case
    Star,      // the `*` of count(*)
    Between,   // args[0] between args[1] and args[2]; negated: not between
    Case,      // [operand,] when, then, when, then, ... [, else]: see case_operand, case_else
    Cast,      // name "cast" or "try_cast" of args[0]; sval = the type's name, scale = decimal's digits
  };
  Kind kind = NullLit;
  int pos = 0;  // byte offsets into the spec: [pos, end)
  int end = 0;
  std::string name;  // Name: column; Call: function name; literals: text as written
  bool quoted = false;  // Name written in backticks
  int128 ival = 0;
  int scale = 0;
  double fval = 0;
  std::string sval;  // decoded string literal
  int dollar = 0;
  BinOp op = BinOp::Or;
  bool negated = false;
  bool parens = false;  // written inside parentheses
  bool case_operand = false;  // case x when ...: args[0] is x
  bool case_else = false;     // the last arg is the else branch
  std::vector<ExprPtr> args;
};

// One comma-separated element of a stage: `EXPR [as NAME]`, `EXPR [asc|desc]`, or `*`.
struct Item {
  ExprPtr expr;  // null for `*`
  std::string alias;
  bool has_alias = false;
  bool desc = false;
  int pos = 0;
  int end = 0;
};

// `[left] join FILE [delimiter D] on KEY [= NAME], ... [as ALIAS]`.
struct JoinClause {
  std::string file;  // as written, decoded
  int file_pos = 0;
  bool left = false;
  char delimiter = 0;  // 0: the input's
  struct Key {
    ExprPtr row;         // over the rows so far
    std::string lookup;  // the lookup file's column
    int lookup_pos = 0;
    bool same_name = false;  // `on k`: one column of both (the lookup's is not added again)
  };
  std::vector<Key> keys;
  std::string alias;  // empty: none
  int alias_pos = 0;
};

struct Stage {
  enum Kind : uint8_t { Filter, GroupBy, Agg, Select, Sort, Limit, DropNa, Assert, Distinct, Top, Join } kind;
  int pos = 0;  // the keyword
  int end = 0;
  std::string keyword;  // lower case
  std::vector<Item> items;
  int64_t limit = 0;  // limit; top: rows per group
  std::shared_ptr<const JoinClause> join;  // join
};

struct Pipeline {
  std::string src;
  std::vector<Stage> stages;
};

// Parses the whole pipeline; throws UsageError with the position marked.
Pipeline parse_pipeline(const std::string& src);

// Builds "<head> at position N: <detail>\n  <spec>\n  <caret>" pointing at byte `pos`
// of `src` (1-based; "line L, position N" for a spec of several lines).
std::string message_at(const std::string& src, int pos, const std::string& head,
                       const std::string& detail);
// Throws UsageError(message_at(...)).
[[noreturn]] void throw_at(const std::string& src, int pos, const std::string& head,
                           const std::string& detail);

// Canonical text of an expression: the text as written with normalized spacing
// and lower-case function names, e.g. "sum(v1) / count()".
std::string expr_text(const Expr& e);
// A column name as it must be written in a spec (backticks when not a bare identifier).
std::string quote_name(const std::string& name);
// The spelling of a binary operator ("+", "==", "and").
const char* binop_text(BinOp op);

// Aggregate functions of the language (supported or not).
bool is_aggregate_name(const std::string& lower_name);

}  // namespace spec
}  // namespace warpcsv
