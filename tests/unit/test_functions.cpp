// substr, trim, ltrim, rtrim and split_part (core/eval.hpp) against plain
// std::string references on random strings of one- to four-byte characters, DuckDB's answers on a few, and
// their type errors; greatest, least and nullif over values of every kind.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "eval_select.hpp"
#include "plan_error.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

std::string str(StrRef s) { return std::string(s.ptr, s.len); }

// The UTF-8 characters of s, one string each.
std::vector<std::string> chars_of(const std::string& s) {
  std::vector<std::string> chars;
  for (unsigned char c : s) {
    if ((c & 0xC0) == 0x80) chars.back() += static_cast<char>(c);
    else chars.emplace_back(1, static_cast<char>(c));
  }
  return chars;
}

// DuckDB's substring, written over characters 1..n.
std::string substr_reference(const std::string& s, long start, bool has_length, long length) {
  const std::vector<std::string> chars = chars_of(s);
  const long n = static_cast<long>(chars.size());
  const long first = start > 0 ? start : start < 0 ? n + start + 1 : 0;
  std::string out;
  for (long pos = 1; pos <= n; ++pos) {
    const bool in = !has_length ? pos >= first
                    : length >= 0 ? pos >= first && pos < first + length
                                  : pos >= first + length && pos < first;
    if (in) out += chars[static_cast<size_t>(pos - 1)];
  }
  return out;
}

std::vector<std::string> split_reference(const std::string& s, const std::string& sep) {
  if (sep.empty()) return chars_of(s);
  std::vector<std::string> pieces;
  size_t from = 0;
  for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + sep.size())
    pieces.push_back(s.substr(from, at - from));
  pieces.push_back(s.substr(from));
  return pieces;
}

}  // namespace

TEST_CASE("substr and split_part agree with plain references", "[functions]") {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 20000; ++iter) {
    // ASCII, and characters of two, three and four bytes.
    const std::vector<std::string> alphabet = {"a", "b", ",", "|", "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80"};
    std::string s;
    for (size_t k = rng() % 9; k > 0; --k) s += alphabet[rng() % (iter % 2 ? 4 : alphabet.size())];
    const StrRef ref{s.data(), static_cast<uint32_t>(s.size())};
    const long start = static_cast<long>(rng() % 25) - 12, length = static_cast<long>(rng() % 25) - 12;
    INFO("'" << s << "' start " << start << " length " << length);
    REQUIRE(str(detail::substr_chars(ref, start, false, 0)) == substr_reference(s, start, false, 0));
    REQUIRE(str(detail::substr_chars(ref, start, true, length)) == substr_reference(s, start, true, length));
    const std::string sep = std::vector<std::string>{",", "||", "", "ab"}[rng() % 4];
    const std::vector<std::string> pieces = split_reference(s, sep);
    const long n = static_cast<long>(rng() % 13) - 6;
    const long count = static_cast<long>(pieces.size());
    const long want = n > 0 ? n : count + n + 1;
    const std::string expect = n != 0 && want >= 1 && want <= count ? pieces[static_cast<size_t>(want - 1)] : "";
    INFO("separator '" << sep << "' n " << n);
    REQUIRE(str(detail::split_part(ref, StrRef{sep.data(), static_cast<uint32_t>(sep.size())}, n)) == expect);
  }
  // DuckDB 1.5's answers.
  const std::string h = "hello";
  const StrRef hr{h.data(), 5};
  CHECK(str(detail::substr_chars(hr, 0, true, 2)) == "h");
  CHECK(str(detail::substr_chars(hr, -3, false, 0)) == "llo");
  CHECK(str(detail::substr_chars(hr, 3, true, -2)) == "he");
  CHECK(str(detail::substr_chars(hr, -10, true, 3)).empty());
  const std::string csv = "a,b,,c";
  const StrRef cr{csv.data(), 6};
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, 2)) == "b");
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, -1)) == "c");
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, 0)).empty());
  CHECK(str(detail::split_part(cr, StrRef{"", 0}, 2)) == ",");
  const std::string u = "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E";  // three characters of three bytes
  const StrRef ur{u.data(), 9};
  CHECK(str(detail::substr_chars(ur, 2, false, 0)) == u.substr(3));
  CHECK(str(detail::substr_chars(ur, 2, true, 1)) == u.substr(3, 3));
  CHECK(str(detail::substr_chars(ur, -1, false, 0)) == u.substr(6));
  CHECK(str(detail::split_part(ur, StrRef{"", 0}, -3)) == u.substr(0, 3));
}

TEST_CASE("string functions in the language: trims, types and errors", "[functions]") {
  const std::vector<OutputColumn> schema = {{"s", ColumnType{Type::String, 0}}, {"i", ColumnType{Type::Int, 0}},
                                            {"d", ColumnType{Type::Date, 0}}};
  auto error_of = [&](const std::string& pipeline) { return testing::plan_error(pipeline, schema); };
  CHECK(error_of("select substr(s, i), substr(s, 1, i), trim(s), ltrim(s), rtrim(s), split_part(s, \",\", i)").empty());
  CHECK(error_of("select substr(s, \"1\")").find("substr() needs an int, found") != std::string::npos);
  CHECK(error_of("select substr(i, 1)").find("substr() needs a string") != std::string::npos);
  CHECK(error_of("select trim(s, s)").find("trim(s)") != std::string::npos);
  CHECK(error_of("select split_part(s, 1, 2)").find("split_part() needs a string") != std::string::npos);
  CHECK(error_of("select substring(s, 1)").find("did you mean 'substr'") != std::string::npos);
}

