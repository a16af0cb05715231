// The host executor: partitions of each window run on CPU threads over the
// shared core (tokenizer, field parsing, evaluator, aggregate ops).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <optional>

#include "cpu/aggregate_batches.hpp"
#include "cpu/byte_scan.hpp"
#include "cpu/fast_row.hpp"
#include "cpu/folded_lists.hpp"
#include "exec/holistic.hpp"
#include "runtime/parallel.hpp"
#include "exec/partitioner.hpp"
#include "exec/post.hpp"
#include "io/row_issue.hpp"
#include "exec/scan.hpp"
#include "result/first_rows.hpp"
#include "result/group_rows.hpp"
#include "result/spill.hpp"
#include "runtime/stopwatch.hpp"
#include "runtime/trace.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"
#include "cpu/cpu_windows.hpp"

namespace warpcsv {

namespace {

std::atomic<bool> g_row_batches{true};

constexpr uint32_t kEvalScratch = 1 << 16;
// Rows between parsing and their group update (see Pending): their buffers stay live.
constexpr unsigned kRowsInFlight = 4;
constexpr uint64_t kMaxRowBytes = 4ull << 30;  // one row, whole in a window
// From this many threads on, the next window is mapped while the current one
// is scanned (serial mapping was 3% of a 16-thread scan; on 2 threads it is
// nothing, and two windows mapped would double the mapped bytes).
constexpr int kMapAheadThreads = 4;
constexpr uint64_t kFirstWindowOfLimit = 1 << 20;
// Everything one partition produced, folded into the run in partition order.
struct PartitionResult {
  uint64_t lines = 0;  // line terminators consumed by the partition's rows
  uint64_t rows = 0;
  std::vector<RowIssue> issues;  // with lines relative to the partition start
  std::vector<size_t> issue_rows;  // per issue: the output rows before its row
  bool widen = false;            // issues.back() is a value that needs a wider type
  Table output;
};

class CpuScan {
 public:
  CpuScan(InputSet& in, const ScanSettings& s, GroupTable* groups)
      : in_(in), s_(s), plan_(*s.plan), global_groups_(groups) {
    const auto& scan = plan_.scan;
    ncols_ = in.column_names.size();
    col_to_slot_.assign(ncols_, -1);
    for (size_t i = 0; i < scan.used_columns.size(); ++i) {
      col_to_slot_[scan.used_columns[i]] = static_cast<int>(i);
      slot_inferred_.push_back(!s.type_from_schema[static_cast<size_t>(scan.used_columns[i])]);
    }
    filter_ = scan.filter.view();
    has_filter_ = !scan.filter.empty();
    for (const ScanJoin& sj : scan.joins) joins_.push_back(join_view(sj, s));
    for (const auto& k : scan.keys) {
      key_progs_.push_back(k.view());
      key_direct_.push_back(k.bare_slot());
    }
    for (const auto& a : scan.aggs) {
      arg0_.push_back(a.arg0.view());
      arg1_.push_back(a.arg1.view());
      arg0_direct_.push_back(a.arg0.empty() ? -2 : a.arg0.bare_slot());
      arg1_direct_.push_back(a.arg1.empty() ? -2 : a.arg1.bare_slot());
    }
    for (const auto& o : scan.outputs) {
      out_progs_.push_back(o.view());
      out_direct_.push_back(o.bare_slot());
    }
    // Input slots whose field's text the output prints (a bare column printed
    // as written): each value keeps a pointer to its text (Value::text). A
    // join's values carry their lookup field's text already.
    slot_text_.assign(scan.used_columns.size(), 0);
    if (!scan.aggregate)
      for (size_t k = 0; k < scan.outputs.size() && k < plan_.scan_output.size(); ++k)
        if (out_direct_[k] >= 0 && static_cast<size_t>(out_direct_[k]) < scan.used_columns.size() &&
            plan_.scan_output[k].as_written && plan_.scan_output[k].type.type != Type::String)
          slot_text_[static_cast<size_t>(out_direct_[k])] = 1;
    if (scan.aggregate) layout_ = &global_groups_->layout();
    if (scan.aggregate && s.holistic) {
      // Holistic aggregates: groups of the agg's own keys, and each row's
      // holistic arguments listed, instead of a group per (keys, argument).
      HolisticGroups& h = *s.holistic;
      h.layout = std::make_unique<GroupLayout>(*layout_);
      h.layout->key_types.resize(plan_.group_keys);
      h.groups = std::make_unique<GroupTable>(h.layout.get());
      h.from_lists = true;
      h.lists.resize(scan.keys.size() - plan_.group_keys);
      layout_ = h.layout.get();
      global_groups_ = h.groups.get();
      folded_lists_.emplace(plan_, h);
    }
    // Groups by keys, with nothing listed per group, fold part by part.
    if (scan.aggregate && !s.holistic && plan_.group_keys > 0) merged_.emplace(layout_, thread_table_parts(s.threads));
    for (const auto& t : s.opts->dialect.null_tokens) null_tokens_.push_back(t);
    setup_batches();
    per_worker_.resize(static_cast<size_t>(std::max(1, s.threads)));
    for (auto& w : per_worker_) {
      if (batch_plan_) w.batches = std::make_unique<AggregateBatches>(&*batch_plan_);
      for (auto& sc : w.scratch) sc.resize(kEvalScratch);
      if (!joins_.empty()) w.join_scratch.resize(kEvalScratch);
      if (scan.aggregate)
        w.groups = std::make_unique<PartitionedGroups>(layout_, merged_ ? merged_->parts().size() : 1);
      if (s.holistic) w.lists = HolisticGroups::lists_for(plan_);
    }
    // Rows go out as they are scanned, and a limit can stop the scan.
    if (!scan.aggregate)
      for (size_t i = 0; i < plan_.post.size(); ++i) stops_early_ |= limit_ends_input(plan_, i);
    // A distinct of the scan's rows as they are: each partition passes on
    // only its rows' first occurrences (the distinct's own work, on the
    // scan's threads; it had been most of such a run, on one thread).
    if (distinct_of_scanned_rows(plan_))
      for (const OutputColumn& c : plan_.scan_output) distinct_types_.push_back(c.type.type);
    // A sort of the scan's rows by their columns, then a limit: each
    // partition passes on only its own first rows in that order, cut as it
    // goes so that its table stays small; a top of each group likewise,
    // group by group. (A value that widens a type starts the run again,
    // cuts and all.)
    sorted_cut_ = sorted_cut_of(plan_);
    group_top_cut_ = group_top_cut_of(plan_);
    // Rows that stream out (or a limit) want the first rows soon: small first
    // windows, and what a stream has so far.
    early_rows_ = stops_early_ || (!scan.aggregate && s.stream_rows);
  }

