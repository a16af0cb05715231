// Building the user-facing description of a bad row or value.
#pragma once
#include <cstdint>
#include <string>

#include "exec/scan.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/tokenize.hpp"

namespace warpcsv {

// The bytes of a row --rejects lists; a longer one (an unclosed quote that ran
// to the end) is cut, with its length said.
constexpr uint64_t kRejectedRowBytes = 1 << 20;

// Text as messages and --rejects show it, cut after `limit` bytes: control
// bytes, NUL and bytes that are not valid UTF-8 as \xNN, a backslash doubled
// (valid UTF-8, read back unambiguously); multibyte characters as they are.
std::string printable_text(const char* p, uint64_t n, uint64_t limit = 120);

// A ragged or malformed row. `row_line` is the row's line relative to its
// partition's first row (the executor adds the partition's base line).
RowIssue make_row_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                        uint64_t row_end, uint64_t row_line, const RowResult& r, uint32_t fields,
                        size_t expected_fields);

// A row of `fields` fields, fewer than `expected_fields`, kept with nulls for
// the missing ones (--bad-rows pad).
RowIssue make_padded_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                           uint64_t row_end, uint64_t row_line, uint32_t fields, size_t expected_fields);

// A field whose text does not fit its column's type.
RowIssue make_value_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                          uint64_t row_end, uint64_t row_line, uint64_t field_pos, int column,
                          const std::string& text, const std::string& column_name, ColumnType type);

// A row whose values an expression (`what`: "the filter '...'", "the output
// column 'x'") could not compute: ctx.status says why, and a failed cast's text.
// `scratch_bytes`: the string results' limit; `skipping`: under --bad-rows
// skip (no advice to use it).
RowIssue make_eval_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                         uint64_t row_end, uint64_t row_line, const EvalContext& ctx, const std::string& what,
                         uint32_t scratch_bytes, bool skipping);

}  // namespace warpcsv
