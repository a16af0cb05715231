// The result writers. Each appends to one large buffer that is written with
// fwrite; a closed pipe becomes OutputClosed, any other write failure an
// InputError (exit 3).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "output/format.hpp"
#include "warpcsv/core/field_text.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/output.hpp"

namespace warpcsv {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

bool is_number(Type t) { return t == Type::Int || t == Type::Decimal || t == Type::Float; }

class BufferedWriter : public RowWriter {
 public:
  // with_header: the formats that have a header row write it (--no-output-header: false).
  explicit BufferedWriter(std::FILE* out, bool with_header = true) : with_header_(with_header), out_(out) {
    buf_.reserve(kFlushBytes + 4096);
  }
  void flush_rows() override { finish(); }

 protected:
  const bool with_header_;
  std::string buf_;

  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    write_bytes(buf_.data(), buf_.size());
    buf_.clear();
  }
  void write_bytes(const char* bytes, size_t n) {
    if (n == 0) return;
    errno = 0;
    if (std::fwrite(bytes, 1, n, out_) != n || std::ferror(out_)) fail();
  }
  // Writes everything out, including the FILE's own buffer.
  void finish() {
    flush();
    errno = 0;
    if (std::fflush(out_) != 0 || std::ferror(out_)) fail();
  }

 private:
  std::FILE* out_;

  [[noreturn]] void fail() {
    int e = errno;
    if (e == EPIPE) throw OutputClosed{};
    throw InputError(std::string("cannot write output: ") +
                     (e ? std::strerror(e) : "write failed") +
                     "; check free space and permissions of the output (-o FILE)");
  }
};

// ---- csv and tsv -------------------------------------------------------------

// One string field, escaped as `d` says (field_text.hpp).
void append_field(std::string& out, const char* p, size_t n, DelimitedText d) {
  const uint32_t len = static_cast<uint32_t>(n);
  const uint32_t bytes = field_text_bytes(p, len, d);
  if (bytes == len) {
    out.append(p, n);
    return;
  }
  const size_t at = out.size();
  out.resize(at + bytes);
  write_field_text(p, len, d, &out[at]);
}

// csv and tsv: one line per row, fields separated by the delimiter, each
// string escaped as the format does; null is an empty field.
class DelimitedWriter : public BufferedWriter {
 public:
  DelimitedWriter(std::FILE* out, bool with_header, DelimitedText text)
      : BufferedWriter(out, with_header), text_(text) {}
  void begin(const std::vector<OutputColumn>& columns) override {
    cols_ = columns;
    // No columns: no header line (an empty line would read as a record).
    if (cols_.empty() || !with_header_) return;
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) buf_.push_back(text_.sep);
      append_field(buf_, cols_[c].name.data(), cols_[c].name.size(), text_);
    }
    buf_.push_back('\n');
  }
  void row(const Value* v) override {
    if (cols_.empty()) return;
    append_row(buf_, v);
    maybe_flush();
  }
  void end() override { finish(); }
  bool can_format_rows() const override { return true; }
  void format_rows(std::string& out, const Value* cells, size_t n, size_t width) const override {
    if (!cols_.empty())
      for (size_t r = 0; r < n; ++r) append_row(out, cells + r * width);
  }
  bool delimited_text(DelimitedText* text) const override {
    *text = text_;
    return !cols_.empty();
  }
  void write_formatted(const char* bytes, size_t n) override {
    flush();
    write_bytes(bytes, n);
  }

 private:
  void append_row(std::string& out, const Value* v) const {
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) out.push_back(text_.sep);
      if (v[c].null) continue;
      if (cols_[c].type.type == Type::String)
        append_field(out, v[c].s.ptr, v[c].s.len, text_);
      else if (cols_[c].as_written)  // the field as the input had it, quoted as CSV needs
        append_field(out, v[c].text, v[c].text_len, text_);
      else
        detail::append_value(out, v[c], cols_[c].type);
    }
    out.push_back('\n');
  }

  DelimitedText text_;
  std::vector<OutputColumn> cols_;
};

// ---- json / ndjson ----------------------------------------------------------

