// Writers for the result: csv, tsv, json, ndjson, table, markdown.
#pragma once
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// Text of one value as every format prints it before quoting/escaping:
// ints exact, decimals with their scale, floats shortest round-trip, dates
// ISO 8601, bools true/false. Nulls are formatted by the writer.
std::string format_value(const Value& v, ColumnType t);

// Streams rows to a FILE*. begin() once, row() per row, end() once.
// Formats that align columns (table, markdown) buffer until end().
class RowWriter {
 public:
  virtual ~RowWriter() = default;
  virtual void begin(const std::vector<OutputColumn>& columns) = 0;
  virtual void row(const Value* values) = 0;
  virtual void end() = 0;
};

std::unique_ptr<RowWriter> make_writer(OutputFormat format, std::FILE* out);

}  // namespace warpcsv
