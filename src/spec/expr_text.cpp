// Expressions printed back as pipeline text (names quoted where they must be),
// for messages and the names of computed columns.
#include <string>

#include "spec/ast.hpp"
#include "spec/bind_util.hpp"
#include "spec/lexer.hpp"

namespace warpcsv {
namespace spec {

const char* binop_text(BinOp op) {
  switch (op) {
    case BinOp::Or: return "or";
    case BinOp::And: return "and";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::Concat: return "||";
  }
  return "?";
}

std::string quote_name(const std::string& name) {
  bool bare = !name.empty() && ident_start(name[0]) && !is_reserved(to_lower(name));
  for (char c : name) bare = bare && ident_char(c);
  if (bare) return name;
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

namespace {
std::string string_literal_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string expr_text(const Expr& e) {
  std::string s;
  switch (e.kind) {
    case Expr::Name: s = e.quoted ? quote_name(e.name) : e.name; break;
    case Expr::Dollar:
    case Expr::IntLit:
    case Expr::DecLit:
    case Expr::FloatLit:
    case Expr::BoolLit:
    case Expr::NullLit: s = e.name; break;
    case Expr::StrLit: s = string_literal_text(e.sval); break;
    case Expr::Star: s = "*"; break;
    case Expr::Neg: s = "-" + expr_text(*e.args[0]); break;
    case Expr::Not: s = "not " + expr_text(*e.args[0]); break;
    case Expr::Binary:
      s = expr_text(*e.args[0]) + " " + binop_text(e.op) + " " + expr_text(*e.args[1]);
      break;
    case Expr::In:
      s = expr_text(*e.args[0]) + (e.negated ? " not in (" : " in (");
      for (size_t k = 1; k < e.args.size(); ++k)
        s += (k > 1 ? ", " : "") + expr_text(*e.args[k]);
      s += ")";
      break;
    case Expr::IsNull:
      s = expr_text(*e.args[0]) + (e.negated ? " is not null" : " is null");
      break;
    case Expr::Like:
      s = expr_text(*e.args[0]) + (e.negated ? " not " : " ") + e.name + " " + expr_text(*e.args[1]);
      break;
    case Expr::Call:
      s = e.name + "(";
      for (size_t k = 0; k < e.args.size(); ++k) s += (k ? ", " : "") + expr_text(*e.args[k]);
      s += ")";
      break;
    case Expr::Between:
      s = expr_text(*e.args[0]) + (e.negated ? " not between " : " between ") + expr_text(*e.args[1]) + " and " +
          expr_text(*e.args[2]);
      break;
    case Expr::Case: {
      s = "case";
      size_t k = 0;
      if (e.case_operand) s += " " + expr_text(*e.args[k++]);
      const size_t whens_end = e.args.size() - (e.case_else ? 1 : 0);
      for (; k < whens_end; k += 2)
        s += " when " + expr_text(*e.args[k]) + " then " + expr_text(*e.args[k + 1]);
      if (e.case_else) s += " else " + expr_text(*e.args.back());
      s += " end";
      break;
    }
    case Expr::Cast:
      s = e.name + "(" + expr_text(*e.args[0]) + " as " + e.sval + ")";
      break;
  }
  return e.parens ? "(" + s + ")" : s;
}

}  // namespace spec
}  // namespace warpcsv
