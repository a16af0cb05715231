// The immutable, typed plan that the binder builds from a pipeline spec and a
// schema, and that every executor runs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpcsv/core/program.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

// An owning expression program (see ProgramView for the device-friendly view).
struct Program {
  std::vector<Instr> code;
  std::vector<Value> consts;  // string constants: s.ptr = offset into `strings`
  std::string strings;
  ColumnType result;
  std::string text;  // source text, for messages and --explain

  ProgramView view() const {
    return ProgramView{code.data(), static_cast<int32_t>(code.size()), consts.data(),
                       strings.data()};
  }
  bool empty() const { return code.empty(); }
  // The slot the program only reads (a bare column), else -1.
  int bare_slot() const { return code.size() == 1 && code[0].op == Op::Column ? code[0].arg : -1; }
};

enum class AggKind : uint8_t {
  CountStar,
  Count,
  Sum,
  Min,
  Max,
  Mean,
  Var,
  Std,
  First,
  Last,
  Corr,
  // Holistic: they need every value of a group (see HolisticSpec).
  CountDistinct,
  Median,
  Quantile,
  // The value at a rank of a group's sorted non-null values (HolisticSpec::
  // rank, from the largest or the smallest): `groupby | top N` in the scan.
  NthValue,
  // The position of a group's first row, as an int that orders groups by
  // their first rows: `distinct` in the scan. No argument; not a holistic kind.
  FirstRow,
};

// One aggregate call (deduplicated: `sum(v1)` used twice is computed once).
struct AggSpec {
  AggKind kind;
  Program arg0;  // empty for count()
  Program arg1;  // corr only
  ColumnType result;
  std::string text;  // e.g. "sum(v1)"
};

// A holistic aggregate (count_distinct, median, quantile, nth value). The scan cannot
// keep a fixed-size state for it: its argument is a scan key past the agg's
// own (ScanPlan::keys[key]), and either the executor lists each row's value
// of it with the row's group (exec/holistic.hpp: the CPU executor, and one
// GPU for numbers), or the scan groups by the agg's keys plus the argument
// and counts each group's rows, and regroup_holistic folds those groups into
// the agg's own after the merge.
struct HolisticSpec {
  AggKind kind;
  int key;  // index into ScanPlan::keys
  // quantile's fraction, exactly as written: q_units / 10^q_scale (median: 5 / 10)
  int64_t q_units = 5;
  int q_scale = 1;
  ColumnType result;
  std::string text;  // e.g. "median(v1)"
  // NthValue: the rank-th value (1: the first) counting from the smallest,
  // or from the largest; null past the group's values.
  int64_t rank = 0;
  bool from_largest = false;
};

struct OutputColumn {
  std::string name;
  ColumnType type;
  // Row output of a bare input column: each value carries its field's text
  // (Value::text), printed as written instead of formatted from the value.
  bool as_written = false;
};

// A lookup join's file and how its rows are matched. The file is read whole
// before the scan (io/lookup_table.hpp); key i of a row matches the lookup's
// column key_columns[i], both compared as key_types[i].
struct JoinSpec {
  std::string path;       // as written in the stage
  char delimiter = 0;     // 0: the input's
  bool left = false;      // rows without a match are kept, the lookup's columns null
  std::vector<int> key_columns;
  std::vector<ColumnType> key_types;
  // The lookup's columns the joined rows take, in the order their values
  // follow the row's: scan joins, the ones the pipeline reads; post joins, all
  // but the keys of `on k`.
  std::vector<int> columns;
  std::vector<OutputColumn> lookup_schema;  // every column of the file
  std::string text;                         // source text of the stage
};

// A join before the scan ends: each row's keys are evaluated over the slots
// read so far (input slots, then earlier joins'), and every matching lookup
// row's values (JoinSpec::columns) fill slots first_slot... of a copy of the
// row; each copy runs the rest of the scan.
struct ScanJoin {
  int join;  // index into Plan::joins
  std::vector<Program> keys;
  int first_slot;
  int width;  // slots filled: Plan::joins[join].columns.size()
};

// Everything evaluated per input row, partition by partition, on a device.
// Programs here read input slots: slot i is input column used_columns[i].
struct ScanPlan {
  std::vector<int> used_columns;  // indices into the input schema, ascending
  std::vector<ColumnType> slot_types;
  Program filter;  // empty: keep every row
  bool aggregate = false;
  std::vector<Program> keys;  // group keys (aggregate with no keys: one group)
  std::vector<AggSpec> aggs;
  std::vector<Program> outputs;  // !aggregate: projected columns per row
  // Joins, in pipeline order. Their slots follow the input slots
  // (slot_types holds the input slots' types only).
  std::vector<ScanJoin> joins;
  size_t slot_count() const {
    size_t n = used_columns.size();
    for (const auto& j : joins) n += static_cast<size_t>(j.width);
    return n;
  }
};

struct Plan;

// Stages run on the (small or streamed) rows after the scan. Programs read the
// slots of the stage's input row.
struct PostStage {
  enum Kind : uint8_t { Filter, Select, Sort, Limit, Assert, DropNa, Distinct, Top, Join, Agg, Unfold } kind;
  // Filter/Assert: one; Select and Distinct: one per column; Sort: keys; Top:
  // the group keys (group_keys of them), then the order; Join: the row's keys
  std::vector<Program> exprs;
  std::vector<bool> descending;     // Sort; Top: per order expression
  std::vector<int> columns;         // DropNa: slots checked
  int64_t limit = 0;                // Limit; Top and Unfold: rows per group
  // Top: the group keys; Unfold: each input row (keys..., v_1..v_limit, n),
  // the group_keys keys, `limit` values and a row count, becomes min(limit,
  // n) rows (keys..., v_i) (result/unfold_rows.hpp)
  size_t group_keys = 0;
  int join = -1;                    // Join: index into Plan::joins
  // Sort, the first post stage of a `distinct` in the scan: by the groups'
  // FirstRow aggregate (scan agg 0), which the result side may order them by.
  bool by_first_row = false;
  std::vector<OutputColumn> output; // schema after this stage
  std::string text;                 // source text of the stage
  // Agg (a groupby/agg after an earlier agg): an aggregate plan whose input
  // is this stage's rows (scan slot i is row slot i), with keys, aggregates,
  // holistic ones, finalize and finalized_output (== output) as the first
  // agg's; no filter, no post stages, and no holistic_weight (its holistic
  // arguments are listed per group, not regrouped).
  std::shared_ptr<Plan> agg;
};

struct Plan {
  std::vector<OutputColumn> input;  // the input schema (all columns)
  std::vector<JoinSpec> joins;      // the join stages' files, scan and post alike
  ScanPlan scan;
  // Row produced by the scan: aggregate: keys then aggregate values, then
  // `finalize` projects it to the agg stage's outputs; otherwise scan.outputs.
  std::vector<OutputColumn> scan_output;
  std::vector<Program> finalize;  // aggregate only: programs over [keys..., aggs...]
  // Aggregate only: the agg stage's own keys, the first group_keys of
  // scan.keys (the rest are holistic arguments); the finalize row's aggregate
  // slot j comes from scan.aggs[agg_sources[j]] when >= 0, else from
  // holistic[~agg_sources[j]]; holistic_weight is the scan.aggs count() that
  // counts the rows of a scan group.
  size_t group_keys = 0;
  std::vector<int> agg_sources;
  std::vector<HolisticSpec> holistic;
  int holistic_weight = -1;
  std::vector<OutputColumn> finalized_output;
  std::vector<PostStage> post;
  std::vector<OutputColumn> output;  // final schema
  bool has_sort = false;
};

}  // namespace warpcsv
