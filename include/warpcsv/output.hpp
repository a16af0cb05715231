// Writers for the result: csv, tsv, json, ndjson, table, markdown.
#pragma once
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "warpcsv/core/field_text.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// Text of one value as every format prints it before quoting/escaping:
// ints exact, decimals with their scale, floats shortest round-trip, dates
// ISO 8601, bools true/false. Nulls are formatted by the writer.
std::string format_value(const Value& v, ColumnType t);

// Text of one non-null value of column `c` before quoting/escaping: the field
// as it was written for a column printed as written (OutputColumn::as_written),
// else format_value.
std::string value_text(const Value& v, const OutputColumn& c);

// Streams rows to a FILE*. begin() once, row() per row, end() once.
// Formats that align columns (table, markdown) buffer until end().
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void begin(const std::vector<OutputColumn>& columns) = 0;
  virtual void row(const Value* values) = 0;
  virtual void end() = 0;
  // Whether format_rows works: formats whose rows are independent of each
  // other (CSV, TSV) can be formatted by several threads.
  virtual bool can_format_rows() const { return false; }
  // Formats n rows of `width` values (row-major) into `out`, exactly the bytes
  // row() would write, without writing them, so several threads can format
  // parts of a large result. Only when can_format_rows().
  virtual void format_rows(std::string& out, const Value* cells, size_t n, size_t width) const {}
  // Writes bytes that format_rows made, after everything written before.
  virtual void write_formatted(const char* bytes, size_t n) {}
  // A delimited format (CSV, TSV) with columns: its separator and escaping
  // into `text`, so rows formatted elsewhere (on a GPU) match format_rows.
  virtual bool delimited_text(DelimitedText* text) const { return false; }
  // Writes the rows given so far through to the stream (rows that stream
  // out); formats that align columns hold them until end() all the same.
  virtual void flush_rows() {}
};

// with_header false: no header row (csv, tsv, table, markdown; json has none).
std::unique_ptr<RowWriter> make_writer(OutputFormat format, std::FILE* out, bool with_header = true);

}  // namespace warpcsv
