#include "result/group_rows.hpp"

#include <chrono>
#include <future>
#include <utility>

#include <fmt/format.h>

#include "exec/group_table.hpp"
#include "runtime/parallel.hpp"
#include "exec/post.hpp"
#include "output/run_writer.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"
#include "runtime/prefetch.hpp"
#include "runtime/stopwatch.hpp"

namespace warpcsv {

namespace {

constexpr uint32_t kScratch = 1 << 16;  // evaluator scratch of an agg item

// The first row of a part that could not be finalized, and why.
struct RowFailure {
  size_t row = SIZE_MAX;
  bool overflow = false;
  int index = -1;  // the scan aggregate that overflowed, or the agg item that failed
  int post_stage = -1;  // else: the post stage that failed
};

}  // namespace

void throw_group_failure(const Plan& plan, const GroupLayout& layout, bool overflow, int index) {
  const size_t i = static_cast<size_t>(index);
  if (!overflow)
    throw InputError(fmt::format("evaluation failed in the agg item '{}' for a group (an overflow, a cast that does not "
                                 "convert, a date past 9999, or a string result over {} KiB)",
                                 plan.finalize[i].text, kScratch / 1024));
  const std::string& text = plan.scan.aggs[i].text;
  if (is_float_op(layout.aggs[i].op))
    throw InputError(fmt::format("{} is out of range: its exact float sums take values below 2^318 (5.3e95) in sum "
                                 "and mean, and below 2^159 (7.3e47) in var, std and corr (their squares); scale "
                                 "the values down first, like sum(x / 1e90)",
                                 text));
  throw InputError(fmt::format("{} overflowed: its exact sums in a group do not fit (a sum past 128 bits, about "
                               "1.7e38 in units of the last digit; in var, std and corr a value past 64 bits); "
                               "aggregate floats instead (`/ 1` makes one, as in sum(x / 1))",
                               text));
}

namespace {

[[noreturn]] void throw_failure(const Plan& plan, const GroupLayout& layout, const RowFailure& f) {
  throw_group_failure(plan, layout, f.overflow, f.index);
}

// Groups 0..n-1 of `all` (their states held) ordered by their first rows:
// scan aggregate 0 is a FirstRow, and no two groups share a first row.
std::vector<uint32_t> first_row_order(const GroupTable& table, const GroupRun& all, size_t n, int threads) {
  const AggDesc& first = table.layout().aggs.at(0);
  WCSV_EXPECTS(first.op == AggOp::FirstRow, "groups by their first rows need a FirstRow aggregate first");
  UninitVector<Value> positions(n);
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    for (size_t g = b; g < e; ++g) positions[g] = agg_finalize(first, all.held_state(g));
  });
  return sort_order(n, KeyRows{reinterpret_cast<const char*>(positions.data()), sizeof(Value)}, {Type::Int}, {false},
                    threads);
}

}  // namespace

SortedHostGroups::SortedHostGroups(const Plan& plan, const std::vector<const GroupTable*>& tables,
                                   const Value* holistic, int threads, size_t run_rows, bool by_first_row)
    : by_first_row_(by_first_row && !tables.empty()), run_rows_(std::max<size_t>(1, run_rows)) {
  for (const GroupTable* t : tables) n_ += t->size();
  if (tables.size() == 1) {
    const GroupTable& groups = *tables[0];
    all_.keys = KeyRows{groups.block_of(0), groups.block_bytes()};
    all_.states = groups.state(0);
    all_.state_stride = groups.block_bytes();
  } else if (!tables.empty()) {
    WCSV_EXPECTS(!holistic, "holistic values are numbered by the groups of one table");
    rows_.resize(n_);
    std::vector<size_t> first(tables.size() + 1, 0);
    for (size_t i = 0; i < tables.size(); ++i) first[i + 1] = first[i] + tables[i]->size();
    parallel_for(tables.size(), threads, [&](size_t i, int) {
      const GroupTable& t = *tables[i];
      for (size_t g = 0; g < t.size(); ++g) rows_[first[i] + g] = t.block_of(g);
    });
    all_.keys.rows = rows_.data();
    all_.state_offset = static_cast<size_t>(tables[0]->state(0) - tables[0]->block_of(0));
  }
  if (!tables.empty()) all_.keys.packed = &tables[0]->packed_keys();
  all_.holistic = holistic;
  if (by_first_row_) {
    order_ = first_row_order(*tables[0], all_, n_, threads);
  } else {
    std::vector<Type> types;
    for (size_t k = 0; k < plan.group_keys; ++k) types.push_back(plan.scan.keys[k].result.type);
    order_ = sort_order(n_, all_.keys, types, std::vector<bool>(types.size(), false), threads);
  }
  if (rows_.empty()) return;
  // The groups' blocks listed in output order once: a run then reads its
  // list in sequence instead of looking each group's block up at random.
  std::vector<const char*> sorted(n_);
  parallel_ranges(n_, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) sorted[i] = rows_[order_[i]];
  });
  rows_ = std::move(sorted);
  order_ = {};
}

