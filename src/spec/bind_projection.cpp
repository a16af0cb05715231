// Which columns a scan that ends at a sort or a top outputs: only those the
// stages after it name, when a select of expressions replaces the rows
// before anything else needs them (the scan then parses only those).
#include <algorithm>
#include <string>
#include <vector>

#include "spec/bind_util.hpp"
#include "spec/binder.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

namespace {

// Adds the lower-cased column names `e` uses to `names`; false when it uses
// a column by position ($N), which a cut scope would renumber.
bool add_names(const Expr& e, std::vector<std::string>& names) {
  if (e.kind == Expr::Dollar) return false;
  if (e.kind == Expr::Name) names.push_back(to_lower(e.name));
  for (const auto& a : e.args)
    if (!add_names(*a, names)) return false;
  return true;
}

}  // namespace

void Binder::keep_named_columns(size_t from) {
  // Only sorts, tops (and their groupbys), limits and filters up to a select
  // of expressions: the columns they name are all that is read of the rows.
  std::vector<std::string> names;
  size_t k = from;
  for (; k < p_.stages.size(); ++k) {
    const Stage& s = p_.stages[k];
    if (s.kind != Stage::Sort && s.kind != Stage::Top && s.kind != Stage::GroupBy && s.kind != Stage::Limit &&
        s.kind != Stage::Filter && s.kind != Stage::Select)
      return;
    for (const auto& it : s.items)
      if (!it.expr || !add_names(*it.expr, names)) return;  // `*` reads every column
    if (s.kind == Stage::Select) break;
  }
  if (k == p_.stages.size()) return;  // the rows go out whole
  // A name that matches no column is left for the binder to report as it
  // would; columns of one name in different cases all stay.
  Scope kept;
  for (const std::string& n : names)
    if (std::none_of(scope_.begin(), scope_.end(), [&](const ScopeCol& c) { return to_lower(c.name) == n; })) return;
  for (const ScopeCol& c : scope_)
    if (std::find(names.begin(), names.end(), to_lower(c.name)) != names.end()) kept.push_back(c);
  scope_ = std::move(kept);
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
