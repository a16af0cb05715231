#include "exec/post.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "exec/group_table.hpp"
#include "exec/parallel.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {
constexpr uint32_t kScratch = 1 << 16;
constexpr uint64_t kAssertRowsShown = 10;

bool truthy(const Value& v) { return !v.null && v.i != 0; }

// An order-preserving 128-bit prefix of a sort key, so most comparisons
// touch only the (sequential) sort items instead of the rows' keys: strings
// by their first 16 bytes, integral types by their value. Floats get none.
struct SortItem {
  uint64_t p0, p1;
  uint32_t idx;
  uint32_t len;   // strings: byte length (ties of complete prefixes)
  uint8_t rank;   // 0: value with prefix, 1: value without prefix, 2: null (last)
  bool complete;  // the prefix is the whole value: equal prefixes (and lengths) mean equal
};

SortItem sort_item(const Value& v, Type t, bool desc, uint32_t idx) {
  SortItem s{0, 0, idx, 0, 0, true};
  if (v.null) {
    s.rank = 2;
    return s;
  }
  if (t == Type::String) {
    unsigned char b[16] = {0};
    std::memcpy(b, v.s.ptr, std::min<uint32_t>(v.s.len, 16));
    s.len = desc ? ~v.s.len : v.s.len;
    s.complete = v.s.len <= 16;
    for (int i = 0; i < 8; ++i) {
      s.p0 = (s.p0 << 8) | b[i];
      s.p1 = (s.p1 << 8) | b[8 + i];
    }
  } else if (t == Type::Float) {
    s.rank = 1;
    return s;
  } else {
    const uint128 u = static_cast<uint128>(v.i) ^ (static_cast<uint128>(1) << 127);
    s.p0 = static_cast<uint64_t>(u >> 64);
    s.p1 = static_cast<uint64_t>(u);
  }
  if (desc) {
    s.p0 = ~s.p0;
    s.p1 = ~s.p1;
  }
  return s;
}

// Reorders `t`'s rows by `keys` (stable): row r's keys are keys[r * stride
// + k] (they may be t's own cells). One stable pass per key, the last
// key first (least significant digit first, like a radix sort), so each
// pass compares one key's prefix in sequential memory and looks at the rows
// only when two prefixes tie.
void sort_table(Table& t, const Value* keys, size_t stride, const std::vector<Type>& types,
                const std::vector<bool>& desc, int threads) {
  const size_t n = t.rows(), nkeys = types.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  UninitVector<SortItem> items(n);
  for (size_t k = nkeys; k-- > 0;) {
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) items[i] = sort_item(keys[order[i] * stride + k], types[k], desc[k], order[i]);
    });
    const Type type = types[k];
    const bool down = desc[k];
    auto less = [&](const SortItem& a, const SortItem& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      if (a.rank == 2) return false;  // nulls tie
      if (a.rank == 0) {
        if (a.p0 != b.p0 || a.p1 != b.p1) return a.p0 != b.p0 ? a.p0 < b.p0 : a.p1 < b.p1;
        // Equal prefixes of whole values: the shorter string first, else equal.
        if (a.complete && b.complete) return a.len < b.len;
      }
      const int c = compare_values(keys[a.idx * stride + k], keys[b.idx * stride + k], type);
      return down ? c > 0 : c < 0;
    };
    parallel_stable_sort(items.begin(), items.end(), less, threads);
    for (size_t i = 0; i < n; ++i) order[i] = items[i].idx;
  }
  UninitVector<Value> cells(t.cells.size());
  const size_t w = t.width();
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) std::copy(t.row(order[i]), t.row(order[i]) + w, cells.begin() + i * w);
  });
  t.cells.swap(cells);
}
}  // namespace