  void run(const RowBatchSink& sink, const std::function<void(const RowIssue&)>& on_skip, ScanStats& stats) {
    stats.executor = "cpu";
    stats.chunk_size = 0;  // the largest partition made (a limit's first windows make small ones)
    trace::Tracer* const tr = s_.tracer;
    uint64_t partition_index = s_.first_partition;
    for (auto& src : in_.sources) {
      if (src->header().empty() && in_.column_names.empty()) continue;
      uint64_t from = 0, line = src->header_lines() + 1;
      // The thread tables' budget is checked between windows, and a window's
      // rows can add groups of several times their bytes: under a small
      // --memory-limit the windows shrink so the tables stay near it.
      const uint64_t full_window =
          plan_.scan.aggregate && s_.thread_tables_budget
              ? std::min(cpu_window_bytes(s_.chunk_size, s_.threads),
                         std::max<uint64_t>(s_.thread_tables_budget / 4, 1ull << 20))
              : cpu_window_bytes(s_.chunk_size, s_.threads);
      // A limit that can end the scan starts with a small window that
      // doubles: `limit 10` over a pipe or a large file answers after the
      // first MiB instead of a full window (128 MiB and more).
      uint64_t window = early_rows_ ? std::min<uint64_t>(full_window, kFirstWindowOfLimit) : full_window;
      // A pipeline that can stop early takes what a stream has so far, and
      // waits for more only when that held no whole row.
      int wait = early_rows_ ? InputSource::kTakeReady : InputSource::kWaitForAll;
      // The next window's cuts, scanned by the threads as they ran out of the
      // window before's partitions (instead of all of them waiting at its end);
      // empty unless every one was scanned.
      WindowCuts cuts_ahead;
      for (;;) {
        if (interrupted()) throw Interrupted();
        const auto t_window = trace::now_if(tr);
        Window w = src->window(from, window, wait);
        if (tr) tr->host("read window", "read", t_window, {{"offset", int64_t(from)}, {"bytes", int64_t(w.size)}});
        if (w.size == 0) break;
        // Small windows get partitions small enough that some are ready (a
        // partition is ready once a later one holds a row start); a stream's
        // short window (rows trickling in) gets partitions of its own size.
        const auto partition_bytes = [&](uint64_t window_bytes, uint64_t size) {
          return std::min<uint64_t>(s_.chunk_size, early_rows_ ? std::max<uint64_t>(std::min(window_bytes, size) / 4, 64)
                                                               : std::max<uint64_t>(window_bytes / 4, 4096));
        };
        const uint64_t part = partition_bytes(window, w.size);
        const auto t_split = trace::now_if(tr);
        const bool scanned_ahead = !cuts_ahead.begin.empty() && cuts_ahead.offset == w.offset &&
                                   cuts_ahead.size == w.size && cuts_ahead.chunk == part;
        PartitionedWindow pw = scanned_ahead
                                   ? partition_window(in_.dialect, w, std::move(cuts_ahead), s_.threads)
                                   : partition_window(in_.dialect, w, part, s_.threads, /*fine_tail=*/true);
        cuts_ahead = WindowCuts{};
        if (tr)
          tr->host("split window", "split", t_split,
                   {{"offset", int64_t(w.offset)}, {"partitions", int64_t(pw.ready)},
                    {"scanned ahead", int64_t(scanned_ahead)}});
        stats.chunk_size = std::max(stats.chunk_size, part);
        if (pw.ready == 0) {
          // One row is larger than the window: look further. A stream's
          // short window (its rows still coming): wait for more. A stream
          // holds the row in memory, so a line that never ends would take
          // all of it; a field's length is 32 bits anyway.
          if (w.size >= kMaxRowBytes && !w.at_eof)
            throw InputError(fmt::format(
                "{}: no row ends within {} GiB from line {} on: a row longer than that; check --quote and --escape "
                "(an unclosed quote makes the rest of the input one field), or split the input",
                src->name(), kMaxRowBytes >> 30, line));
          if (w.size >= window || w.at_eof) window = std::min<uint64_t>(2 * window, uint64_t{1} << 40);
          if (early_rows_) wait = InputSource::kWaitForNew;
          continue;
        }
        if (early_rows_) wait = InputSource::kTakeReady;
        // With many threads, mapping the next window (and its page faults)
        // between windows left the others idle: a helper does it meanwhile.
        const uint64_t next_window = std::max(window, std::min(2 * window, full_window));
        uint64_t ahead_bytes = 0;
        if (s_.threads >= kMapAheadThreads && !early_rows_ && !w.at_eof)
          ahead_bytes = src->map_ahead(w.offset + pw.consumed, next_window);
        // The threads take this window's partitions first, then the next
        // window's cuts (once it is mapped), which fill the time the last
        // partitions leave them idle.
        if (ahead_bytes)
          cuts_ahead = cut_window(w.offset + pw.consumed, ahead_bytes, partition_bytes(next_window, ahead_bytes),
                                  s_.threads, /*fine_tail=*/true);
        std::once_flag ahead_mapped;
        Window ahead;
        std::vector<PartitionResult> results(pw.ready);
        parallel_for(pw.ready + cuts_ahead.begin.size(), s_.threads, [&](size_t j, int worker) {
          if (j >= pw.ready) {
            std::call_once(ahead_mapped, [&] { ahead = src->window_ahead(); });
            if (ahead.data) scan_cut(in_.dialect, ahead.data, cuts_ahead, j - pw.ready);
            return;
          }
          const auto t_part = trace::now_if(tr);
          process_partition(*src, w, pw, j, partition_index + j, per_worker_[static_cast<size_t>(worker)], results[j]);
          if (!distinct_types_.empty()) keep_first_rows(results[j].output, distinct_types_, results[j].issue_rows);
          if (sorted_cut_) keep_sorted_first(results[j].output, *sorted_cut_, results[j].issue_rows);
          if (group_top_cut_) keep_group_tops(results[j].output, *group_top_cut_, results[j].issue_rows);
          if (tr)
            tr->host(fmt::format("partition {}", partition_index + j), "partition", t_part,
                     {{"index", int64_t(partition_index + j)}, {"offset", int64_t(w.offset + pw.begin[j])},
                      {"bytes", int64_t((j + 1 == pw.ready ? pw.consumed : pw.end(j)) - pw.begin[j])},
                      {"rows", int64_t(results[j].rows)}});
        });
        if (!ahead.data) cuts_ahead = WindowCuts{};  // not mapped: the next window makes its own
        if (interrupted()) throw Interrupted();  // partitions stop part way on Ctrl-C: their results are not whole
        // Rows go out in input order with each issue in its place among them,
        // as if read one by one: a limit reached before a bad row ends the run
        // before that row, whatever the partitions; the rows before a bad row
        // (or a value that widens a type) are out before the error.
        bool more = true;
        const auto t_out = trace::now_if(tr);
        for (size_t j = 0; j < pw.ready && more; ++j) {
          PartitionResult& r = results[j];
          for (auto& issue : r.issues) issue.line += line;
          line += r.lines;
          stats.rows += r.rows;
          size_t sent = 0;
          auto send_until = [&](size_t end) {
            if (!plan_.scan.aggregate && end > sent) more = sink(r.output, sent, end);
            sent = end;
          };
          for (size_t i = 0; i < r.issues.size(); ++i) {
            send_until(r.issue_rows[i]);
            if (!more) break;
            const RowIssue& issue = r.issues[i];
            if (r.widen && i + 1 == r.issues.size()) throw TypeWidening{issue.field, issue.text, issue};
            if (issue.kind == RowIssue::Padded) {  // kept: its row is among the output
              ++stats.padded;
              on_skip(issue);
              continue;
            }
            if (s_.opts->bad_rows == BadRows::Fail) throw InputError(describe_issue(issue));
            ++stats.skipped;
            on_skip(issue);
          }
          if (more) send_until(r.output.rows());
        }
        if (tr && !plan_.scan.aggregate) tr->host("rows out", "output", t_out, {{"partitions", int64_t(pw.ready)}});
        stats.partitions += pw.ready;
        stats.bytes += pw.consumed;
        s_.progress->add(pw.consumed);
        partition_index += pw.ready;
        if (partition_index - s_.first_partition > s_.partition_count)
          throw ResourceError(fmt::format("this rank's share of the input takes more than {} partitions of --chunk-size "
                                          "{}, past what orders its rows among the ranks'; give a larger --chunk-size",
                                          s_.partition_count, s_.chunk_size));
        if (!more) return;
        if (w.at_eof && pw.consumed == w.size) break;
        if (plan_.scan.aggregate && s_.thread_tables_budget && thread_tables_bytes() > s_.thread_tables_budget) {
          fold_thread_tables();
          ++early_folds_;
          spill_if_over_budget();
          spill_lists_if_over_budget(false);
        }
        from = w.offset + pw.consumed;
        window = next_window;
      }
      src->done();
    }
    if (plan_.scan.aggregate) {
      fold_thread_tables();
      spill_if_over_budget();
      spill_lists_if_over_budget(true);
      if (folded_lists_)
        if (std::optional<StageTiming> spills = folded_lists_->spill_stage()) stats.stages.push_back(*spills);
      const std::string early = early_folds_ ? fmt::format(" ({} more times to bound memory)", early_folds_) : "";
      stats.stages.push_back(StageTiming{"cpu: merge thread tables" + early, "cpu", fold_s_, 0, 0});
      if (merged_) hand_over_groups(stats);
    }
  }