GroupRun SortedHostGroups::next() {
  GroupRun run = all_;
  run.n = std::min(run_rows_, n_ - at_);
  if (rows_.empty())
    run.order = order_.data() + at_;
  else
    run.keys.rows = rows_.data() + at_;
  at_ += run.n;
  return run;
}

ChainedGroups::ChainedGroups(std::vector<OrderedGroups*> parts) : parts_(std::move(parts)) {
  for (const OrderedGroups* p : parts_) n_ += p->size();
}

GroupRun ChainedGroups::next() {
  for (; at_ < parts_.size(); ++at_) {
    GroupRun run = parts_[at_]->next();
    if (run.n) return run;
  }
  return GroupRun{};
}

bool ChainedGroups::start_text(const Plan& plan, const GroupLayout& layout, DelimitedText text) {
  bool all = true;
  for (OrderedGroups* p : parts_) all = p->start_text(plan, layout, text) && all;
  return all;
}

TextRun ChainedGroups::next_text() {
  for (; at_ < parts_.size(); ++at_) {
    const TextRun run = parts_[at_]->next_text();
    if (run.rows) return run;
  }
  return TextRun{};
}

namespace {

// Groups in output order are scattered over a host table: their keys and
// states are asked for this many rows ahead, so the misses overlap.
constexpr size_t kPrefetchRows = 8;

// A run in its own order (from a GPU) is read in sequence; a host table's
// group is one block of keys and states, `block_bytes` long, at random.
size_t group_block_bytes(const GroupRun& run, const GroupLayout& layout) {
  return run.keys.rows ? run.state_offset + layout.state_bytes : run.keys.stride;
}
void prefetch_group(const GroupRun& run, size_t i, size_t block_bytes) {
  if (!run.order && !run.keys.rows) return;
  const char* block = run.keys.row(run.group(i));
  for (size_t b = 0; b < block_bytes; b += 64) prefetch_read(block + b);
}

// Finalizes rows of runs one at a time, on one thread: the keys, then the
// agg stage's items. Evaluated strings live in its scratch until the next row.
class RowFinalizer {
 public:
  RowFinalizer(const Plan& plan, const GroupLayout& layout)
      : plan_(plan), layout_(layout), nkeys_(plan.group_keys), raw_(plan.group_keys + plan.agg_sources.size()),
        scratch_(kScratch), block_(layout.state_bytes / sizeof(uint128) + 1) {
    // An agg item that only reads a key or an aggregate is copied, not evaluated.
    for (const Program& p : plan.finalize) direct_.push_back(p.bare_slot());
    for (size_t k = 0; k < nkeys_; ++k) key_types_.push_back(plan.scan.keys[k].result.type);
  }

