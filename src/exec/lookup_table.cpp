// Lookup joins' files and tables (see lookup_table.hpp).
#include "exec/lookup_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "exec/device.hpp"
#include "exec/scan.hpp"
#include "io/input.hpp"
#include "runtime/parallel.hpp"
#include "runtime/progress.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/spec.hpp"
#include "cpu/cpu_windows.hpp"

namespace warpcsv {

LookupTable::LookupTable(std::vector<Table> parts, const JoinSpec& spec, int threads) {
  // The parts' rows into one table, copied on threads; their strings stay where they are.
  const size_t nkeys = spec.key_columns.size(), width = spec.key_columns.size() + spec.columns.size();
  std::vector<size_t> first_row{0};
  for (const Table& p : parts) first_row.push_back(first_row.back() + p.rows());
  const size_t n = first_row.back();
  if (!parts.empty()) rows_.columns = parts.front().columns;
  rows_.cells.resize(n * width);
  parallel_for(parts.size(), threads, [&](size_t i, int) {
    std::copy(parts[i].cells.begin(), parts[i].cells.end(), rows_.cells.begin() + first_row[i] * width);
  });
  for (Table& p : parts) rows_.strings.absorb(std::move(p.strings));
  if (n >= kNoLookupRow - 1) throw ResourceError(fmt::format("join '{}': the lookup file has 4 billion rows or more", spec.path));
  std::vector<Type> key_types;
  for (const ColumnType& t : spec.key_types) key_types.push_back(t.type);
  UninitVector<uint64_t> hashes(n);  // per row: the hash of its keys
  next_.resize(n);
  // Keys in the join's key types (a number or date widened to the row key's), then hashed.
  parallel_ranges(n, threads, [&](size_t b, size_t e) {
    char scratch[64];
    for (size_t r = b; r < e; ++r) {
      Value* row = rows_.row(r);
      for (size_t k = 0; k < nkeys; ++k) {
        const ColumnType from = rows_.columns[k].type, to = spec.key_types[k];
        if (row[k].null || from == to) continue;
        const Instr cast{Op::Cast, to.type, to.scale, from.type, from.scale, 0};
        EvalContext ctx = make_eval_context(scratch, sizeof scratch);
        row[k] = detail::cast_value(cast, row[k], ctx);
        if (ctx.status != EvalStatus::Ok) row[k] = Value::make_null();  // out of the key type's range: no match
      }
      hashes[r] = lookup_hash(row, key_types.data(), static_cast<uint32_t>(nkeys));
      next_[r] = kNoLookupRow;
    }
  });
  // Each part's rows, in file order: counted and placed per chunk of rows on threads.
  const size_t chunks = std::max<size_t>(1, std::min<size_t>(n / 65536 + 1, static_cast<size_t>(threads) * 4));
  std::vector<uint32_t> counts(chunks * kLookupParts, 0);
  parallel_for(chunks, threads, [&](size_t c, int) {
    for (size_t r = n * c / chunks; r < n * (c + 1) / chunks; ++r) ++counts[c * kLookupParts + lookup_part(hashes[r])];
  });
  std::vector<size_t> at(chunks * kLookupParts), part_begin(kLookupParts + 1, 0);
  size_t max_part = 0;
  for (uint32_t p = 0, pos = 0; p < kLookupParts; ++p) {
    part_begin[p] = pos;
    for (size_t c = 0; c < chunks; ++c) {
      at[c * kLookupParts + p] = pos;
      pos += counts[c * kLookupParts + p];
    }
    part_begin[p + 1] = pos;
    max_part = std::max<size_t>(max_part, pos - part_begin[p]);
  }
  UninitVector<uint32_t> by_part(n);
  parallel_for(chunks, threads, [&](size_t c, int) {
    for (size_t r = n * c / chunks; r < n * (c + 1) / chunks; ++r)
      by_part[at[c * kLookupParts + lookup_part(hashes[r])]++] = static_cast<uint32_t>(r);
  });
  // Buckets at most half full. A part's rows go in from its last: each is put
  // at the head of its key's chain, so the chain runs in file order and the
  // bucket ends up holding the key's first row.
  uint32_t bits = 4;
  while ((size_t{1} << bits) < 2 * max_part + 2) ++bits;
  const uint32_t mask = (1u << bits) - 1;
  buckets_.resize(static_cast<size_t>(kLookupParts) << bits);
  parallel_for(kLookupParts, threads, [&](size_t p, int) {
    LookupBucket* buckets = buckets_.data() + (p << bits);
    std::fill(buckets, buckets + (size_t{1} << bits), kEmptyBucket);  // each part's pages faulted in on its thread
    for (size_t i = part_begin[p + 1]; i-- > part_begin[p];) {
      const uint32_t r = by_part[i];
      const Value* row = rows_.row(r);
      bool null_key = false;
      for (size_t k = 0; k < nkeys; ++k) null_key |= row[k].null;
      if (null_key) continue;  // never matched
      for (uint32_t b = static_cast<uint32_t>(hashes[r]) & mask;; b = (b + 1) & mask) {
        const uint32_t head = bucket_row(buckets[b]);
        bool same = head != kNoLookupRow && hashes[head] == hashes[r];
        const Value* other = head == kNoLookupRow ? nullptr : rows_.row(head);
        for (size_t k = 0; k < nkeys && same; ++k) same = key_equal(other[k], row[k], key_types[k]);
        if (head != kNoLookupRow && !same) continue;
        next_[r] = head;  // kNoLookupRow for a key's last row
        buckets[b] = make_bucket(r, hashes[r], head != kNoLookupRow);
        break;
      }
    }
  });
  view_ = LookupView{rows_.cells.data(), next_.data(), buckets_.data(), bits,
                     static_cast<uint32_t>(width), static_cast<uint32_t>(nkeys)};
}

JoinView join_view_shape(const JoinSpec& spec, int first_slot) {
  JoinView j{};
  for (size_t k = 0; k < spec.key_types.size(); ++k) j.key_types[k] = spec.key_types[k].type;
  j.first_slot = first_slot;
  j.width = static_cast<int32_t>(spec.columns.size());
  j.left = spec.left;
  return j;
}

JoinView host_join_view(const JoinSpec& spec, const LookupTable& table, const std::vector<Program>& keys,
                        int first_slot) {
  JoinView j = join_view_shape(spec, first_slot);
  j.table = table.view();
  for (size_t k = 0; k < keys.size(); ++k) j.keys[k] = keys[k].view();
  return j;
}

// An input error of a lookup file, said as such. A lookup's bad row is never
// skipped (a lookup missing rows is wrong, not partly right): the row
// messages' --bad-rows advice does not apply to it.
namespace {
InputError lookup_file_error(const InputError& e) {
  std::string what = e.what();
  for (const std::string advice : {", or use --bad-rows skip to skip such rows", ", or use --bad-rows skip",
                                   ", or skip such rows with --bad-rows skip",
                                   " (pad to keep them, with nulls for the missing fields)"}) {
    for (size_t at; (at = what.find(advice)) != std::string::npos;) what.erase(at, advice.size());
  }
  return InputError("the lookup file of a join: " + what);
}
// A lookup file's scan: on the CPU's threads, quiet, every type inferred.
ScanSettings lookup_scan_settings(const Plan& scan_plan, const Options& file_opts, int threads, Progress* quiet) {
  ScanSettings settings;
  settings.plan = &scan_plan;
  settings.opts = &file_opts;
  settings.type_from_schema.assign(scan_plan.input.size(), false);
  settings.chunk_size = default_cpu_chunk(threads);
  settings.threads = threads;
  settings.progress = quiet;
  return settings;
}
}  // namespace

// One join's file: its options, opened input and schema.
struct LookupFiles::File {
  Options opts;
  std::unique_ptr<InputSet> in;
  std::vector<OutputColumn> schema;
  std::vector<bool> unobserved;  // columns the sample held no value for (typed string)
  std::map<int, ColumnType> widened;
};

LookupFiles::LookupFiles(const Options& opts, int threads) : threads_(threads) {
  const uint64_t budget = (opts.memory_limit ? opts.memory_limit : host_memory_bytes()) / 4;
  for (const JoinFileRef& ref : join_files(opts.pipeline)) {
    auto f = std::make_unique<File>();
    // The input's dialect, read as a file of its own: its first line names its columns.
    Options& o = f->opts;
    o.files = {ref.path};
    o.dialect = opts.dialect;
    o.dialect.header = true;
    o.dialect.names.clear();
    o.dialect.skip_lines = 0;
    if (ref.delimiter) {
      o.dialect.delimiter = std::string(1, ref.delimiter);
      o.dialect.delimiter_auto = false;
    }
    o.bad_rows = BadRows::Fail;  // a lookup with a bad row is wrong, not partly right
    o.device = "cpu";
    o.quiet = true;
    o.threads = opts.threads;
    o.memory_limit = opts.memory_limit;
    if (ref.path == "-") throw UsageError("join '-': a lookup file is read whole as a file; standard input is the input's");
    try {
      f->in = std::make_unique<InputSet>(InputSet::open(o));
    } catch (const InputError& e) {
      throw lookup_file_error(e);
    }
    uint64_t bytes = 0;
    for (const auto& src : f->in->sources) bytes += src->size_bytes();
    if (bytes > budget)
      throw ResourceError(fmt::format(
          "join '{}': the lookup file holds {:.1f} MiB, past the {:.1f} MiB a lookup may take (a quarter of the "
          "memory limit): a lookup join reads its file whole into memory. Join a smaller file (only the columns "
          "and rows needed), or raise --memory-limit",
          ref.path, bytes / 1048576.0, budget / 1048576.0));
    if (f->in->column_names.empty())
      throw InputError(ref.path + ": the lookup file of a join is empty: it needs a header line that names its columns");
    f->schema = infer_schema(*f->in, o, threads, &f->unobserved);
    files_.push_back(std::move(f));
  }
}

LookupFiles::~LookupFiles() = default;

LookupColumns LookupFiles::columns() const {
  LookupColumns out;
  for (const auto& f : files_) {
    std::vector<OutputColumn> s = f->schema;
    std::vector<bool> u = f->unobserved;
    for (const auto& [c, t] : f->widened) {
      s[static_cast<size_t>(c)].type = t;
      u[static_cast<size_t>(c)] = false;  // a value was seen
    }
    out.schemas.push_back(std::move(s));
    out.unobserved.push_back(std::move(u));
  }
  return out;
}

void LookupFiles::check_rows_if_unobserved() {
  for (auto& f : files_) {
    if (std::find(f->unobserved.begin(), f->unobserved.end(), true) == f->unobserved.end()) continue;
    // Every column as text: only the rows' shape can fail, never a type.
    std::vector<OutputColumn> text = f->schema;
    for (auto& c : text) c.type = ColumnType{Type::String, 0};
    const Plan scan_plan = build_plan("select $1", text);
    Progress quiet(0, 0);
    const ScanSettings settings = lookup_scan_settings(scan_plan, f->opts, threads_, &quiet);
    ScanStats stats;
    try {
      make_cpu_executor()->scan(
          *f->in, settings, nullptr, [](Table&, size_t, size_t) { return true; }, [](const RowIssue&) {}, stats);
    } catch (const InputError& e) {
      throw lookup_file_error(e);
    }
    f->in = std::make_unique<InputSet>(InputSet::open(f->opts));
  }
}

bool LookupFiles::load(const Plan& plan) {
  tables_.clear();
  for (size_t j = 0; j < plan.joins.size(); ++j) {
    File& f = *files_[j];
    const JoinSpec& spec = plan.joins[j];
    // As bound: a column the sample held no value for may have taken another type than string there.
    const std::vector<OutputColumn>& schema = spec.lookup_schema;
    // The key columns, then the columns the joined rows take, by position.
    std::string select = "select ";
    std::vector<int> cols = spec.key_columns;
    cols.insert(cols.end(), spec.columns.begin(), spec.columns.end());
    for (size_t k = 0; k < cols.size(); ++k) select += (k ? ", $" : "$") + std::to_string(cols[k] + 1);
    std::vector<Table> parts;
    {
      const Plan scan_plan = build_plan(select, schema);
      Progress quiet(0, 0);
      const ScanSettings settings = lookup_scan_settings(scan_plan, f.opts, threads_, &quiet);
      ScanStats stats;
      try {
        make_cpu_executor()->scan(
            *f.in, settings, nullptr,
            [&](Table& t, size_t b, size_t e) {
              if (b == 0 && e == t.rows()) {  // a partition's rows whole (as a lookup's always come): taken
                parts.push_back(std::move(t));
                return true;
              }
              Table some;
              some.columns = t.columns;
              for (size_t r = b; r < e; ++r) some.append_owned(t.row(r));
              parts.push_back(std::move(some));
              return true;
            },
            [](const RowIssue&) {}, stats);
      } catch (const TypeWidening& tw) {
        const OutputColumn& col = schema[static_cast<size_t>(tw.column)];
        if (!f.in->rereadable())
          throw InputError(fmt::format("{}:{}:{}: the lookup file's column '{}' was read as {} from its first rows, "
                                       "but this row has '{}'; give the lookup as a regular file, which is read again "
                                       "with the wider type",
                                       tw.where.source, tw.where.line, tw.where.column, col.name,
                                       schema_type_name(col.type), tw.text));
        f.widened[tw.column] = widen_for(col.type, tw.text.data(), static_cast<uint32_t>(tw.text.size()));
        f.in = std::make_unique<InputSet>(InputSet::open(f.opts));
        tables_.clear();
        return false;
      } catch (const InputError& e) {
        throw lookup_file_error(e);
      }
    }
    tables_.emplace_back(std::move(parts), spec, threads_);
  }
  return true;
}

}  // namespace warpcsv