PostPipeline::PostPipeline(const Plan& plan, RowWriter& writer, int threads,
                           std::function<void(const std::string&)> note)
    : plan_(plan), writer_(writer), sort_buffers_(plan.post.size()), limit_seen_(plan.post.size(), 0),
      scratch_(kScratch), threads_(threads), note_(std::move(note)) {
  if (!note_) note_ = [](const std::string& text) { std::fputs(text.c_str(), stderr); };
  keep_rows_.assign(plan.post.size(), -1);
  for (size_t i = 0; i < plan.post.size(); ++i) {
    const PostStage& st = plan.post[i];
    if (st.kind == PostStage::Sort && i + 1 < plan.post.size() && plan.post[i + 1].kind == PostStage::Limit)
      keep_rows_[i] = plan.post[i + 1].limit;
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

void PostPipeline::push_all(const Table& t) {
  constexpr size_t kRowsPerPart = 1 << 15;
  const size_t n = t.rows(), w = t.width();
  if (!plan_.post.empty() || threads_ <= 1 || n < 4 * kRowsPerPart || !writer_.can_format_rows()) {
    for (size_t r = 0; r < n; ++r)
      if (!push(t.row(r))) return;
    return;
  }
  // Waves of `threads_` parts keep memory at a few parts' text.
  const size_t parts = (n + kRowsPerPart - 1) / kRowsPerPart, wave = static_cast<size_t>(threads_);
  std::vector<std::string> text(wave);
  for (size_t p0 = 0; p0 < parts; p0 += wave) {
    const size_t m = std::min(wave, parts - p0);
    parallel_for(m, threads_, [&](size_t i, int) {
      const size_t b = (p0 + i) * kRowsPerPart, e = std::min(n, b + kRowsPerPart);
      text[i].clear();
      writer_.format_rows(text[i], t.row(b), e - b, w);
    });
    for (size_t i = 0; i < m; ++i) writer_.write_formatted(text[i]);
  }
}

bool PostPipeline::push_from(size_t i, const Value* row) {
  const size_t from = i;
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
              text += st.output[c].name + "=" + (row[c].null ? "null" : value_text(row[c], st.output[c]));
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
        ++limit_seen_[i];
        break;
      case PostStage::Sort:
        sort_buffers_[i].append_owned(row);
        if (keep_rows_[i] >= 0 &&
            sort_buffers_[i].rows() >= 2 * std::max<uint64_t>(static_cast<uint64_t>(keep_rows_[i]), 4096))
          prune(i);
        return true;
    }
    if (ctx.status != EvalStatus::Ok)
      throw InputError(fmt::format("evaluation failed in '{}' (overflow, or a string result over {} KiB)", st.text,
                                   kScratch / 1024));
  }
  writer_.row(row);
  return true;
}

void PostPipeline::sort_buffer(size_t i) {
  const PostStage& st = plan_.post[i];
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
      if (ctx.status != EvalStatus::Ok)  // a failed key is no null: it would sort last
        throw InputError(fmt::format("evaluation failed in '{}' (overflow, or a string result over {} KiB)", st.text,
                                     kScratch / 1024));
      if (!v.null && e.result.type == Type::String) v.s = key_strings.add(v.s);
      keys.push_back(v);
    }
  sort_table(t, keys.data(), types.size(), types, st.descending, threads_);
}

void PostPipeline::prune(size_t i) {
  sort_buffer(i);
  Table& t = sort_buffers_[i];
  Table kept;  // a fresh table, so the dropped rows' strings go too
  kept.columns = t.columns;
  const size_t n = std::min(t.rows(), static_cast<size_t>(keep_rows_[i]));
  for (size_t r = 0; r < n; ++r) kept.append_owned(t.row(r));
  t = std::move(kept);
}

