// Lookup joins' tables: each join's file read with the tool's own scan, its
// rows typed and indexed by their keys (core/lookup.hpp probes the index on
// CPU threads and in the GPU's row kernel).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/grow_array.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/spec.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

struct InputSet;

// The rows of one join and their key index.
class LookupTable {
 public:
  // `parts`: the file's rows in file order, each its key columns
  // (spec.key_columns, in the file's types) then spec.columns. The keys are
  // converted to spec.key_types.
  LookupTable(std::vector<Table> parts, const JoinSpec& spec, int threads);
  const LookupView& view() const { return view_; }
  uint32_t rows() const { return static_cast<uint32_t>(rows_.rows()); }
  const Table& table() const { return rows_; }
  const GrowArray<uint32_t>& next() const { return next_; }
  const GrowArray<LookupBucket>& buckets() const { return buckets_; }

 private:
  Table rows_;
  // Not zeroed when sized (filled on threads, which fault their pages in),
  // and probed at random: GrowArrays, whose large arrays get 2 MiB pages.
  GrowArray<uint32_t> next_;
  GrowArray<LookupBucket> buckets_;
  LookupView view_{};
};

// Join `spec`'s view but for its table and key programs: the key types, the
// slots from `first_slot` on that its lookup rows fill, inner or left.
JoinView join_view_shape(const JoinSpec& spec, int first_slot);
// How host code runs join `spec` over `table`: its key programs over a row's
// slots, and the slots from `first_slot` on that its lookup rows fill.
JoinView host_join_view(const JoinSpec& spec, const LookupTable& table, const std::vector<Program>& keys,
                        int first_slot);

// The columns of the join stages' files, in join order: the binder's lookup
// schemas, and per file the columns its sample held no value for (a
// header-only file: typed string, but with no evidence for any type).
struct LookupColumns {
  LookupSchemas schemas;
  std::vector<std::vector<bool>> unobserved;
};

// The join stages' files: opened (header read, types inferred from a sample,
// as the input's) before the plan is bound, then scanned into their tables.
class LookupFiles {
 public:
  // Opens the files the pipeline's join stages name, with the input's
  // dialect unless a stage gives a delimiter. Files past a quarter of the
  // memory limit are refused (a ResourceError that says so).
  LookupFiles(const Options& opts, int threads);
  ~LookupFiles();
  bool empty() const { return files_.empty(); }
  // The columns of each join's file, in join order.
  LookupColumns columns() const;
  // Scans each join's file for the columns `plan` reads of it and indexes
  // them. A later value that does not fit a column's inferred type widens it
  // and returns false: bind again with columns() and call again.
  bool load(const Plan& plan);
  // A file whose sample held no value for a column (its rows malformed, say)
  // is scanned whole: a bad row there is the error to report (InputError),
  // not the type its column was given for lack of values.
  void check_rows_if_unobserved();
  const std::vector<LookupTable>& tables() const { return tables_; }

 private:
  struct File;
  std::vector<std::unique_ptr<File>> files_;
  std::vector<LookupTable> tables_;
  int threads_;
};

// What a run's executors and post stages read the joins' tables from (Plan::joins order).
using LookupTables = std::vector<LookupTable>;

}  // namespace warpcsv