 private:
  // Every aggregate merges in any order to the same bits: the per-worker
  // tables are folded into the result on the threads (folded one after
  // another they took most of a 16-core run with 1M groups), then emptied.
  void fold_thread_tables() {
    const auto t = std::chrono::steady_clock::now();
    trace::Tracer* const tr = s_.tracer;
    parallel_for(per_worker_.size(), s_.threads, [&](size_t w, int) {
      if (per_worker_[w].batches) per_worker_[w].batches->flush_small_groups(*per_worker_[w].groups);
    });
    size_t tables = 0;
    if (merged_) {
      std::vector<PartitionedGroups*> all;
      for (auto& w : per_worker_) all.push_back(w.groups.get());
      tables = all.size();
      merged_->fold(all, s_.threads);
    } else {
      tables = fold_whole_tables();
    }
    fold_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (tr)
      tr->host("merge thread tables", "merge", t,
               {{"tables", int64_t(tables)}, {"groups", int64_t(merged_ ? merged_->size() : global_groups_->size())}});
  }

  // Folds the workers' one-part tables into the result table (and their
  // holistic lists into the result's); returns how many tables held groups.
  size_t fold_whole_tables() {
    std::vector<const GroupTable*> tables;
    std::vector<Worker*> owners;  // of tables[i]
    for (auto& w : per_worker_)
      if (w.groups->size()) {
        tables.push_back(&w.groups->parts()[0]);
        owners.push_back(&w);
      }
    // Where each table's groups went, and the result's own (a fold on
    // threads renumbers them), for the holistic lists; empty: unchanged.
    std::vector<std::vector<uint32_t>> renumbered(tables.size() + 1);
    if (tables.size() == 1 && global_groups_->size() == 0) {
      // One table (one thread, or few rows): it is the result, which saves
      // inserting its groups one by one (a fifth of a one-thread scan).
      *global_groups_ = std::move(owners[0]->groups->parts()[0]);
    } else {
      // The thread tables go before the merged partitions are appended.
      global_groups_->merge_all(tables, s_.threads, [&] {
        for (auto& w : per_worker_) w.groups.reset();
      }, s_.holistic ? &renumbered : nullptr);
    }
    if (s_.holistic) fold_lists(owners, renumbered);
    for (auto& w : per_worker_) w.groups = std::make_unique<PartitionedGroups>(layout_, 1);
    return tables.size();
  }

