// Lowering bound trees to the plan's typed postfix programs: the scan's
// (input slots numbered as used, joins' slots after them), the aggregates'
// and the post stages' (row slots).
#include <set>
#include <string>
#include <vector>

#include "spec/binder.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace spec {
namespace binding {

void Binder::collect_inputs(const BNode& n, std::set<int>* out) {
  if (n.op == Op::Column) out->insert(n.arg);
  for (const auto& k : n.kids) collect_inputs(*k, out);
}

int Binder::emit(const BNode& n, const std::vector<int>& slot_of, Program* p) {
  if (n.op == Op::JumpUnless) return emit_case(n, slot_of, p);
  int depth = 1;
  for (size_t k = 0; k < n.kids.size(); ++k)
    depth = std::max(depth, static_cast<int>(k) + emit(*n.kids[k], slot_of, p));
  Instr in;
  in.op = n.op;
  in.type = n.type.type;
  in.scale = n.type.scale;
  in.from_type = n.from.type;
  in.from_scale = n.from.scale;
  in.arg = n.arg;
  if (n.op == Op::Column) {
    in.arg = slot_of.empty() ? n.arg : slot_of[n.arg];
  } else if (n.op == Op::Const) {
    Value v = n.cval;
    if (n.type.type == Type::String && !v.null) {
      v.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(p->strings.size()));
      v.s.len = static_cast<uint32_t>(n.sval.size());
      p->strings += n.sval;
    }
    in.arg = static_cast<int32_t>(p->consts.size());
    p->consts.push_back(v);
  }
  p->code.push_back(in);
  return depth;
}

int Binder::emit_case(const BNode& n, const std::vector<int>& slot_of, Program* p) {
  auto jump = [&](Op op) {
    Instr in{op, Type::Null, 0, Type::Null, 0, 0};
    p->code.push_back(in);
    return p->code.size() - 1;
  };
  int depth = 1;
  std::vector<size_t> to_end;
  for (size_t k = 0; k + 1 < n.kids.size(); k += 2) {
    depth = std::max(depth, emit(*n.kids[k], slot_of, p));
    const size_t skip = jump(Op::JumpUnless);
    depth = std::max(depth, emit(*n.kids[k + 1], slot_of, p));
    to_end.push_back(jump(Op::Jump));
    p->code[skip].arg = static_cast<int32_t>(p->code.size());
  }
  depth = std::max(depth, emit(*n.kids.back(), slot_of, p));
  for (size_t j : to_end) p->code[j].arg = static_cast<int32_t>(p->code.size());
  return depth;
}

Program Binder::lower(const BPtr& n, const std::string& text, const std::vector<int>& slot_of) const {
  Program p;
  int depth = emit(*n, slot_of, &p);
  if (depth > kMaxProgramStack)
    throw UsageError("expression '" + text + "' is nested too deeply (it needs " +
                     std::to_string(depth) + " stack slots, at most " +
                     std::to_string(kMaxProgramStack) + "); split it over several stages");
  p.result = n->type;
  p.text = text;
  return p;
}

Program Binder::lower_post(const BPtr& n, const std::string& text) const {
  return lower(n, text, {});
}

