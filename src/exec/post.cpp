#include "exec/post.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "runtime/parallel.hpp"
#include "runtime/prefetch.hpp"
#include "output/run_writer.hpp"
#include "result/first_rows.hpp"
#include "result/group_rows.hpp"
#include "result/order.hpp"
#include "result/row_key.hpp"
#include "result/unfold_rows.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {
constexpr uint32_t kScratch = 1 << 16;
constexpr uint64_t kAssertRowsShown = 10;

bool truthy(const Value& v) { return !v.null && v.i != 0; }


// Reorders `t`'s rows by `keys` (stable): row r's keys are keys[r * stride
// + k] (they may be t's own cells).
void sort_table(Table& t, const Value* keys, size_t stride, const std::vector<Type>& types,
                const std::vector<bool>& desc, int threads) {
  const size_t n = t.rows();
  const std::vector<uint32_t> order =
      sort_order(n, KeyRows{reinterpret_cast<const char*>(keys), stride * sizeof(Value)}, types, desc, threads);
  UninitVector<Value> cells(t.cells.size());
  const size_t w = t.width();
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) std::copy(t.row(order[i]), t.row(order[i]) + w, cells.begin() + i * w);
  });
  t.cells.swap(cells);
}

// Stage st's expressions on `row` into out[0, exprs), their strings in ctx's scratch.
void eval_exprs(const PostStage& st, const Value* row, EvalContext& ctx, Value* out) {
  for (size_t k = 0; k < st.exprs.size(); ++k) out[k] = eval_program(st.exprs[k].view(), row, ctx);
}

// Sort stage st's keys of `row` into out[0, exprs): a bare column's key is
// the row's value, an evaluated string goes to `strings` (`scratch`, of
// kScratch bytes, is reused). False when one fails: a failed key is no null,
// it would sort last.
bool sort_keys_of(const PostStage& st, const std::vector<Type>& types, const Value* row, char* scratch,
                  StringArena& strings, Value* out) {
  for (size_t k = 0; k < st.exprs.size(); ++k) {
    const int column = st.exprs[k].bare_slot();
    if (column >= 0) {
      out[k] = row[column];
      continue;
    }
    EvalContext ctx = make_eval_context(scratch, kScratch);
    out[k] = eval_program(st.exprs[k].view(), row, ctx);
    if (ctx.status != EvalStatus::Ok) return false;
    if (!out[k].null && types[k] == Type::String) out[k].s = strings.add(out[k].s);
  }
  return true;
}

// A filter, select or dropna stage on `row`; a select's row goes to `next`
// and `row` then points at it. Returns false when the row is dropped; a
// failed evaluation keeps it and leaves its status in `ctx` for the caller.
bool pass_row_local(const PostStage& st, const Value*& row, Value* next, EvalContext& ctx) {
  switch (st.kind) {
    case PostStage::Filter: {
      const Value keep = eval_program(st.exprs[0].view(), row, ctx);
      return ctx.status != EvalStatus::Ok || truthy(keep);
    }
    case PostStage::Select:
      eval_exprs(st, row, ctx, next);
      row = next;
      return true;
    case PostStage::DropNa:
      return std::none_of(st.columns.begin(), st.columns.end(), [&](int c) { return row[c].null; });
    default: WCSV_EXPECTS(false, "a stage that is not a filter, select or dropna passes rows on its own");
  }
}
}  // namespace

void throw_evaluation_failed(const PostStage& st) {
  throw InputError(fmt::format("evaluation failed in '{}' (an overflow, a cast that does not convert, a date past "
                               "9999, or a string result over {} KiB)",
                               st.text, kScratch / 1024));
}

