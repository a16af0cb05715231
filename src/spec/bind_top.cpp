// `groupby KEYS | top N by O | select ...` bound as an aggregate scan, so
// that both executors (and the GPU) run it: per group, the first N values
// of O in the stage's order (holistic NthValue aggregates, order statistics
// of the group's sorted values) and a count() of its rows; an Unfold post
// stage turns each group's row back into its top rows (result/unfold_rows.hpp).
#include <string>
#include <vector>

#include "spec/binder.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

namespace {

// Rows per group that run in the scan: a group holds one value per rank
// after the scan (32 bytes each); a larger N takes the post stage.
constexpr int64_t kMaxTopInScan = 16;

// Types the holistic lists hold as order-preserving numbers (holistic_key),
// in the order the top stage sorts them (floats: NaN after every number).
bool orders_as_number(Type t) {
  return t == Type::Int || t == Type::Decimal || t == Type::Float || t == Type::Date || t == Type::Timestamp ||
         t == Type::Bool;
}

bool is_column_ref(const Expr& e) { return e.kind == Expr::Name || e.kind == Expr::Dollar; }

std::string ordinal(int64_t n) {
  const int64_t tens = n % 100, ones = n % 10;
  const char* suffix = tens >= 11 && tens <= 13 ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

}  // namespace

bool Binder::top_in_scan(size_t i) {
  const Stage& st = p_.stages[i];
  if (post_ || i == 0 || p_.stages[i - 1].kind != Stage::GroupBy || st.items.size() != 1 ||
      st.limit > kMaxTopInScan || i + 1 >= p_.stages.size() || p_.stages[i + 1].kind != Stage::Select)
    return false;
  // Whole rows do not come out of the scan: the select may read only
  // columns whose values the groups keep (checked once the keys are bound).
  const Stage& select = p_.stages[i + 1];
  for (const auto& it : select.items)
    if (!it.expr || !is_column_ref(*it.expr) || !names_columns(*it.expr, scope_)) return false;
  const Stage& groupby = p_.stages[i - 1];
  std::vector<Key> keys;
  for (const auto& it : groupby.items) keys.push_back(group_key(it));
  const Item& by = st.items[0];
  const Bound order = order_item(by, st);
  if (!orders_as_number(order.type().type)) return false;

  // The slot of each scope column in an unfolded row (keys..., O), or -1.
  const size_t nkeys = keys.size();
  std::vector<int> slot_of(scope_.size(), -1);
  for (size_t k = nkeys; k-- > 0;)  // a column grouped by twice: its first key
    if (is_column_ref(*groupby.items[k].expr)) slot_of[resolve(*groupby.items[k].expr, scope_)] = static_cast<int>(k);
  const int order_column = is_column_ref(*by.expr) ? resolve(*by.expr, scope_) : -1;
  if (order_column >= 0 && slot_of[order_column] < 0) slot_of[order_column] = static_cast<int>(nkeys);
  for (const auto& it : select.items)
    if (slot_of[resolve(*it.expr, scope_)] < 0) return false;

  keys_ = std::move(keys);
  scan_keys_.clear();
  scan_key_texts_.clear();
  for (const auto& k : keys_) {
    scan_keys_.push_back(k.expr);
    scan_key_texts_.push_back(k.canon);
  }
  // O is listed as a holistic argument after the keys, unless it is one of them.
  const std::string arg = canon_text(*by.expr);
  size_t arg_key = 0;
  while (arg_key < scan_key_texts_.size() && scan_key_texts_[arg_key] != arg) ++arg_key;
  if (arg_key == scan_key_texts_.size()) {
    scan_keys_.push_back(order.node);
    scan_key_texts_.push_back(arg);
  }
  const std::string side = by.desc ? "largest" : "smallest";
  for (int64_t rank = 1; rank <= st.limit; ++rank) {
    AggCall call;
    call.kind = AggKind::NthValue;
    call.arg0 = order.node;
    call.argtext = arg;
    call.result = order.type();
    call.text = ordinal(rank) + " " + side + " of " + arg;
    call.key = static_cast<int>(arg_key);
    call.rank = rank;
    call.from_largest = by.desc;
    aggs_.push_back(call);
  }
  AggCall count;
  count.kind = AggKind::CountStar;
  count.result = ct(Type::Int);
  count.text = "count()";
  aggs_.push_back(count);

  plan_.scan.aggregate = true;
  plan_.scan_output.clear();
  for (const auto& k : keys_) plan_.scan_output.push_back(OutputColumn{k.name, k.type});
  for (size_t j = 0; j < aggs_.size(); ++j) {
    plan_.scan_output.push_back(OutputColumn{aggs_[j].text, aggs_[j].result});
    plan_.finalize.push_back(lower_post(column_leaf(static_cast<int>(nkeys + j), aggs_[j].result), aggs_[j].text));
  }
  plan_.finalized_output = plan_.scan_output;

  PostStage unfold = post_stage(PostStage::Unfold, st);
  unfold.text += " (in the scan: each group's " + std::to_string(st.limit) + " " + side + " values of " + arg +
                 " as order statistics of its sorted values, and its row count; unfolded into up to " +
                 std::to_string(st.limit) + " rows a group, nulls last)";
  unfold.group_keys = nkeys;
  unfold.limit = st.limit;
  for (const auto& k : keys_) unfold.output.push_back(OutputColumn{k.name, k.type});
  unfold.output.push_back(OutputColumn{order_column >= 0 ? scope_[order_column].name : arg, order.type()});
  plan_.post.push_back(std::move(unfold));

  // The select binds over the scope as the top stage leaves it; it reads
  // none of the columns without a slot (checked above).
  for (size_t c = 0; c < scope_.size(); ++c) {
    const ColumnType t = scope_[c].type;
    const int slot = slot_of[c];
    scope_[c].expr = slot >= 0 ? column_leaf(slot, slot < static_cast<int>(nkeys) ? keys_[slot].type : order.type())
                               : const_node(t, Value::make_null());
  }
  plan_.group_keys = keys_.size();
  scan_aggs_ = std::move(aggs_);
  keys_.clear();  // a later groupby/agg binds its own
  aggs_.clear();
  post_ = true;
  return true;
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