  // The folded groups past their budget go to temporary files, part by part.
  void spill_if_over_budget() {
    if (!merged_ || !s_.groups_budget || merged_->memory_bytes() <= s_.groups_budget) return;
    const auto t = std::chrono::steady_clock::now();
    if (!spilled_) spilled_ = std::make_unique<SpilledGroups>(*layout_, merged_->parts().size(), s_.groups_budget);
    spilled_->spill(merged_->parts(), s_.threads);
    spill_s_ += seconds_since(t);
    if (s_.tracer) s_.tracer->host("spill groups", "stage", t, {{"bytes", int64_t(spilled_->bytes_written())}});
  }

  // The folded holistic lists past their budget (a quarter of the groups')
  // go to temporary files; `rest`: the end of the scan.
  void spill_lists_if_over_budget(bool rest) {
    if (folded_lists_ && s_.groups_budget)
      folded_lists_->spill_if_over(s_.groups_budget / 4, rest, global_groups_->size(), s_.threads, s_.tracer);
  }

  // The folded parts become the result: written from here, in key order,
  // when the driver takes groups where they are; else appended to its table.
  void hand_over_groups(ScanStats& stats) {
    if (spilled_) {  // all of them through files: one part's groups in memory at a time
      WCSV_EXPECTS(s_.device_result, "spilled groups need a result written from where they are");
      spilled_->spill(merged_->parts(), s_.threads);
      const auto t = std::chrono::steady_clock::now();
      std::unique_ptr<OrderedGroups> ordered = spilled_->sorted(plan_, s_.threads, result_run_rows(*s_.opts));
      const double sort_s = seconds_since(t);
      stats.stages.push_back(StageTiming{
          fmt::format("result: spill ({} times, {})", spilled_->spills(), spilled_->describe_bytes()),
          "cpu", spill_s_, spilled_->bytes_written(), 0});
      stats.stages.push_back(StageTiming{"result: aggregate and sort parts", "cpu", sort_s, 0, 0});
      if (s_.tracer) s_.tracer->host("result: aggregate and sort parts", "stage", t, {{"groups", int64_t(ordered->size())}});
      (*s_.device_result)(*ordered);
      return;
    }
    if (!s_.device_result) {
      global_groups_->append_disjoint(merged_->parts(), s_.threads);
      return;
    }
    for (GroupTable& part : merged_->parts()) part.drop_index();
    const auto t = std::chrono::steady_clock::now();
    SortedHostGroups ordered(plan_, merged_->tables(), nullptr, s_.threads, result_run_rows(*s_.opts),
                             sorts_by_first_row(plan_));
    stats.stages.push_back(StageTiming{"result: sort", "cpu", seconds_since(t), 0, 0});
    if (s_.tracer) s_.tracer->host("result: sort", "stage", t, {{"groups", int64_t(ordered.size())}});
    (*s_.device_result)(ordered);
  }

  // Aggregation a batch of rows at a time (see cpu/aggregate_batches.hpp)
  // where every holistic argument listed is a column as read.
  void setup_batches() {
    const ScanPlan& scan = plan_.scan;
    if (!g_row_batches.load() || !scan.aggregate || in_.dialect.delimiter_len != 1) return;
    AggregateBatchPlan b;
    // The scan's keys are the agg's keys, then (with holistic aggregates) the arguments listed.
    for (size_t k = 0; k < key_direct_.size(); ++k) {
      if (k < plan_.group_keys) {
        b.key_slots.push_back(key_direct_[k] >= 0 ? key_direct_[k] : AggregateBatchPlan::kComputed);
        b.key_progs.push_back(key_progs_[k]);
      } else {
        if (key_direct_[k] < 0) return;
        b.list_slots.push_back(key_direct_[k]);
      }
    }
    if (!s_.holistic && !b.list_slots.empty()) return;
    // arg*_direct_: a slot, -1 computed, -2 none.
    auto arg_slot = [](int direct) {
      return direct >= 0 ? direct : direct == -1 ? AggregateBatchPlan::kComputed : AggregateBatchPlan::kNoArg;
    };
    for (size_t a = 0; a < scan.aggs.size(); ++a) {
      b.arg0_slots.push_back(arg_slot(arg0_direct_[a]));
      b.arg1_slots.push_back(arg_slot(arg1_direct_[a]));
      b.arg0_progs.push_back(arg0_[a]);
      b.arg1_progs.push_back(arg1_[a]);
    }
    b.dialect = &in_.dialect;
    b.ncols = static_cast<uint32_t>(ncols_);
    b.col_to_slot = col_to_slot_;
    b.slot_types = scan.slot_types;
    b.slot_inferred = slot_inferred_;
    b.nslots = static_cast<uint32_t>(scan.slot_count());
    b.joins = joins_;
    b.null_tokens = null_tokens_;
    b.filter = filter_;
    b.has_filter = has_filter_;
    b.layout = layout_;
    batch_plan_ = std::move(b);
  }