PostPipeline::PostPipeline(const Plan& plan, RowWriter& writer, int threads,
                           std::function<void(const std::string&)> note, const LookupTables* lookups,
                           size_t first_stage)
    : plan_(plan), writer_(writer), lookups_(lookups), sort_buffers_(plan.post.size()), tops_(plan.post.size()),
      aggs_(plan.post.size()), seen_(plan.post.size()), output_types_(plan.post.size()), sort_bars_(plan.post.size()),
      sort_types_(plan.post.size()),
      limit_seen_(plan.post.size(), 0), stage_rows_(plan.post.size()),
      scratch_(kScratch), threads_(threads), first_stage_(first_stage),
      row_width_(plan.scan.aggregate ? plan.finalized_output.size() : plan.scan_output.size()),
      note_(std::move(note)) {
  if (!note_) note_ = [](const std::string& text) { std::fputs(text.c_str(), stderr); };
  keep_rows_.assign(plan.post.size(), -1);
  distinct_of_scanned_rows_ = distinct_of_scanned_rows(plan);
  for (size_t i = 0; i < plan.post.size(); ++i) {
    const PostStage& st = plan.post[i];
    if (st.kind == PostStage::Sort && i + 1 < plan.post.size() && plan.post[i + 1].kind == PostStage::Limit)
      keep_rows_[i] = plan.post[i + 1].limit;
    const std::vector<OutputColumn>& input =
        i == 0 ? (plan.scan.aggregate ? plan.finalized_output : plan.scan_output) : plan.post[i - 1].output;
    if (st.kind == PostStage::Sort) sort_buffers_[i].columns = input;
    for (const Program& e : st.exprs) sort_types_[i].push_back(e.result.type);
    if (keep_rows_[i] >= 0)
      for (const Program& e : st.exprs) sort_bars_[i].columns.push_back(OutputColumn{"", e.result});
    if (st.kind == PostStage::Top) tops_[i] = std::make_unique<TopRowsPerGroup>(st, input);
    if (st.kind == PostStage::Agg) aggs_[i] = std::make_unique<PostAggregate>(*st.agg, threads);
    for (const OutputColumn& c : st.output) output_types_[i].push_back(c.type.type);
    stage_rows_[i].resize(st.output.size());
    const bool row_local = st.kind == PostStage::Filter || st.kind == PostStage::Select ||
                           st.kind == PostStage::DropNa || st.kind == PostStage::Unfold;
    if (i >= first_stage_) row_local_stages_ &= row_local;
    if (i > 0) row_local_after_first_ &= row_local;
  }
  sorts_parts_ = !plan.scan.aggregate && !plan.post.empty() && plan.post[0].kind == PostStage::Sort &&
                 keep_rows_[0] < 0;
  writer_.begin(plan.output);
}

namespace {

// A value in an assert's message, one line a failing row: a string that
// could read as something else (empty, `null`, holding `,` `=` a quote or a
// backslash) or that spans lines is quoted, its quotes doubled, its
// backslashes and line breaks written \\, \n and \r.
std::string assert_value_text(const Value& v, const OutputColumn& col) {
  std::string text = value_text(v, col);
  if (col.type.type != Type::String) return text;
  const bool plain = !text.empty() && text != "null" && text.find_first_of(",=\"\\\n\r") == std::string::npos;
  if (plain) return text;
  std::string quoted = "\"";
  for (char ch : text) {
    if (ch == '"') quoted += "\"\"";
    else if (ch == '\\') quoted += "\\\\";
    else if (ch == '\n') quoted += "\\n";
    else if (ch == '\r') quoted += "\\r";
    else quoted += ch;
  }
  return quoted + "\"";
}

}  // namespace

bool PostPipeline::push(const Value* row) {
  if (done_) return false;
  scratch_at_ = 0;
  return push_from(first_stage_, row) && !done_;
}

bool distinct_of_scanned_rows(const Plan& plan) {
  if (plan.scan.aggregate || plan.post.empty() || plan.post[0].kind != PostStage::Distinct) return false;
  const PostStage& d = plan.post[0];
  if (d.exprs.size() != plan.scan_output.size()) return false;
  for (size_t k = 0; k < d.exprs.size(); ++k)
    if (d.exprs[k].bare_slot() != static_cast<int>(k)) return false;
  return true;
}

bool PostPipeline::take_rows(Table& t, size_t begin, size_t end) {
  if (!sorts_parts_ || begin != 0 || end != t.rows()) return push_rows(t, begin, end);
  if (end > 0) sort_parts_.push_back(std::move(t));
  part_open_ = false;
  return true;
}

Table& PostPipeline::open_part() {
  if (!part_open_) {
    sort_parts_.emplace_back();
    sort_parts_.back().columns = plan_.scan_output;
    part_open_ = true;
  }
  return sort_parts_.back();
}

