// Type inference over a sample of the first input: the sample is cut into
// pieces whose first rows are found exactly, each piece's fields are observed
// on a thread, and the columns' guesses merge into the narrowest types.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "exec/partitioner.hpp"
#include "io/input.hpp"
#include "runtime/parallel.hpp"
#include "spec/bind_util.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {

namespace {

// Calls on_field(column, p, n, at) for each field of the sampled rows of `ncols`
// fields that start in [begin, end) of `w` (begin a row start; the last row
// may run past end); `at` is the field's offset in w. Returns the bytes of the longest of these rows (one the
// window cuts: the bytes it holds).
template <typename OnField>
uint64_t for_each_field(const Dialect& dialect, const Window& w, uint64_t begin, uint64_t end, size_t ncols,
                        OnField&& on_field) {
  uint64_t longest = 0;
  std::vector<char> scratch;
  std::vector<std::pair<uint64_t, uint64_t>> spans(ncols);
  std::vector<uint8_t> flags(ncols);
  for (uint64_t pos = begin; pos < end;) {
    uint32_t nf = 0;
    bool last_empty = false;
    RowResult r = parse_row(dialect, w.data, pos, w.size, w.at_eof, [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
      if (i < ncols) {
        spans[i] = {b, e};
        flags[i] = f;
      }
      nf = i + 1;
      last_empty = b == e && f == 0;
    });
    // A trailing delimiter (one extra, empty, unquoted field) is tolerated, as the scan does.
    if (nf == ncols + 1 && last_empty) nf = static_cast<uint32_t>(ncols);
    if (r.incomplete) return std::max(longest, w.size - pos);
    const uint64_t row_begin = pos;
    pos = r.next;
    longest = std::max(longest, r.next - row_begin);
    if (r.comment || (r.empty && ncols > 1)) continue;
    // Bad rows (ragged, malformed, NUL or invalid UTF-8) say nothing about types.
    if (nf != ncols || r.error != RowError::None || check_row_bytes(w.data, row_begin, r.next, r)) continue;
    for (size_t c = 0; c < ncols; ++c) {
      const char* fp = w.data + spans[c].first;
      uint32_t len = static_cast<uint32_t>(spans[c].second - spans[c].first);
      if (flags[c] & kFieldEscaped) {
        scratch.resize(len);
        len = unescape_field(dialect, fp, len, scratch.data());
        fp = scratch.data();
      }
      on_field(c, fp, len, spans[c].first);
    }
  }
  return longest;
}

// Inference's sample: kInferSampleBytes from the data's start, or past its
// first row where that row is longer (a field of megabytes), up to
// kMaxInferSampleBytes: a sample without one whole row says nothing of types.
constexpr uint64_t kMaxInferSampleBytes = 256ull << 20;
Window sample_of(InputSource& src, const Dialect& dialect) {
  Window w = src.sample(kInferSampleBytes);
  for (uint64_t n = kInferSampleBytes; !w.at_eof && w.size >= n && n < kMaxInferSampleBytes;) {
    const RowResult first = parse_row(dialect, w.data, 0, w.size, w.at_eof, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
    if (!first.incomplete) {
      if (first.next > n / 2) w = src.sample(std::min(first.next + kInferSampleBytes, kMaxInferSampleBytes));
      break;
    }
    n = std::min(2 * n, kMaxInferSampleBytes);
    w = src.sample(n);
  }
  return w;
}

// Tokens that stand for a missing value in exported data (case aside).
bool null_like(const char* p, uint32_t n) {
  static const char* const kTokens[] = {"na", "n/a", "#n/a", "null", "none", "nil", "-", "--", "?", "missing"};
  for (const char* t : kTokens) {
    bool same = std::strlen(t) == n;
    for (uint32_t i = 0; same && i < n; ++i) same = std::tolower(static_cast<unsigned char>(p[i])) == t[i];
    if (same) return true;
  }
  return false;
}

// "--schema names column 'X', which the input does not have", and what was meant: a close
// name, or (for "a:int:int") the column before the extra type.
std::string unknown_schema_column(const std::string& name, const std::vector<std::string>& columns) {
  std::string msg = "--schema names column '" + name + "', which the input does not have";
  const size_t colon = name.find(':');
  if (colon != std::string::npos &&
      std::find(columns.begin(), columns.end(), name.substr(0, colon)) != columns.end())
    return msg + "; each entry is one name and one type, such as '" + name.substr(0, colon) + ":int'";
  const std::vector<std::string> close = spec::closest_names(name, columns, 3);
  if (!close.empty()) msg += "; did you mean " + spec::join_quoted(close, 3, " or ") + "?";
  return columns.size() <= 20 ? msg + " (columns: " + spec::join_plain(columns) + ")" : msg;
}

}  // namespace

std::vector<OutputColumn> infer_schema(InputSet& in, const Options& opts, int threads, std::vector<bool>* unobserved,
                                       uint64_t* longest_row) {
  const size_t ncols = in.column_names.size();
  std::vector<TypeGuess> guesses(ncols);
  std::vector<OutputColumn> schema(ncols);
  if (longest_row) *longest_row = 0;
  if (!in.sources.empty() && ncols) {
    InputSource& src = *in.sources.front();
    const Window w = sample_of(src, in.dialect);
    // The sample in pieces on several threads (one thread is the slow part): the
    // exact state at each piece's start says where its first row starts, and
    // a column's guesses merge in any order.
    const uint64_t piece = std::max<uint64_t>(kInferPieceBytes, (w.size + threads - 1) / std::max(1, threads));
    const PartitionedWindow pw = partition_window(in.dialect, w, piece, threads);
    std::vector<std::vector<TypeGuess>> part(pw.begin.size(),
                                             std::vector<TypeGuess>(ncols, TypeGuess(opts.dialect.null_tokens)));
    std::vector<uint64_t> longest(pw.begin.size(), 0);
    parallel_for(pw.begin.size(), threads, [&](size_t j, int) {
      if (pw.first_row[j] != kNoRow)
        longest[j] = for_each_field(in.dialect, w, pw.first_row[j], pw.end(j), ncols,
                                    [&g = part[j]](size_t c, const char* p, uint32_t n, uint64_t) { g[c].observe(p, n); });
    });
    for (const auto& p : part)
      for (size_t c = 0; c < ncols; ++c) guesses[c].merge(p[c]);
    for (uint64_t n : longest)
      if (longest_row) *longest_row = std::max(*longest_row, n);
  }
  if (unobserved) unobserved->assign(ncols, false);
  for (size_t c = 0; c < ncols; ++c) {
    schema[c].name = in.column_names[c];
    schema[c].type = guesses[c].result();
    if (unobserved) (*unobserved)[c] = guesses[c].observed() == 0;
  }
  if (!opts.schema.empty()) {
    for (const auto& o : parse_schema_option(opts.schema)) {
      auto it = std::find_if(schema.begin(), schema.end(), [&](const OutputColumn& c) { return c.name == o.name; });
      if (it == schema.end()) throw UsageError(unknown_schema_column(o.name, in.column_names));
      ColumnType t = o.type;
      if (o.infer_scale && t.type == Type::Decimal)
        t.scale = it->type.type == Type::Decimal ? it->type.scale : t.scale;
      if (t.type == Type::Timestamp && it->type.type == Type::Timestamp) t.scale = it->type.scale;  // zoned as sampled
      it->type = t;
      if (unobserved) (*unobserved)[static_cast<size_t>(it - schema.begin())] = false;
    }
  }
  return schema;
}

std::vector<std::vector<std::string>> null_like_tokens(InputSet& in, const Options& opts,
                                                       const std::vector<OutputColumn>& schema) {
  const size_t ncols = schema.size();
  std::vector<std::vector<std::string>> tokens(ncols);
  if (in.sources.empty() || ncols != in.column_names.size()) return tokens;
  std::vector<bool> numbers(ncols, false), other(ncols, false);
  const Window w = sample_of(*in.sources.front(), in.dialect);
  for_each_field(in.dialect, w, 0, w.size, ncols, [&](size_t c, const char* p, uint32_t n, uint64_t) {
    if (n == 0 || schema[c].type.type != Type::String || other[c]) return;
    const std::string text(p, n);
    const auto& given = opts.dialect.null_tokens;
    if (std::find(given.begin(), given.end(), text) != given.end()) return;
    if (text_fits(p, n, ColumnType{Type::Float, 0})) {
      numbers[c] = true;
    } else if (null_like(p, n)) {
      if (std::find(tokens[c].begin(), tokens[c].end(), text) == tokens[c].end()) tokens[c].push_back(text);
    } else {
      other[c] = true;  // text that is not a missing value: a string column
    }
  });
  for (size_t c = 0; c < ncols; ++c)
    if (!numbers[c] || other[c]) tokens[c].clear();
  return tokens;
}

std::optional<SampledText> text_among_numbers(InputSet& in, const Options& opts, size_t column) {
  const size_t ncols = in.column_names.size();
  if (in.sources.empty() || column >= ncols) return std::nullopt;
  InputSource& src = *in.sources.front();
  const Window w = sample_of(src, in.dialect);
  TypeGuess numbers(opts.dialect.null_tokens);
  std::optional<SampledText> text;
  uint64_t text_at = 0;
  for_each_field(in.dialect, w, 0, w.size, ncols, [&](size_t c, const char* p, uint32_t n, uint64_t at) {
    if (c != column || n == 0) return;
    const auto& given = opts.dialect.null_tokens;
    if (std::find(given.begin(), given.end(), std::string(p, n)) != given.end()) return;
    if (text_fits(p, n, ColumnType{Type::Float, 0})) {
      numbers.observe(p, n);
    } else if (!text) {
      std::string shown;  // on one line, and short
      for (uint32_t i = 0; i < n && shown.size() < 60; ++i)
        shown += p[i] == '\n' ? std::string("\\n") : p[i] == '\r' ? std::string("\\r") : std::string(1, p[i]);
      text = SampledText{shown, src.name(), 0, 0, ColumnType{}};
      text_at = at;
    }
  });
  if (!text || numbers.observed() == 0) return std::nullopt;
  // The line and column where the value starts: lines before the data, then line ends in the sample.
  uint64_t line = src.header_lines() + 1, line_start = 0;
  for (uint64_t i = 0; i < text_at; ++i)
    if (w.data[i] == '\n' || (w.data[i] == '\r' && (i + 1 >= w.size || w.data[i + 1] != '\n'))) {
      ++line;
      line_start = i + 1;
    }
  text->line = line;
  text->column = text_at - line_start + 1;
  text->numbers = numbers.result();
  return text;
}

}  // namespace warpcsv