void append_json_string(std::string& out, const char* s, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  const unsigned char* p = reinterpret_cast<const unsigned char*>(s);
  out.push_back('"');
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c >= 0x80) {
      size_t len = utf8_sequence(p + i, n - i);
      if (len == 0) {
        out += "\\ufffd";  // invalid UTF-8 byte
        ++i;
      } else {
        out.append(s + i, len);
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(const char* p, size_t n) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < n && p[i] >= '0' && p[i] <= '9') ++i;
    return i > from;
  };
  if (i < n && p[i] == '-') ++i;
  if (i < n && p[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < n && p[i] == '.' && (++i, !digits())) return false;
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    ++i;
    if (i < n && (p[i] == '+' || p[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

// A value of a column printed as written: numbers keep their text where it
// is a JSON number (`6.50`, `55`, `1e5`; not `+5`, `.5`, `inf`), dates and
// timestamps are strings of their text; the rest print as computed values do.
bool append_json_as_written(std::string& out, const Value& v, ColumnType t) {
  switch (t.type) {
    case Type::Int:
    case Type::Decimal:
    case Type::Float:
      if (!is_json_number(v.text, v.text_len)) return false;
      out.append(v.text, v.text_len);
      return true;
    case Type::Date:
    case Type::Timestamp:
      append_json_string(out, v.text, v.text_len);
      return true;
    default:
      return false;
  }
}

void append_json_value(std::string& out, const Value& v, const OutputColumn& col) {
  const ColumnType t = col.type;
  if (v.null || t.type == Type::Null) {
    out += "null";
    return;
  }
  if (col.as_written && append_json_as_written(out, v, t)) return;
  switch (t.type) {
    case Type::Float:
      if (v.f != v.f || v.f - v.f != 0) {  // nan or inf: JSON has no such numbers
        out += "null";
        return;
      }
      detail::append_value(out, v, t);
      return;
    case Type::Bool:
    case Type::Int:
    case Type::Decimal:
      detail::append_value(out, v, t);
      return;
    case Type::String:
      append_json_string(out, v.s.ptr, v.s.len);
      return;
    default: {  // Date, Timestamp: ISO text as a string
      std::string text;
      detail::append_value(text, v, t);
      append_json_string(out, text.data(), text.size());
      return;
    }
  }
}

// One object per row; json wraps them in an array, one object per line.
class JsonWriter : public BufferedWriter {
 public:
  JsonWriter(std::FILE* out, bool array) : BufferedWriter(out), array_(array) {}
  void begin(const std::vector<OutputColumn>& columns) override {
    cols_ = columns;
    keys_.clear();
    for (const auto& c : cols_) {
      std::string k;
      append_json_string(k, c.name.data(), c.name.size());
      keys_.push_back(k + ":");
    }
    if (array_) buf_ += "[\n";
  }
  void row(const Value* v) override {
    if (array_ && rows_ > 0) buf_ += ",\n";
    buf_.push_back('{');
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (c) buf_.push_back(',');
      buf_ += keys_[c];
      append_json_value(buf_, v[c], cols_[c]);
    }
    buf_.push_back('}');
    if (!array_) buf_.push_back('\n');
    ++rows_;
    maybe_flush();
  }
  void end() override {
    if (array_) buf_ += rows_ > 0 ? "\n]\n" : "]\n";
    finish();
  }

 private:
  bool array_;
  size_t rows_ = 0;
  std::vector<OutputColumn> cols_;
  std::vector<std::string> keys_;
};

// ---- table / markdown -------------------------------------------------------

size_t display_width(const std::string& s) { return terminal_width(s.data(), s.size()); }

void pad(std::string& out, size_t n) { out.append(n, ' '); }

// Buffers every cell as text, then prints aligned columns at end().
class GridWriter : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;
  void begin(const std::vector<OutputColumn>& columns) override {
    cols_ = columns;
    header_.clear();
    for (const auto& c : cols_) header_.push_back(cell_text(c.name.data(), c.name.size()));
  }
  void row(const Value* v) override {
    for (size_t c = 0; c < cols_.size(); ++c) {
      if (v[c].null) {
        cells_.push_back(null_text());
      } else if (cols_[c].type.type == Type::String) {
        cells_.push_back(cell_text(v[c].s.ptr, v[c].s.len));
      } else if (cols_[c].as_written) {
        cells_.push_back(cell_text(v[c].text, v[c].text_len));
      } else {
        cells_.push_back(format_value(v[c], cols_[c].type));
      }
    }
  }
  void end() override {
    size_t w = cols_.size();
    std::vector<size_t> width(w);
    std::vector<bool> right(w);
    for (size_t c = 0; c < w; ++c) {
      width[c] = std::max(min_width(), with_header_ ? display_width(header_[c]) : 0);
      right[c] = is_number(cols_[c].type.type);
    }
    for (size_t i = 0; i < cells_.size(); ++i)
      width[i % w] = std::max(width[i % w], display_width(cells_[i]));
    print(width, right);
    finish();
  }

 protected:
  std::vector<OutputColumn> cols_;
  std::vector<std::string> header_;
  std::vector<std::string> cells_;  // row-major

  virtual std::string cell_text(const char* p, size_t n) const = 0;
  virtual std::string null_text() const = 0;
  virtual size_t min_width() const { return 1; }
  virtual void print(const std::vector<size_t>& width, const std::vector<bool>& right) = 0;

  void append_cell(const std::string& s, size_t width, bool right_align) {
    size_t gap = width - display_width(s);
    if (right_align) pad(buf_, gap);
    buf_ += s;
    if (!right_align) pad(buf_, gap);
  }
  // One row of cells between bars: "| a | b |".
  void append_grid_row(const std::string* cells, const std::vector<size_t>& width, const std::vector<bool>& right) {
    buf_ += "|";
    for (size_t c = 0; c < cols_.size(); ++c) {
      buf_ += " ";
      append_cell(cells[c], width[c], right[c]);
      buf_ += " |";
    }
    buf_ += "\n";
    maybe_flush();
  }
};

// "table": an ASCII box, numbers right-aligned, nulls shown as null.
class TableWriter : public GridWriter {
 public:
  using GridWriter::GridWriter;

 protected:
  // Line breaks and tabs would tear the box: show them as escapes.
  std::string cell_text(const char* p, size_t n) const override {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      if (p[i] == '\n') s += "\\n";
      else if (p[i] == '\r') s += "\\r";
      else if (p[i] == '\t') s += "\\t";
      else s.push_back(p[i]);
    }
    return s;
  }
  std::string null_text() const override { return "null"; }
  void print(const std::vector<size_t>& width, const std::vector<bool>& right) override {
    if (cols_.empty()) return;
    std::string rule = "+";
    for (size_t wd : width) rule += std::string(wd + 2, '-') + "+";
    rule += "\n";
    if (with_header_) {
      buf_ += rule;
      append_grid_row(header_.data(), width, right);
    }
    if (with_header_ || !cells_.empty()) buf_ += rule;
    for (size_t i = 0; i < cells_.size(); i += cols_.size()) append_grid_row(&cells_[i], width, right);
    if (!cells_.empty()) buf_ += rule;
  }
};

// "markdown": a GitHub table; '|' escaped, line breaks as <br>, nulls empty.
class MarkdownWriter : public GridWriter {
 public:
  using GridWriter::GridWriter;

 protected:
  std::string cell_text(const char* p, size_t n) const override {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      if (p[i] == '|') s += "\\|";
      else if (p[i] == '\n') s += "<br>";
      else if (p[i] == '\r') {  // CRLF is one break; a lone CR is one too
        if (i + 1 == n || p[i + 1] != '\n') s += "<br>";
      }
      else s.push_back(p[i]);
    }
    return s;
  }
  std::string null_text() const override { return ""; }
  size_t min_width() const override { return 3; }  // "---" is the shortest rule
  void print(const std::vector<size_t>& width, const std::vector<bool>& right) override {
    if (cols_.empty()) return;
    if (with_header_) {
      append_grid_row(header_.data(), width, right);
      buf_ += "|";
      for (size_t c = 0; c < cols_.size(); ++c)
        buf_ += " " + (right[c] ? std::string(width[c] - 1, '-') + ":" : std::string(width[c], '-')) + " |";
      buf_ += "\n";
    }
    for (size_t i = 0; i < cells_.size(); i += cols_.size()) append_grid_row(&cells_[i], width, right);
  }
};

}  // namespace

std::unique_ptr<RowWriter> make_writer(OutputFormat format, std::FILE* out, bool with_header) {
  switch (format) {
    case OutputFormat::Csv: return std::make_unique<DelimitedWriter>(out, with_header, DelimitedText{',', FieldEscape::Csv});
    case OutputFormat::Tsv: return std::make_unique<DelimitedWriter>(out, with_header, DelimitedText{'\t', FieldEscape::Tsv});
    case OutputFormat::Json: return std::make_unique<JsonWriter>(out, true);
    case OutputFormat::Ndjson: return std::make_unique<JsonWriter>(out, false);
    case OutputFormat::Table: return std::make_unique<TableWriter>(out, with_header);
    case OutputFormat::Markdown: return std::make_unique<MarkdownWriter>(out, with_header);
  }
  return std::make_unique<DelimitedWriter>(out, with_header, DelimitedText{',', FieldEscape::Csv});
}

}  // namespace warpcsv
