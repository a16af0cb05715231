// The aggregate result, written a run of groups at a time in output order
// (the group keys ascending, nulls last): each group is finalized (its
// aggregates, then the agg stage's items) only when its run is written, so
// no more than one run of result rows is held at once, whatever the groups.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "result/order.hpp"
#include "warpcsv/core/field_text.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

class GroupTable;
class PostPipeline;
struct GroupLayout;

// A run of groups in output order: row i is group order[i] (order null:
// group i) of the arrays below.
struct GroupRun {
  size_t n = 0;
  const uint32_t* order = nullptr;
  KeyRows keys;  // by group
  // Non-null: string keys hold an offset from here in StrRef::ptr.
  const char* string_base = nullptr;
  // Group g's aggregate states (GroupLayout) at states + g * state_stride,
  // or (keys.rows set) at keys.rows[g] + state_offset; or, with neither,
  // written into a block by fill_state(g, block).
  const char* states = nullptr;
  size_t state_stride = 0;
  size_t state_offset = 0;
  std::function<void(size_t g, char* block)> fill_state;
  // Group g's holistic aggregates at holistic[g * plan.holistic.size()]; null without them.
  const Value* holistic = nullptr;

  size_t group(size_t i) const { return order ? order[i] : i; }
  // Group g's states where they are held (null: fill_state makes them).
  const char* held_state(size_t g) const {
    return keys.rows ? keys.rows[g] + state_offset : states ? states + g * state_stride : nullptr;
  }
};

// A run of result rows already formatted where the groups are (a GPU):
// the bytes the writer's format_rows would give them.
struct TextRun {
  const char* bytes = nullptr;
  size_t size = 0;
  size_t rows = 0;  // 0 once all were given
};

// Where the groups of a result come from, in output order.
class OrderedGroups {
 public:
  virtual ~OrderedGroups() = default;
  virtual size_t size() const = 0;
  // The next run of groups (n == 0 once all were given), valid until the
  // next call.
  virtual GroupRun next() = 0;
  // Whether the groups can be finalized and formatted where they are, as
  // `text` prints plan's output; then next_text() gives every run instead
  // of next().
  virtual bool start_text(const Plan& plan, const GroupLayout& layout, DelimitedText text) { return false; }
  // The next run's text, valid until next_text() is called twice more (one
  // run is written while the next is made). Throws InputError as
  // finalizing the run's rows on the host would.
  virtual TextRun next_text() { return TextRun{}; }
  // Whether the groups come by their first rows (the plan's first post stage,
  // a sort with PostStage::by_first_row, is then done), not by their keys.
  virtual bool by_first_row() const { return false; }
};

// Several sources of groups written one after another: each source's keys
// all come before the next source's (key ranges), so in turn they are in
// output order. The sources must outlive it.
class ChainedGroups : public OrderedGroups {
 public:
  explicit ChainedGroups(std::vector<OrderedGroups*> parts);
  size_t size() const override { return n_; }
  GroupRun next() override;
  bool start_text(const Plan& plan, const GroupLayout& layout, DelimitedText text) override;
  TextRun next_text() override;

 private:
  std::vector<OrderedGroups*> parts_;
  size_t at_ = 0;  // the part giving runs now
  size_t n_ = 0;
};

// Throws the error of a group that cannot be finalized: aggregate `index`
// overflowed (overflow), or the agg item `index` failed to evaluate.
[[noreturn]] void throw_group_failure(const Plan& plan, const GroupLayout& layout, bool overflow, int index);

// Groups per run when written: a run's finalized rows, some tens of MiB.
constexpr size_t kResultRunRows = 1 << 18;

// Whether the plan's first post stage sorts groups by their first rows
// (`distinct` in the scan), which a source of groups may do instead.
inline bool sorts_by_first_row(const Plan& plan) { return !plan.post.empty() && plan.post[0].by_first_row; }

// The groups of host tables in output order, in runs of `run_rows`: sorted
// by their keys, or with `by_first_row` (sorts_by_first_row(plan)) by their
// first rows, on up to `threads` threads, when made. The tables share no
// group; group numbers run through them in turn. `holistic` as in GroupRun.
class SortedHostGroups : public OrderedGroups {
 public:
  SortedHostGroups(const Plan& plan, const std::vector<const GroupTable*>& tables, const Value* holistic,
                   int threads, size_t run_rows = kResultRunRows, bool by_first_row = false);
  size_t size() const override { return n_; }
  GroupRun next() override;
  bool by_first_row() const override { return by_first_row_; }

 private:
  GroupRun all_;
  bool by_first_row_ = false;
  // Several tables: each group's block, in output order once sorted.
  std::vector<const char*> rows_;
  std::vector<uint32_t> order_;  // one table: its groups in output order
  size_t n_ = 0;
  size_t run_rows_;
  size_t at_ = 0;
};

// Finalizes the rows of `run` into `out` (its rows replaced; its columns are
// plan.finalized_output) on up to `threads` threads. Keys and aggregates
// that are strings point into the groups' storage, which must outlive `out`. Throws InputError for
// the first row, in output order, whose exact sums overflowed or whose agg
// item failed to evaluate.
void finalize_run(const Plan& plan, const GroupLayout& layout, const GroupRun& run, Table& out, int threads);

// Groups per run under `opts` (Options::result_run_rows, else kResultRunRows).
inline size_t result_run_rows(const Options& opts) {
  return opts.result_run_rows ? opts.result_run_rows : kResultRunRows;
}

// Whether a plan's groups may stay on the device that made them: an
// aggregate with keys and no holistic aggregates (those are computed on the
// host from the groups).
inline bool groups_may_stay(const Plan& plan) {
  return plan.scan.aggregate && plan.holistic.empty() && plan.group_keys > 0;
}

struct ResultTimes {
  double finalize_s = 0;  // finalizing the runs' rows (and formatting them, where that is one pass)
  double write_s = 0;     // the post stages, formatting, waiting for writes, and what next() took
  uint64_t runs = 0;
};

// Finalizes every group of `groups` and hands the rows to `post`, a run at
// a time, until the post stages need no more (a limit). Stops with
// Interrupted between runs once a signal came.
void write_groups(const Plan& plan, const GroupLayout& layout, OrderedGroups& groups, PostPipeline& post,
                  int threads, ResultTimes* times = nullptr);

}  // namespace warpcsv