TEST_CASE("greatest, least and nullif skip nulls and compare as sort does", "[functions]") {
  const std::vector<OutputColumn> schema = {{"a", ColumnType{Type::Int, 0}}, {"b", ColumnType{Type::Int, 0}},
                                            {"f", ColumnType{Type::Float, 0}}, {"s", ColumnType{Type::String, 0}}};
  auto eval_select = [&](const std::string& expr, const std::vector<Value>& row) {
    return testing::eval_select(expr, schema, row).value;
  };
  const Value n = Value::make_null();
  std::mt19937_64 rng(9);
  for (int iter = 0; iter < 2000; ++iter) {
    const bool an = rng() % 4 == 0, bn = rng() % 4 == 0;
    const int64_t a = static_cast<int64_t>(rng() % 7) - 3, b = static_cast<int64_t>(rng() % 7) - 3;
    const std::vector<Value> row = {an ? n : Value::of_int(a), bn ? n : Value::of_int(b), n, n};
    INFO("a " << (an ? "null" : std::to_string(a)) << ", b " << (bn ? "null" : std::to_string(b)));
    const Value g = eval_select("greatest(a, b)", row), l = eval_select("least(a, b)", row),
                nu = eval_select("nullif(a, b)", row);
    REQUIRE(g.null == (an && bn));
    REQUIRE(l.null == (an && bn));
    if (!g.null) REQUIRE(g.i == (an ? b : bn ? a : std::max(a, b)));
    if (!l.null) REQUIRE(l.i == (an ? b : bn ? a : std::min(a, b)));
    REQUIRE(nu.null == (an || (!bn && a == b)));
    if (!nu.null) REQUIRE(nu.i == a);
  }
  // Mixed numerics widen; NaN is the greatest float, as sort puts it last.
  const Value mixed = eval_select("least(a, 1.5)", {Value::of_int(1), n, n, n});
  CHECK(mixed.i == 10);  // decimal 1.0 at scale 1
  CHECK(std::isnan(eval_select("greatest(f, 1e300)", {n, n, Value::of_float(NAN), n}).f));
  const char* abc = "abc";
  CHECK(eval_select("greatest(s, 'abd')", {n, n, n, Value::of_str(abc, 3)}).s.len == 3);
}

namespace {
// LIKE by recursion over an ASCII string: the definition, slowly.
bool like_reference(const std::string& s, size_t i, const std::string& p, size_t j) {
  if (j == p.size()) return i == s.size();
  if (p[j] == '%') return like_reference(s, i, p, j + 1) || (i < s.size() && like_reference(s, i + 1, p, j));
  if (i == s.size()) return false;
  return (p[j] == '_' || p[j] == s[i]) && like_reference(s, i + 1, p, j + 1);
}
}  // namespace

TEST_CASE("like matches as its definition does; _ takes a UTF-8 character; ilike folds ASCII", "[functions]") {
  std::mt19937_64 rng(77);
  for (int iter = 0; iter < 50000; ++iter) {
    std::string s(rng() % 8, ' '), p(rng() % 6, ' ');
    for (char& c : s) c = "aab"[rng() % 3];
    for (char& c : p) c = "ab%_"[rng() % 4];
    INFO("'" << s << "' like '" << p << "'");
    REQUIRE(detail::like_match(StrRef{s.data(), static_cast<uint32_t>(s.size())},
                               StrRef{p.data(), static_cast<uint32_t>(p.size())}, false) == like_reference(s, 0, p, 0));
  }
  auto like = [](const std::string& s, const std::string& p, bool fold = false) {
    return detail::like_match(StrRef{s.data(), static_cast<uint32_t>(s.size())},
                              StrRef{p.data(), static_cast<uint32_t>(p.size())}, fold);
  };
  CHECK(like("h\xc3\xa9llo", "h_llo"));      // one character of two bytes
  CHECK_FALSE(like("h\xc3\xa9llo", "h__llo"));
  CHECK(like("\xe2\x82\xac" "5", "_5"));      // three bytes
  CHECK(like("HeLLo", "hello", true));
  CHECK_FALSE(like("HeLLo", "hello"));
  CHECK_FALSE(like("\xc3\x89", "\xc3\xa9", true));  // folding is ASCII only, as lower() is
  const std::vector<OutputColumn> schema = {{"s", ColumnType{Type::String, 0}}};
  CHECK(build_plan("select s not like 'a%'", schema).output.back().name == "s not like \"a%\"");
  CHECK(build_plan("select s ilike 'a%' as m", schema).output.back().type.type == Type::Bool);
}
