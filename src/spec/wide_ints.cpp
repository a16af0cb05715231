// Int arithmetic over 128-bit sums: see wide_ints.hpp.
#include "spec/wide_ints.hpp"

#include <map>
#include <vector>

namespace warpcsv {
namespace spec {

namespace {

int operands(const Instr& in) {
  switch (in.op) {
    case Op::Column:
    case Op::Const:
    case Op::FileName:
      return 0;
    case Op::Cast:
    case Op::Neg:
    case Op::Not:
    case Op::IsNull:
    case Op::IsNotNull:
    case Op::Lower:
    case Op::Upper:
    case Op::Len:
    case Op::Abs:
    case Op::Round:
    case Op::DatePart:
    case Op::DateTrunc:
    case Op::Trim:
    case Op::ToString:
    case Op::ParseAs:
    case Op::JumpUnless:
      return 1;
    case Op::Jump:
      return 0;
    case Op::Coalesce:
    case Op::Substr:
    case Op::Greatest:
    case Op::Least:
      return in.arg;
    case Op::SplitPart:
    case Op::Replace:
      return 3;
    default:  // arithmetic, comparisons, and / or, string tests
      return 2;
  }
}

// Marks `p` over row slots of which `slot_wide` may pass 64 bits; returns
// whether its result may.
bool mark(Program& p, const std::vector<bool>& slot_wide) {
  std::vector<bool> st;  // per stack entry: the value may pass 64 bits
  // A case's values end in jumps to one place: each leaves its value there,
  // so the stack holds one of them; it may pass 64 bits if any may.
  std::map<int32_t, bool> joins;
  for (size_t pc = 0; pc < p.code.size(); ++pc) {
    Instr& in = p.code[pc];
    const auto join = joins.find(static_cast<int32_t>(pc));
    if (join != joins.end() && !st.empty()) st.back() = st.back() || join->second;
    if (in.op == Op::Jump) {  // the branch's value goes to the join; the next branch pushes its own
      joins[in.arg] = joins[in.arg] || (!st.empty() && st.back());
      if (!st.empty()) st.pop_back();
      continue;
    }
    if (in.op == Op::JumpUnless) {
      if (!st.empty()) st.pop_back();
      continue;
    }
    bool wide = false;
    if (in.op == Op::Column) {
      wide = in.arg >= 0 && static_cast<size_t>(in.arg) < slot_wide.size() && slot_wide[static_cast<size_t>(in.arg)];
    } else {
      for (int k = operands(in); k > 0 && !st.empty(); --k) {
        wide = wide || st.back();
        st.pop_back();
      }
    }
    wide = wide && in.type == Type::Int;  // a comparison, a float or a decimal of it is no int
    in.wide = wide ? 1 : 0;
    st.push_back(wide);
  }
  const auto end_join = joins.find(static_cast<int32_t>(p.code.size()));
  if (end_join != joins.end() && !st.empty()) st.back() = st.back() || end_join->second;
  return !st.empty() && st.back();
}

}  // namespace

void mark_wide_ints(Plan& plan) {
  std::vector<bool> slots;  // the current row's slots that may pass 64 bits
  if (plan.scan.aggregate) {
    // The finalize row: the keys (64-bit), then the agg stage's aggregates.
    std::vector<bool> raw(plan.group_keys, false);
    for (int src : plan.agg_sources) {
      const bool sum = src >= 0 && plan.scan.aggs[static_cast<size_t>(src)].kind == AggKind::Sum &&
                       plan.scan.aggs[static_cast<size_t>(src)].result.type == Type::Int;
      raw.push_back(sum);
    }
    slots.assign(plan.group_keys, false);
    for (Program& f : plan.finalize) slots.push_back(mark(f, raw));
  } else {
    slots.assign(plan.scan_output.size(), false);
  }
  for (PostStage& st : plan.post) {
    std::vector<bool> next;
    for (Program& e : st.exprs) next.push_back(mark(e, slots));
    if (st.kind == PostStage::Select || st.kind == PostStage::Distinct) slots = next;
    if (st.kind == PostStage::Unfold) slots.assign(st.output.size(), false);  // keys and picked values
  }
}

}  // namespace spec
}  // namespace warpcsv
