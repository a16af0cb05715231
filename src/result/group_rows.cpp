#include "result/group_rows.hpp"

#include <chrono>
#include <future>

#include <fmt/format.h>

#include "exec/group_table.hpp"
#include "exec/parallel.hpp"
#include "exec/post.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {

constexpr uint32_t kScratch = 1 << 16;  // evaluator scratch of an agg item

// The first row of a part that could not be finalized, and why.
struct RowFailure {
  size_t row = SIZE_MAX;
  bool overflow = false;
  int index = -1;  // the scan aggregate that overflowed, or the agg item that failed
};

[[noreturn]] void throw_failure(const Plan& plan, const GroupLayout& layout, const RowFailure& f) {
  const size_t i = static_cast<size_t>(f.index);
  if (!f.overflow)
    throw InputError(fmt::format("evaluation failed in the agg item '{}' for a group (integer overflow, or a string "
                                 "result over {} KiB)",
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

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

SortedHostGroups::SortedHostGroups(const Plan& plan, const GroupTable& groups, const Value* holistic, int threads,
                                   size_t run_rows)
    : run_rows_(std::max<size_t>(1, run_rows)) {
  const size_t n = groups.size();
  all_.keys = KeyRows{reinterpret_cast<const char*>(groups.keys(0)), groups.block_bytes()};
  all_.states = groups.state(0);
  all_.state_stride = groups.block_bytes();
  all_.holistic = holistic;
  std::vector<Type> types;
  for (size_t k = 0; k < plan.group_keys; ++k) types.push_back(plan.scan.keys[k].result.type);
  order_ = sort_order(n, all_.keys, types, std::vector<bool>(types.size(), false), threads);
}

GroupRun SortedHostGroups::next() {
  GroupRun run = all_;
  run.n = std::min(run_rows_, order_.size() - at_);
  run.order = order_.data() + at_;
  at_ += run.n;
  return run;
}

void finalize_run(const Plan& plan, const GroupLayout& layout, const GroupRun& run, Table& out, int threads) {
  const size_t nkeys = plan.group_keys, naggs = plan.agg_sources.size(), nh = plan.holistic.size();
  const size_t n = run.n;
  out.columns = plan.finalized_output;
  out.cells.resize(n * out.width());
  out.strings = StringArena();
  // An agg item that only reads a key or an aggregate is copied, not
  // evaluated; only evaluated strings need copying (keys and aggregates
  // point into the groups' own storage, which outlives the rows).
  std::vector<int> direct(plan.finalize.size());
  for (size_t c = 0; c < plan.finalize.size(); ++c) {
    const Program& p = plan.finalize[c];
    direct[c] = p.code.size() == 1 && p.code[0].op == Op::Column ? static_cast<int>(p.code[0].arg) : -1;
  }
  std::vector<bool> float_key(nkeys);
  for (size_t k = 0; k < nkeys; ++k) float_key[k] = plan.scan.keys[k].result.type == Type::Float;
  // Ranges of rows finalize on their own threads, straight into their rows
  // of `out`, with their strings in their own arenas.
  const size_t parts = range_parts(n, threads);
  std::vector<StringArena> arenas(parts);
  std::vector<RowFailure> failed(parts);
  const size_t width = out.width();
  parallel_for(parts, threads, [&](size_t p, int) {
    std::vector<Value> raw(nkeys + naggs);
    std::vector<char> scratch(kScratch);
    RowFailure& f = failed[p];
    for (size_t i = n * p / parts, end = n * (p + 1) / parts; i < end && f.row == SIZE_MAX; ++i) {
      const size_t g = run.group(i);
      const char* state = run.states + g * run.state_stride;
      for (size_t k = 0; k < nkeys; ++k) {
        raw[k] = run.keys.at(g, k);
        // -0.0 and 0.0 are one group: it prints as 0.0, whichever came first.
        if (float_key[k] && !raw[k].null && raw[k].f == 0.0) raw[k].f = 0.0;
      }
      for (size_t a = 0; a < naggs; ++a) {
        const int src = plan.agg_sources[a];
        if (src >= 0 && agg_overflowed(layout.aggs[static_cast<size_t>(src)], state) &&
            (f.row == SIZE_MAX || src < f.index))
          f = RowFailure{i, true, src};  // the row's first such aggregate
        raw[nkeys + a] = src >= 0 ? agg_finalize(layout.aggs[static_cast<size_t>(src)], state)
                                  : run.holistic[g * nh + static_cast<size_t>(~src)];
      }
      if (f.row != SIZE_MAX) break;
      // The finalized row: the keys, then the agg stage's items.
      Value* row = out.cells.data() + i * width;
      for (size_t k = 0; k < nkeys; ++k) row[k] = raw[k];
      EvalContext ctx = make_eval_context(scratch.data(), kScratch);
      for (size_t c = 0; c < plan.finalize.size(); ++c) {
        Value& v = row[nkeys + c];
        if (direct[c] >= 0) {
          v = raw[static_cast<size_t>(direct[c])];
          continue;
        }
        v = eval_program(plan.finalize[c].view(), raw.data(), ctx);
        if (ctx.status != EvalStatus::Ok) {
          f = RowFailure{i, false, static_cast<int>(c)};
          break;
        }
        if (!v.null && out.columns[nkeys + c].type.type == Type::String) v.s = arenas[p].add(v.s);
      }
    }
  });
  const RowFailure* first = nullptr;
  for (const RowFailure& f : failed)
    if (f.row != SIZE_MAX && (!first || f.row < first->row)) first = &f;
  if (first) throw_failure(plan, layout, *first);
  for (StringArena& a : arenas) out.strings.absorb(std::move(a));
}

void write_groups(const Plan& plan, const GroupLayout& layout, OrderedGroups& groups, PostPipeline& post,
                  int threads, ResultTimes* times) {
  ResultTimes local;
  ResultTimes& t = times ? *times : local;
  Table rows;
  // Rows formatted apart are written on a thread of their own while the
  // next run is fetched, finalized and formatted: two runs' text at most.
  std::vector<std::string> text[2];
  std::future<void> writing;  // after `text`: destroyed (waited for) first
  int which = 0;
  for (;;) {
    if (interrupted()) throw Interrupted();
    auto t0 = std::chrono::steady_clock::now();
    const GroupRun run = groups.next();
    if (run.n == 0) break;
    t.write_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    finalize_run(plan, layout, run, rows, threads);
    t.finalize_s += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    ++t.runs;
    if (post.formats_apart()) {
      post.format_all(rows, text[which]);
      if (writing.valid()) writing.get();  // the run before is out (or its error is thrown)
      writing = std::async(std::launch::async, [&post, &parts = text[which]] { post.write_parts(parts); });
      which = 1 - which;
      t.write_s += seconds_since(t0);
      continue;
    }
    const bool more = post.push_all(rows);
    t.write_s += seconds_since(t0);
    if (!more) break;
  }
  if (writing.valid()) writing.get();
}

}  // namespace warpcsv
