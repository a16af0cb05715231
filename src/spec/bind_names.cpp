// The binder's names: a column name or $N resolved against a stage's input,
// and the wording of what the binder reports (a value described, the hint
// for an unknown name or a quoted one, the fix for numbers read as text).
#include <algorithm>
#include <string>
#include <vector>

#include "spec/ast.hpp"
#include "spec/bind_util.hpp"
#include "spec/binder.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

void Binder::fail(int pos, const std::string& head, const std::string& detail) const {
  throw_at(src_, pos, head, detail);
}

std::string Binder::describe(const Bound& b) const {
  const Expr* e = b.src;
  std::string t = type_name(b.type());
  if (e == nullptr) return t + " value";
  switch (e->kind) {
    case Expr::Name:
    case Expr::Dollar:
      return t + " column '" + expr_text(*e) + "'";
    case Expr::IntLit:
    case Expr::DecLit:
    case Expr::FloatLit:
      return "number " + e->name;
    case Expr::StrLit:
      return "string " + expr_text(*e);
    case Expr::BoolLit:
      return "boolean " + e->name;
    case Expr::NullLit:
      return "null";
    default:
      return t + " expression '" + canon_text(*e) + "'";
  }
}

void Binder::collect_names_in(const Expr& e) {
  if (e.kind == Expr::Name) used_names_.insert(to_lower(e.name));
  // A bare word compared with something may be a string meant in quotes (`day == Sun`).
  const bool compares = e.kind == Expr::In || (e.kind == Expr::Binary && is_comparison(e.op));
  for (size_t k = 0; k < e.args.size(); ++k) {
    const Expr& a = *e.args[k];
    if (compares && a.kind == Expr::Name && !a.quoted && (e.kind == Expr::Binary || k > 0))
      comparands_[&a] = e.kind == Expr::In ? e.args[0].get() : e.args[1 - k].get();
    collect_names_in(a);
  }
}

void Binder::collect_names() {
  for (const auto& s : p_.stages)
    for (const auto& it : s.items)
      if (it.expr) collect_names_in(*it.expr);
}

bool Binder::names_columns(const Expr& e, const Scope& scope) {
  switch (e.kind) {
    case Expr::Name:
      return std::any_of(scope.begin(), scope.end(),
                         [&](const ScopeCol& c) { return to_lower(c.name) == to_lower(e.name); });
    case Expr::Dollar: return e.dollar <= static_cast<int>(scope.size());
    case Expr::IntLit: case Expr::DecLit: case Expr::FloatLit: case Expr::StrLit: case Expr::BoolLit:
    case Expr::NullLit: return false;
    default: return true;
  }
}

std::string Binder::unknown_name_hint(const Expr& e, const Scope& scope, const std::vector<std::string>& close) const {
  const auto other = comparands_.find(&e);
  const bool text = other != comparands_.end() && names_columns(*other->second, scope);
  const std::string columns = join_quoted(close, 3, " or ");
  if (text && !close.empty())
    return "; did you mean the string \"" + e.name + "\" (strings go in quotes) or the column " + columns + "?";
  if (text) return "; did you mean the string \"" + e.name + "\"? Strings go in quotes";
  return close.empty() ? "" : "; did you mean " + columns + "?";
}

void Binder::check_quoted_name(const Expr& e, const Scope& scope) const {
  if (e.kind != Expr::StrLit || e.name.empty() || e.name[0] != '"') return;
  for (const auto& col : scope) {
    if (to_lower(col.name) != to_lower(e.sval)) continue;
    const std::string name = quote_name(col.name);
    fail(e.pos, "usage error",
         e.name + " is a string, not a column name; " +
             (name == col.name ? "write column names without quotes: " + name
                               : "column names with spaces or other characters go in backticks: " + name));
  }
}

std::string Binder::number_fix(const Bound& b) const {
  if (b.type().type != Type::String) return "";
  const std::vector<std::string>* tokens = null_like_of(b);
  if (!tokens) return "; if the column holds numbers, give it a type with --schema";
  std::string list, fix;
  for (size_t k = 0; k < tokens->size(); ++k) {
    list += (k == 0 ? "'" : k + 1 == tokens->size() ? " and '" : ", '") + (*tokens)[k] + "'";
    fix += " --null " + shell_word((*tokens)[k]);
  }
  return "; its values are numbers but for " + list + ", so it is read as text: if " +
         (tokens->size() == 1 ? "that means" : "those mean") + " a missing value, run with" + fix;
}

const std::vector<std::string>* Binder::null_like_of(const Bound& b) const {
  for (size_t i = 0; i < null_like_.size() && i < input_leaves_.size(); ++i)
    if (b.node == input_leaves_[i] && !null_like_[i].empty()) return &null_like_[i];
  return nullptr;
}

int Binder::resolve(const Expr& e, const Scope& scope) const {
  if (e.kind == Expr::Dollar) {
    if (e.dollar > static_cast<int>(scope.size()))
      fail(e.pos, "unknown column",
           e.name + " is out of range: the input of this stage has " +
               std::to_string(scope.size()) + " column" + (scope.size() == 1 ? "" : "s") +
               (scope.empty() ? std::string() : " ($1..$" + std::to_string(scope.size()) + ")"));
    return e.dollar - 1;
  }
  int exact = -1;
  for (size_t i = 0; i < scope.size(); ++i) {
    if (scope[i].name != e.name) continue;
    if (exact >= 0 && scope[i].origin != scope[static_cast<size_t>(exact)].origin)
      fail(e.pos, "ambiguous column",
           "'" + e.name + "' names more than one column of this stage's input ($" + std::to_string(exact + 1) +
               " and $" + std::to_string(i + 1) + ") holding different values; give one another name with "
               "'as' where it is made, or write $N");
    if (exact < 0) exact = static_cast<int>(i);
  }
  if (exact >= 0) return exact;
  int found = -1, count = 0;
  std::string low = to_lower(e.name);
  for (size_t i = 0; i < scope.size(); ++i)
    if (to_lower(scope[i].name) == low) found = static_cast<int>(i), ++count;
  if (count == 1) return found;
  std::vector<std::string> names;
  for (const auto& c : scope) names.push_back(c.name);
  if (count > 1)
    fail(e.pos, "ambiguous column",
         "'" + e.name + "' matches several columns that differ only in case; write the exact "
         "name, one of: " + join_quoted(names, names.size()));
  std::string detail =
      "no column named '" + e.name + "'" + unknown_name_hint(e, scope, closest_names(e.name, names, 3));
  if (!names.empty() && names.size() <= 12)
    detail += " (columns: " + join_plain(names) + ")";
  else if (!names.empty())
    detail += " (" + std::to_string(names.size()) + " columns)";
  else
    detail += " (the input has no columns: it is empty, without even a header line, or --skip passed all its "
              "lines)";
  fail(e.pos, "unknown column", detail);
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
