#include "exec/post.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "exec/group_table.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {
constexpr uint32_t kScratch = 1 << 16;
constexpr uint64_t kAssertRowsShown = 10;

bool truthy(const Value& v) { return !v.null && v.i != 0; }

// Orders rows by the given key columns; nulls last in either direction.
struct RowOrder {
  const std::vector<Value>* keys;  // nkeys per row
  size_t nkeys;
  const std::vector<Type>* types;
  const std::vector<bool>* desc;
  bool operator()(size_t a, size_t b) const {
    for (size_t k = 0; k < nkeys; ++k) {
      const Value& x = (*keys)[a * nkeys + k];
      const Value& y = (*keys)[b * nkeys + k];
      if (x.null || y.null) {
        if (x.null == y.null) continue;
        return y.null;
      }
      int c = compare_values(x, y, (*types)[k]);
      if (c == 0) continue;
      return (*desc)[k] ? c > 0 : c < 0;
    }
    return false;
  }
};

// Reorders `t`'s rows by `keys` (stable).
void sort_table(Table& t, const std::vector<Value>& keys, const std::vector<Type>& types,
                const std::vector<bool>& desc) {
  std::vector<size_t> idx(t.rows());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), RowOrder{&keys, types.size(), &types, &desc});
  std::vector<Value> cells;
  cells.reserve(t.cells.size());
  for (size_t r : idx) cells.insert(cells.end(), t.row(r), t.row(r) + t.width());
  t.cells.swap(cells);
}
}  // namespace

PostPipeline::PostPipeline(const Plan& plan, RowWriter& writer)
    : plan_(plan), writer_(writer), sort_buffers_(plan.post.size()), limit_seen_(plan.post.size(), 0),
      scratch_(kScratch) {
  for (size_t i = 0; i < plan.post.size(); ++i) {
    const PostStage& st = plan.post[i];
    if (st.kind == PostStage::Sort) {
      sort_buffers_[i].columns = i == 0 ? (plan.scan.aggregate ? plan.finalized_output : plan.scan_output)
                                        : plan.post[i - 1].output;
    }
  }
  writer_.begin(plan.output);
}

bool PostPipeline::push(const Value* row) {
  if (done_) return false;
  return push_from(0, row);
}

bool PostPipeline::push_from(size_t i, const Value* row) {
  std::vector<Value> next;
  for (; i < plan_.post.size(); ++i) {
    const PostStage& st = plan_.post[i];
    EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
    switch (st.kind) {
      case PostStage::Filter:
        if (!truthy(eval_program(st.exprs[0].view(), row, ctx))) return true;
        break;
      case PostStage::Select: {
        std::vector<Value> out(st.exprs.size());
        for (size_t k = 0; k < st.exprs.size(); ++k) out[k] = eval_program(st.exprs[k].view(), row, ctx);
        next.swap(out);
        row = next.data();
        break;
      }
      case PostStage::DropNa:
        for (int c : st.columns)
          if (row[c].null) return true;
        break;
      case PostStage::Assert:
        if (!truthy(eval_program(st.exprs[0].view(), row, ctx))) {
          if (assert_failures_ < kAssertRowsShown) {
            std::string text;
            for (size_t c = 0; c < st.output.size(); ++c) {
              if (c) text += ", ";
              text += st.output[c].name + "=" + (row[c].null ? "null" : format_value(row[c], st.output[c].type));
            }
            fmt::print(stderr, "warpcsv: assert failed: {}: {}\n", st.exprs[0].text, text);
          }
          ++assert_failures_;
        }
        break;
      case PostStage::Limit:
        if (limit_seen_[i] >= st.limit) {
          // Only a limit with no sort before it ends the whole input early.
          bool sorted_before = false;
          for (size_t k = 0; k < i; ++k) sorted_before |= plan_.post[k].kind == PostStage::Sort;
          if (!sorted_before) done_ = true;
          return false;
        }
        ++limit_seen_[i];
        break;
      case PostStage::Sort:
        sort_buffers_[i].append_owned(row);
        return true;
    }
    if (ctx.status != EvalStatus::Ok)
      throw InputError(fmt::format("evaluation failed in '{}' (overflow or a string result too long)", st.text));
  }
  writer_.row(row);
  return true;
}

void PostPipeline::finish() {
  for (size_t i = 0; i < plan_.post.size(); ++i) {
    const PostStage& st = plan_.post[i];
    if (st.kind != PostStage::Sort) continue;
    Table& t = sort_buffers_[i];
    std::vector<Value> keys;
    std::vector<Type> types;
    for (const auto& e : st.exprs) types.push_back(e.result.type);
    keys.reserve(t.rows() * types.size());
    EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
    StringArena key_strings;
    for (size_t r = 0; r < t.rows(); ++r)
      for (const auto& e : st.exprs) {
        ctx.scratch_used = 0;
        Value v = eval_program(e.view(), t.row(r), ctx);
        if (!v.null && e.result.type == Type::String) v.s = key_strings.add(v.s);
        keys.push_back(v);
      }
    sort_table(t, keys, types, st.descending);
    done_ = false;
    for (size_t r = 0; r < t.rows(); ++r)
      if (!push_from(i + 1, t.row(r))) break;
  }
  if (assert_failures_ > kAssertRowsShown)
    fmt::print(stderr, "warpcsv: assert failed on {} rows in all ({} shown)\n", assert_failures_, kAssertRowsShown);
  writer_.end();
}

Table finalize_groups(const Plan& plan, const GroupTable& groups) {
  const size_t nkeys = plan.scan.keys.size();
  const auto& layout = groups.layout();
  Table t;
  t.columns = plan.finalized_output;
  std::vector<Value> keyvals;
  std::vector<Value> raw(nkeys + layout.aggs.size()), out(nkeys + plan.finalize.size());
  std::vector<char> scratch(kScratch);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t k = 0; k < nkeys; ++k) raw[k] = groups.keys(g)[k];
    for (size_t a = 0; a < layout.aggs.size(); ++a) raw[nkeys + a] = agg_finalize(layout.aggs[a], groups.state(g));
    EvalContext ctx = make_eval_context(scratch.data(), kScratch);
    // The finalized row: the keys, then the agg stage's items.
    for (size_t k = 0; k < nkeys; ++k) out[k] = raw[k];
    for (size_t c = 0; c < plan.finalize.size(); ++c)
      out[nkeys + c] = eval_program(plan.finalize[c].view(), raw.data(), ctx);
    if (ctx.status != EvalStatus::Ok)
      throw InputError("evaluation of an aggregate expression failed (integer overflow or string too long)");
    t.append_owned(out.data());
    for (size_t k = 0; k < nkeys; ++k) keyvals.push_back(groups.keys(g)[k]);
  }
  std::vector<Type> types;
  for (const auto& k : plan.scan.keys) types.push_back(k.result.type);
  sort_table(t, keyvals, types, std::vector<bool>(nkeys, false));
  return t;
}

}  // namespace warpcsv
