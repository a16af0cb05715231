// substr, trim, ltrim, rtrim and split_part (core/eval.hpp) against plain
// std::string references on random strings, DuckDB's answers on a few, and
// their type errors.
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

std::string str(StrRef s) { return std::string(s.ptr, s.len); }

// DuckDB's substring, written over positions 1..n of a std::string.
std::string substr_reference(const std::string& s, long start, bool has_length, long length) {
  const long n = static_cast<long>(s.size());
  const long first = start > 0 ? start : start < 0 ? n + start + 1 : 0;
  std::string out;
  for (long pos = 1; pos <= n; ++pos) {
    const bool in = !has_length ? pos >= first
                    : length >= 0 ? pos >= first && pos < first + length
                                  : pos >= first + length && pos < first;
    if (in) out += s[static_cast<size_t>(pos - 1)];
  }
  return out;
}

std::vector<std::string> split_reference(const std::string& s, const std::string& sep) {
  std::vector<std::string> pieces;
  if (sep.empty()) {
    for (char c : s) pieces.push_back(std::string(1, c));
    return pieces;
  }
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
    std::string s(rng() % 9, ' ');
    for (char& c : s) c = "ab,|"[rng() % 4];
    const StrRef ref{s.data(), static_cast<uint32_t>(s.size())};
    const long start = static_cast<long>(rng() % 25) - 12, length = static_cast<long>(rng() % 25) - 12;
    INFO("'" << s << "' start " << start << " length " << length);
    REQUIRE(str(detail::substr_bytes(ref, start, false, 0)) == substr_reference(s, start, false, 0));
    REQUIRE(str(detail::substr_bytes(ref, start, true, length)) == substr_reference(s, start, true, length));
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
  CHECK(str(detail::substr_bytes(hr, 0, true, 2)) == "h");
  CHECK(str(detail::substr_bytes(hr, -3, false, 0)) == "llo");
  CHECK(str(detail::substr_bytes(hr, 3, true, -2)) == "he");
  CHECK(str(detail::substr_bytes(hr, -10, true, 3)).empty());
  const std::string csv = "a,b,,c";
  const StrRef cr{csv.data(), 6};
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, 2)) == "b");
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, -1)) == "c");
  CHECK(str(detail::split_part(cr, StrRef{",", 1}, 0)).empty());
  CHECK(str(detail::split_part(cr, StrRef{"", 0}, 2)) == ",");
}

TEST_CASE("string functions in the language: trims, types and errors", "[functions]") {
  const std::vector<OutputColumn> schema = {{"s", ColumnType{Type::String, 0}}, {"i", ColumnType{Type::Int, 0}},
                                            {"d", ColumnType{Type::Date, 0}}};
  auto error_of = [&](const std::string& pipeline) {
    try {
      build_plan(pipeline, schema);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("select substr(s, i), substr(s, 1, i), trim(s), ltrim(s), rtrim(s), split_part(s, \",\", i)").empty());
  CHECK(error_of("select substr(s, \"1\")").find("substr() needs an int, found") != std::string::npos);
  CHECK(error_of("select substr(i, 1)").find("substr() needs a string") != std::string::npos);
  CHECK(error_of("select trim(s, s)").find("trim(s)") != std::string::npos);
  CHECK(error_of("select split_part(s, 1, 2)").find("split_part() needs a string") != std::string::npos);
  CHECK(error_of("select substring(s, 1)").find("did you mean 'substr'") != std::string::npos);
}
