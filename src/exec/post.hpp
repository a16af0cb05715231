// The stages after the scan (HAVING-style filter, select, sort, limit, dropna,
// assert, a later agg) over rows that arrive in order, ending in a RowWriter.
#pragma once
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/lookup_table.hpp"
#include "result/post_agg.hpp"
#include "result/row_key.hpp"
#include "result/top_rows.hpp"
#include "runtime/parallel.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

struct EvalContext;

// Whether the plan's first stage after the scan is a distinct of the scan's
// rows as they are (every column, in order).
bool distinct_of_scanned_rows(const Plan& plan);

class PostPipeline {
 public:
  // `note` takes the messages of failed asserts (default: stderr).
  // `lookups`: the join stages' tables (Plan::joins), when the plan has any.
  // `first_stage`: the stages before it are done where the rows come from
  // (groups that come in their first rows' order skip that sort).
  PostPipeline(const Plan& plan, RowWriter& writer, int threads = 1,
               std::function<void(const std::string&)> note = {}, const LookupTables* lookups = nullptr,
               size_t first_stage = 0);
  // One row of the post stages' input schema. Returns false once no more
  // rows can change the output (a limit was reached).
  bool push(const Value* row);
  // Every row of `t`, as push() would take them. Returns false once no more
  // rows can change the output.
  bool push_all(const Table& t);
  // Rows [begin, end) of `t`, as push() would take them; a distinct of the
  // rows as they are looks a block's keys up with their slots prefetched.
  bool push_rows(const Table& t, size_t begin, size_t end);
  // The same, but given all of `t`'s rows, a sort of the scanned rows (the
  // first stage, no limit after it) takes the table itself: its rows are
  // sorted where the scan made them, not copied.
  bool take_rows(Table& t, size_t begin, size_t end);
  // Whether rows may skip push(): post stages that each take one row at a
  // time on their own (row_local_stages), and a writer whose rows are
  // formatted apart (format_rows), so threads can run the stages and format
  // the rows (format_in_parts).
  bool formats_apart() const { return row_local_stages_ && writer_.can_format_rows(); }
  // The scratch of format_row on one thread.
  struct RowScratch {
    std::vector<char> eval;
    std::vector<std::vector<Value>> rows;  // per stage: its output row
  };
  RowScratch row_scratch() const;
  // Runs the post stages (formats_apart()) on one row of their input and
  // formats the rows that come out into `out`; returns the stage whose
  // evaluation failed (its rows before the failure formatted), else -1.
  int format_row(std::string& out, const Value* row, RowScratch& scratch) const;
  // Writes parts of formatted rows, in order, after everything written before.
  void write_parts(const std::vector<std::string>& parts);
  // No post stages and a delimited writer: its separator and escaping in
  // `text`, so rows formatted elsewhere (on a GPU) match format_row's.
  bool delimited_text(DelimitedText* text) const {
    return plan_.post.empty() && formats_apart() && writer_.delimited_text(text);
  }
  // Writes rows formatted elsewhere, after everything written before.
  void write_text(const char* bytes, size_t n) { writer_.write_formatted(bytes, n); }
  // Flushes buffered stages (sort) and ends the writer.
  void finish();
  bool assert_failed() const { return assert_failures_ > 0; }

 private:
  bool push_from(size_t stage, const Value* row);
  int format_from(size_t stage, const Value* row, std::string& out, RowScratch& scratch, EvalContext& ctx) const;
  // A join stage: the row once per matching lookup row, into the next stage.
  bool push_joined(size_t stage, const Value* row);
  // Sorts sort stage i's buffered rows in place (stable, by its keys).
  void sort_buffer(size_t i);
  // Whether `row` may be among the rows sort stage i keeps: it sorts before
  // the last row kept at the last prune (a later row that ties comes after
  // it), or there is no such row yet.
  bool before_bar(size_t i, const Value* row);
  // A sort followed at once by `limit n` keeps its first n rows only: when
  // its buffer passes twice that, it is sorted and cut to n (the rows kept
  // came before any later one, so the final stable sort gives the same
  // first n). Without it, `sort x | limit 10` would hold every row.
  void prune(size_t i);
  // The sort of the scanned rows in sort_parts_: ordered on threads, then
  // through the stages after it, formatted on threads where they allow.
  void finish_sorted_parts();
  // The part that takes rows pushed one at a time (a new one after a part taken whole).
  Table& open_part();