void Binder::lower_scan() {
  std::set<int> used;
  BPtr filter;
  for (const auto& f : scan_filters_) {
    filter = filter ? make_node(Op::And, ct(Type::Bool), {filter, f}) : f;
    collect_inputs(*f, &used);
  }
  for (const auto& k : scan_keys_) collect_inputs(*k, &used);
  for (const auto& a : scan_aggs_) {
    if (a.arg0) collect_inputs(*a.arg0, &used);
    if (a.arg1) collect_inputs(*a.arg1, &used);
  }
  for (const auto& o : scan_outputs_) collect_inputs(*o, &used);
  for (const auto& j : scan_joins_)
    for (const auto& k : j.keys) collect_inputs(*k, &used);
  // The columns --schema names are parsed, so checked (any text fits a string: no need).
  for (size_t c = 0; c < checked_.size() && c < plan_.input.size(); ++c)
    if (checked_[c] && plan_.input[c].type.type != Type::String) used.insert(static_cast<int>(c));
  ScanPlan& s = plan_.scan;
  const int ninput = static_cast<int>(plan_.input.size());
  for (int c : used)
    if (c < ninput) s.used_columns.push_back(c);
  std::vector<int> slot_of(static_cast<size_t>(next_leaf_), -1);
  for (size_t k = 0; k < s.used_columns.size(); ++k) {
    slot_of[s.used_columns[k]] = static_cast<int>(k);
    s.slot_types.push_back(plan_.input[s.used_columns[k]].type);
  }
  // Each join's columns that the pipeline reads take the slots after the input's.
  int next_slot = static_cast<int>(s.used_columns.size());
  for (const BoundJoin& bj : scan_joins_) {
    JoinSpec& spec = plan_.joins[static_cast<size_t>(bj.join)];
    ScanJoin sj{bj.join, {}, next_slot, 0};
    for (int c = 0; c < bj.ncols; ++c)
      if (used.count(bj.first_leaf + c)) {
        spec.columns.push_back(c);
        slot_of[static_cast<size_t>(bj.first_leaf + c)] = next_slot++;
      }
    sj.width = static_cast<int>(spec.columns.size());
    s.joins.push_back(std::move(sj));
  }
  for (size_t j = 0; j < scan_joins_.size(); ++j)
    for (size_t k = 0; k < scan_joins_[j].keys.size(); ++k)
      s.joins[j].keys.push_back(lower(scan_joins_[j].keys[k], scan_joins_[j].key_texts[k], slot_of));
  if (filter) {
    std::string text;
    for (size_t k = 0; k < scan_filter_texts_.size(); ++k) {
      const std::string& t = scan_filter_texts_[k];
      bool wrap = scan_filter_texts_.size() > 1 && t.find(" or ") != std::string::npos;
      text += (k ? " and " : "") + (wrap ? "(" + t + ")" : t);
    }
    s.filter = lower(filter, text, slot_of);
  }
  for (size_t k = 0; k < scan_keys_.size(); ++k)
    s.keys.push_back(lower(scan_keys_[k], scan_key_texts_[k], slot_of));
  lower_aggs(scan_aggs_, slot_of, &plan_);
  for (size_t k = 0; k < scan_outputs_.size(); ++k)
    s.outputs.push_back(lower(scan_outputs_[k], scan_output_texts_[k], slot_of));
}

void Binder::lower_aggs(const std::vector<AggCall>& aggs, const std::vector<int>& slot_of, Plan* target) const {
  for (const auto& a : aggs) {
    if (is_holistic(a.kind)) {
      target->agg_sources.push_back(~static_cast<int>(target->holistic.size()));
      target->holistic.push_back(
          HolisticSpec{a.kind, a.key, a.q_units, a.q_scale, a.result, a.text, a.rank, a.from_largest});
      continue;
    }
    target->agg_sources.push_back(static_cast<int>(target->scan.aggs.size()));
    AggSpec spec;
    spec.kind = a.kind;
    if (a.arg0) spec.arg0 = lower(a.arg0, a.text, slot_of);
    if (a.arg1) spec.arg1 = lower(a.arg1, a.text, slot_of);
    spec.result = a.result;
    spec.text = a.text;
    target->scan.aggs.push_back(std::move(spec));
  }
  if (!target->holistic.empty()) {  // a holistic aggregate weighs each distinct argument by its rows
    std::vector<AggSpec>& aggs_out = target->scan.aggs;
    size_t w = 0;
    while (w < aggs_out.size() && aggs_out[w].kind != AggKind::CountStar) ++w;
    if (w == aggs_out.size()) aggs_out.push_back(AggSpec{AggKind::CountStar, {}, {}, ct(Type::Int), "count()"});
    target->holistic_weight = static_cast<int>(w);
  }
}

}  // namespace binding
}  // namespace spec
}  // namespace warpcsv
