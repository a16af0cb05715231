// Type inference over sampled fields, per-row fit checks and widening, and --schema parsing.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "warpcsv/core/parse.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {
namespace {

// What one field could be. Numbers with a leading zero ("007") are none of the numeric kinds.
struct TextKind : TypeGuess::Kinds {
  int scale = 0;       // fraction digits, when is_dec
  int int_digits = 0;  // significant digits before the point, when is_dec
};

// "007", "-01", "00.5": more than one digit before the point, the first a zero.
bool has_leading_zero(const char* p, uint32_t n) {
  uint32_t i = (n > 0 && (p[0] == '+' || p[0] == '-')) ? 1 : 0;
  return i + 1 < n && p[i] == '0' && p[i + 1] >= '0' && p[i + 1] <= '9';
}

// [+-]digits, nothing else.
bool is_integer_text(const char* p, uint32_t n) {
  uint32_t i = (n > 0 && (p[0] == '+' || p[0] == '-')) ? 1 : 0;
  if (i == n) return false;
  for (; i < n; ++i)
    if (p[i] < '0' || p[i] > '9') return false;
  return true;
}

int significant_int_digits(const char* p, uint32_t n) {
  uint32_t i = (n > 0 && (p[0] == '+' || p[0] == '-')) ? 1 : 0;
  int d = 0;
  for (; i < n && p[i] >= '0' && p[i] <= '9'; ++i)
    if (d > 0 || p[i] != '0') d++;
  return d;
}

constexpr TypeGuess::Kinds kEveryKind{true, true, true, true, true, true};

// The kinds of a field among those `wanted` names (the others are left
// false): a column's sample no longer tests the kinds an earlier field ruled
// out, and a column already known to be String tests none.
// Writes to `k`: returned by value, the small struct was assembled in memory
// from byte stores and loaded back whole, a store-forwarding stall on every
// field (about a tenth of the sample's time).
void classify(const char* p, uint32_t n, TextKind& k, const TypeGuess::Kinds& wanted = kEveryKind) {
  k = TextKind{};  // no kind until tested
  bool b;
  int64_t i64;
  double f;
  if (wanted.is_bool) k.is_bool = parse_bool(p, n, &b);
  if ((wanted.is_int || wanted.is_dec || wanted.is_float) && !has_leading_zero(p, n)) {
    k.is_int = parse_int64(p, n, &i64);
    int s = decimal_text_scale(p, n);
    if (s >= 0) {
      k.is_dec = true;
      k.scale = s;
      k.int_digits = significant_int_digits(p, n);
    }
    k.is_float = k.is_int || k.is_dec || parse_float(p, n, &f);
    // An integer past 64 bits (an ID of 20 digits) is text: as doubles,
    // neighbouring IDs would become one value.
    if (!k.is_int && is_integer_text(p, n)) k.is_float = false;
  }
  if ((wanted.is_date || wanted.is_ts) && n >= 10 && p[4] == '-') {  // cheap pre-check: dates start with YYYY-
    k.is_ts = parse_timestamp(p, n, &i64);
    k.is_date = k.is_ts && parse_date(p, n, &i64);
  }
}

ColumnType make(Type t, int scale = 0) {
  ColumnType c;
  c.type = t;
  c.scale = static_cast<uint8_t>(scale);
  return c;
}

// The narrowest type among the kinds `k` allows: a decimal only when its
// `int_digits` and `scale` fit; String when none does.
ColumnType narrowest(const TypeGuess::Kinds& k, int scale, int int_digits) {
  if (k.is_bool) return make(Type::Bool);
  if (k.is_int) return make(Type::Int);
  if (k.is_dec && int_digits + scale <= kMaxDecimalScale) return make(Type::Decimal, scale);
  if (k.is_float) return make(Type::Float);
  if (k.is_date) return make(Type::Date);
  if (k.is_ts) return make(Type::Timestamp);
  return make(Type::String);
}

// The narrowest type holding one field of kind k.
ColumnType type_of(const TextKind& k) { return narrowest(k, k.scale, k.int_digits); }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void TypeGuess::observe(const char* p, uint32_t n) {
  if (n == 0) return;
  for (const auto& t : nulls_)
    if (t.size() == n && std::memcmp(t.data(), p, n) == 0) return;
  TextKind k;
  classify(p, n, k, can_);
  count_++;
  can_ = can_.both(k);
  if (k.is_ts && !k.is_date && !zoned_) zoned_ = timestamp_has_zone(p, n);
  if (k.is_dec) {
    max_scale_ = std::max(max_scale_, k.scale);
    max_int_digits_ = std::max(max_int_digits_, k.int_digits);
  }
}

void TypeGuess::merge(const TypeGuess& other) {
  count_ += other.count_;
  can_ = can_.both(other.can_);
  max_scale_ = std::max(max_scale_, other.max_scale_);
  max_int_digits_ = std::max(max_int_digits_, other.max_int_digits_);
  zoned_ = zoned_ || other.zoned_;
}

ColumnType TypeGuess::result() const {
  if (count_ == 0) return make(Type::String);
  const ColumnType t = narrowest(can_, max_scale_, max_int_digits_);
  return t.type == Type::Timestamp && zoned_ ? make(Type::Timestamp, kZoned) : t;
}

bool text_fits(const char* p, uint32_t n, ColumnType t) {
  if (n == 0) return true;  // the empty field is null, and nulls fit every type
  bool b;
  int64_t i64;
  double f;
  switch (t.type) {
    case Type::String: return true;
    case Type::Null: return false;
    case Type::Bool: return parse_bool(p, n, &b);
    case Type::Int: return !has_leading_zero(p, n) && parse_int64(p, n, &i64);
    case Type::Decimal: return !has_leading_zero(p, n) && parse_decimal(p, n, t.scale, &i64);
    case Type::Float: return !has_leading_zero(p, n) && parse_float(p, n, &f);
    case Type::Date: return parse_date(p, n, &i64);
    case Type::Timestamp: return parse_timestamp(p, n, &i64) && (t.scale == kZoned || !timestamp_has_zone(p, n));
  }
  return false;
}

ColumnType widen_for(ColumnType current, const char* p, uint32_t n) {
  if (text_fits(p, n, current)) return current;
  TextKind k;
  classify(p, n, k);
  switch (current.type) {
    case Type::Null: return type_of(k);
    case Type::Int:
    case Type::Decimal: {
      if (k.is_dec) {
        int scale = std::max<int>(current.type == Type::Decimal ? current.scale : 0, k.scale);
        if (k.int_digits + scale <= kMaxDecimalScale) {
          ColumnType d = make(Type::Decimal, scale);
          if (text_fits(p, n, d)) return d;
        }
        return make(Type::Float);
      }
      return k.is_float ? make(Type::Float) : make(Type::String);
    }
    case Type::Date:
    case Type::Timestamp:  // a zone makes a timestamp column zoned
      return k.is_ts ? make(Type::Timestamp, timestamp_has_zone(p, n) ? kZoned : current.scale) : make(Type::String);
    default: return make(Type::String);
  }
}

std::string schema_type_name(ColumnType t) {
  switch (t.type) {
    case Type::Null: return "null";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Decimal: return "decimal(" + std::to_string(t.scale) + ")";
    case Type::Float: return "float";
    case Type::String: return "string";
    case Type::Date: return "date";
    case Type::Timestamp: return "timestamp";
  }
  return "?";
}

std::vector<SchemaOverride> parse_schema_option(const std::string& spec) {
  static const char* kExpected =
      "expected one of int, float, decimal, decimal(S) with S in 0..18, string, bool, date, "
      "timestamp";
  std::vector<SchemaOverride> out;
  size_t start = 0;
  for (;;) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string entry = spec.substr(start, end - start);
    const std::string where = "--schema '" + spec + "' at position " + std::to_string(start + 1);
    const size_t colon = entry.rfind(':');
    if (trim(entry).empty())
      throw UsageError(where + ": expected name:type, found an empty entry; separate entries "
                       "with single commas, e.g. --schema 'id:int,price:decimal(2)'");
    if (colon == std::string::npos)
      throw UsageError(where + ": expected name:type, found '" + trim(entry) +
                       "'; write e.g. --schema '" + trim(entry) + ":string'");
    SchemaOverride o;
    o.name = trim(entry.substr(0, colon));
    o.infer_scale = false;
    const std::string raw_type = trim(entry.substr(colon + 1));
    const std::string ty = lower(raw_type);
    if (o.name.empty())
      throw UsageError(where + ": expected a column name before ':' in '" + trim(entry) +
                       "'; write name:type");
    if (ty == "int" || ty == "integer" || ty == "int64" || ty == "bigint") {
      o.type = make(Type::Int);
    } else if (ty == "float" || ty == "double" || ty == "float64") {
      o.type = make(Type::Float);
    } else if (ty == "string" || ty == "str" || ty == "text" || ty == "varchar") {
      o.type = make(Type::String);
    } else if (ty == "bool" || ty == "boolean") {
      o.type = make(Type::Bool);
    } else if (ty == "date") {
      o.type = make(Type::Date);
    } else if (ty == "timestamp" || ty == "datetime") {
      o.type = make(Type::Timestamp);
    } else if (ty == "decimal") {
      o.type = make(Type::Decimal, 0);
      o.infer_scale = true;
    } else if (ty.size() > 9 && ty.compare(0, 8, "decimal(") == 0 && ty.back() == ')') {
      const std::string digits = trim(ty.substr(8, ty.size() - 9));
      bool ok = !digits.empty() && digits.size() <= 2 &&
                std::all_of(digits.begin(), digits.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
      int scale = ok ? std::stoi(digits) : -1;
      if (!ok || scale > kMaxDecimalScale)
        throw UsageError(where + ": column '" + o.name + "' has type '" + raw_type +
                         "'; the scale of decimal(S) must be a whole number from 0 to 18, e.g. "
                         "decimal(2), or write decimal to infer it");
      o.type = make(Type::Decimal, scale);
    } else {
      throw UsageError(where + ": unknown type '" + raw_type + "' for column '" + o.name +
                       "'; " + kExpected);
    }
    for (const auto& prev : out)
      if (prev.name == o.name)
        throw UsageError(where + ": column '" + o.name + "' is given a type twice; keep one "
                         "name:type entry per column");
    out.push_back(o);
    if (end == spec.size()) break;
    start = end + 1;
  }
  return out;
}

}  // namespace warpcsv
