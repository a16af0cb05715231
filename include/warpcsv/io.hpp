// Input sources (regular files, standard input, FIFOs, gzip and zstd streams), type inference
// over sampled fields, and the --schema option.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpcsv/core/types.hpp"

namespace warpcsv {

// A byte stream of one input: a regular file (read with pread; size known), standard input, a
// gzip stream (detected by the magic bytes 1f 8b, not the name; multi-member files; via zlib), or
// a zstd stream (magic 28 b5 2f fd, or a skippable frame first; concatenated frames, skippable
// frames passed over; via libzstd's streaming decoder, window at most 128 MiB), each read
// sequentially. Errors (missing file, permission denied, a directory, a corrupt or truncated
// gzip or zstd stream, data compressed twice, zstd input to a build without libzstd, UTF-16
// text) throw InputError naming the path and the fix.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; returns 0 only at end of input.
  virtual size_t read(char* dst, size_t n) = 0;
  // Regular uncompressed file: positional read without moving the stream (thread-safe), else false.
  virtual bool can_pread() const = 0;
  // Reads up to n bytes at `offset` (fewer only at end of file); only when can_pread().
  virtual size_t pread(char* dst, size_t n, uint64_t offset) = 0;
  virtual uint64_t size_hint() const = 0;       // total bytes if known, else 0
  virtual const std::string& name() const = 0;  // path, or "<stdin>"
};

// Opens `path` ("-" = standard input), recognising gzip and zstd by their magic bytes.
std::unique_ptr<ByteSource> open_source(const std::string& path);

// Accumulates the text of one column's sampled fields and names the narrowest type that holds
// them all: Bool < Int < Decimal(max scale) < Float, Date < Timestamp, else String. Empty fields
// and null tokens are skipped (nulls fit every type); a column of only nulls is String.
//
// Rules: a number written with a leading zero (more than one digit before the point starting with
// 0: "007", "-01", "00.5") makes the column String, so keys such as zip codes keep their text;
// "0", "0.5" and "-0" are numbers. Decimal holds at most 18 significant digits (integer digits
// of the widest value plus the largest scale) and a scale <= 18, else Float; "1.50" has scale 2.
// Exponents, inf and nan make Float. Thousands separators ("1,000") and surrounding spaces make
// String. Bool is true/false in any case (0/1 is Int).
class TypeGuess {
 public:
  TypeGuess() = default;
  // Fields equal to one of `null_tokens` are nulls (the empty field always is).
  explicit TypeGuess(std::vector<std::string> null_tokens) : nulls_(std::move(null_tokens)) {}
  // Takes one sampled field into account.
  void observe(const char* p, uint32_t n);
  // Takes the fields `other` observed into account too (fields observed in
  // pieces give the same result as one by one).
  void merge(const TypeGuess& other);
  // The narrowest type that holds every observed field.
  ColumnType result() const;
  // Non-null fields observed so far.
  uint64_t observed() const { return count_; }

  // Kinds of value a field (or every field of a column) can be read as.
  struct Kinds {
    bool is_bool, is_int, is_dec, is_float, is_date, is_ts;
    // The kinds both allow.
    Kinds both(const Kinds& o) const {
      return {is_bool && o.is_bool, is_int && o.is_int,   is_dec && o.is_dec,
              is_float && o.is_float, is_date && o.is_date, is_ts && o.is_ts};
    }
  };

 private:
  std::vector<std::string> nulls_;
  uint64_t count_ = 0;
  Kinds can_{true, true, true, true, true, true};  // what every observed field can be
  int max_scale_ = 0;       // largest fraction digit count among decimals
  int max_int_digits_ = 0;  // most significant digits before the point
  bool zoned_ = false;      // a timestamp with a zone (Z, +05:00) was seen: the column prints with Z
};

// Whether the text fits type t (what the executor checks for every row it parses). Numeric types
// follow the inference rules above (so "007" does not fit Int: the column widens to String);
// String always fits; Decimal needs a scale <= t.scale and a value that fits at that scale.
bool text_fits(const char* p, uint32_t n, ColumnType t);

// The next wider type that holds both `current` and the text (for widening after a later row
// does not fit): Int -> Decimal(s) -> Float -> String, Date -> Timestamp -> String, Bool -> String;
// a timestamp with a zone makes a Date or Timestamp column a zoned Timestamp (scale kZoned).
ColumnType widen_for(ColumnType current, const char* p, uint32_t n);

// One --schema entry. infer_scale: "decimal" without a scale (the scale is to be inferred;
// type.scale is 0 until then).
struct SchemaOverride {
  std::string name;
  ColumnType type;
  bool infer_scale;
};

// Parses --schema "name:type,name:type" (types int float decimal decimal(s) string bool date
// timestamp, any case; the last ':' of an entry separates the name, so names may contain ':').
// Unknown type names, empty names and duplicate names throw UsageError with the fix.
std::vector<SchemaOverride> parse_schema_option(const std::string& spec);

// Name of a type as --schema accepts it: "int", "decimal(2)", "timestamp", ...
std::string schema_type_name(ColumnType t);

// Renames names that repeat an earlier one: the later ones get a suffix `_2`,
// `_3`, ... that makes a name none of `names` has (the rule for a header that
// names a column twice, and for output columns). Names with `made_up[i]`
// set (an empty header name's position, `c3`) yield to all the others, as
// if they came last. src/io/names.cpp.
void make_names_unique(std::vector<std::string>& names, const std::vector<bool>& made_up = {});

}  // namespace warpcsv

namespace warpcsv {

// ---- --delimiter auto (src/io/sniff.cpp) ----------------------------------------------------

// Bytes of the first input that the delimiter sniffer looks at.
constexpr size_t kDelimiterSniffBytes = 64 << 10;

// What the sniffer chose and why (for --explain).
struct SniffResult {
  char delimiter = ',';   // the choice; ',' when no candidate splits the lines
  bool found = false;     // false: every candidate gave one field per row (a one-column file)
  uint32_t fields = 1;    // the field count most rows have with `delimiter`
  uint32_t rows = 0;      // complete rows sampled (comments, blank lines, --skip lines excluded)
  uint32_t consistent = 0;  // rows with exactly `fields` fields (trailing delimiter allowed)
};

// An input's name as the argument of a command a message suggests (`gzip -t
// NAME`): standard input has none to give, so the file it came from stands there.
inline std::string name_in_command(const std::string& source) { return source == "<stdin>" ? "FILE" : source; }

// The bytes of the UTF-8 byte order marks at p: one, or several where tools
// each added their own; none is part of the first column's name.
inline size_t bom_bytes(const char* p, size_t n) {
  size_t pos = 0;
  while (n - pos >= 3 && p[pos] == '\xEF' && p[pos + 1] == '\xBB' && p[pos + 2] == '\xBF') pos += 3;
  return pos;
}

// Picks among , ; \t | the delimiter that splits the sampled rows most consistently into more
// than one field: rows are read with the tool's own tokenizer (quotes, doubled quotes, `escape`,
// `comment` honoured; a UTF-8 BOM and `skip_lines` raw lines skipped), and each candidate scores
// the share of rows having its most common field count. Ties go to more fields, then to the
// order above. `at_eof`: the sample is the whole input (else its last partial row is ignored).
// A candidate equal to `quote` is never chosen.
SniffResult sniff_delimiter(const char* p, size_t n, bool at_eof, char quote, int escape,
                            int comment, int64_t skip_lines);

// One line for --explain, e.g. "--delimiter auto: ';' (3 fields in 12 of 12 sampled rows)".
std::string describe_sniff(const SniffResult& s);

}  // namespace warpcsv
