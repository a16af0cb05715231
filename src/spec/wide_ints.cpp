// Int arithmetic over 128-bit sums: see wide_ints.hpp.
#include "spec/wide_ints.hpp"

#include <vector>

namespace warpcsv {
namespace spec {

namespace {

int operands(const Instr& in) {
  switch (in.op) {
    case Op::Column:
    case Op::Const:
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
      return 1;
    case Op::Coalesce:
    case Op::Substr:
    case Op::Greatest:
    case Op::Least:
      return in.arg;
    case Op::SplitPart:
      return 3;
    default:  // arithmetic, comparisons, and / or, string tests
      return 2;
  }
}

// Marks `p` over row slots of which `slot_wide` may pass 64 bits; returns
// whether its result may.
bool mark(Program& p, const std::vector<bool>& slot_wide) {
  std::vector<bool> st;  // per stack entry: the value may pass 64 bits
  for (Instr& in : p.code) {
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
    if (st.kind == PostStage::Select) slots = next;
  }
}

}  // namespace spec
}  // namespace warpcsv