bool PostPipeline::push_rows(const Table& t, size_t begin, size_t end) {
  if (!distinct_of_scanned_rows_) {
    for (size_t r = begin; r < end; ++r)
      if (!push(t.row(r))) return false;
    return true;
  }
  // Each row's key and hash first, its slot prefetched; the key its slot
  // holds prefetched kAhead rows before its lookup.
  constexpr size_t kBlock = 256, kAhead = 8;
  RowKeySet& seen = seen_[0];
  for (size_t b = begin; b < end; b += kBlock) {
    const size_t n = std::min(kBlock, end - b);
    block_keys_.clear();
    block_key_ends_.clear();
    block_hashes_.clear();
    for (size_t i = 0; i < n; ++i) {
      const size_t at = block_keys_.size();
      append_row_key(block_keys_, t.row(b + i), output_types_[0]);
      block_key_ends_.push_back(block_keys_.size());
      block_hashes_.push_back(RowKeySet::hash_of(block_keys_.data() + at, block_keys_.size() - at));
      seen.prefetch_slot(block_hashes_.back());
    }
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) seen.prefetch_key(block_hashes_[i + kAhead]);
      const size_t at = i == 0 ? 0 : block_key_ends_[i - 1];
      if (!seen.insert(block_keys_.data() + at, block_key_ends_[i] - at, block_hashes_[i])) continue;
      scratch_at_ = 0;
      if (done_ || !push_from(1, t.row(b + i))) return false;
    }
  }
  return !done_;
}

PostPipeline::RowScratch PostPipeline::row_scratch() const {
  RowScratch s;
  s.eval.resize(kScratch);
  s.rows.resize(plan_.post.size());
  for (size_t i = 0; i < plan_.post.size(); ++i) s.rows[i].resize(plan_.post[i].output.size());
  return s;
}

int PostPipeline::format_row(std::string& out, const Value* row, RowScratch& scratch) const {
  EvalContext ctx = make_eval_context(scratch.eval.data(), kScratch);
  return format_from(first_stage_, row, out, scratch, ctx);
}

// push_from for row-local stages, formatting instead of writing. The
// strings a stage evaluates stay in the scratch until the row's last stage
// (an unfolded row's are dropped after it).
int PostPipeline::format_from(size_t i, const Value* row, std::string& out, RowScratch& s, EvalContext& ctx) const {
  for (; i < plan_.post.size(); ++i) {
    const PostStage& st = plan_.post[i];
    Value* next = s.rows[i].data();
    if (st.kind == PostStage::Unfold) {
      const uint32_t used = ctx.scratch_used;
      for (size_t r = 0, n = unfolded_rows(st, row); r < n; ++r) {
        unfold_row(st, row, r, next);
        const int failed = format_from(i + 1, next, out, s, ctx);
        if (failed >= 0) return failed;
        ctx.scratch_used = used;
      }
      return -1;
    }
    const bool kept = pass_row_local(st, row, next, ctx);
    if (ctx.status != EvalStatus::Ok) return static_cast<int>(i);
    if (!kept) return -1;
  }
  writer_.format_rows(out, row, 1, plan_.output.size());
  return -1;
}

bool PostPipeline::push_all(const Table& t) {
  for (size_t r = 0, n = t.rows(); r < n; ++r)
    if (!push(t.row(r))) return false;
  return true;
}

void PostPipeline::write_parts(const std::vector<std::string>& parts) {
  for (const std::string& p : parts) writer_.write_formatted(p.data(), p.size());
}