  // Row i of `run` into `row`; false, with `f` set, when it cannot be finalized.
  bool finalize(const GroupRun& run, size_t i, Value* row, RowFailure& f) {
    const size_t g = run.group(i), nh = plan_.holistic.size();
    const char* state = run.held_state(g);
    if (!state) {
      run.fill_state(g, reinterpret_cast<char*>(block_.data()));
      state = reinterpret_cast<const char*>(block_.data());
    }
    for (size_t k = 0; k < nkeys_; ++k) {
      Value& v = raw_[k];
      v = run.keys.at(g, k);
      if (v.null) continue;
      if (key_types_[k] == Type::String && run.string_base)
        v.s.ptr = run.string_base + reinterpret_cast<uintptr_t>(v.s.ptr);
      // -0.0 and 0.0 are one group: it prints as 0.0, whichever came first.
      if (key_types_[k] == Type::Float && v.f == 0.0) v.f = 0.0;
    }
    for (size_t a = 0; a < plan_.agg_sources.size(); ++a) {
      const int src = plan_.agg_sources[a];
      if (src >= 0 && agg_overflowed(layout_.aggs[static_cast<size_t>(src)], state) &&
          (f.row == SIZE_MAX || src < f.index))
        f = RowFailure{i, true, src};  // the row's first such aggregate
      raw_[nkeys_ + a] = src >= 0 ? agg_finalize(layout_.aggs[static_cast<size_t>(src)], state)
                                  : run.holistic[g * nh + static_cast<size_t>(~src)];
    }
    if (f.row != SIZE_MAX) return false;
    for (size_t k = 0; k < nkeys_; ++k) row[k] = raw_[k];
    EvalContext ctx = make_eval_context(scratch_.data(), kScratch);
    for (size_t c = 0; c < plan_.finalize.size(); ++c) {
      Value& v = row[nkeys_ + c];
      if (direct_[c] >= 0) {
        v = raw_[static_cast<size_t>(direct_[c])];
        continue;
      }
      v = eval_program(plan_.finalize[c].view(), raw_.data(), ctx);
      if (ctx.status != EvalStatus::Ok) {
        f = RowFailure{i, false, static_cast<int>(c)};
        return false;
      }
    }
    return true;
  }

 private:
  const Plan& plan_;
  const GroupLayout& layout_;
  size_t nkeys_;
  std::vector<int> direct_;
  std::vector<Type> key_types_;
  std::vector<Value> raw_;
  std::vector<char> scratch_;
  std::vector<uint128> block_;  // a state block filled by fill_state (16-byte aligned)
};

// Throws for the first failed row of the parts, in output order.
void throw_first_failure(const Plan& plan, const GroupLayout& layout, const std::vector<RowFailure>& failed) {
  const RowFailure* first = nullptr;
  for (const RowFailure& f : failed)
    if (f.row != SIZE_MAX && (!first || f.row < first->row)) first = &f;
  if (first && first->post_stage >= 0) throw_evaluation_failed(plan.post[static_cast<size_t>(first->post_stage)]);
  if (first) throw_failure(plan, layout, *first);
}

// Finalizes and formats the rows of `run` in one pass, on threads, into
// `text` (a part each): no row is held, only its text.
void finalize_and_format(const Plan& plan, const GroupLayout& layout, const GroupRun& run, const PostPipeline& post,
                         std::vector<std::string>& text, int threads) {
  std::vector<RowFailure> failed(format_parts(run.n, threads));
  const size_t block_bytes = group_block_bytes(run, layout);
  format_in_parts(run.n, threads, text, [&](size_t begin, size_t end, size_t p, std::string& out) {
    RowFinalizer fin(plan, layout);
    std::vector<Value> row(plan.finalized_output.size());
    PostPipeline::RowScratch scratch = post.row_scratch();
    RowFailure f;  // this thread's own: `failed`'s neighbours share cache lines
    for (size_t i = begin; i < end; ++i) {
      if (i + kPrefetchRows < end) prefetch_group(run, i + kPrefetchRows, block_bytes);
      if (!fin.finalize(run, i, row.data(), f)) break;
      const int stage = post.format_row(out, row.data(), scratch);
      if (stage >= 0) {
        f = RowFailure{i, false, -1, stage};
        break;
      }
    }
    failed[p] = f;
  });
  throw_first_failure(plan, layout, failed);
}

}  // namespace