  size_t thread_tables_bytes() const {
    size_t n = 0;
    for (const auto& w : per_worker_) {
      n += w.groups->memory_bytes();
      for (const ArgList& l : w.lists) n += l.memory_bytes();
    }
    return n;
  }

  struct Worker {
    // One of each per row in flight: a row's strings stay valid until its
    // group update, kRowsInFlight - 1 rows later (see Pending).
    std::vector<char> scratch[kRowsInFlight];    // evaluator scratch (lower/upper)
    std::vector<char> unescaped[kRowsInFlight];  // unescaped fields of a row
    std::vector<char> join_scratch;  // the join keys' strings while a row's lookup rows are found
    std::unique_ptr<PartitionedGroups> groups;
    std::unique_ptr<AggregateBatches> batches;  // when the plan's aggregation can take rows a batch at a time
    std::vector<ArgList> lists;  // holistic aggregates: each argument's values, with their groups in `groups`
  };
  struct Span {
    uint64_t b, e;
    uint8_t flags;
  };
  // A row whose keys and arguments are evaluated and whose slot is being
  // prefetched: two rows later its group is prefetched, and its lookup and
  // updates run a row after that, which hides most of the two cache misses
  // of a large group table (slot, then group; one row ahead was too short
  // for the slot).
  struct Pending {
    std::vector<Value> keys, x, y;
    uint64_t hash = 0, order = 0;
    bool valid = false;
  };

  // The workers' holistic lists join the result's (renumbered[i] says where
  // the groups of owners[i] went, renumbered.back() where the result's own
  // went); no value is copied, and the workers start new lists.
  void fold_lists(const std::vector<Worker*>& owners, const std::vector<std::vector<uint32_t>>& renumbered) {
    std::vector<std::vector<ArgList>*> from;
    for (Worker* w : owners) from.push_back(&w->lists);
    folded_lists_->fold(from, renumbered, global_groups_->size(), s_.threads);
    for (auto& w : per_worker_) w.lists = HolisticGroups::lists_for(plan_);
  }

  void finish_pending(PartitionedGroups& groups, Pending& p, std::vector<ArgList>& lists) {
    if (!p.valid) return;
    GroupTable& table = groups.part_for(p.hash);
    char* block = table.find_or_insert(p.keys.data(), p.hash);
    if (!lists.empty()) {
      const uint32_t g = static_cast<uint32_t>(table.group_of(block));
      for (size_t a = 0; a < lists.size(); ++a) {
        const Value& v = p.keys[plan_.group_keys + a];
        if (!v.null) lists[a].add(g, v);
      }
    }
    bool strings = false;
    for (size_t a = 0; a < layout_->aggs.size(); ++a)
      strings |= agg_update(layout_->aggs[a], block, p.x[a], p.y[a], p.order);
    if (strings) table.stabilize_strings(block);
    p.valid = false;
  }

