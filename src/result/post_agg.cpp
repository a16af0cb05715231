#include "result/post_agg.hpp"

#include <memory>
#include <utility>

#include "exec/group_table.hpp"
#include "result/group_rows.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {
constexpr uint32_t kScratch = 1 << 16;  // evaluator scratch of a row's keys and arguments
}  // namespace

PostAggregate::PostAggregate(const Plan& agg, int threads)
    : plan_(agg), threads_(threads), values_(agg.scan.keys.size() + 1), x_(agg.scan.aggs.size()),
      y_(agg.scan.aggs.size()), scratch_(kScratch) {
  // Groups of the agg's own keys; its holistic arguments (the scan keys
  // past them) are listed per group, as the CPU executor lists them.
  groups_.layout = std::make_unique<GroupLayout>(GroupLayout::from_plan(agg));
  groups_.layout->key_types.resize(agg.group_keys);
  groups_.groups = std::make_unique<GroupTable>(groups_.layout.get());
  groups_.from_lists = true;
  for (ArgList& l : HolisticGroups::lists_for(agg)) {
    groups_.lists.emplace_back();
    groups_.lists.back().push_back(std::move(l));
  }
}

bool PostAggregate::add(const Value* row) {
  const ScanPlan& s = plan_.scan;
  EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
  for (size_t k = 0; k < s.keys.size(); ++k) values_[k] = eval_program(s.keys[k].view(), row, ctx);
  const Value none = Value::make_null();
  for (size_t a = 0; a < s.aggs.size(); ++a) {
    x_[a] = s.aggs[a].arg0.empty() ? none : eval_program(s.aggs[a].arg0.view(), row, ctx);
    y_[a] = s.aggs[a].arg1.empty() ? none : eval_program(s.aggs[a].arg1.view(), row, ctx);
  }
  if (ctx.status != EvalStatus::Ok) return false;
  // The table copies key strings, and stabilize_strings those an update
  // kept, and the lists their values: the row's own may go after this.
  GroupTable& t = *groups_.groups;
  char* state = t.find_or_insert(values_.data(), t.hash_keys(values_.data()));
  if (!groups_.lists.empty()) {
    const uint32_t g = static_cast<uint32_t>(t.group_of(state));
    for (size_t a = 0; a < groups_.lists.size(); ++a) {
      const Value& v = values_[plan_.group_keys + a];
      if (!v.null) groups_.lists[a][0].add(g, v);
    }
  }
  bool strings = false;
  const GroupLayout& layout = *groups_.layout;
  for (size_t a = 0; a < layout.aggs.size(); ++a) strings |= agg_update(layout.aggs[a], state, x_[a], y_[a], rows_);
  if (strings) t.stabilize_strings(state);
  ++rows_;
  return true;
}

void PostAggregate::finish(size_t run_rows, const std::function<bool(const Table&)>& emit) {
  for (auto& lists : groups_.lists) {  // as the CPU executor hands them over: sealed, none empty
    lists[0].seal();
    if (lists[0].size() == 0) lists.clear();
  }
  if (plan_.holistic.empty())
    groups_.groups->ensure_group_without_keys();  // an agg without keys gives one row, also over no rows
  else
    finish_holistic_lists(plan_, groups_, threads_);  // (and ensures that group too)
  const Value* holistic = plan_.holistic.empty() ? nullptr : groups_.values.data();
  SortedHostGroups ordered(plan_, {groups_.groups.get()}, holistic, threads_, run_rows);
  Table rows;
  for (;;) {
    if (interrupted()) throw Interrupted();  // between runs, as the first agg's result
    const GroupRun run = ordered.next();
    if (run.n == 0) break;
    finalize_run(plan_, *groups_.layout, run, rows, threads_);
    if (!emit(rows)) break;
  }
}

}  // namespace warpcsv
