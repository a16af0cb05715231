// `distinct` where the scan ends, bound as an aggregate scan: the distinct
// columns are the group keys, each group keeps the position of its first
// row, and post stages sort the groups by it and drop it. Every scan
// thread then finds its rows' groups in a table of its own (instead of one
// thread testing every row against one set), and the groups spill past
// --memory-limit as any groups do.
#include <string>
#include <vector>

#include "spec/binder.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

namespace {

// More columns than this keep the row-by-row distinct: a group's keys are
// compared one by one, and whole rows of a wide file are better hashed once.
constexpr size_t kMaxDistinctKeys = 16;

// Whether a limit comes after stage i with only row-by-row stages between:
// then the row-by-row distinct stops reading once the limit is reached,
// where groups would need the whole input first.
bool limit_ends_rows_after(const Pipeline& p, size_t i) {
  for (size_t k = i + 1; k < p.stages.size(); ++k) {
    const Stage::Kind kind = p.stages[k].kind;
    if (kind == Stage::Limit) return true;
    if (kind == Stage::Sort || kind == Stage::Top || kind == Stage::Agg || kind == Stage::GroupBy ||
        kind == Stage::Distinct)
      return false;
  }
  return false;
}

}  // namespace

bool Binder::distinct_in_scan(size_t i) {
  const Stage& st = p_.stages[i];
  // A join's copies of a row share its position, and their order is the
  // lookup file's, which groups do not keep.
  if (!distinct_as_groups_ || post_ || !scan_joins_.empty() || scope_.empty() || scope_.size() > kMaxDistinctKeys ||
      limit_ends_rows_after(p_, i))
    return false;
  // A row's column as read prints as written (`-0`, `1.50`), and a computed
  // float may differ from an equal one (-0.0, 0.0): the row-by-row distinct
  // prints the first row's, where a group keeps a value and may keep a later
  // row's. Strings print as they are, other computed values as formatted.
  for (const ScopeCol& c : scope_) {
    const bool as_read = !c.expr || c.expr->op == Op::Column;
    if (c.type.type == Type::Float || (as_read && c.type.type != Type::String)) return false;
  }

  const size_t nkeys = scope_.size();
  scan_keys_.clear();
  scan_key_texts_.clear();
  plan_.scan_output.clear();
  for (size_t k = 0; k < nkeys; ++k) {
    scan_keys_.push_back(scope_[k].expr);
    scan_key_texts_.push_back(scope_[k].name);  // messages name it as the row-by-row distinct's output column
    plan_.scan_output.push_back(OutputColumn{scope_[k].name, scope_[k].type});
  }
  AggCall first;
  first.kind = AggKind::FirstRow;
  first.result = ct(Type::Int);
  first.text = "first row";
  scan_aggs_ = {first};
  plan_.scan.aggregate = true;
  plan_.group_keys = nkeys;
  plan_.scan_output.push_back(OutputColumn{first.text, first.result});
  // The finalized row's column after the keys: the first row's position, which the sort reads.
  const Program position = lower_post(column_leaf(static_cast<int>(nkeys), first.result), first.text);
  plan_.finalize.push_back(position);
  plan_.finalized_output = plan_.scan_output;

  PostStage sort = post_stage(PostStage::Sort, st);
  sort.text += " (in the scan: a group for each distinct row, with its first row's position; in that order)";
  sort.exprs.push_back(position);
  sort.descending.push_back(false);
  sort.by_first_row = true;
  sort.output = plan_.finalized_output;
  plan_.post.push_back(std::move(sort));
  PostStage keys = post_stage(PostStage::Select, st);
  keys.text.clear();  // explained by the sort stage's text
  for (size_t k = 0; k < nkeys; ++k)
    keys.exprs.push_back(lower_post(column_leaf(static_cast<int>(k), scope_[k].type), scope_[k].name));
  plan_.post.push_back(std::move(keys));

  scope_to_slots();
  plan_.post.back().output = scope_to_schema();
  post_ = true;
  return true;
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