  void process_partition(const InputSource& src, const Window& w, const PartitionedWindow& pw, size_t j,
                         uint64_t global_index, Worker& wk, PartitionResult& out) {
    uint64_t pos = pw.first_row[j];
    if (pos == kNoRow) return;
    const uint64_t end = pw.end(j);
    const auto& scan = plan_.scan;
    const size_t nslots = scan.used_columns.size();
    PartitionedGroups* table = scan.aggregate ? wk.groups.get() : nullptr;
    const size_t cut_at = sorted_cut_ ? sorted_cut_at(sorted_cut_->keep) : 0;  // rows at which the table is cut
    if (!table) {
      out.output.columns = plan_.scan_output;
      // Room for a row per line (untouched room costs no memory): growing by
      // doubling would copy the rows and fault their pages in twice.
      const uint64_t lines = count_byte(w.data + pos, end - pos, '\n') + 1;
      out.output.cells.reserve(std::min<uint64_t>(lines, sorted_cut_ ? cut_at : lines) * out.output.width());
    }
    std::vector<Span> spans(nslots);
    std::vector<Value> slots(scan.slot_count()), row_out(out_progs_.size());
    SortedCutBar cut_bar;  // the partition's rows that a sort then limit keeps so far, at their last
    GroupTopBars top_bars;  // and those of each group's top
    size_t top_cut_at = kGroupTopCutRows;
    Pending pending[kRowsInFlight];
    for (auto& p : pending) {
      p.keys.resize(scan.keys.size());
      p.x.resize(scan.aggs.size());
      p.y.resize(scan.aggs.size());
    }
    // The buffers of the row being parsed; earlier rows' are `back` places
    // before (kRowsInFlight - 1 back is the oldest, outstanding still).
    unsigned cur = 0;
    auto before = [&](unsigned back) { return (cur + kRowsInFlight - back) % kRowsInFlight; };
    auto finish_outstanding = [&](PartitionedGroups& groups) {
      for (unsigned back = kRowsInFlight - 1; back > 0; --back) finish_pending(groups, pending[before(back)], wk.lists);
    };
    const bool fail_fast = s_.opts->bad_rows == BadRows::Fail;
    const bool pad_short_rows = s_.opts->bad_rows == BadRows::Pad;
    uint64_t local_line = 0;  // lines from the partition's first row to the current row
    uint32_t row_in_partition = 0;
    const bool multi_column = ncols_ > 1;
    // A partition whose text the partitioner could not pass (a NUL, invalid
    // UTF-8, or a character cut at its start or end) is checked again, from
    // its first row: valid UTF-8 without a NUL, its rows need no check each. The
    // row that runs past its end gets one still, so a character cut at the
    // end (no line end after it, bytes after the end: that row's) is no
    // problem of the others.
    bool odd_partition = pw.maybe_bad_text[j] != 0;
    if (odd_partition) {
      uint64_t at = 0;
      const uint64_t n = end - pos;
      const ByteIssue b = find_byte_issue_fast(w.data + pos, n, &at);
      const char* tail = w.data + pos + at;
      const bool cut_at_end = b == ByteIssue::InvalidUtf8 && n - at < 4 && end < w.size &&
                              !std::memchr(tail, '\n', n - at) && !std::memchr(tail, '\r', n - at);
      odd_partition = b != ByteIssue::None && !cut_at_end;
    }
    const StrRef file_name{src.name().data(), static_cast<uint32_t>(src.name().size())};
    AggregateBatches* const batches = odd_partition ? nullptr : wk.batches.get();
    // Rows the general path takes before batches are tried again: more after
    // each batch that took no row, so that input of quoted rows is not split twice.
    uint32_t general_rows = 0, general_backoff = 1;
    while (pos < end) {
      if (batches && general_rows == 0) {
        const BatchProgress b = batches->run(w.data, pos, end, w.size, *table, global_index << 32,
                                             row_in_partition, file_name, wk.lists);
        pos = b.pos;
        local_line += b.rows;
        row_in_partition += b.rows;
        if (pos >= end || interrupted()) break;
        general_backoff = b.rows ? 1 : std::min<uint32_t>(2 * general_backoff, 1024);
        general_rows = general_backoff;
      }
      if (general_rows) --general_rows;
      // Ctrl-C within a partition too: with many aggregates per row a window can take many seconds.
      if ((row_in_partition & 1023) == 0 && interrupted()) break;
      const size_t rows_before = out.output.rows();  // the output rows before this row's
      auto add_issue = [&](RowIssue issue) {
        out.issues.push_back(std::move(issue));
        out.issue_rows.push_back(rows_before);
      };
      uint32_t nfields = 0;
      bool last_empty = false;
      auto sink = [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
        if (i < ncols_) {
          const int slot = col_to_slot_[i];
          if (slot >= 0) spans[static_cast<size_t>(slot)] = Span{b, e, f};
        }
        nfields = i + 1;
        last_empty = b == e && f == 0;
      };
      RowResult r;
      if (!parse_plain_row(in_.dialect, w.data, pos, w.size, sink, r))
        r = parse_row(in_.dialect, w.data, pos, w.size, w.at_eof, sink);
      // A trailing delimiter (one extra, empty, unquoted field) is tolerated.
      if (nfields == ncols_ + 1 && last_empty) nfields = static_cast<uint32_t>(ncols_);
      WCSV_EXPECTS(!r.incomplete, "a ready partition's row ran past its window");
      const uint64_t row_begin = pos, row_end = r.next;
      const uint64_t row_line = local_line;
      pos = r.next;
      local_line += r.lines;
      if (r.comment || (r.empty && multi_column)) continue;
      ++row_in_partition;
      // NUL bytes and invalid UTF-8 make bad rows. Only rows of a partition in
      // which the partitioner's pass saw a byte 0 or >= 0x80 (and the last row,
      // which may run into such a partition) are checked: ASCII input pays a
      // branch per row.
      if (__builtin_expect(odd_partition || row_end > end, 0)) {
        const ByteFound b = check_bytes(pw, j, w.data, row_begin, row_end);
        record_byte_issue(b.issue, b.pos, r);  // the first problem of the row by position
      }
      // --bad-rows pad: a well-formed row short of fields reads nulls for the missing ones.
      const bool padded = pad_short_rows && nfields < ncols_ && r.error == RowError::None && !r.empty;
      if (r.error != RowError::None || (nfields != ncols_ && !padded && !(r.empty && !multi_column))) {
        add_issue(make_row_issue(in_.dialect, src.name(), w.data, row_begin, row_end, row_line, r, nfields, ncols_));
        if (fail_fast) break;
        continue;
      }
      if (padded) {
        for (size_t k = 0; k < nslots; ++k)
          if (static_cast<uint32_t>(scan.used_columns[k]) >= nfields) spans[k] = Span{row_end, row_end, 0};
      }
      // Parse the used fields into typed slots.
      bool bad = false;
      std::vector<char>& unescaped = wk.unescaped[cur];
      unescaped.clear();
      for (size_t k = 0; k < nslots && !bad; ++k) {
        const Span sp = r.empty ? Span{row_begin, row_begin, 0} : spans[k];
        const char* p = w.data + sp.b;
        uint32_t n = static_cast<uint32_t>(sp.e - sp.b);
        if (sp.flags & kFieldEscaped) {
          // Unescaped text is never longer; reserve the whole row once.
          if (unescaped.capacity() < row_end - row_begin) unescaped.reserve(2 * (row_end - row_begin));
          const size_t at = unescaped.size();
          unescaped.resize(at + n);
          n = unescape_field(in_.dialect, p, n, unescaped.data() + at);
          p = unescaped.data() + at;
        }
        if (n == 0 || is_null_token(p, n)) {
          slots[k] = Value::make_null();
          continue;
        }
        if (slot_text_[k]) {  // printed as written
          slots[k].text = p;
          slots[k].text_len = n;
        }
        if (!field_to_value(scan.slot_types[k], p, n, &slots[k], slot_inferred_[k])) {
          const int col = scan.used_columns[k];
          RowIssue issue = make_value_issue(in_.dialect, src.name(), w.data, row_begin, row_end, row_line, sp.b,
                                            col, std::string(p, n), in_.column_names[static_cast<size_t>(col)],
                                            scan.slot_types[k]);
          if (!s_.type_from_schema[static_cast<size_t>(col)]) {
            add_issue(issue);
            out.widen = true;
            out.rows = row_in_partition;
            out.lines = local_line;
            return;
          }
          add_issue(issue);
          bad = true;
        }
      }
      if (bad) {
        if (fail_fast) break;
        continue;
      }
      if (padded)  // reported once its values are known to be good, as the row is kept
        add_issue(make_padded_issue(in_.dialect, src.name(), w.data, row_begin, row_end, row_line, nfields, ncols_));
      // Each joined copy of the row (the row itself without joins) is filtered and aggregated or output.
      bool stop = false;
      auto one_row = [&]() {
        EvalContext ctx = make_eval_context(wk.scratch[cur].data(), kEvalScratch);
        ctx.file = file_name;
        if (has_filter_) {
          const Value keep = eval_program(filter_, slots.data(), ctx);
          if (ctx.status != EvalStatus::Ok) {
            add_issue(eval_issue(src, w, row_begin, row_end, row_line, ctx, "the filter '" + scan.filter.text + "'"));
            stop = fail_fast;
            return !stop;
          }
          if (keep.null || keep.i == 0) return true;
        }
        if (table) {
          Pending& p = pending[cur];
          for (size_t k = 0; k < p.keys.size(); ++k)
            p.keys[k] = key_direct_[k] >= 0 ? slots[static_cast<size_t>(key_direct_[k])]
                                             : eval_program(key_progs_[k], slots.data(), ctx);
          const Value none = Value::make_null();
          for (size_t a = 0; a < p.x.size(); ++a) {
            p.x[a] = arg_value(arg0_direct_[a], arg0_[a], slots, ctx, none);
            p.y[a] = arg_value(arg1_direct_[a], arg1_[a], slots, ctx, none);
          }
          p.hash = table->hash_keys(p.keys.data());
          p.order = (global_index << 32) | row_in_partition;
          p.valid = ctx.status == EvalStatus::Ok;
          table->prefetch(p.hash);
          const Pending& ahead = pending[before(kRowsInFlight - 2)];
          if (ahead.valid) table->prefetch_group(ahead.hash);
          finish_pending(*table, pending[before(kRowsInFlight - 1)], wk.lists);
          cur = before(kRowsInFlight - 1);  // its buffers are free; the later rows' are not
        } else {
          for (size_t k = 0; k < out_progs_.size(); ++k)
            row_out[k] = out_direct_[k] >= 0 ? slots[static_cast<size_t>(out_direct_[k])]
                                             : eval_program(out_progs_[k], slots.data(), ctx);
          // A bad row is not output; nor is one that a cut would drop.
          if (ctx.status == EvalStatus::Ok && (!sorted_cut_ || cut_bar.admits(row_out.data(), *sorted_cut_)) &&
              (!group_top_cut_ || top_bars.admits(row_out.data(), *group_top_cut_)))
            out.output.append_owned(row_out.data());
          if (sorted_cut_ && out.output.rows() >= cut_at)
            keep_sorted_first(out.output, *sorted_cut_, out.issue_rows, &cut_bar);
          if (group_top_cut_ && out.output.rows() >= top_cut_at)  // the next cut after as many rows again
            top_cut_at = std::max<size_t>(
                2 * keep_group_tops(out.output, *group_top_cut_, out.issue_rows, &top_bars), kGroupTopCutRows);
        }
        if (ctx.status != EvalStatus::Ok) {
          add_issue(eval_issue(src, w, row_begin, row_end, row_line, ctx, failing_program(slots, file_name)));
          stop = fail_fast;
        }
        return !stop;
      };
      if (joins_.empty()) {
        one_row();
      } else {
        EvalContext ctx = make_eval_context(wk.join_scratch.data(), kEvalScratch);
        for_each_joined_row(joins_.data(), static_cast<int>(joins_.size()), slots.data(), ctx, one_row);
        if (ctx.status != EvalStatus::Ok) {
          add_issue(eval_issue(src, w, row_begin, row_end, row_line, ctx, failing_join(slots)));
          stop = fail_fast;
        }
        // The copies' pending updates read this row's buffers, which the next row reuses.
        if (table) finish_outstanding(*table);
      }
      if (stop) break;
    }
    if (table) finish_outstanding(*table);
    out.rows = row_in_partition;
    out.lines = local_line;
  }

