// Lookup joins' files: read, typed and indexed (see lookup_table.hpp).
#include "io/lookup_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "warpcsv/core/dialect.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/core/parse.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {

namespace {

std::string read_whole(const std::string& path, uint64_t max_bytes) {
  std::unique_ptr<ByteSource> src;
  try {
    src = open_source(path);
  } catch (const InputError& e) {
    throw InputError(std::string("the lookup file of a join: ") + e.what());
  }
  std::string data;
  const uint64_t hint = src->size_hint();
  auto too_large = [&](uint64_t bytes) {
    return ResourceError(fmt::format(
        "join '{}': the lookup file holds {:.1f} MiB or more, past the {:.1f} MiB a lookup may take (a quarter of "
        "the memory limit): a lookup join reads its file whole into memory. Join a smaller file (only the columns "
        "and rows needed), or raise --memory-limit",
        path, bytes / 1048576.0, max_bytes / 1048576.0));
  };
  if (hint > max_bytes) throw too_large(hint);
  data.resize(static_cast<size_t>(std::max<uint64_t>(hint, 1 << 16)));
  size_t have = 0;
  for (;;) {
    if (have == data.size()) {
      if (data.size() > max_bytes) throw too_large(data.size());
      data.resize(data.size() * 2);
    }
    const size_t got = src->read(data.data() + have, data.size() - have);
    if (got == 0) break;
    have += got;
  }
  if (have > max_bytes) throw too_large(have);
  data.resize(have);
  return data;
}

bool is_null_text(const char* p, uint32_t n, const std::vector<std::string>& tokens) {
  if (n == 0) return true;
  for (const auto& t : tokens)
    if (t.size() == n && std::memcmp(t.data(), p, n) == 0) return true;
  return false;
}

}  // namespace