bool PostPipeline::push_from(size_t i, const Value* row) {
  const size_t from = i;
  for (; i < plan_.post.size(); ++i) {
    const PostStage& st = plan_.post[i];
    // After the strings the row's earlier stages made: the row may point at them.
    EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
    ctx.scratch_used = scratch_at_;
    Value* next = stage_rows_[i].data();
    switch (st.kind) {
      case PostStage::Filter:
      case PostStage::Select:
      case PostStage::DropNa: {
        const bool kept = pass_row_local(st, row, next, ctx);
        if (ctx.status != EvalStatus::Ok) throw_evaluation_failed(st);
        if (!kept) return true;
        break;
      }
      case PostStage::Distinct: {  // passes a row's columns the first time they come
        eval_exprs(st, row, ctx, next);
        if (ctx.status != EvalStatus::Ok) break;
        row_key_.clear();
        append_row_key(row_key_, next, output_types_[i]);
        if (!seen_[i].insert(row_key_)) return true;
        row = next;
        break;
      }
      case PostStage::Top: {
        stage_values_.resize(st.exprs.size());
        eval_exprs(st, row, ctx, stage_values_.data());
        if (ctx.status != EvalStatus::Ok) break;
        tops_[i]->add(row, stage_values_.data(), stage_values_.data() + st.group_keys);  // copies scratch strings
        return true;
      }
      case PostStage::Join:
        return push_joined(i, row);
      case PostStage::Agg:  // its rows come at finish()
        if (!aggs_[i]->add(row)) throw_evaluation_failed(st);
        return true;
      case PostStage::Unfold: {  // each row becomes its group's top rows, each through the stages after
        const uint32_t at = scratch_at_;
        for (size_t r = 0, n = unfolded_rows(st, row); r < n; ++r) {
          unfold_row(st, row, r, next);
          scratch_at_ = at;
          if (!push_from(i + 1, next)) return false;
        }
        return true;
      }
      case PostStage::Assert:
        if (!truthy(eval_program(st.exprs[0].view(), row, ctx))) {
          if (assert_failures_ < kAssertRowsShown) {
            std::string text;
            for (size_t c = 0; c < st.output.size(); ++c) {
              if (c) text += ", ";
              text += st.output[c].name + "=" + (row[c].null ? "null" : assert_value_text(row[c], st.output[c]));
            }
            note_(fmt::format("warpcsv: assert failed: {}: {}\n", st.exprs[0].text, text));
          }
          ++assert_failures_;
        }
        break;
      case PostStage::Limit:
        if (limit_seen_[i] >= st.limit) {
          // Later rows are not needed unless a stage between this row's
          // origin and the limit still needs them (an assert checks them).
          for (size_t k = from; k < i; ++k)
            if (plan_.post[k].kind == PostStage::Assert) return true;
          if (limit_ends_input(plan_, i)) done_ = true;
          return false;
        }
        // The row that fills a limit which ends the input: the input's later
        // rows are not read (a bad row among them is no error).
        if (++limit_seen_[i] == st.limit && limit_ends_input(plan_, i)) done_ = true;
        break;
      case PostStage::Sort:
        if (i == 0 && sorts_parts_) {
          open_part().append_owned(row);
          return true;
        }
        if (!before_bar(i, row)) return true;  // it cannot be among the first rows the limit keeps
        sort_buffers_[i].append_owned(row);
        if (keep_rows_[i] >= 0 && sort_buffers_[i].rows() >= sorted_cut_at(static_cast<size_t>(keep_rows_[i])))
          prune(i);
        return true;
    }
    if (ctx.status != EvalStatus::Ok)
      throw_evaluation_failed(st);
    scratch_at_ = ctx.scratch_used;
  }
  writer_.row(row);
  return true;
}

bool PostPipeline::push_joined(size_t i, const Value* row) {
  const PostStage& st = plan_.post[i];
  const JoinSpec& spec = plan_.joins[static_cast<size_t>(st.join)];
  WCSV_EXPECTS(lookups_ != nullptr, "a join stage runs without its lookup tables");
  // The row's columns, then the lookup's: each matching row's in turn, as the scan's joins fill their slots.
  const size_t kept = st.output.size() - spec.columns.size();
  const JoinView join = host_join_view(spec, (*lookups_)[static_cast<size_t>(st.join)], st.exprs, static_cast<int>(kept));
  std::vector<Value> joined(row, row + kept);
  joined.resize(st.output.size());
  EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
  ctx.scratch_used = scratch_at_;
  const bool more = for_each_joined_row(&join, 1, joined.data(), ctx, [&] {
    scratch_at_ = ctx.scratch_used;  // each lookup row's stages after the join's keys
    return push_from(i + 1, joined.data());
  });
  if (ctx.status != EvalStatus::Ok) throw_evaluation_failed(st);
  return more;
}