  // The NUL / UTF-8 check of a row of partition j, when a partition it lies in
  // has a byte 0 or >= 0x80 (as check_row_bytes, core/tokenize.hpp, with the
  // SSE2 search). Out of line, so the row loop is compiled as it would be
  // without it; the result comes back in registers.
  struct ByteFound {
    ByteIssue issue;
    uint64_t pos;
  };
  __attribute__((noinline)) static ByteFound check_bytes(const PartitionedWindow& pw, size_t j, const char* data,
                                                         uint64_t row_begin, uint64_t row_end) {
    bool odd = pw.maybe_bad_text[j] != 0;
    for (size_t k = j + 1; !odd && k < pw.maybe_bad_text.size() && pw.begin[k] < row_end; ++k)
      odd = pw.maybe_bad_text[k] != 0;
    uint64_t at = 0;
    const ByteIssue b = odd ? find_byte_issue_fast(data + row_begin, row_end - row_begin, &at) : ByteIssue::None;
    return {b, row_begin + at};
  }

  static Value arg_value(int direct, const ProgramView& prog, const std::vector<Value>& slots, EvalContext& ctx,
                         const Value& none) {
    if (direct >= 0) return slots[static_cast<size_t>(direct)];
    if (direct == -2) return none;
    return eval_program(prog, slots.data(), ctx);
  }