void PostPipeline::finish() {
  for (size_t i = 0; i < plan_.post.size(); ++i) {
    if (plan_.post[i].kind != PostStage::Sort) continue;
    Table& t = sort_buffers_[i];
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
  // A sort needs every row, and so does an assert: it checks each row that
  // reaches it, also those a later limit leaves out.
  for (size_t k = 0; k < stage; ++k)
    if (plan.post[k].kind == PostStage::Sort || plan.post[k].kind == PostStage::Assert) return false;
  return true;
}

Table finalize_groups(const Plan& plan, const GroupTable& groups, int threads, const Value* holistic) {
  const size_t nkeys = plan.group_keys, naggs = plan.agg_sources.size(), nh = plan.holistic.size();
  const auto& layout = groups.layout();
  const size_t n = groups.size();
  // Ranges of groups finalize on their own threads, straight into their rows
  // of the result, with their strings in their own arenas.
  const size_t parts = range_parts(n, threads);
  Table t;
  t.columns = plan.finalized_output;
  t.cells.resize(n * t.width());
  std::vector<StringArena> arenas(parts);
  std::vector<int> failed(parts, -1);  // per part: the first agg item whose evaluation failed
  std::vector<int> overflowed(parts, -1);  // per part: the first scan aggregate whose sum passed its range
  parallel_for(parts, threads, [&](size_t p, int) {
    std::vector<Value> raw(nkeys + naggs), out(nkeys + plan.finalize.size());
    std::vector<char> scratch(kScratch);
    for (size_t g = n * p / parts, end = n * (p + 1) / parts; g < end; ++g) {
      for (size_t k = 0; k < nkeys; ++k) raw[k] = groups.keys(g)[k];
      for (size_t a = 0; a < naggs; ++a) {
        const int src = plan.agg_sources[a];
        if (src >= 0 && (overflowed[p] < 0 || src < overflowed[p]) &&
            agg_overflowed(layout.aggs[static_cast<size_t>(src)], groups.state(g)))
          overflowed[p] = src;  // the first such aggregate, whatever the threads
        raw[nkeys + a] = src >= 0 ? agg_finalize(layout.aggs[static_cast<size_t>(src)], groups.state(g))
                                  : holistic[g * nh + static_cast<size_t>(~src)];
      }
      EvalContext ctx = make_eval_context(scratch.data(), kScratch);
      // The finalized row: the keys, then the agg stage's items.
      for (size_t k = 0; k < nkeys; ++k) out[k] = raw[k];
      for (size_t c = 0; c < plan.finalize.size(); ++c) {
        out[nkeys + c] = eval_program(plan.finalize[c].view(), raw.data(), ctx);
        if (ctx.status != EvalStatus::Ok && (failed[p] < 0 || static_cast<int>(c) < failed[p]))
          failed[p] = static_cast<int>(c);
      }
      t.copy_owned(t.row(g), out.data(), arenas[p]);
    }
  });
  int first_overflow = -1;
  for (int a : overflowed)
    if (a >= 0 && (first_overflow < 0 || a < first_overflow)) first_overflow = a;
  if (first_overflow >= 0) {
    const std::string& text = plan.scan.aggs[static_cast<size_t>(first_overflow)].text;
    if (is_float_op(layout.aggs[static_cast<size_t>(first_overflow)].op))
      throw InputError(fmt::format("{} is out of range: its exact float sums take values below 2^318 (5.3e95) in sum "
                                   "and mean, and below 2^159 (7.3e47) in var, std and corr (their squares); scale "
                                   "the values down first, like sum(x / 1e90)",
                                   text));
    throw InputError(fmt::format("{} overflowed: its exact sums in a group do not fit (a sum past 128 bits, about "
                                 "1.7e38 in units of the last digit; in var, std and corr a value past 64 bits); "
                                 "aggregate floats instead (`/ 1` makes one, as in sum(x / 1))",
                                 text));
  }
  int first_failed = -1;
  for (int c : failed)
    if (c >= 0 && (first_failed < 0 || c < first_failed)) first_failed = c;
  if (first_failed >= 0)
    throw InputError(fmt::format("evaluation failed in the agg item '{}' for a group (integer overflow, or a string "
                                 "result over {} KiB)",
                                 plan.finalize[static_cast<size_t>(first_failed)].text, kScratch / 1024));
  for (StringArena& a : arenas) t.strings.absorb(std::move(a));
  // The keys lead every row of the result: it sorts by its own first columns.
  std::vector<Type> types;
  for (size_t k = 0; k < nkeys; ++k) types.push_back(plan.scan.keys[k].result.type);
  sort_table(t, t.cells.data(), t.width(), types, std::vector<bool>(nkeys, false), threads);
  return t;
}

}  // namespace warpcsv
