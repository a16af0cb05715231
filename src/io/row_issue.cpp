#include "io/row_issue.hpp"

#include <fmt/format.h>

#include "warpcsv/core/utf8.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {

namespace {
// Line offset and 1-based column of `pos` within a row starting at `begin`.
void locate(const char* data, uint64_t begin, uint64_t pos, uint64_t* lines, uint64_t* column) {
  uint64_t line_start = begin, n = 0;
  for (uint64_t i = begin; i < pos; ++i) {
    if (data[i] == '\n' || (data[i] == '\r' && (i + 1 >= pos || data[i + 1] != '\n'))) {
      ++n;
      line_start = i + 1;
    }
  }
  *lines = n;
  *column = pos - line_start + 1;
}

uint64_t trim_terminator(const char* data, uint64_t b, uint64_t e) {
  while (e > b && (data[e - 1] == '\n' || data[e - 1] == '\r')) --e;
  return e;
}
}  // namespace

std::string printable_text(const char* p, uint64_t n, uint64_t limit) {
  std::string out;
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  for (uint64_t i = 0; i < n && i < limit;) {
    const unsigned char c = u[i];
    if (c >= 0x80) {
      const size_t len = utf8_sequence(u + i, static_cast<size_t>(n - i));
      if (len == 0) {
        out += fmt::format("\\x{:02x}", c);
        ++i;
      } else {
        out.append(p + i, len);
        i += len;
      }
      continue;
    }
    if (c == '\\') out += "\\\\";  // so that \n and \xNN below are not text the row held
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
    ++i;
  }
  if (n > limit) out += fmt::format("... ({} bytes)", n);
  return out;
}

RowIssue make_row_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                        uint64_t row_end, uint64_t row_line, const RowResult& r, uint32_t fields,
                        size_t expected_fields) {
  RowIssue issue;
  issue.source = source;
  const uint64_t end = trim_terminator(data, row_begin, row_end);
  issue.text = printable_text(data + row_begin, end - row_begin);
  issue.row = printable_text(data + row_begin, end - row_begin, kRejectedRowBytes);
  uint64_t pos = end, extra = 0;
  if (r.error != RowError::None) {
    issue.kind = RowIssue::Malformed;
    pos = r.error_pos;
    switch (r.error) {
      case RowError::StrayQuote:
        issue.message = fmt::format("expected a field with no quote character, found a quote ({}) inside an "
                                    "unquoted field; quote the whole field and double the inner quote, or use "
                                    "--bad-rows skip",
                                    static_cast<char>(d.quote));
        break;
      case RowError::TextAfterQuote:
        issue.message = fmt::format("expected a delimiter or the end of the line after a closing quote, found more "
                                    "text; double the quote character inside quoted fields ({0}{0}), or use "
                                    "--bad-rows skip",
                                    static_cast<char>(d.quote));
        break;
      case RowError::UnterminatedQuote:
        issue.message = "expected a closing quote, found the end of the input (unterminated quoted field); "
                        "close the quote, or check --quote and --escape";
        break;
      case RowError::NulByte:
        issue.message = fmt::format("expected text, found a NUL byte (a binary file? UTF-16 text, which has a NUL "
                                    "in every other byte of ASCII?); check the input (for UTF-16: iconv -f "
                                    "UTF-16 -t UTF-8 {} > fixed.csv), or use --bad-rows skip",
                                    name_in_command(source));
        break;
      case RowError::InvalidUtf8:
        issue.message = fmt::format("expected UTF-8 text, found the byte 0x{:02x}, which is not valid UTF-8 (the "
                                    "input looks like Latin-1 or another 8-bit encoding); convert it: iconv -f "
                                    "latin1 -t utf-8 {} > fixed.csv, or use --bad-rows skip",
                                    static_cast<unsigned char>(data[r.error_pos]), name_in_command(source));
        break;
      case RowError::None: break;
    }
  } else {
    issue.kind = RowIssue::Ragged;
    issue.message = fmt::format("expected {} field{}, found {}; check the delimiter (-d) and quoting, or use "
                                "--bad-rows skip to skip such rows{}",
                                expected_fields, expected_fields == 1 ? "" : "s", fields,
                                fields < expected_fields ? " (pad to keep them, with nulls for the missing fields)"
                                                         : "");
  }
  locate(data, row_begin, pos, &extra, &issue.column);
  issue.line = row_line + extra;
  return issue;
}