  // A join's view of its lookup table and the plan's key programs.
  static JoinView join_view(const ScanJoin& sj, const ScanSettings& s) {
    WCSV_EXPECTS(s.lookups != nullptr, "a scan with joins runs without its lookup tables");
    const size_t join = static_cast<size_t>(sj.join);
    return host_join_view(s.plan->joins[join], (*s.lookups)[join], sj.keys, sj.first_slot);
  }

  // The join key that fails on this row's slots, as messages name it.
  std::string failing_join(const std::vector<Value>& slots) const {
    std::vector<char> scratch(kEvalScratch);
    for (const ScanJoin& sj : plan_.scan.joins)
      for (const Program& k : sj.keys) {
        EvalContext ctx = make_eval_context(scratch.data(), kEvalScratch);
        eval_program(k.view(), slots.data(), ctx);
        if (ctx.status != EvalStatus::Ok) return "the join key '" + k.text + "'";
      }
    return "a join key";
  }

  // The first key, aggregate argument or output that fails on this row's
  // slots, as messages name it (the filter is named where it runs). Evaluated
  // again only for a row that failed, so the row loop pays nothing for it.
  std::string failing_program(const std::vector<Value>& slots, StrRef file_name) const {
    std::vector<char> scratch(kEvalScratch);
    auto fails = [&](const Program& p) {
      if (p.empty()) return false;
      EvalContext ctx = make_eval_context(scratch.data(), kEvalScratch);
      ctx.file = file_name;
      eval_program(p.view(), slots.data(), ctx);
      return ctx.status != EvalStatus::Ok;
    };
    const ScanPlan& scan = plan_.scan;
    // A distinct's columns are its keys here, named as the row-by-row distinct's output.
    const std::string key_what = sorts_by_first_row(plan_) ? "the output column '" : "'";
    for (const Program& k : scan.keys)
      if (fails(k)) return key_what + k.text + "'";
    for (const AggSpec& a : scan.aggs)
      if (fails(a.arg0) || fails(a.arg1)) return "'" + a.text + "'";
    for (const Program& o : scan.outputs)
      if (fails(o)) return "the output column '" + o.text + "'";  // its name: a select's alias, else its text
    return "an expression";
  }

  RowIssue eval_issue(const InputSource& src, const Window& w, uint64_t b, uint64_t e, uint64_t line,
                      const EvalContext& ctx, const std::string& what) const {
    return make_eval_issue(in_.dialect, src.name(), w.data, b, e, line, ctx, what, kEvalScratch,
                           s_.opts->bad_rows == BadRows::Skip);
  }

  bool is_null_token(const char* p, uint32_t n) const {
    for (const auto& t : null_tokens_)
      if (t.size() == n && std::memcmp(t.data(), p, n) == 0) return true;
    return false;
  }

  InputSet& in_;
  const ScanSettings& s_;
  const Plan& plan_;
  GroupTable* global_groups_;
  // With keys and nothing listed: the workers' tables fold into these parts.
  std::optional<PartitionedGroups> merged_;
  std::unique_ptr<SpilledGroups> spilled_;  // parts of merged_ spilled past s_.groups_budget
  double spill_s_ = 0;
  std::optional<FoldedLists> folded_lists_;  // with holistic aggregates: their lists
  double fold_s_ = 0;      // time folding the thread tables into global_groups_
  uint64_t early_folds_ = 0;  // folds before the end, each when the tables passed their budget
  const GroupLayout* layout_ = nullptr;
  size_t ncols_ = 0;
  std::vector<int> col_to_slot_;
  std::vector<bool> slot_inferred_;  // per slot: type inferred, not from --schema
  ProgramView filter_{};
  bool has_filter_ = false;
  std::vector<JoinView> joins_;
  bool stops_early_ = false;  // a limit may end the scan before the input does
  bool early_rows_ = false;   // first rows wanted soon: a limit, or rows that stream out
  std::vector<int> out_direct_;  // per scan output: the slot it only reads, else -1
  std::vector<Type> distinct_types_;  // per scan output, when the rows go to a distinct as they are
  std::optional<SortedCut> sorted_cut_;  // when the rows go to a sort by their columns, then a limit
  std::optional<GroupTopCut> group_top_cut_;  // when the rows go to a top of each group by their columns
  static constexpr size_t kGroupTopCutRows = 4096;  // a partition's first cut of its groups' tops
  std::vector<char> slot_text_;  // per slot: its values carry their field's text
  std::vector<ProgramView> key_progs_, arg0_, arg1_, out_progs_;
  std::vector<int> key_direct_, arg0_direct_, arg1_direct_;
  std::vector<Worker> per_worker_;
  std::vector<std::string> null_tokens_;
  std::optional<AggregateBatchPlan> batch_plan_;
};

class CpuExecutor : public ScanExecutor {
 public:
  void scan(InputSet& in, const ScanSettings& settings, GroupTable* groups, const RowBatchSink& sink,
            const std::function<void(const RowIssue&)>& on_skip, ScanStats& stats) override {
    CpuScan scan(in, settings, groups);
    scan.run(sink, on_skip, stats);
  }
};

}  // namespace

std::unique_ptr<ScanExecutor> make_cpu_executor() { return std::make_unique<CpuExecutor>(); }

void set_cpu_row_batches(bool on) { g_row_batches.store(on); }

}  // namespace warpcsv