LookupFile read_lookup_file(const std::string& path, char delimiter, const DialectOptions& opts, uint64_t max_bytes) {
  LookupFile f;
  f.path = path;
  const std::string data = read_whole(path, max_bytes);
  std::string delim = delimiter ? std::string(1, delimiter) : opts.delimiter;
  if (!delimiter && opts.delimiter_auto) {  // sniffed as the input's is
    const size_t n = std::min(data.size(), kDelimiterSniffBytes);
    delim = std::string(1, sniff_delimiter(data.data(), n, n == data.size(), opts.quote, opts.escape, opts.comment, 0)
                               .delimiter);
  }
  if (delim.find(opts.quote) != std::string::npos)
    throw UsageError(fmt::format("join '{}': the delimiter {} is the quote character; give the lookup file "
                                 "another delimiter",
                                 path, delim));
  const Dialect d = make_dialect(delim, opts.quote, opts.escape, opts.comment);
  uint64_t pos = data.size() >= 3 && std::memcmp(data.data(), "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  uint64_t line = 1;
  size_t ncols = 0;
  bool header = true;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  std::vector<uint8_t> flags;
  std::vector<std::string> names;
  std::vector<TypeGuess> guesses;
  f.text.reserve(data.size());
  while (pos < data.size()) {
    spans.clear();
    flags.clear();
    const uint64_t row_line = line;
    const RowResult r = parse_row(d, data.data(), pos, data.size(), true, [&](uint32_t, uint64_t b, uint64_t e, uint8_t fl) {
      spans.emplace_back(b, e);
      flags.push_back(fl);
    });
    line += r.lines;
    const uint64_t row_begin = pos;
    pos = r.next;
    if (r.comment || (r.empty && (ncols != 1 || header))) continue;
    if (r.error != RowError::None)
      throw InputError(fmt::format("{}:{}: the lookup file of a join has a malformed row ({}); fix the file",
                                   path, row_line,
                                   r.error == RowError::UnterminatedQuote ? "a quote that is never closed"
                                                                          : "text after a closing quote"));
    if (header) {
      for (size_t i = 0; i < spans.size(); ++i) {
        std::string name(data.data() + spans[i].first, spans[i].second - spans[i].first);
        if (flags[i] & kFieldEscaped) name.resize(unescape_field(d, name.data(), static_cast<uint32_t>(name.size()), name.data()));
        names.push_back(name.empty() ? "c" + std::to_string(i + 1) : name);
      }
      make_names_unique(names);
      ncols = names.size();
      guesses.assign(ncols, TypeGuess(opts.null_tokens));
      header = false;
      continue;
    }
    size_t nfields = spans.size();
    // A trailing delimiter (one extra, empty, unquoted field) is tolerated, as in the input.
    if (nfields == ncols + 1 && spans.back().first == spans.back().second && flags.back() == 0) nfields = ncols;
    if (nfields != ncols)
      throw InputError(fmt::format("{}:{}: the lookup file of a join has a row of {} fields where its header has "
                                   "{}; fix the file (a delimiter other than the input's is given as join '{}' "
                                   "delimiter ';' on ...)",
                                   path, row_line, nfields, ncols, path));
    (void)row_begin;
    for (size_t i = 0; i < ncols; ++i) {
      const char* p = data.data() + spans[i].first;
      uint32_t n = static_cast<uint32_t>(spans[i].second - spans[i].first);
      const uint64_t at = f.text.size();
      f.text.append(p, n);
      if (flags[i] & kFieldEscaped) {
        n = unescape_field(d, f.text.data() + at, n, f.text.data() + at);
        f.text.resize(at + n);
      }
      f.field_begin.push_back(at);
      f.field_len.push_back(n);
      guesses[i].observe(f.text.data() + at, n);
    }
    f.line.push_back(row_line);
  }
  if (header) throw InputError(fmt::format("{}: the lookup file of a join is empty: it needs a header line that names its columns", path));
  if (f.line.size() >= kNoLookupRow - 1)
    throw ResourceError(fmt::format("join '{}': the lookup file has more than 4 billion rows", path));
  for (size_t i = 0; i < ncols; ++i) f.schema.push_back(OutputColumn{names[i], guesses[i].result()});
  return f;
}

LookupTable::LookupTable(const LookupFile& file, const JoinSpec& spec, const std::vector<std::string>& null_tokens)
    : strings_(&file.text) {
  const size_t ncols = file.schema.size();
  const size_t nkeys = spec.key_columns.size();
  const uint32_t width = static_cast<uint32_t>(nkeys + spec.columns.size());
  rows_ = static_cast<uint32_t>(file.rows());
  cells_.resize(static_cast<size_t>(rows_) * width);
  hashes_.resize(rows_);
  next_.assign(rows_, kNoLookupRow);
  std::vector<Type> key_types;
  for (const ColumnType& t : spec.key_types) key_types.push_back(t.type);
  cell_types_ = key_types;
  for (int c : spec.columns) cell_types_.push_back(file.schema[static_cast<size_t>(c)].type.type);
  auto value_of = [&](size_t r, int col) {
    const size_t at = r * ncols + static_cast<size_t>(col);
    const char* p = file.text.data() + file.field_begin[at];
    const uint32_t n = file.field_len[at];
    if (is_null_text(p, n, null_tokens)) return Value::make_null();
    Value v = Value::make_null();
    const ColumnType t = file.schema[static_cast<size_t>(col)].type;
    if (!field_to_value(t, p, n, &v, true)) return Value::make_null();  // inferred from every value: never
    if (t.type != Type::String) {  // printed as written, as an input column's field
      v.text = p;
      v.text_len = n;
    }
    return v;
  };
  char scratch[64];
  for (size_t r = 0; r < rows_; ++r) {
    Value* row = cells_.data() + r * width;
    for (size_t k = 0; k < nkeys; ++k) {
      const int col = spec.key_columns[k];
      const ColumnType from = file.schema[static_cast<size_t>(col)].type, to = spec.key_types[k];
      Value v = value_of(r, col);
      if (!v.null && from != to) {  // a number or date widened to the row key's type
        Instr cast{Op::Cast, to.type, to.scale, from.type, from.scale, 0};
        EvalContext ctx = make_eval_context(scratch, sizeof scratch);
        v = detail::cast_value(cast, v, ctx);
        if (ctx.status != EvalStatus::Ok) v = Value::make_null();  // matches no row
      }
      row[k] = v;
    }
    for (size_t c = 0; c < spec.columns.size(); ++c) row[nkeys + c] = value_of(r, spec.columns[c]);
    hashes_[r] = lookup_hash(row, key_types.data(), static_cast<uint32_t>(nkeys));
  }
  // Buckets: at most half full; each distinct key's first row, later rows chained in file order.
  uint32_t nb = 16;
  while (nb < 2ull * rows_ + 2) nb *= 2;
  buckets_.assign(nb, kNoLookupRow);
  std::vector<uint32_t> last(nb, kNoLookupRow);
  view_ = LookupView{cells_.data(), hashes_.data(), next_.data(), buckets_.data(), nb - 1, width,
                     static_cast<uint32_t>(nkeys)};
  for (uint32_t r = 0; r < rows_; ++r) {
    const Value* row = cells_.data() + static_cast<size_t>(r) * width;
    bool null_key = false;
    for (size_t k = 0; k < nkeys; ++k) null_key |= row[k].null;
    if (null_key) continue;  // never matched
    for (uint32_t b = static_cast<uint32_t>(hashes_[r]) & (nb - 1);; b = (b + 1) & (nb - 1)) {
      const uint32_t first = buckets_[b];
      if (first == kNoLookupRow) {
        buckets_[b] = last[b] = r;
        break;
      }
      bool same = hashes_[first] == hashes_[r];
      const Value* other = cells_.data() + static_cast<size_t>(first) * width;
      for (size_t k = 0; k < nkeys && same; ++k) same = key_equal(other[k], row[k], key_types[k]);
      if (same) {
        next_[last[b]] = r;
        last[b] = r;
        break;
      }
    }
  }
}

}  // namespace warpcsv