void PostPipeline::sort_buffer(size_t i) {
  const PostStage& st = plan_.post[i];
  Table& t = sort_buffers_[i];
  const size_t nkeys = st.exprs.size();
  const std::vector<Type>& types = sort_types_[i];
  std::vector<Value> keys(t.rows() * nkeys);
  StringArena key_strings;  // bare keys point into t's own strings, which the sort leaves in place
  for (size_t r = 0; r < t.rows(); ++r)
    if (!sort_keys_of(st, types, t.row(r), scratch_.data(), key_strings, keys.data() + r * nkeys))
      throw_evaluation_failed(st);
  sort_table(t, keys.data(), nkeys, types, st.descending, threads_);
}

void PostPipeline::prune(size_t i) {
  sort_buffer(i);
  Table& t = sort_buffers_[i];
  Table kept;  // a fresh table, so the dropped rows' strings go too
  kept.columns = t.columns;
  const size_t n = std::min(t.rows(), static_cast<size_t>(keep_rows_[i]));
  for (size_t r = 0; r < n; ++r) kept.append_owned(t.row(r));
  t = std::move(kept);
  if (n == 0 || n < static_cast<size_t>(keep_rows_[i])) return;
  // The last row kept: a later row that does not sort before it is never kept.
  Table& bar = sort_bars_[i];
  bar.cells.clear();
  bar.strings = StringArena();
  std::vector<Value> keys(plan_.post[i].exprs.size());
  EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
  eval_exprs(plan_.post[i], t.row(n - 1), ctx, keys.data());  // evaluated before, at the sort: no failure
  bar.append_owned(keys.data());
}

void PostPipeline::finish_sorted_parts() {
  const PostStage& st = plan_.post[0];
  std::vector<size_t> first(sort_parts_.size() + 1, 0);  // each part's first row among all
  for (size_t p = 0; p < sort_parts_.size(); ++p) first[p + 1] = first[p] + sort_parts_[p].rows();
  const size_t n = first.back(), nkeys = st.exprs.size();
  if (n >= (uint64_t{1} << 32))
    throw InputError(fmt::format("'{}': {} rows to sort, more than the sort holds (2^32 - 1); filter or split the "
                                 "input first", st.text, n));
  // Each row and its keys, a part per task (evaluated strings in the part's arena).
  std::vector<const Value*> rows(n);
  UninitVector<Value> keys(n * nkeys);
  std::vector<StringArena> key_strings(sort_parts_.size());
  std::vector<uint8_t> failed(sort_parts_.size(), 0);
  parallel_for(sort_parts_.size(), threads_, [&](size_t p, int) {
    std::vector<char> scratch(kScratch);
    const Table& part = sort_parts_[p];
    for (size_t r = 0; r < part.rows(); ++r) {
      rows[first[p] + r] = part.row(r);
      if (!sort_keys_of(st, sort_types_[0], part.row(r), scratch.data(), key_strings[p],
                        keys.data() + (first[p] + r) * nkeys)) {
        failed[p] = 1;
        return;
      }
    }
  });
  if (std::find(failed.begin(), failed.end(), 1) != failed.end()) throw_evaluation_failed(st);
  const std::vector<uint32_t> order = sort_order(
      n, KeyRows{reinterpret_cast<const char*>(keys.data()), nkeys * sizeof(Value)}, sort_types_[0], st.descending,
      threads_);
  UninitVector<Value>().swap(keys);
  done_ = false;
  if (!row_local_after_first_ || !writer_.can_format_rows()) {
    for (size_t r = 0; r < n; ++r) {
      scratch_at_ = 0;
      if (!push_from(1, rows[order[r]])) break;
    }
  } else {
    // Runs of rows formatted on threads, each written on a thread of its own
    // while the next is formatted; a failed evaluation ends the output at
    // its row, as one row after another would.
    constexpr size_t kRunRows = 1 << 18, kAhead = 16;
    const std::vector<OutputColumn>& columns = plan_.scan_output;
    auto prefetch_row = [&](const Value* row, bool strings) {
      if (!strings) {
        for (size_t at = 0; at < columns.size() * sizeof(Value); at += 64)
          prefetch_read(reinterpret_cast<const char*>(row) + at);
        return;
      }
      for (size_t c = 0; c < columns.size(); ++c)
        if (columns[c].type.type == Type::String && !row[c].null) prefetch_read(row[c].s.ptr);
    };
    BackgroundRunWriter writer([this](const std::vector<std::string>& parts) { write_parts(parts); });
    for (size_t b = 0; b < n; b += kRunRows) {
      const size_t e = std::min(n, b + kRunRows);
      std::vector<int> failed_stage(format_parts(e - b, threads_), -1);
      std::vector<std::string>& text = writer.run();
      format_in_parts(e - b, threads_, text, [&](size_t pb, size_t pe, size_t part, std::string& out) {
        RowScratch s = row_scratch();
        for (size_t r = b + pb; r < b + pe; ++r) {
          // The rows come in sorted order, scattered: each row's cells are
          // fetched kAhead rows ahead, its strings half as far.
          if (r + kAhead < b + pe) prefetch_row(rows[order[r + kAhead]], false);
          if (r + kAhead / 2 < b + pe) prefetch_row(rows[order[r + kAhead / 2]], true);
          EvalContext ctx = make_eval_context(s.eval.data(), kScratch);
          const int stage = format_from(1, rows[order[r]], out, s, ctx);
          if (stage >= 0) {
            failed_stage[part] = stage;
            break;
          }
        }
      });
      const auto failure = std::find_if(failed_stage.begin(), failed_stage.end(), [](int f) { return f >= 0; });
      if (failure != failed_stage.end()) {
        writer.wait();
        text.resize(static_cast<size_t>(failure - failed_stage.begin()) + 1);
        write_parts(text);
        throw_evaluation_failed(plan_.post[static_cast<size_t>(*failure)]);
      }
      writer.hand_over();
    }
    writer.wait();
  }
  sort_parts_.clear();
}