  const Plan& plan_;
  RowWriter& writer_;
  const LookupTables* lookups_;
  std::vector<Table> sort_buffers_;  // per stage (used by Sort stages)
  std::vector<std::unique_ptr<TopRowsPerGroup>> tops_;  // per stage (used by Top stages)
  std::vector<std::unique_ptr<PostAggregate>> aggs_;    // per stage (used by Agg stages)
  std::vector<RowKeySet> seen_;                         // per stage: the rows a Distinct stage has passed
  std::vector<std::vector<Type>> output_types_;          // per stage
  std::string row_key_;                                  // a Distinct row's key, reused
  bool distinct_of_scanned_rows_ = false;
  std::string block_keys_;                               // push_rows: a block's row keys, one after another
  std::vector<size_t> block_key_ends_;
  std::vector<uint64_t> block_hashes_;
  std::vector<Value> stage_values_;                      // a Top row's keys and order, reused
  std::vector<int64_t> keep_rows_;   // per Sort stage: the limit right after it, or -1
  std::vector<Table> sort_bars_;     // per such stage, after a prune: the keys of its last row kept
  std::vector<std::vector<Type>> sort_types_;  // per stage: the types of its expressions
  std::vector<char> bar_scratch_;    // a row's keys to compare with the bar (the row's strings may be in scratch_)
  std::vector<int64_t> limit_seen_;
  std::vector<std::vector<Value>> stage_rows_;  // per stage: the row it passes on (a select's, an unfold's)
  std::vector<char> scratch_;
  uint32_t scratch_at_ = 0;  // scratch_'s bytes the current row's stages so far made (its strings)
  uint64_t assert_failures_ = 0;
  bool done_ = false;
  int threads_;
  size_t first_stage_;  // the stages before it were done where the rows came from
  size_t row_width_;  // values in a row of the post stages' input
  // Every post stage maps a row to rows of its own, in order, with no state
  // between rows: a filter, select, dropna or unfold.
  bool row_local_stages_ = true;
  bool row_local_after_first_ = true;  // the same of the stages after the first
  // The first stage sorts the scanned rows (no limit after it): its rows, in
  // input order, in the tables the scan made (taken whole) and in tables of
  // rows pushed one at a time.
  bool sorts_parts_ = false;
  std::vector<Table> sort_parts_;
  bool part_open_ = false;  // the last part takes pushed rows
  std::function<void(const std::string&)> note_;
};

// How many parts format_in_parts cuts n rows into for `threads` threads: a
// part per thread at least, 32K rows a part at most.
inline size_t format_parts(size_t n, int threads) {
  constexpr size_t kRowsPerPart = 1 << 15;
  return std::max<size_t>(
      1, std::min(n, std::max<size_t>(static_cast<size_t>(std::max(1, threads)), (n + kRowsPerPart - 1) / kRowsPerPart)));
}

// Formats n rows on up to `threads` threads into format_parts(n, threads)
// `parts`: fill(begin, end, part, out) appends the text of rows [begin, end)
// to `out`. Each part's text grows in a string of its thread's own:
// neighbouring strings of `parts` share cache lines, and every append
// writes the size.
template <class Fill>
void format_in_parts(size_t n, int threads, std::vector<std::string>& parts, Fill&& fill) {
  const size_t count = format_parts(n, threads);
  parts.resize(count);
  parallel_for(count, threads, [&](size_t p, int) {
    std::string out;
    out.swap(parts[p]);
    out.clear();
    fill(n * p / count, n * (p + 1) / count, p, out);
    parts[p].swap(out);
  });
}

// Post stage `st`'s expression failed on a row.
[[noreturn]] void throw_evaluation_failed(const PostStage& st);

// Whether post stage `stage` of `plan` is a limit that ends the whole input
// once reached: one with no sort or assert before it (they need every row).
bool limit_ends_input(const Plan& plan, size_t stage);

}  // namespace warpcsv