void finalize_run(const Plan& plan, const GroupLayout& layout, const GroupRun& run, Table& out, int threads) {
  const size_t n = run.n;
  out.columns = plan.finalized_output;
  out.cells.resize(n * out.width());
  out.strings = StringArena();
  // Ranges of rows finalize on their own threads, straight into their rows
  // of `out`. Only evaluated strings are copied (into the range's arena):
  // keys and aggregates point into the groups' own storage.
  const size_t parts = range_parts(n, threads), nkeys = plan.group_keys;
  std::vector<StringArena> arenas(parts);
  std::vector<RowFailure> failed(parts);
  const size_t block_bytes = group_block_bytes(run, layout);
  parallel_for(parts, threads, [&](size_t p, int) {
    RowFinalizer fin(plan, layout);
    RowFailure f;  // this thread's own: `failed`'s neighbours share cache lines
    for (size_t i = n * p / parts, end = n * (p + 1) / parts; i < end; ++i) {
      if (i + kPrefetchRows < end) prefetch_group(run, i + kPrefetchRows, block_bytes);
      Value* row = out.row(i);
      if (!fin.finalize(run, i, row, f)) break;
      for (size_t c = nkeys; c < out.width(); ++c)
        if (!row[c].null && out.columns[c].type.type == Type::String && plan.finalize[c - nkeys].bare_slot() < 0)
          row[c].s = arenas[p].add(row[c].s);
    }
    failed[p] = f;
  });
  throw_first_failure(plan, layout, failed);
  for (StringArena& a : arenas) out.strings.absorb(std::move(a));
}

namespace {

// Runs that come as text: each is written on a thread of its own while the
// next is made.
void write_text_runs(OrderedGroups& groups, PostPipeline& post, ResultTimes& t) {
  std::future<void> writing;
  for (;;) {
    if (interrupted()) throw Interrupted();  // `writing` waits for its run as it goes
    auto t0 = std::chrono::steady_clock::now();
    const TextRun run = groups.next_text();
    t.finalize_s += seconds_since(t0);
    if (run.rows == 0) break;
    ++t.runs;
    t0 = std::chrono::steady_clock::now();
    if (writing.valid()) writing.get();  // the run before is out (or its error is thrown)
    writing = std::async(std::launch::async, [&post, run] { post.write_text(run.bytes, run.size); });
    t.write_s += seconds_since(t0);
  }
  if (writing.valid()) writing.get();
}

}  // namespace

void write_groups(const Plan& plan, const GroupLayout& layout, OrderedGroups& groups, PostPipeline& post,
                  int threads, ResultTimes* times) {
  ResultTimes local;
  ResultTimes& t = times ? *times : local;
  DelimitedText style;
  if (post.delimited_text(&style) && groups.start_text(plan, layout, style)) {
    write_text_runs(groups, post, t);
    return;
  }
  Table rows;
  // Rows formatted apart are written on a thread of their own while the
  // next run is fetched, finalized and formatted.
  BackgroundRunWriter writer([&post](const std::vector<std::string>& parts) { post.write_parts(parts); });
  for (;;) {
    if (interrupted()) throw Interrupted();
    auto t0 = std::chrono::steady_clock::now();
    const GroupRun run = groups.next();
    if (run.n == 0) break;
    t.write_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    ++t.runs;
    if (post.formats_apart()) {
      finalize_and_format(plan, layout, run, post, writer.run(), threads);
      t.finalize_s += seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
      writer.hand_over();  // once the run before is out (or its error is thrown)
      t.write_s += seconds_since(t0);
      continue;
    }
    finalize_run(plan, layout, run, rows, threads);
    t.finalize_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const bool more = post.push_all(rows);
    t.write_s += seconds_since(t0);
    if (!more) break;
  }
  writer.wait();
}

}  // namespace warpcsv
