// Binding of join stages: the lookup file's columns join the row's, before
// the scan ends as leaves past the input's, after it as a post stage.
#include <algorithm>
#include <string>
#include <vector>

#include "spec/ast.hpp"
#include "spec/binder.hpp"
#include "spec/bind_util.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

ColumnType Binder::join_key_type(const Bound& row, const OutputColumn& lookup, const JoinClause& jc,
                                 const JoinClause::Key& key) const {
  const ColumnType a = row.type(), b = lookup.type;
  if (row.null_lit || a == b) return b;
  if (is_numeric(a.type) && is_numeric(b.type)) return numeric_common(a, b);
  const bool dates = (a.type == Type::Date || a.type == Type::Timestamp) &&
                     (b.type == Type::Date || b.type == Type::Timestamp);
  if (dates) return ct(Type::Timestamp, a.scale | b.scale);
  const std::string fix =
      "cast(" + canon_text(*key.row) + " as " + schema_type_name(b) + ") = " + quote_name(lookup.name);
  fail(key.row->pos, "type error",
       "join '" + jc.file + "' compares " + describe(row) + " with the lookup file's " + type_name(b) + " column '" +
           lookup.name + "'; keys must be of one kind: write on " + fix);
}

void Binder::join_stage(const Stage& st) {
  const JoinClause& jc = *st.join;
  const int j = static_cast<int>(plan_.joins.size());
  if (static_cast<size_t>(j) >= lookup_schemas_.size())
    fail(jc.file_pos, "internal error", "the lookup file of this join was not read");
  JoinSpec spec;
  spec.path = jc.file;
  spec.delimiter = jc.delimiter;
  spec.left = jc.left;
  spec.lookup_schema = lookup_schemas_[static_cast<size_t>(j)];
  spec.text = stage_text(st);
  const std::vector<OutputColumn>& lookup = spec.lookup_schema;
  if (jc.keys.size() > static_cast<size_t>(kMaxJoinKeys))
    fail(jc.keys[kMaxJoinKeys].row->pos, "usage error",
         "a join takes at most " + std::to_string(kMaxJoinKeys) + " keys");
  auto lookup_column = [&](const JoinClause::Key& k) {
    for (int pass = 0; pass < 2; ++pass)  // the exact name first, then any case
      for (size_t c = 0; c < lookup.size(); ++c)
        if (pass ? to_lower(lookup[c].name) == to_lower(k.lookup) : lookup[c].name == k.lookup) return static_cast<int>(c);
    std::string names;
    for (size_t c = 0; c < lookup.size() && c < 12; ++c) names += (c ? ", " : "") + quote_name(lookup[c].name);
    if (lookup.size() > 12) names += ", ...";
    fail(k.lookup_pos, "usage error",
         "the lookup file '" + jc.file + "' has no column '" + k.lookup + "'; its columns are " + names +
             (k.same_name ? "; a key of another name is written on " + quote_name(k.lookup) + " = NAME" : ""));
  };
  Ctx c{&scope_, false, false, "join"};
  std::vector<BPtr> keys;
  std::vector<std::string> key_texts;
  std::vector<bool> joined_away(lookup.size(), false);  // `on k`: the row's k stands for the lookup's
  for (const JoinClause::Key& k : jc.keys) {
    Bound b = bind(*k.row, c);
    const int col = lookup_column(k);
    const ColumnType t = join_key_type(b, lookup[static_cast<size_t>(col)], jc, k);
    keys.push_back(coerce(b, t).node);
    key_texts.push_back(canon_text(*k.row));
    spec.key_columns.push_back(col);
    spec.key_types.push_back(t);
    if (k.same_name) joined_away[static_cast<size_t>(col)] = true;
  }
  // The lookup's columns join the row's; a clashing name gets the alias
  // (`c.name`) or a suffix (`name_2`).
  std::vector<std::string> taken;
  for (const auto& col : scope_) taken.push_back(to_lower(col.name));
  auto free_name = [&](const std::string& name) {
    auto is_taken = [&](const std::string& n) {
      return std::find(taken.begin(), taken.end(), to_lower(n)) != taken.end();
    };
    std::string out = name;
    if (is_taken(out) && !jc.alias.empty()) out = jc.alias + "." + name;
    for (int n = 2; is_taken(out); ++n) out = name + "_" + std::to_string(n);
    taken.push_back(to_lower(out));
    return out;
  };
  std::vector<int> added;
  for (size_t col = 0; col < lookup.size(); ++col)
    if (!joined_away[col]) added.push_back(static_cast<int>(col));
  if (!post_) {
    if (scan_joins_.size() >= static_cast<size_t>(kMaxScanJoins))
      fail(st.pos, "usage error",
           "at most " + std::to_string(kMaxScanJoins) + " joins come before the scan ends (before agg, sort, limit, "
           "top or distinct)");
    BoundJoin bj{j, keys, key_texts, next_leaf_, static_cast<int>(lookup.size())};
    for (int col : added)
      scope_.push_back(ScopeCol{free_name(lookup[static_cast<size_t>(col)].name), lookup[static_cast<size_t>(col)].type,
                                column_leaf(next_leaf_ + col, lookup[static_cast<size_t>(col)].type),
                                "join " + std::to_string(j) + " " + std::to_string(col)});
    next_leaf_ += static_cast<int>(lookup.size());
    scan_joins_.push_back(std::move(bj));
    plan_.joins.push_back(std::move(spec));
    return;
  }
  PostStage ps = post_stage(PostStage::Join, st);
  for (size_t k = 0; k < keys.size(); ++k) ps.exprs.push_back(lower_post(keys[k], key_texts[k]));
  ps.join = j;
  spec.columns = added;
  for (int col : added)
    scope_.push_back(ScopeCol{free_name(lookup[static_cast<size_t>(col)].name), lookup[static_cast<size_t>(col)].type,
                              nullptr, "join " + std::to_string(j) + " " + std::to_string(col)});
  scope_to_slots();
  ps.output = scope_to_schema();
  plan_.post.push_back(std::move(ps));
  plan_.joins.push_back(std::move(spec));
}

Key Binder::group_key(const Item& it) {
  Ctx c{&scope_, false, false, "groupby"};
  check_quoted_name(*it.expr, scope_);
  Bound b = bind(*it.expr, c);
  if (b.null_lit) b = coerce(b, ct(Type::String));
  std::string resolved;
  if (it.expr->kind == Expr::Name || it.expr->kind == Expr::Dollar) resolved = scope_[resolve(*it.expr, scope_)].name;
  return Key{item_name(it, resolved), canon_text(*it.expr), b.type(), b.node};
}

Bound Binder::order_item(const Item& it, const Stage& st) {
  Ctx c{&scope_, false, false, st.keyword.c_str()};
  check_quoted_name(*it.expr, scope_);
  Bound b = bind(*it.expr, c);
  if (b.null_lit) b = coerce(b, ct(Type::Int));
  return b;
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
