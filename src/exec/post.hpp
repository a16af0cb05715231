// The stages after the scan (HAVING-style filter, select, sort, limit, dropna,
// assert) over rows that arrive in order, ending in a RowWriter.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "warpcsv/output.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

class PostPipeline {
 public:
  // `note` takes the messages of failed asserts (default: stderr).
  PostPipeline(const Plan& plan, RowWriter& writer, int threads = 1,
               std::function<void(const std::string&)> note = {});
  // One row of the post stages' input schema. Returns false once no more
  // rows can change the output (a limit was reached).
  bool push(const Value* row);
  // Every row of `t`, as push() would take them; with no post stages the
  // writer's formatting of a large table is spread over the threads.
  // Returns false once no more rows can change the output.
  bool push_all(const Table& t);
  // Whether rows may skip push(): no post stages, and a writer whose rows
  // are formatted apart (format_rows), so threads can format them.
  bool formats_apart() const { return plan_.post.empty() && writer_.can_format_rows(); }
  // Formats every row of `t` into `parts`, on the threads (formats_apart()).
  void format_all(const Table& t, std::vector<std::string>& parts) const;
  // Formats one row of the post stages' input (formats_apart()) into `out`.
  void format_row(std::string& out, const Value* row) const { writer_.format_rows(out, row, 1, row_width_); }
  // Writes parts format_all made, in order, after everything written before.
  void write_parts(const std::vector<std::string>& parts);
  // Flushes buffered stages (sort) and ends the writer.
  void finish();
  bool assert_failed() const { return assert_failures_ > 0; }

 private:
  bool push_from(size_t stage, const Value* row);
  // Sorts sort stage i's buffered rows in place (stable, by its keys).
  void sort_buffer(size_t i);
  // A sort followed at once by `limit n` keeps its first n rows only: when
  // its buffer passes twice that, it is sorted and cut to n (the rows kept
  // came before any later one, so the final stable sort gives the same
  // first n). Without it, `sort x | limit 10` would hold every row.
  void prune(size_t i);

  const Plan& plan_;
  RowWriter& writer_;
  std::vector<Table> sort_buffers_;  // per stage (used by Sort stages)
  std::vector<int64_t> keep_rows_;   // per Sort stage: the limit right after it, or -1
  std::vector<int64_t> limit_seen_;
  std::vector<char> scratch_;
  uint64_t assert_failures_ = 0;
  bool done_ = false;
  int threads_;
  size_t row_width_;  // values in a row of the post stages' input
  std::function<void(const std::string&)> note_;
};

// Whether post stage `stage` of `plan` is a limit that ends the whole input
// once reached: one with no sort or assert before it (they need every row).
bool limit_ends_input(const Plan& plan, size_t stage);

}  // namespace warpcsv
