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

namespace {

// Marks an aggregate plan's programs: its keys and arguments over `in` (the
// slots of the rows it aggregates), then its finalize programs. Returns which
// slots of its finalized row may pass 64 bits.
std::vector<bool> mark_aggregate(Plan& plan, const std::vector<bool>& in) {
  std::vector<bool> raw;  // the finalize row: the keys, then the agg stage's aggregates
  for (size_t k = 0; k < plan.scan.keys.size(); ++k) {
    const bool wide = mark(plan.scan.keys[k], in);
    if (k < plan.group_keys) raw.push_back(wide);
  }
  std::vector<bool> arg_wide;
  for (AggSpec& a : plan.scan.aggs) {
    arg_wide.push_back(!a.arg0.empty() && mark(a.arg0, in));
    if (!a.arg1.empty()) mark(a.arg1, in);
  }
  for (int src : plan.agg_sources) {
    if (src < 0) {  // holistic: a count, or a median of numbers (a float) or of other types
      raw.push_back(false);
      continue;
    }
    const AggSpec& a = plan.scan.aggs[static_cast<size_t>(src)];
    const bool picks = a.kind == AggKind::Min || a.kind == AggKind::Max || a.kind == AggKind::First ||
                       a.kind == AggKind::Last;  // one of the argument's values
    raw.push_back(a.result.type == Type::Int &&
                  (a.kind == AggKind::Sum || (picks && arg_wide[static_cast<size_t>(src)])));
  }
  std::vector<bool> out(raw.begin(), raw.begin() + static_cast<ptrdiff_t>(plan.group_keys));
  for (Program& f : plan.finalize) out.push_back(mark(f, raw));
  return out;
}

}  // namespace

void mark_wide_ints(Plan& plan) {
  std::vector<bool> slots;  // the current row's slots that may pass 64 bits
  if (plan.scan.aggregate) {
    // Scan programs read input columns only: none is wide.
    slots = mark_aggregate(plan, std::vector<bool>(plan.scan.used_columns.size(), false));
  } else {
    slots.assign(plan.scan_output.size(), false);
  }
  for (PostStage& st : plan.post) {
    std::vector<bool> next;
    for (Program& e : st.exprs) next.push_back(mark(e, slots));
    if (st.kind == PostStage::Select || st.kind == PostStage::Distinct) slots = next;
    if (st.kind == PostStage::Agg) slots = mark_aggregate(*st.agg, slots);
    if (st.kind == PostStage::Unfold) slots.assign(st.output.size(), false);  // keys and picked values
  }
}

}  // namespace spec
}  // namespace warpcsv