bool PostPipeline::before_bar(size_t i, const Value* row) {
  const Table& bar = sort_bars_[i];
  if (bar.rows() == 0) return true;
  if (bar_scratch_.empty()) bar_scratch_.resize(kScratch);
  const PostStage& st = plan_.post[i];
  stage_values_.resize(st.exprs.size());
  EvalContext ctx = make_eval_context(bar_scratch_.data(), kScratch);
  eval_exprs(st, row, ctx, stage_values_.data());
  if (ctx.status != EvalStatus::Ok) return true;  // kept: the sort reports it
  return compare_sort_keys(stage_values_.data(), bar.row(0), sort_types_[i], st.descending) < 0;
}

void PostPipeline::finish() {
  for (size_t i = first_stage_; i < plan_.post.size(); ++i) {
    if (plan_.post[i].kind == PostStage::Agg) {
      done_ = false;
      aggs_[i]->finish(kResultRunRows, [&](const Table& rows) {
        for (size_t r = 0; r < rows.rows(); ++r)
          if (!push_from(i + 1, rows.row(r))) return false;
        return true;
      });
      aggs_[i].reset();  // its groups go before a later stage's are made
      continue;
    }
    if (plan_.post[i].kind != PostStage::Sort && plan_.post[i].kind != PostStage::Top) continue;
    if (i == 0 && sorts_parts_) {
      finish_sorted_parts();
      continue;
    }
    Table& t = sort_buffers_[i];
    if (plan_.post[i].kind == PostStage::Top)
      t = tops_[i]->take_sorted();
    else
      sort_buffer(i);
    done_ = false;
    for (size_t r = 0; r < t.rows(); ++r)
      if (!push_from(i + 1, t.row(r))) break;
  }
  if (assert_failures_ > kAssertRowsShown)
    note_(fmt::format("warpcsv: assert failed on {} rows in all ({} shown)\n", assert_failures_, kAssertRowsShown));
  writer_.end();
}

bool limit_ends_input(const Plan& plan, size_t stage) {
  if (plan.post[stage].kind != PostStage::Limit) return false;
  // A sort (or an agg) needs every row, and so does an assert: it checks each
  // row that reaches it, also those a later limit leaves out.
  for (size_t k = 0; k < stage; ++k)
    if (plan.post[k].kind == PostStage::Sort || plan.post[k].kind == PostStage::Top ||
        plan.post[k].kind == PostStage::Assert || plan.post[k].kind == PostStage::Agg)
      return false;
  return true;
}

}  // namespace warpcsv