RowIssue make_padded_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                           uint64_t row_end, uint64_t row_line, uint32_t fields, size_t expected_fields) {
  RowResult clean{};
  clean.error = RowError::None;
  RowIssue issue = make_row_issue(d, source, data, row_begin, row_end, row_line, clean, fields, expected_fields);
  issue.kind = RowIssue::Padded;
  issue.message = fmt::format("expected {} field{}, found {}; padded with nulls (--bad-rows pad)", expected_fields,
                              expected_fields == 1 ? "" : "s", fields);
  return issue;
}

RowIssue make_value_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                          uint64_t row_end, uint64_t row_line, uint64_t field_pos, int column,
                          const std::string& text, const std::string& column_name, ColumnType type) {
  RowIssue issue;
  issue.kind = RowIssue::BadValue;
  issue.source = source;
  issue.field = column;
  issue.text = text;
  issue.row = printable_text(data + row_begin, trim_terminator(data, row_begin, row_end) - row_begin, kRejectedRowBytes);
  uint64_t extra = 0;
  locate(data, row_begin, field_pos, &extra, &issue.column);
  issue.line = row_line + extra;
  const std::string type_name = schema_type_name(type);
  issue.message = fmt::format("column '{}' expected {} {} value, found '{}'", column_name,
                              type_name[0] == 'i' ? "an" : "a", type_name, printable_text(text.data(), text.size()));
  if (type.type == Type::Decimal)  // a decimal that does not fit reads like no decimal at all
    issue.message += fmt::format(" ({} holds 18 digits, {} of them after the point: magnitudes below 9.2e{}); "
                                 "read the column with another --schema type, or skip such rows with --bad-rows skip",
                                 type_name, static_cast<int>(type.scale), 18 - static_cast<int>(type.scale));
  else
    issue.message += "; read the column with another --schema type, or skip such rows with --bad-rows skip";
  return issue;
}

std::string describe_issue(const RowIssue& i) {
  std::string s = fmt::format("{}:{}:{}: {}", i.source, i.line, i.column, i.message);
  // A field's bad value is in the message; a value computed from the row's fields needs the row.
  if (i.kind != RowIssue::BadValue || i.field < 0) s += "\n  row: " + i.text;
  return s;
}

RowIssue make_eval_issue(const Dialect& d, const std::string& source, const char* data, uint64_t row_begin,
                         uint64_t row_end, uint64_t row_line, const EvalContext& ctx, const std::string& what,
                         uint32_t scratch_bytes, bool skipping) {
  RowIssue i = make_row_issue(d, source, data, row_begin, row_end, row_line, RowResult{}, 0, 0);
  i.kind = RowIssue::BadValue;
  i.line = row_line;  // the row's start: the whole row's values made the result
  i.column = 1;
  const std::string skip = skipping ? "" : ", or skip such rows with --bad-rows skip";
  switch (ctx.status) {
    case EvalStatus::IntegerOverflow:  // int is 64-bit (core/eval.hpp)
      i.message = "integer overflow in " + what +
                  ": the result is outside the 64-bit int range (-9223372036854775808 to 9223372036854775807); "
                  "compute in decimal, exact to 38 digits (multiply an operand by 1.0), or in float" + skip;
      break;
    case EvalStatus::DecimalOverflow:
      i.message = "decimal overflow in " + what +
                  ": the result is outside the decimal range (128 bits, about 38 digits counted from its last "
                  "decimal place); compute in float (divide an operand by 1)" + skip;
      break;
    case EvalStatus::CastFailed: {
      const std::string type = schema_type_name(ctx.failed_cast_type);
      const std::string why = ctx.failed_cast.ptr
                                  ? fmt::format("'{}' is not {} {}", printable_text(ctx.failed_cast.ptr, ctx.failed_cast.len, 60),
                                                type[0] == 'i' ? "an" : "a", type)
                                  : "a number outside the range of the type it is cast to";
      i.message = "a value that does not convert in " + what + ": " + why + "; try_cast(...) gives null instead" + skip;
      break;
    }
    case EvalStatus::DateOutOfRange:
      i.message = "a date outside the years 0000 to 9999 in " + what +
                  ": dates are read and printed within those years" + skip;
      break;
    default:
      i.message = "string result over " + std::to_string(scratch_bytes / 1024) + " KiB while evaluating " + what +
                  " (string results are limited to that)" + skip;
      break;
  }
  return i;
}

}  // namespace warpcsv
