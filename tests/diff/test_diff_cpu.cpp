// Differential tests of whole runs (run_pipeline, the library entry of the tool) on seeded
// random CSV files: every question's output bytes, --rejects file and exit code must be the
// same at every --chunk-size and --threads setting, and must agree with a naive reference
// computed from the generator's own record of every cell (no CSV parsing involved).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "reference_stats.hpp"
#include "test_files.hpp"
#include "diff/key_types_csv.hpp"
#include "diff/random_csv.hpp"
#include "exec/holistic.hpp"
#include "exec/scan.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

using testing::CaptureStderr;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

using int128 = __int128;
using Recs = std::vector<const Record*>;

// ---- running the tool ------------------------------------------------------------------

struct RunResult {
  int code = 0;
  std::string out, rejects, error, diagnostics;  // diagnostics: what went to stderr
};

RunResult run_tool(const TempDir& dir, const std::string& pipeline, const std::vector<std::string>& inputs,
                   uint64_t chunk, int threads, bool skip, const std::string& delimiter = ",") {
  Options opts;
  opts.pipeline = pipeline;
  opts.dialect.delimiter = delimiter;
  opts.files = inputs;
  opts.chunk_size = chunk;
  opts.threads = threads;
  opts.device = "cpu";
  opts.output_path = dir.file("out.csv");
  std::remove(opts.output_path.c_str());
  if (skip) {
    opts.bad_rows = BadRows::Skip;
    opts.rejects_path = dir.file("rejects.csv");
    std::remove(opts.rejects_path.c_str());
  }
  RunResult r;
  {
    CaptureStderr capture(dir.file("stderr.txt"));
    r.code = testing::run_to_exit(opts, r.error);
  }
  r.diagnostics = read_file(dir.file("stderr.txt"));
  r.out = read_file(opts.output_path);
  if (skip) r.rejects = read_file(opts.rejects_path);
  return r;
}

const std::vector<uint64_t> kChunks = {1, 2, 3, 7, 16, 64, 1000, 1 << 20};
const std::vector<int> kThreads = {1, 2, 3, 4};

// Runs at one huge chunk on one thread, then at every setting; all must match byte for byte.
RunResult run_everywhere(const TempDir& dir, const std::string& pipeline,
                         const std::vector<std::string>& inputs, bool skip, const std::string& delimiter = ",") {
  const RunResult base = run_tool(dir, pipeline, inputs, 1ull << 30, 1, skip, delimiter);
  for (uint64_t chunk : kChunks) {
    for (int threads : kThreads) {
      const RunResult r = run_tool(dir, pipeline, inputs, chunk, threads, skip, delimiter);
      INFO("pipeline: " << pipeline << "\nchunk " << chunk << " threads " << threads);
      CHECK(r.code == base.code);
      CHECK(r.error == base.error);
      CHECK(r.rejects == base.rejects);
      CHECK(r.diagnostics == base.diagnostics);
      REQUIRE(r.out == base.out);
    }
  }
  // The CPU executor's row-at-a-time path alone (no batches of plain rows): the same run.
  set_cpu_row_batches(false);
  const RunResult general = run_tool(dir, pipeline, inputs, 7, 2, skip, delimiter);
  set_cpu_row_batches(true);
  INFO("pipeline: " << pipeline << "\nrows one at a time, chunk 7, threads 2");
  CHECK(general.code == base.code);
  CHECK(general.error == base.error);
  CHECK(general.rejects == base.rejects);
  CHECK(general.diagnostics == base.diagnostics);
  REQUIRE(general.out == base.out);
  return base;
}

// ---- the naive reference ------------------------------------------------------------------

// What one output cell must be.
struct Cell {
  enum Kind { Null, Text, Dec, Float } kind;
  std::string text;   // Text
  int128 dec = 0;     // Dec: value * 10^4
  long double f = 0;  // Float
  double tol = 0;     // Float: relative tolerance (absolute below 1)
};
Cell null_cell() { return Cell{Cell::Null, "", 0, 0, 0}; }
Cell text_cell(const std::string& s) { return Cell{Cell::Text, s, 0, 0, 0}; }
Cell int_cell(int128 v) {
  std::string s;
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u);
  return text_cell(neg ? "-" + s : s);
}
Cell dec_cell(int128 v) { return Cell{Cell::Dec, "", v, 0, 0}; }
Cell float_cell(long double v, double tol) { return Cell{Cell::Float, "", 0, v, tol}; }
template <class T>
Cell opt_text(const std::optional<T>& v) {
  return v ? text_cell(*v) : null_cell();
}

// "-12.3400" as an exact value * 10^4; false if it is not decimal text with <= 18 places.
bool parse_dec(const std::string& s, int128* out) {
  size_t i = 0;
  const bool neg = !s.empty() && s[0] == '-';
  if (neg) ++i;
  int128 m = 0;
  int places = -1;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (s[i] == '.' && places < 0) {
      places = 0;
      continue;
    }
    if (s[i] < '0' || s[i] > '9') return false;
    m = m * 10 + (s[i] - '0');
    if (places >= 0) ++places;
  }
  if (places < 0) places = 0;
  if (places > 18) return false;
  for (; places < 4; ++places) m *= 10;
  for (; places > 4; --places) {
    if (m % 10 != 0) return false;  // more precision than the reference holds
    m /= 10;
  }
  *out = neg ? -m : m;
  return true;
}

std::string describe(const Cell& c) {
  switch (c.kind) {
    case Cell::Null:
      return "null";
    case Cell::Text:
      return "'" + c.text + "'";
    case Cell::Dec:
      return "decimal " + int_cell(c.dec).text + "e-4";
    case Cell::Float: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "float %.17Lg", c.f);
      return buf;
    }
  }
  return "";
}

bool cell_matches(const Cell& c, const std::optional<std::string>& got) {
  switch (c.kind) {
    case Cell::Null:
      return !got;
    case Cell::Text:
      return got && *got == c.text;
    case Cell::Dec: {
      int128 v;
      return got && parse_dec(*got, &v) && v == c.dec;
    }
    case Cell::Float: {
      if (!got) return false;
      // The tool prints the shortest text that reads back as its double.
      char* end = nullptr;
      const long double g = std::strtod(got->c_str(), &end);
      if (end != got->c_str() + got->size()) return false;
      const long double scale = std::max<long double>(1, std::fabs(c.f));
      return std::fabs(g - c.f) <= c.tol * scale;
    }
  }
  return false;
}

// Compares the tool's CSV output with the reference's header and rows, in order.
void check_output(const std::string& csv, const std::vector<std::string>& header,
                  const std::vector<std::vector<Cell>>& expect) {
  const auto rows = naive_split(csv);
  REQUIRE(!rows.empty());
  std::vector<std::string> got_header;
  for (const auto& h : rows[0]) got_header.push_back(h.value_or(""));
  REQUIRE(got_header == header);
  INFO("tool output:\n" << csv);
  REQUIRE(rows.size() - 1 == expect.size());
  for (size_t r = 0; r < expect.size(); ++r) {
    REQUIRE(rows[r + 1].size() == header.size());
    for (size_t c = 0; c < header.size(); ++c) {
      const auto& got = rows[r + 1][c];
      INFO("row " << r + 1 << " column " << header[c] << ": expected " << describe(expect[r][c]) << ", got "
                  << (got ? "'" + *got + "'" : "null"));
      CHECK(cell_matches(expect[r][c], got));
    }
  }
}

// Group keys order like the tool's output: ascending, nulls last.
struct OptStr {
  std::optional<std::string> v;
  bool operator<(const OptStr& o) const {
    if (v.has_value() != o.v.has_value()) return v.has_value();
    return v && *v < *o.v;
  }
};

// Aggregates of one group, computed from its rows in input order.
template <class Get>
std::optional<int128> sum_of(const Recs& g, Get get) {
  std::optional<int128> s;
  for (const Record* r : g)
    if (auto x = get(*r)) s = s.value_or(0) + *x;
  return s;
}
template <class Get>
int64_t count_of(const Recs& g, Get get) {
  int64_t n = 0;
  for (const Record* r : g) n += get(*r).has_value();
  return n;
}
template <class Get, class Less>
auto extreme_of(const Recs& g, Get get, Less less) -> decltype(get(*g[0])) {
  decltype(get(*g[0])) best;
  for (const Record* r : g)
    if (auto x = get(*r); x && (!best || less(*x, *best))) best = x;
  return best;
}
template <class Get>
auto first_of(const Recs& g, Get get) -> decltype(get(*g[0])) {
  for (const Record* r : g)
    if (auto x = get(*r)) return x;
  return std::nullopt;
}
template <class Get>
auto last_of(const Recs& g, Get get) -> decltype(get(*g[0])) {
  for (auto it = g.rbegin(); it != g.rend(); ++it)
    if (auto x = get(**it)) return x;
  return std::nullopt;
}
// Sample variance and its count, in long double from the exact values.
template <class Get>
std::optional<long double> var_of(const Recs& g, Get get) {
  std::vector<long double> xs;
  for (const Record* r : g)
    if (auto x = get(*r)) xs.push_back(static_cast<long double>(*x));
  if (xs.size() < 2) return std::nullopt;
  long double mean = 0, m2 = 0;
  for (long double x : xs) mean += x;
  mean /= xs.size();
  for (long double x : xs) m2 += (x - mean) * (x - mean);
  return m2 / (xs.size() - 1);
}
template <class GetX, class GetY>
std::optional<long double> corr_of(const Recs& g, GetX gx, GetY gy) {
  std::vector<std::pair<long double, long double>> v;
  for (const Record* r : g) {
    auto x = gx(*r);
    auto y = gy(*r);
    if (x && y) v.push_back({static_cast<long double>(*x), static_cast<long double>(*y)});
  }
  return testing::naive_pearson(v);
}

auto get_v1 = [](const Record& r) { return r.v1; };
auto get_v2 = [](const Record& r) { return r.v2; };
auto get_s = [](const Record& r) { return r.s; };
auto get_f = [](const Record& r) { return r.f; };
auto less = [](const auto& a, const auto& b) { return a < b; };
auto greater = [](const auto& a, const auto& b) { return b < a; };

// Holistic references: a group's non-null values, sorted.
template <class Get>
auto sorted_of(const Recs& g, Get get) {
  std::vector<std::decay_t<decltype(*get(*g[0]))>> v;
  for (const Record* r : g)
    if (auto x = get(*r)) v.push_back(*x);
  std::sort(v.begin(), v.end());
  return v;
}
template <class T>
int64_t distinct_of(const std::vector<T>& sorted) {
  return static_cast<int64_t>(std::set<T>(sorted.begin(), sorted.end()).size());
}
std::optional<int128> sum_of_values(const std::vector<int64_t>& v) {
  if (v.empty()) return std::nullopt;
  int128 s = 0;
  for (int64_t x : v) s += x;
  return s;
}
// The textbook linear quantile: position (n - 1) q between its two neighbours.
template <class T>
std::optional<long double> quantile_of(const std::vector<T>& sorted, long double q, long double unit = 1) {
  if (sorted.empty()) return std::nullopt;
  const long double h = (sorted.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return (sorted[lo] + (static_cast<long double>(sorted[hi]) - sorted[lo]) * (h - lo)) / unit;
}

Cell opt_int(const std::optional<int128>& v) { return v ? int_cell(*v) : null_cell(); }
Cell opt_dec(const std::optional<int128>& v) { return v ? dec_cell(*v) : null_cell(); }
Cell opt_float(const std::optional<long double>& v, double tol) {
  return v ? float_cell(*v, tol) : null_cell();
}
template <class T>
std::optional<int128> widen(const std::optional<T>& v) {
  return v ? std::optional<int128>(*v) : std::nullopt;
}
Cell decimal_mean(const Recs& g) {
  const auto s = sum_of(g, get_v2);
  const int64_t n = count_of(g, get_v2);
  return s ? float_cell(static_cast<long double>(*s) / 1e4L / n, 1e-13) : null_cell();
}
Cell decimal_var(const Recs& g, bool sqrt_of) {
  auto v = var_of(g, get_v2);
  if (!v) return null_cell();
  *v /= 1e8L;
  return float_cell(sqrt_of ? std::sqrt(*v) : *v, 1e-12);
}

// The question catalogue: each pipeline with its naive reference over the good records.
struct Question {
  std::string pipeline;
  std::vector<std::string> header;
  std::function<std::vector<std::vector<Cell>>(const Recs&)> expect;
};

template <class Key, class KeyOf>
std::map<Key, Recs> group_by(const Recs& rows, KeyOf key) {
  std::map<Key, Recs> groups;
  for (const Record* r : rows) groups[key(*r)].push_back(r);
  return groups;
}
auto by_k1 = [](const Record& r) { return OptStr{r.k1}; };
auto by_k2 = [](const Record& r) { return r.k2; };
auto by_k1_k2 = [](const Record& r) { return std::make_pair(OptStr{r.k1}, r.k2); };

std::vector<Question> questions() {
  std::vector<Question> q;
  q.push_back({"groupby k1 | agg sum(v2) as s, count() as n", {"k1", "s", "n"}, [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (auto& [k, g] : group_by<OptStr>(rows, by_k1))
                   out.push_back({opt_text(k.v), opt_dec(sum_of(g, get_v2)), int_cell(g.size())});
                 return out;
               }});
  q.push_back({"groupby k1, k2 | agg sum(v1) as s, count(v2) as c, min(v2) as mn, max(v2) as mx",
               {"k1", "k2", "s", "c", "mn", "mx"},
               [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (auto& [k, g] : group_by<std::pair<OptStr, int64_t>>(rows, by_k1_k2))
                   out.push_back({opt_text(k.first.v), int_cell(k.second), opt_int(sum_of(g, get_v1)),
                                  int_cell(count_of(g, get_v2)), opt_dec(widen(extreme_of(g, get_v2, less))),
                                  opt_dec(widen(extreme_of(g, get_v2, greater)))});
                 return out;
               }});
  q.push_back(
      {"groupby k2 | agg mean(v2) as m, var(v2) as va, std(v2) as sd, std(v1) as sd1, "
       "corr(v1, v2) as r",
       {"k2", "m", "va", "sd", "sd1", "r"},
       [](const Recs& rows) {
         std::vector<std::vector<Cell>> out;
         for (auto& [k, g] : group_by<int64_t>(rows, by_k2)) {
           auto v1var = var_of(g, get_v1);
           out.push_back({int_cell(k), decimal_mean(g), decimal_var(g, false), decimal_var(g, true),
                          v1var ? float_cell(std::sqrt(*v1var), 1e-12) : null_cell(),
                          opt_float(corr_of(g, get_v1, get_v2), 1e-12)});
         }
         return out;
       }});
  q.push_back(
      {"groupby k1 | agg min(s) as smin, max(s) as smax, first(s) as fs, last(s) as ls, "
       "first(v1) as fv, last(v2) as lv, count(s) as cs",
       {"k1", "smin", "smax", "fs", "ls", "fv", "lv", "cs"},
       [](const Recs& rows) {
         std::vector<std::vector<Cell>> out;
         for (auto& [k, g] : group_by<OptStr>(rows, by_k1))
           out.push_back({opt_text(k.v), opt_text(extreme_of(g, get_s, less)),
                          opt_text(extreme_of(g, get_s, greater)), opt_text(first_of(g, get_s)),
                          opt_text(last_of(g, get_s)), opt_int(widen(first_of(g, get_v1))),
                          opt_dec(widen(last_of(g, get_v2))), int_cell(count_of(g, get_s))});
         return out;
       }});
  q.push_back({"filter v1 > 0 and k1 != \"alpha\" | groupby k2 | agg sum(v1) as s, count() as n",
               {"k2", "s", "n"},
               [](const Recs& rows) {
                 Recs kept;
                 for (const Record* r : rows)
                   if (r->v1 && *r->v1 > 0 && r->k1 && *r->k1 != "alpha") kept.push_back(r);
                 std::vector<std::vector<Cell>> out;
                 for (auto& [k, g] : group_by<int64_t>(kept, by_k2))
                   out.push_back({int_cell(k), opt_int(sum_of(g, get_v1)), int_cell(g.size())});
                 return out;
               }});
  q.push_back({"groupby k1 | agg count_distinct(v1) as cd, median(v2) as md, quantile(v1, 0.9) as q9, "
               "quantile(f, 0.25) as qf, median(s) as ms, count_distinct(s) as cs, sum(v1) as s1, first(s) as fs",
               {"k1", "cd", "md", "q9", "qf", "ms", "cs", "s1", "fs"},
               [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (auto& [k, g] : group_by<OptStr>(rows, by_k1)) {
                   const auto v1 = sorted_of(g, get_v1);
                   const auto s = sorted_of(g, get_s);
                   out.push_back({opt_text(k.v), int_cell(distinct_of(v1)),
                                  opt_float(quantile_of(sorted_of(g, get_v2), 0.5L, 1e4L), 1e-15),
                                  opt_float(quantile_of(v1, 0.9L), 1e-15),
                                  opt_float(quantile_of(sorted_of(g, get_f), 0.25L), 1e-12),
                                  s.empty() ? null_cell() : text_cell(s[(s.size() - 1) / 2]),
                                  int_cell(distinct_of(s)), opt_int(sum_of(g, get_v1)),
                                  opt_text(first_of(g, get_s))});
                 }
                 return out;
               }});
  q.push_back({"groupby k1 | agg sum(v1) as s, count() as n | filter n > 50 and s is not null",
               {"k1", "s", "n"},
               [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (auto& [k, g] : group_by<OptStr>(rows, by_k1)) {
                   const auto s = sum_of(g, get_v1);
                   if (g.size() > 50 && s) out.push_back({opt_text(k.v), int_cell(*s), int_cell(g.size())});
                 }
                 return out;
               }});
  q.push_back(
      {"groupby k2 | agg sum(v2) as s | sort s desc, k2 | limit 7", {"k2", "s"}, [](const Recs& rows) {
         std::vector<std::pair<int64_t, std::optional<int128>>> res;
         for (auto& [k, g] : group_by<int64_t>(rows, by_k2)) res.push_back({k, sum_of(g, get_v2)});
         // Nulls last; ties by k2 ascending.
         std::stable_sort(res.begin(), res.end(), [](const auto& a, const auto& b) {
           if (a.second.has_value() != b.second.has_value()) return a.second.has_value();
           if (a.second && *a.second != *b.second) return *a.second > *b.second;
           return a.first < b.first;
         });
         std::vector<std::vector<Cell>> out;
         for (size_t i = 0; i < res.size() && i < 7; ++i)
           out.push_back({int_cell(res[i].first), opt_dec(res[i].second)});
         return out;
       }});
  q.push_back({"select k1, v1, s", {"k1", "v1", "s"}, [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (const Record* r : rows)
                   out.push_back({opt_text(r->k1), opt_int(widen(r->v1)), opt_text(r->s)});
                 return out;
               }});
  q.push_back(
      {"filter v2 > 0 | select k2, v2, f", {"k2", "v2", "f"}, [](const Recs& rows) {
         std::vector<std::vector<Cell>> out;
         for (const Record* r : rows)
           if (r->v2 && *r->v2 > 0)
             out.push_back({int_cell(r->k2), dec_cell(*r->v2), r->f ? float_cell(*r->f, 0) : null_cell()});
         return out;
       }});
  q.push_back({"select k1, v1, v2 | dropna v1, v2", {"k1", "v1", "v2"}, [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (const Record* r : rows)
                   if (r->v1 && r->v2) out.push_back({opt_text(r->k1), int_cell(*r->v1), dec_cell(*r->v2)});
                 return out;
               }});
  q.push_back({"agg sum(v1) as total, count() as n, min(s) as m, max(v2) as mx, last(k1) as lk",
               {"total", "n", "m", "mx", "lk"},
               [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 out.push_back({opt_int(sum_of(rows, get_v1)), int_cell(rows.size()),
                                opt_text(extreme_of(rows, get_s, less)),
                                opt_dec(widen(extreme_of(rows, get_v2, greater))),
                                opt_text(last_of(rows, [](const Record& r) { return r.k1; }))});
                 return out;
               }});
  q.push_back({"select k2, v1 | assert v1 is null or v1 > -90000", {"k2", "v1"}, [](const Recs& rows) {
                 std::vector<std::vector<Cell>> out;
                 for (const Record* r : rows) out.push_back({int_cell(r->k2), opt_int(widen(r->v1))});
                 return out;
               }});
  return q;
}

// Float-input aggregates: the same bytes at every setting is the contract (docs/architecture.md, "Exactness").
Question float_question() {
  return {
      "groupby k1 | agg sum(f) as s, mean(f) as m, var(f) as v, std(f) as sd, corr(f, v1) as r, "
      "min(f) as mn, max(f) as mx",
      {"k1", "s", "m", "v", "sd", "r", "mn", "mx"},
      [](const Recs& rows) {
        std::vector<std::vector<Cell>> out;
        for (auto& [k, g] : group_by<OptStr>(rows, by_k1)) {
          std::optional<long double> s;
          for (const Record* r : g)
            if (r->f) s = s.value_or(0) + *r->f;
          const int64_t n = count_of(g, get_f);
          auto v = var_of(g, get_f);
          out.push_back({opt_text(k.v), opt_float(s, 1e-12), s ? float_cell(*s / n, 1e-12) : null_cell(),
                         opt_float(v, 1e-9), v ? float_cell(std::sqrt(*v), 1e-9) : null_cell(),
                         opt_float(corr_of(g, get_f, get_v1), 1e-9), opt_float(extreme_of(g, get_f, less), 0),
                         opt_float(extreme_of(g, get_f, greater), 0)});
        }
        return out;
      }};
}

Recs good_records(const Dataset& ds) {
  Recs rows;
  for (const Record& r : ds.records)
    if (!r.bad) rows.push_back(&r);
  return rows;
}

// The generator's text must read back as its records under the naive splitter, or the
// reference would be checking the generator instead of the tool.
void check_generator(const Dataset& ds, const std::string& delimiter) {
  const auto rows = naive_split(ds.text, delimiter);
  REQUIRE(rows.size() == ds.records.size() + 1);
  for (size_t i = 0; i < ds.records.size(); ++i) {
    const Record& r = ds.records[i];
    if (r.bad) continue;
    REQUIRE(rows[i + 1].size() == 6);
    CHECK(rows[i + 1][0] == r.k1);
    CHECK(rows[i + 1][4] == r.s);
  }
}

void check_dataset(const Dataset& ds, bool skip, const std::string& delimiter = ",") {
  check_generator(ds, delimiter);
  TempDir dir;
  const std::string input = dir.file("input.csv");
  write_file(input, ds.text);
  const Recs rows = good_records(ds);
  for (const Question& q : questions()) {
    const RunResult base = run_everywhere(dir, q.pipeline, {input}, skip, delimiter);
    INFO("pipeline: " << q.pipeline << "\nerror: " << base.error);
    const bool assert_fails =
        q.pipeline.find("assert") != std::string::npos &&
        std::any_of(rows.begin(), rows.end(), [](const Record* r) { return r->v1 && *r->v1 <= -90000; });
    REQUIRE(base.code == (assert_fails ? kExitAssert : kExitOk));
    if (assert_fails) {  // a failed assert replaces no -o file (README, -o): none was made
      CHECK(base.out.empty());
      continue;
    }
    check_output(base.out, q.header, q.expect(rows));
  }
}

}  // namespace

TEST_CASE("diff: LF file, few keys, every setting gives the same bytes and the reference's values") {
  DatasetOptions o;
  o.rows = 300;
  o.key_cardinality = 6;
  check_dataset(make_dataset(1, o), false);
}

TEST_CASE("diff: CRLF file, many keys, empty lines, no final newline") {
  DatasetOptions o;
  o.rows = 300;
  o.key_cardinality = 150;
  o.k2_range = 200;
  o.crlf = true;
  o.final_newline = false;
  o.empty_lines = true;
  check_dataset(make_dataset(2, o), false);
}

TEST_CASE("diff: mixed line ends with ragged and malformed rows under --bad-rows skip") {
  DatasetOptions o;
  o.rows = 300;
  o.key_cardinality = 10;
  o.mixed_eol = true;
  o.bad_rows = true;
  const Dataset ds = make_dataset(3, o);
  const size_t bad = static_cast<size_t>(
      std::count_if(ds.records.begin(), ds.records.end(), [](const Record& r) { return r.bad; }));
  REQUIRE(bad > 3);
  check_dataset(ds, true);

  // The --rejects file lists every bad row once, whatever the setting.
  TempDir dir;
  write_file(dir.file("input.csv"), ds.text);
  const RunResult r = run_everywhere(dir, "groupby k1 | agg count() as n", {dir.file("input.csv")}, true);
  const auto rejects = naive_split(r.rejects);
  CHECK(rejects.size() == bad + 1);
  CHECK(r.diagnostics.find("skipped " + std::to_string(bad) + " bad rows") != std::string::npos);
}

TEST_CASE("diff: delimiters of several bytes, and a space, give the reference's values at every setting") {
  // A pair with a space, a repeated byte (a match falls back to a shorter
  // one), a UTF-8 character and a space, each with quoted fields that hold
  // the delimiter, line breaks and ragged rows.
  int seed = 40;
  for (const std::string delimiter : {", ", "||", "\xc2\xa6", " "}) {
    INFO("delimiter: " << delimiter);
    DatasetOptions o;
    o.rows = 200;
    o.key_cardinality = 10;
    o.mixed_eol = true;
    o.bad_rows = true;
    o.delimiter = delimiter;
    check_dataset(make_dataset(seed++, o), true, delimiter);
  }
}

TEST_CASE("diff: --bad-rows fail names the same first bad row at every setting") {
  DatasetOptions o;
  o.rows = 200;
  o.bad_rows = true;
  const Dataset ds = make_dataset(4, o);
  TempDir dir;
  write_file(dir.file("input.csv"), ds.text);
  for (const char* p : {"groupby k1 | agg sum(v1) as s", "select k1, v2"}) {
    const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, false);
    CHECK(r.code == kExitInput);
    CHECK(r.error.find("input.csv:") != std::string::npos);
  }
}

// The rejects file's rows (source,line,column,error,row) in order.
std::vector<std::vector<std::optional<std::string>>> reject_rows(const std::string& rejects) {
  auto rows = naive_split(rejects);
  REQUIRE(!rows.empty());
  REQUIRE(rows[0].size() == 5);
  CHECK(*rows[0][1] == "line");
  rows.erase(rows.begin());
  return rows;
}

TEST_CASE("diff: NUL bytes and invalid UTF-8 are bad rows at every setting; valid UTF-8 is data") {
  DatasetOptions o;
  o.rows = 300;
  o.key_cardinality = 10;  // includes a key with 2-byte characters
  o.mixed_eol = true;
  o.bad_rows = true;
  o.byte_issues = true;
  const Dataset ds = make_dataset(7, o);
  size_t bad = 0, nul = 0, invalid = 0, multibyte = 0;
  for (const Record& r : ds.records) {
    bad += r.bad;
    nul += r.bad_bytes == 1;
    invalid += r.bad_bytes == 2;
    if (!r.bad && r.s && std::any_of(r.s->begin(), r.s->end(), [](char c) { return (c & 0x80) != 0; }))
      ++multibyte;
  }
  REQUIRE(nul >= 2);
  REQUIRE(invalid >= 4);
  REQUIRE(bad > nul + invalid);  // ragged and malformed rows too
  REQUIRE(multibyte >= 10);
  // Every question, every chunk size (1, 2, 3, 7, ...) and thread count: the same bytes,
  // rejects and counts, and the reference's values over the good rows (multibyte text kept).
  check_dataset(ds, true);

  // The --rejects file lists each bad row once, in order; the NUL / UTF-8 rows where the
  // generator put the byte.
  TempDir dir;
  write_file(dir.file("input.csv"), ds.text);
  const RunResult r = run_everywhere(dir, "groupby k1 | agg count() as n", {dir.file("input.csv")}, true);
  CHECK(r.diagnostics.find("skipped " + std::to_string(bad) + " bad rows") != std::string::npos);
  const auto rejects = reject_rows(r.rejects);
  REQUIRE(rejects.size() == bad);
  size_t k = 0;
  for (const Record& rec : ds.records) {
    if (!rec.bad) continue;
    const auto& row = rejects[k++];
    REQUIRE(row.size() == 5);
    if (!rec.bad_bytes) {
      CHECK(row[3]->find("UTF-8") == std::string::npos);
      CHECK(row[3]->find("NUL") == std::string::npos);
      continue;
    }
    INFO("reject " << k << ": " << *row[1] << ":" << *row[2] << " " << *row[3] << " row " << *row[4]);
    CHECK(*row[1] == std::to_string(rec.bad_line));
    CHECK(*row[2] == std::to_string(rec.bad_column));
    CHECK(row[3]->find(rec.bad_bytes == 1 ? "found a NUL byte" : "which is not valid UTF-8") != std::string::npos);
    // The row is shown as text: its bad bytes escaped, no raw NUL or invalid UTF-8.
    CHECK(row[4]->find(rec.bad_bytes == 1 ? "\\x00" : "\\x") != std::string::npos);
    CHECK(row[4]->find('\0') == std::string::npos);
  }
  CHECK(r.rejects.find('\0') == std::string::npos);
}

TEST_CASE("diff: --bad-rows fail names the first NUL / invalid UTF-8 row at every setting") {
  DatasetOptions o;
  o.rows = 250;
  o.crlf = true;
  o.byte_issues = true;
  const Dataset ds = make_dataset(9, o);
  const auto first = std::find_if(ds.records.begin(), ds.records.end(), [](const Record& r) { return r.bad; });
  REQUIRE(first != ds.records.end());
  REQUIRE(first->bad_bytes != 0);
  TempDir dir;
  write_file(dir.file("input.csv"), ds.text);
  for (const char* p : {"groupby k1 | agg sum(v1) as s", "select k1, v2", "agg count() as n"}) {
    const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, false);
    INFO(p << "\n" << r.error);
    CHECK(r.code == kExitInput);
    const std::string where =
        dir.file("input.csv") + ":" + std::to_string(first->bad_line) + ":" + std::to_string(first->bad_column) + ": ";
    CHECK(r.error.rfind(where, 0) == 0);
    CHECK(r.error.find(first->bad_bytes == 1 ? "NUL byte" : "iconv -f latin1 -t utf-8") != std::string::npos);
  }
}

TEST_CASE("diff: two files read as one table give the one file's output") {
  DatasetOptions o;
  o.rows = 200;
  o.key_cardinality = 5;
  const Dataset ds = make_dataset(6, o);
  // Split after 120 records: at a newline with an even number of quotes before it (every
  // quote in this dataset opens, closes or doubles inside a quoted field).
  const std::string header = ds.text.substr(0, ds.text.find('\n') + 1);
  size_t cut = header.size();
  for (size_t rows = 0; rows < 120;) {
    cut = ds.text.find('\n', cut) + 1;
    if (std::count(ds.text.begin(), ds.text.begin() + static_cast<std::ptrdiff_t>(cut), '"') % 2 == 0) ++rows;
  }
  REQUIRE(naive_split(ds.text.substr(0, cut)).size() == 121);
  TempDir dir;
  write_file(dir.file("all.csv"), ds.text);
  write_file(dir.file("a.csv"), ds.text.substr(0, cut));
  write_file(dir.file("b.csv"), header + ds.text.substr(cut));
  for (const char* p : {"groupby k1 | agg first(s) as f, last(s) as l, sum(v2) as s, count() as n",
                        "filter v1 > 0 | select k1, v1, s"}) {
    const RunResult one = run_tool(dir, p, {dir.file("all.csv")}, 1ull << 20, 1, false);
    const RunResult two = run_everywhere(dir, p, {dir.file("a.csv"), dir.file("b.csv")}, false);
    INFO(p);
    REQUIRE(one.code == 0);
    CHECK(two.out == one.out);
  }
}

// The pipelines over key_types_csv that exercise conditions, casts, || and
// date functions; the GPU differential test runs them too.
TEST_CASE("diff: conditions, casts, || and date functions give the same bytes at every setting") {
  TempDir dir;
  write_file(dir.file("input.csv"), testing::key_types_csv(23, 1500, 60));
  const std::vector<std::string> pipelines = {
      "groupby if(v > 0, 'pos', 'neg') as sign, case when v > 250 then 'hi' when v > -250 then 'mid' end as band | "
      "agg count_if(v % 3 == 0) as n3, sum(if(v % 3 == 0, 1, 0)) as s3, count() as n",
      "filter v between -100 and 100 | groupby s || '/' || cast(b as string) as sb | agg count(), "
      "min(replace(s, 'a', 'AA'))",
      "groupby try_cast(s as int) as si, cast(d as int) as di | agg count(), sum(cast(v as decimal(2)))",
      "groupby strftime(ts, '%Y-%m-%d %a %H') as day, datediff('day', dt, ts) as dd | agg count(), max(dt + 40), "
      "min(dt - v)",
      "groupby cast(f as string) as ft | agg count()",
      "select s, if(v > 0, s || '!', null) as x, cast(i as string) as t, try_cast(f as int) as fi, dt - 1 as prev",
  };
  for (const std::string& p : pipelines) {
    const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, false);
    INFO(p << "\n" << r.error);
    REQUIRE(r.code == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 3);
  }
  // count_if(c) counts what sum(if(c, 1, 0)) sums: the columns n3 and s3 agree on every line.
  const RunResult first = run_tool(dir, pipelines[0], {dir.file("input.csv")}, 1 << 20, 2, false, ",");
  std::istringstream lines(first.out);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "sign,band,n3,s3,n");
  int checked = 0;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream cs(line);
    for (std::string c; std::getline(cs, c, ',');) cells.push_back(c);
    REQUIRE(cells.size() == 5);
    CHECK(cells[2] == cells[3]);
    ++checked;
  }
  CHECK(checked >= 4);
}

namespace {
std::vector<std::vector<std::string>> csv_cells(const std::string& text) {  // no quoting in these files
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    size_t from = 0;
    for (size_t at; (at = line.find(',', from)) != std::string::npos; from = at + 1)
      cells.push_back(line.substr(from, at - from));
    cells.push_back(line.substr(from));
    rows.push_back(cells);
  }
  return rows;
}
}  // namespace

// `groupby s | top n by v desc | select s, v, dt` of key_types_csv's rows
// (s,i,d,f,dt,ts,b,v), naively: groups in key order (bytes, null last); in
// each, v descending, ties in input order.
std::string naive_top_s_v_dt(const std::vector<std::vector<std::string>>& rows, size_t n) {
  std::map<std::pair<bool, std::string>, std::vector<size_t>> groups;
  for (size_t k = 0; k < rows.size(); ++k) groups[{rows[k][0].empty(), rows[k][0]}].push_back(k);
  std::string expect = "s,v,dt\n";
  for (auto& [key, members] : groups) {
    std::stable_sort(members.begin(), members.end(),
                     [&](size_t a, size_t b) { return std::stol(rows[a][7]) > std::stol(rows[b][7]); });
    for (size_t k = 0; k < members.size() && k < n; ++k)
      expect += rows[members[k]][0] + "," + rows[members[k]][7] + "," + rows[members[k]][4] + "\n";
  }
  return expect;
}

TEST_CASE("diff: top N per group and distinct match a naive reference at every setting") {
  TempDir dir;
  const std::string text = testing::key_types_csv(41, 2500, 40);
  write_file(dir.file("input.csv"), text);
  std::vector<std::vector<std::string>> rows = csv_cells(text);
  rows.erase(rows.begin());  // s,i,d,f,dt,ts,b,v
  SECTION("groupby s | top 3 by v desc") {
    const RunResult r = run_everywhere(dir, "groupby s | top 3 by v desc | select s, v, dt", {dir.file("input.csv")}, false);
    REQUIRE(r.code == 0);
    CHECK(r.out == naive_top_s_v_dt(rows, 3));
  }
  SECTION("distinct b, dt: first occurrences in input order") {
    const RunResult r = run_everywhere(dir, "distinct b, dt", {dir.file("input.csv")}, false);
    REQUIRE(r.code == 0);
    std::set<std::string> seen;
    std::string expect = "b,dt\n";
    for (const auto& row : rows)
      if (seen.insert(row[6] + "," + row[4]).second) expect += row[6] + "," + row[4] + "\n";
    CHECK(r.out == expect);
  }
  SECTION("top without groupby is sort then limit") {
    const RunResult a = run_everywhere(dir, "top 5 by i desc, v", {dir.file("input.csv")}, false);
    const RunResult b = run_tool(dir, "sort i desc, v | limit 5", {dir.file("input.csv")}, 1 << 20, 2, false);
    CHECK(a.out == b.out);
    CHECK(std::count(a.out.begin(), a.out.end(), '\n') == 6);
  }
}

// Whole rows of a top per group: each partition keeps only its groups' own
// first rows, cut as it goes, and turns away the rows that sort after a full
// group's last (tens of thousands of rows a partition, ties among them).
TEST_CASE("diff: a top per group of whole rows, cut in the partitions, matches a naive reference") {
  TempDir dir;
  const std::string text = testing::key_types_csv(43, 30000, 40);
  write_file(dir.file("input.csv"), text);
  std::vector<std::vector<std::string>> rows = csv_cells(text);
  rows.erase(rows.begin());
  for (size_t n : {size_t{1}, size_t{3}, size_t{200}}) {
    const std::string expect = naive_top_s_v_dt(rows, n);
    for (const auto& [chunk, threads] : std::vector<std::pair<uint64_t, int>>{{1ull << 30, 1}, {1 << 20, 2}, {65536, 3}}) {
      INFO("top " << n << ", chunk " << chunk << ", threads " << threads);
      const RunResult r = run_tool(dir, "groupby s | top " + std::to_string(n) + " by v desc | select s, v, dt",
                                   {dir.file("input.csv")}, chunk, threads, false);
      REQUIRE(r.code == 0);
      CHECK(r.out == expect);
    }
  }
}

// A distinct of the scan's rows drops repeats within each partition on the
// scan's threads first: the rows, their text as first written ("1.5" and
// "1.50" are one value), the bad rows among them and a limit must come out
// as one partition gives them, at every chunk size.
TEST_CASE("diff: distinct of the scanned rows gives first occurrences with their text, issues and limits in place") {
  std::mt19937_64 rng(19);
  std::string text = "k,d,n\n";
  std::vector<std::array<std::string, 3>> good;  // the rows kept under --bad-rows skip
  size_t distinct_before_bad = 0;  // distinct (k, d, n) before the first bad row
  std::set<std::string> triples;
  for (int r = 0; r < 3000; ++r) {
    const std::string k = "key" + std::to_string(rng() % 23);
    const uint64_t tenths = rng() % 7;
    const std::string d = std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + (rng() % 2 ? "0" : "");
    const std::string n = std::to_string(rng() % 3);
    if (r > 20 && rng() % 250 == 0) {
      text += k + "," + d + "," + n + ",extra\n";  // a bad row
      if (distinct_before_bad) continue;
      distinct_before_bad = triples.size();
      // A new distinct row right after the first bad row: a bad row moved one row late
      // would come after it.
      text += "fresh,0.5,9\n";
      triples.insert("fresh,5,9");
      good.push_back({"fresh", "0.5", "9"});
      continue;
    }
    triples.insert(k + "," + std::to_string(tenths) + "," + n);
    text += k + "," + d + "," + n + "\n";
    good.push_back({k, d, n});
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  // A limit ends the run with the row that fills it. Without --bad-rows skip, a limit of the
  // distinct rows ahead of the first bad row (or fewer) ends it before that row; a limit of one
  // more waits for the next distinct row, and the bad row comes first.
  REQUIRE(distinct_before_bad > 2);
  const std::string before_bad = "distinct k, d, n | limit " + std::to_string(distinct_before_bad - 1);
  const std::string at_bad = "distinct k, d, n | limit " + std::to_string(distinct_before_bad);
  const std::string past_bad = "distinct k, d, n | limit " + std::to_string(distinct_before_bad + 1);
  for (const std::string& p : {std::string("distinct k, d"), std::string("distinct"), before_bad, at_bad, past_bad,
                               std::string("distinct k | limit 5"), std::string("filter n != 1 | distinct d | sort d desc")})
    for (bool skip : {false, true}) {
      INFO(p << ", --bad-rows " << (skip ? "skip" : "fail"));
      const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, skip);
      if (p == before_bad || p == at_bad) CHECK(r.code == 0);
      if (p == past_bad) CHECK(r.code == (skip ? 0 : 3));
      if (p != "distinct k, d" || !skip) continue;
      REQUIRE(r.code == 0);
      // The first row of each (k, value of d), with d as that row wrote it.
      std::set<std::pair<std::string, long>> seen;
      std::string expect = "k,d\n";
      for (const auto& row : good) {
        const long tenths = std::lround(std::stod(row[1]) * 10);
        if (seen.insert({row[0], tenths}).second) expect += row[0] + "," + row[1] + "\n";
      }
      CHECK(r.out == expect);
    }
}

// A distinct of strings and computed values that ends the scan runs as
// groups (each keeps its first row's position, and they come in that order):
// the rows, rejects and errors of the row-by-row distinct, which a limit
// right after it keeps.
TEST_CASE("diff: distinct as groups in the scan gives the row-by-row distinct's rows, rejects and errors") {
  const std::vector<std::string> keys = {"a", "b", "caf\xc3\xa9", "", "zz", "\xe6\x97\xa5\xe6\x9c\xac", "b2"};
  std::mt19937_64 rng(23);
  std::string text = "k,s,n\n";
  std::vector<std::string> first_k;  // the distinct k's, first occurrences in order (null: empty)
  std::set<std::string> seen_k;
  int bad = 0;
  for (int r = 0; r < 4000; ++r) {
    const std::string k = keys[rng() % keys.size()];
    const std::string s = "s" + std::to_string(rng() % (r < 2000 ? 300 : 900));
    const std::string n = std::to_string(rng() % 10);
    if (r > 100 && rng() % 400 == 0) {  // a bad row: one field too many
      text += k + "," + s + "," + n + ",extra\n";
      ++bad;
      continue;
    }
    text += k + "," + s + "," + n + "\n";
    if (seen_k.insert(k).second) first_k.push_back(k);
  }
  REQUIRE(bad > 0);
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  // Several lookup rows a key, out of order: a join's copies of a row come in the lookup file's order.
  write_file(dir.file("lookup.csv"), "k,name\nb,zeta\nb,alpha\na,mid\nb,beta\nzz,gamma\nb,omega\n");
  const std::string join = "join '" + dir.file("lookup.csv") + "' on k | ";
  const std::string all = " | limit 1000000000";
  // Each pipeline, and the row-by-row form: the same with a limit of every row right after its distinct.
  const std::vector<std::pair<std::string, std::string>> pipelines = {
      {"distinct k", "distinct k" + all},
      {"distinct k, s", "distinct k, s" + all},
      {"distinct k, n * 2 as m", "distinct k, n * 2 as m" + all},
      {"filter n > 1 | distinct lower(s) as ls | sort ls desc", "filter n > 1 | distinct lower(s) as ls" + all + " | sort ls desc"},
      {"select k, s | distinct | filter k != 'b'", "select k, s | distinct" + all + " | filter k != 'b'"},
      {"distinct cast(s || n as int) as bad, k", "distinct cast(s || n as int) as bad, k" + all},  // fails on every row
      {join + "distinct name", join + "distinct name" + all},  // row by row: copies of a row share its position
  };
  for (const auto& [groups, rows] : pipelines)
    for (bool skip : {true, false}) {
      INFO(groups << ", --bad-rows " << (skip ? "skip" : "fail"));
      const RunResult got = run_everywhere(dir, groups, {dir.file("input.csv")}, skip);
      const RunResult want = run_tool(dir, rows, {dir.file("input.csv")}, 1 << 20, 2, skip);
      CHECK(got.code == want.code);
      CHECK(got.code == (skip ? 0 : 3));
      CHECK(got.error == want.error);  // a failing column named alike
      CHECK(got.rejects == want.rejects);
      CHECK(got.out == want.out);
      if (groups != "distinct k" || !skip) continue;
      std::string expect = "k\n";
      for (const std::string& k : first_k) expect += k + "\n";
      CHECK(got.out == expect);
    }
}

TEST_CASE("diff: float aggregates give the same bytes at every chunk size and thread count") {
  // Output is the same for any number of GPUs and any --chunk-size (docs/architecture.md, "Exactness"). Each
  // float aggregate on its own, so a failure names the one that depends on the partitioning.
  DatasetOptions o;
  o.rows = 300;
  o.key_cardinality = 4;
  const Dataset ds = make_dataset(5, o);
  TempDir dir;
  write_file(dir.file("input.csv"), ds.text);
  const Question q = float_question();
  const std::vector<std::string> items = {"sum(f) as s",      "mean(f) as m", "var(f) as v", "std(f) as sd",
                                          "corr(f, v1) as r", "min(f) as mn", "max(f) as mx"};
  for (size_t i = 0; i < items.size(); ++i) {
    SECTION(items[i]) {
      const std::string pipeline = "groupby k1 | agg " + items[i];
      const RunResult base = run_everywhere(dir, pipeline, {dir.file("input.csv")}, false);
      REQUIRE(base.code == 0);
      // The reference's column i+1 of the combined question.
      std::vector<std::vector<Cell>> expect;
      for (const auto& row : q.expect(good_records(ds))) expect.push_back({row[0], row[i + 1]});
      check_output(base.out, {"k1", q.header[i + 1]}, expect);
    }
  }
}

// Float var/std/corr over values with a large common offset (epoch seconds with
// sub-microsecond fractions): the cancellation in n*sum_sq - sum^2 would expose any
// order-dependent rounding of the moments; they are exact, so every run prints the same.
TEST_CASE("diff: float var/std/corr with a large offset are deterministic") {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 0.001);
  std::string text = "k,t,w\n";
  char buf[128];
  for (int i = 0; i < 5000; ++i) {
    std::snprintf(buf, sizeof buf, "%c,%.12fe0,%.12fe0\n", "ab"[rng() % 2], 1.7e9 + u(rng),
                  2.5e8 - 7 * u(rng));
    text += buf;
  }
  TempDir dir;
  write_file(dir.file("epoch.csv"), text);
  const std::string p = "groupby k | agg var(t) as v, std(t) as s, corr(t, w) as r";
  const RunResult base = run_tool(dir, p, {dir.file("epoch.csv")}, 1ull << 30, 1, false);
  REQUIRE(base.code == 0);
  for (int rep = 0; rep < 5; ++rep) {
    const RunResult r = run_tool(dir, p, {dir.file("epoch.csv")}, 64, 3, false);
    INFO("repetition " << rep << " at --chunk-size 64 --threads 3");
    CHECK(r.out == base.out);
  }
}

// A limit that can end the scan starts with a 1 MiB window: `limit 5` reads
// a little of a large file, while a sort before the limit (which needs every
// row) and an aggregate read it all. The rows are those of a full scan.
TEST_CASE("diff: a limit with no sort before it scans a first small window, not the whole input") {
  TempDir dir;
  std::string text = "k,v\n";
  for (int i = 0; text.size() < (24u << 20); ++i) text += "key" + std::to_string(i % 1000) + "," + std::to_string(i) + "\n";
  const std::string f = dir.file("big.csv");
  write_file(f, text);
  auto scanned = [&](const std::string& pipeline, std::string* out) {
    Options opts;
    opts.pipeline = pipeline;
    opts.files = {f};
    opts.device = "cpu";
    opts.threads = 4;
    opts.profile = true;
    opts.output_path = dir.file("out.csv");
    {
      CaptureStderr capture(dir.file("stderr.txt"));
      REQUIRE(run_pipeline(opts) == 0);
    }
    *out = read_file(opts.output_path);
    // "profile: R rows, B bytes of CSV, ..."
    std::istringstream line(read_file(dir.file("stderr.txt")));
    std::string word;
    uint64_t rows = 0, bytes = 0;
    line >> word >> rows >> word >> bytes;
    return bytes;
  };
  std::string limited, sorted, all;
  CHECK(scanned("filter v >= 0 | select k, v | limit 5", &limited) <= (1u << 20));
  CHECK(limited == "k,v\nkey0,0\nkey1,1\nkey2,2\nkey3,3\nkey4,4\n");
  CHECK(scanned("select k, v | sort v desc | limit 2", &sorted) > (20u << 20));
  CHECK(sorted.find("key") != std::string::npos);
  CHECK(scanned("groupby k | agg count() | limit 1", &all) > (20u << 20));
}

// The CPU executor aggregates plain rows a batch at a time and leaves any
// other row (quoted, short, a value that fails a filter, a late value that
// widens a type) to its row-at-a-time path; both add to the same tables and
// holistic lists, so a key met both ways (quoted and not) must land in one
// group.
// Rows for the batches' tests: a name (some quoted, one longer than the
// inline keys), b in [-4, 4], a one-decimal t (some empty, one late of two
// decimals), u with a rare 99999999 that overflows `u * 100000000000`; with
// `bad_rows`, some rows of an extra field.
std::string batch_rows_csv(std::mt19937_64& rng, bool bad_rows) {
  const char* const names[] = {"Zürich", "Ada", "Grace Hopper Jr", "a name of more than fifteen bytes",
                               "x", "Ōsaka-shi", ""};
  std::string text = "a,b,t,u\n";
  for (int r = 0; r < 800; ++r) {
    const std::string a = names[rng() % 7];
    const bool quoted = !a.empty() && rng() % 5 == 0;
    const long long b = static_cast<long long>(rng() % 9) - 4;
    const long long tenths = static_cast<long long>(rng() % 2001) - 1000;
    char t[32];
    std::snprintf(t, sizeof t, "%s%lld.%lld", tenths < 0 ? "-" : "", std::llabs(tenths) / 10, std::llabs(tenths) % 10);
    const long long u = rng() % 40 == 0 ? 99999999 : static_cast<long long>(rng() % 100);
    std::string row = (quoted ? "\"" + a + "\"" : a) + "," + std::to_string(b) + "," +
                      (rng() % 30 == 0 ? std::string() : std::string(t)) + "," + std::to_string(u);
    if (bad_rows && rng() % 60 == 0) row += ",extra";
    if (r == 700) row = a + "," + std::to_string(b) + ",1.25," + std::to_string(u);  // a late wider scale
    text += row + "\n";
  }
  return text;
}

TEST_CASE("diff: rows aggregated in batches and rows taken one at a time give the same bytes") {
  std::mt19937_64 rng(77);
  const char* const pipelines[] = {
      "groupby a | agg min(t) as lo, mean(t) as m, max(t) as hi, count() as n",
      "groupby b, a | agg sum(u) as s, first(a) as f, last(t) as l, min(a) as mn, max(a) as mx",
      "filter u * 100000000000 > 5 | groupby a | agg count() as n",
      "groupby t | agg count() as n, sum(b) as sb",
      "agg count() as n, sum(t) as s, min(a) as mn",
      // Holistic arguments listed from batches and from single rows into the same lists.
      "groupby a | agg median(t) as md, count_distinct(b) as cd, quantile(u, 0.9) as q, count() as n",
      "filter u < 50 | groupby b | top 2 by t desc | select b, t",
      "agg median(u) as m, count_distinct(a) as d, count_distinct(t) as dt",
      // Filters that only test a column for null, which batches take without the evaluator.
      "filter t is not null | groupby a | agg count() as n, min(t) as lo",
      "filter t is null | groupby b | agg count() as n, max(a) as mx",
      // Keys and arguments computed (some fail: issues, or the first bad row).
      "groupby lower(a) as la, b % 3 as m | agg sum(u * 2) as s, min(upper(a)) as mn, last(t + 1) as l",
      "groupby u * 100000000000 as big | agg count() as n",
      "groupby a | agg sum(u * 100000000000) as s, count() as n",
  };
  for (bool bad_rows : {false, true}) {
    TempDir dir;
    write_file(dir.file("input.csv"), batch_rows_csv(rng, bad_rows));
    for (const char* p : pipelines)
      for (bool skip : {false, true}) {
        INFO("bad rows " << bad_rows << ", --bad-rows " << (skip ? "skip" : "fail"));
        const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, skip);
        if (!bad_rows && std::string(p).find("100000000000") == std::string::npos) CHECK(r.code == 0);
      }
  }
}

// Narrow rows of one string key (names of 0-20 bytes, so some too long to be
// held in two words, accented, and more distinct ones than the small-group
// table holds when `names` is large), an int column with a float past 64 bits
// now and then, and a one-decimal column with empty fields.
std::string narrow_rows_csv(std::mt19937_64& rng, int rows, int names) {
  const char* const syllables[] = {"ka", "Zü", "ri", "ch", "Ō", "sa", "mo", "x", "-", " "};
  std::vector<std::string> name(static_cast<size_t>(names));
  for (auto& n : name) {
    const int parts = static_cast<int>(rng() % 5);
    for (int p = 0; p < parts; ++p) n += syllables[rng() % 10];
    n += std::to_string(rng() % 1000);
    if (rng() % 10 == 0) n += " of more than 15 bytes";
  }
  std::string text = "k;i;t\n";
  for (int r = 0; r < rows; ++r) {
    const std::string& k = rng() % 50 == 0 ? std::string() : name[rng() % name.size()];
    std::string i = std::to_string(static_cast<long long>(rng() % 2000001) - 1000000);
    if (rng() % 500 == 0) i = (rng() % 2 ? "-" : "") + std::string("98765432109876543210.5");
    const long long tenths = static_cast<long long>(rng() % 1999) - 999;
    char t[32];
    std::snprintf(t, sizeof t, "%s%lld.%lld", tenths < 0 ? "-" : "", std::llabs(tenths) / 10, std::llabs(tenths) % 10);
    text += k + ";" + i + ";" + (rng() % 40 == 0 ? std::string() : std::string(t)) + "\n";
  }
  return text;
}

TEST_CASE("diff: groups of one short string key held apart from the general table give the same bytes") {
  std::mt19937_64 rng(79);
  const char* const pipelines[] = {
      "groupby k | agg min(t) as lo, mean(t) as m, max(t) as hi, count() as n, count(t) as c, sum(t) as s",
      "groupby k | agg sum(i) as s, min(i) as lo, max(i) as hi, mean(i) as m, count(k) as ck, count() as n",
      "filter t > 0 | groupby k | agg sum(t) as s, max(i) as hi",
  };
  // 60 names: every group held apart; 30,000: more than the table holds, so
  // later names go to the general table (and the table stops being asked).
  for (int names : {60, 30000}) {
    TempDir dir;
    write_file(dir.file("input.csv"), narrow_rows_csv(rng, names == 60 ? 3000 : 60000, names));
    for (const char* p : pipelines) {
      INFO(names << " names");
      const RunResult r = run_everywhere(dir, p, {dir.file("input.csv")}, false, ";");
      CHECK(r.code == 0);
      CHECK(r.out.size() > 100);
    }
  }
}

TEST_CASE("diff: joined rows aggregated in batches and rows taken one at a time give the same bytes") {
  std::mt19937_64 rng(78);
  TempDir dir;
  // Per b: no lookup row (-4), one, several, more than a batch holds copies of
  // (-1); a row of a null key; names quoted, repeated, and of many bytes.
  std::string lookup = "b,name,w\n,nobody,5\n";
  const int rows_of[] = {0, 1, 3, 300, 2, 1, 1, 2, 1};
  for (int b = -4; b <= 4; ++b)
    for (int i = 0; i < rows_of[b + 4]; ++i)
      lookup += std::to_string(b) + "," + (i % 3 == 1 ? "\"n, " + std::to_string(i % 7) + "\"" : "name" + std::to_string(i % 5)) +
                "," + std::to_string(static_cast<int>(rng() % 50)) + "\n";
  write_file(dir.file("lookup.csv"), lookup);
  write_file(dir.file("regions.csv"), "name,region\nname0,north\nname1,south\nname1,east\n\"n, 1\",west\n");
  const std::string l = "'" + dir.file("lookup.csv") + "'", r = "'" + dir.file("regions.csv") + "'";
  const std::string pipelines[] = {
      // first and last see a row's copies in lookup-file order.
      "join " + l + " on b | groupby a | agg count() as n, sum(w) as s, first(name) as f, last(name) as ln",
      "left join " + l + " on b | groupby name | agg count() as n, min(t) as lo, last(a) as la",
      "join " + l + " on b | left join " + r + " on name | groupby region, b | agg count() as n, sum(u) as s",
      "join " + l + " on b | filter u * 100000000000 > w | groupby name | agg count() as n",
      "join " + l + " on u * 100000000000 = b | groupby name | agg count() as n",
      "join " + l + " on b | groupby lower(name) as ln | agg max(t * w) as m, count() as n",
  };
  for (bool bad_rows : {false, true}) {
    write_file(dir.file("input.csv"), batch_rows_csv(rng, bad_rows));
    for (const std::string& p : pipelines)
      for (bool skip : {false, true}) {
        INFO("bad rows " << bad_rows << ", --bad-rows " << (skip ? "skip" : "fail"));
        const RunResult out = run_everywhere(dir, p, {dir.file("input.csv")}, skip);
        if (!bad_rows && p.find("100000000000") == std::string::npos) CHECK(out.code == 0);
      }
  }
}

// Thread tables that pass their memory budget are folded into the result
// mid-scan and emptied: memory then grows with the groups, not threads x
// groups. Folding after every window must give the bytes of a run that folds
// once at the end, for order-dependent aggregates (first, last) too.
TEST_CASE("diff: thread tables folded whenever they pass their budget give the same bytes") {
  TempDir dir;
  std::string text = "k,n,v,s\n";
  for (uint64_t i = 0; text.size() < (6u << 20); ++i)
    text += "key" + std::to_string(i * 7919 % 30011) + "," + std::to_string(i % 3) + "," +
            std::to_string(static_cast<int64_t>(i % 1001) - 500) + ",s" + std::to_string(i * 31 % 977) + "\n";
  const std::string f = dir.file("many_groups.csv");
  write_file(f, text);
  std::string pipeline =
      "groupby k, n | agg sum(v) as s, count() as c, min(s) as lo, max(s) as hi, first(s) as fs, last(v) as lv";
  auto run = [&](int threads, uint64_t budget, std::string* profile) {
    Options opts;
    opts.pipeline = pipeline;
    opts.files = {f};
    opts.device = "cpu";
    opts.threads = threads;
    opts.chunk_size = 64 << 10;  // 1 MiB windows: six of them
    opts.thread_tables_budget = budget;
    opts.profile = true;
    opts.output_path = dir.file("out.csv");
    {
      CaptureStderr capture(dir.file("stderr.txt"));
      REQUIRE(run_pipeline(opts) == 0);
    }
    *profile = read_file(dir.file("stderr.txt"));
    return read_file(opts.output_path);
  };
  std::string profile;
  const std::string once = run(1, 0, &profile);
  CHECK(profile.find("cpu: merge thread tables ") != std::string::npos);
  CHECK(profile.find("to bound memory") == std::string::npos);
  CHECK(std::count(once.begin(), once.end(), '\n') == 1 + 30011 * 3);
  for (int threads : {1, 3}) {
    INFO("threads " << threads);
    CHECK(run(threads, 1, &profile) == once);
    // A fold after every window but the last (six or more windows of less
    // than 1 MiB each: the last row of a window waits for the next), then the end's.
    const size_t at = profile.find("cpu: merge thread tables (");
    REQUIRE(at != std::string::npos);
    CHECK(std::stoi(profile.substr(at + 26)) >= 5);
    CHECK(profile.find(" more times to bound memory)", at) != std::string::npos);
  }
  // Holistic aggregates list each row's arguments per thread: folded early, their groups are renumbered.
  pipeline = "groupby n | agg count_distinct(v) as dv, median(v) as mv, quantile(v, 0.3) as qv, sum(v) as sv";
  const std::string holistic_once = run(1, 0, &profile);
  CHECK(std::count(holistic_once.begin(), holistic_once.end(), '\n') == 4);
  for (int threads : {1, 3}) {
    INFO("holistic, threads " << threads);
    CHECK(run(threads, 1, &profile) == holistic_once);
    CHECK(profile.find(" more times to bound memory)") != std::string::npos);
  }
  // 90k groups: a fold on threads renumbers the result's groups, and the lists folded before follow them.
  pipeline = "groupby k, n | agg median(v) as mv, count_distinct(s) as ds, quantile(v, 0.9) as qv, count() as c";
  const std::string many_once = run(1, 0, &profile);
  CHECK(std::count(many_once.begin(), many_once.end(), '\n') == 1 + 30011 * 3);
  for (int threads : {2, 3}) {
    INFO("holistic over many groups, threads " << threads);
    CHECK(run(threads, 1, &profile) == many_once);
    CHECK(profile.find(" more times to bound memory)") != std::string::npos);
  }
}

// From four threads on, the next window is mapped and its partitions' quote
// states and text checks computed by the threads as they run out of the
// current window's partitions. Quoted fields with line ends and delimiters
// across the cuts, CRLF rows and bad rows must come out as one thread reads them.
TEST_CASE("diff: windows scanned ahead by the threads give the bytes of one thread") {
  TempDir dir;
  std::mt19937_64 rng(21);
  std::string text = "k,v,s\n";
  while (text.size() < (5u << 20)) {
    const uint64_t r = rng();
    std::string s = "s" + std::to_string(r % 97);
    if (r % 13 == 0) s = "\"line one\nline, two \"\"" + std::to_string(r % 7) + "\"\"\"";  // quoted, multi-line
    if (r % 1009 == 0) s += "\xff";                                                                // a bad row
    text += "key" + std::to_string(r % 5003) + "," + std::to_string(static_cast<int64_t>(r % 2001) - 1000) + "," + s;
    text += r % 5 == 0 ? "\r\n" : "\n";
  }
  const std::string f = dir.file("windows.csv");
  write_file(f, text);
  const std::string pipeline = "groupby k | agg count() as n, sum(v) as sv, min(s) as lo, max(s) as hi";
  auto run = [&](int threads, uint64_t chunk, RunResult* r) {
    Options opts;
    opts.pipeline = pipeline;
    opts.files = {f};
    opts.device = "cpu";
    opts.threads = threads;
    opts.chunk_size = chunk;
    opts.bad_rows = BadRows::Skip;
    opts.rejects_path = dir.file("rejects.csv");
    opts.output_path = dir.file("out.csv");
    opts.trace_path = dir.file("trace.json");
    {
      CaptureStderr capture(dir.file("stderr.txt"));
      r->code = testing::run_to_exit(opts, r->error);
    }
    r->out = read_file(opts.output_path);
    r->rejects = read_file(opts.rejects_path);
    r->diagnostics = read_file(dir.file("stderr.txt"));
    return read_file(opts.trace_path);
  };
  RunResult one;
  run(1, 1 << 20, &one);
  REQUIRE(one.code == 0);
  CHECK(one.out.find("\nkey5002,") != std::string::npos);
  CHECK(one.out.find("line one\nline, two") != std::string::npos);  // quoted line ends came through
  CHECK(!one.rejects.empty());
  for (int threads : {4, 5}) {
    for (uint64_t chunk : {uint64_t{4096}, uint64_t{65536}}) {
      INFO("threads " << threads << ", chunk " << chunk);
      RunResult r;
      const std::string trace = run(threads, chunk, &r);
      CHECK(trace.find("\"scanned ahead\":1") != std::string::npos);  // the path under test was taken
      CHECK(r.code == one.code);
      CHECK(r.rejects == one.rejects);
      CHECK(r.diagnostics == one.diagnostics);
      REQUIRE(r.out == one.out);
    }
  }
}

// Rows go out with each bad row in its place among them, as if read one by
// one: a limit reached before a bad row ends the run without it, a bad row
// before the limit fails (or is skipped) with exactly the rows before it out,
// at every chunk size and thread count.
TEST_CASE("diff: a limit and bad rows give the same output and exit code at every setting") {
  TempDir dir;
  auto make = [&](const std::string& name, const std::vector<int>& bad_rows) {
    std::string text = "a,b\n";
    for (int i = 0; i < 400000; ++i)
      text += std::find(bad_rows.begin(), bad_rows.end(), i) != bad_rows.end() ? std::to_string(i) + "\n"
                                                                                : std::to_string(i) + "," + std::to_string(i) + "\n";
    write_file(dir.file(name), text);
    return dir.file(name);
  };
  const std::string late = make("late.csv", {80000}), early = make("early.csv", {2, 3, 100, 250000});
  for (uint64_t chunk : {uint64_t{4096}, uint64_t{65536}, uint64_t{1} << 20, uint64_t{16} << 20}) {
    for (int threads : {1, 3}) {
      INFO("chunk " << chunk << " threads " << threads);
      // The bad row lies after the limit's rows: never read.
      RunResult r = run_tool(dir, "select a | limit 5", {late}, chunk, threads, false);
      CHECK(r.code == 0);
      CHECK(r.out == "a\n0\n1\n2\n3\n4\n");
      // Fails at row index 2 (line 4). What was written before the error is
      // the same everywhere (the writer's unflushed rows are not written).
      r = run_tool(dir, "select a | limit 5", {early}, chunk, threads, false);
      CHECK(r.code == 3);
      CHECK(r.error.find(":4:") != std::string::npos);
      CHECK(r.out.empty());
      // Skipped: the two bad rows before the fifth good one, not the later ones.
      r = run_tool(dir, "select a | limit 5", {early}, chunk, threads, true);
      CHECK(r.code == 0);
      CHECK(r.out == "a\n0\n1\n4\n5\n6\n");
      CHECK(r.diagnostics.find("skipped 2 bad rows") != std::string::npos);
      CHECK(std::count(r.rejects.begin(), r.rejects.end(), '\n') == 3);  // a header and two rows
      // Without a limit every bad row counts.
      r = run_tool(dir, "select a | filter a >= 399998", {early}, chunk, threads, true);
      CHECK(r.out == "a\n399998\n399999\n");
      CHECK(r.diagnostics.find("skipped 4 bad rows") != std::string::npos);
    }
  }
}

// A value past the first window that does not fit the inferred type widens it
// and the input is read again while the output is still held (its first
// 64 MiB): with a limit, a small --chunk-size or many threads alike. A column
// only printed is read as text and never widens.
TEST_CASE("diff: a late value that widens a type is read again for row output at every setting") {
  TempDir dir;
  std::string text = "k,v\n";
  for (int i = 0; i < 400000; ++i) text += (i == 200000 ? std::string("7.5") : std::to_string(i % 51)) + "," + std::to_string(i) + "\n";
  write_file(dir.file("wide.csv"), text);
  const RunResult base = run_tool(dir, "filter k >= 0 | select k, v", {dir.file("wide.csv")}, 1ull << 30, 1, false);
  REQUIRE(base.code == 0);
  CHECK(std::count(base.out.begin(), base.out.end(), '\n') == 400001);
  CHECK(base.out.find("\n7.5,200000\n") != std::string::npos);
  CHECK(base.diagnostics.find("column 'k' widened") != std::string::npos);
  const RunResult printed = run_tool(dir, "select k, v", {dir.file("wide.csv")}, 1ull << 30, 1, false);
  CHECK(printed.out == base.out);
  CHECK(printed.diagnostics.find("widened") == std::string::npos);
  for (uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20, uint64_t{16} << 20}) {
    for (int threads : {1, 3}) {
      INFO("chunk " << chunk << " threads " << threads);
      RunResult r = run_tool(dir, "filter k >= 0 | select k, v", {dir.file("wide.csv")}, chunk, threads, false);
      CHECK(r.code == 0);
      CHECK(r.out == base.out);
      r = run_tool(dir, "filter k >= 0 | select k, v | limit 300000", {dir.file("wide.csv")}, chunk, threads, false);
      CHECK(r.code == 0);
      CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 300001);
      CHECK(r.out == base.out.substr(0, r.out.size()));
    }
  }
}

TEST_CASE("diff: holistic aggregates over many distinct values (regrouped on threads) match a reference") {
  // 60000 rows of nearly distinct values: more scan groups than the regroup does on one thread.
  std::mt19937_64 rng(11);
  std::string text = "g,v,s\n";
  std::map<std::string, std::vector<int64_t>> values;
  std::map<std::string, std::set<std::string>> strings;
  for (int r = 0; r < 60000; ++r) {
    const std::string g = "g" + std::to_string(rng() % 7);
    const int64_t v = static_cast<int64_t>(rng() % 2000000) - 1000000;
    const std::string s = "s" + std::to_string(rng() % 5000);
    text += g + "," + std::to_string(v) + "," + s + "\n";
    values[g].push_back(v);
    strings[g].insert(s);
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  const std::string pipeline =
      "groupby g | agg count_distinct(v) as cd, median(v) as md, quantile(v, 0.99) as q, count_distinct(s) as cs, "
      "median(s) as ms, sum(v) as sv";
  const RunResult base = run_tool(dir, pipeline, {dir.file("input.csv")}, 1ull << 30, 1, false);
  REQUIRE(base.code == 0);
  for (int threads : {2, 3, 4})
    for (uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20}) {
      INFO("threads " << threads << " chunk " << chunk);
      REQUIRE(run_tool(dir, pipeline, {dir.file("input.csv")}, chunk, threads, false).out == base.out);
    }
  // The GPU's way on the CPU: a group per (g, v) and per (g, s), regrouped on threads after the scan.
  for (int threads : {1, 3}) {
    Options opts;
    opts.pipeline = pipeline;
    opts.files = {dir.file("input.csv")};
    opts.device = "cpu";
    opts.threads = threads;
    opts.chunk_size = 4096;
    opts.holistic_by_groups = true;
    opts.output_path = dir.file("by_groups.csv");
    REQUIRE(run_pipeline(opts) == 0);
    INFO("by groups, threads " << threads);
    CHECK(read_file(opts.output_path) == base.out);
  }
  std::vector<std::vector<Cell>> expect;
  for (auto& [g, vs] : values) {
    std::sort(vs.begin(), vs.end());
    const std::vector<std::string> ss(strings[g].begin(), strings[g].end());
    // median(s) is over rows, not distinct strings: rebuild the row list from the text.
    std::vector<std::string> srows;
    for (const auto& row : naive_split(text))
      if (row.size() == 3 && row[0] == g) srows.push_back(*row[2]);
    std::sort(srows.begin(), srows.end());
    expect.push_back({text_cell(g), int_cell(distinct_of(vs)), opt_float(quantile_of(vs, 0.5L), 1e-15),
                      opt_float(quantile_of(vs, 0.99L), 1e-15), int_cell(static_cast<int64_t>(ss.size())),
                      text_cell(srows[(srows.size() - 1) / 2]), opt_int(sum_of_values(vs))});
  }
  check_output(base.out, {"g", "cd", "md", "q", "cs", "ms", "sv"}, expect);
}

TEST_CASE("diff: sort then limit keeps only the first rows, and gives the full sort's first rows") {
  // 50000 rows with many ties, some null keys and some bad rows: the post
  // stage's buffer is sorted and cut along the way, and so is each partition
  // (at every partition's end, and within one partition of all the rows).
  std::mt19937_64 rng(3);
  std::string text = "k,s,v\n";
  for (int r = 0; r < 50000; ++r) {
    text += (rng() % 30 == 0 ? std::string() : std::to_string(rng() % 100)) + ",s" + std::to_string(rng() % 50) + "," +
            std::to_string(r) + (rng() % 997 == 0 ? ",extra" : "") + "\n";
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  auto first_lines = [](const std::string& s, size_t n) {
    size_t at = 0;
    for (size_t i = 0; i < n && at != std::string::npos; ++i) at = s.find('\n', at) + 1;
    return s.substr(0, at);
  };
  for (const char* sort : {"sort k desc, s", "sort s", "sort k", "select v, s | sort s desc"}) {
    const std::string full = run_tool(dir, sort, {dir.file("input.csv")}, 1ull << 30, 1, true).out;
    for (int keep : {0, 1, 300, 9000})
      for (int threads : {1, 3})
        for (uint64_t chunk : {4096ull, 1ull << 30}) {
          const RunResult r =
              run_tool(dir, std::string(sort) + " | limit " + std::to_string(keep), {dir.file("input.csv")}, chunk,
                       threads, true);
          INFO(sort << " | limit " << keep << ", threads " << threads << ", chunk " << chunk);
          REQUIRE(r.code == 0);
          CHECK(r.out == first_lines(full, static_cast<size_t>(keep) + 1));
          CHECK(r.rejects == run_tool(dir, sort, {dir.file("input.csv")}, chunk, threads, true).rejects);
        }
  }
  // Groups too: the aggregate result goes through the same sort.
  const std::string all = run_tool(dir, "groupby v % 20000 as g | agg count() as n | sort n desc, g",
                                   {dir.file("input.csv")}, 1ull << 30, 1, false).out;
  const RunResult top = run_tool(dir, "groupby v % 20000 as g | agg count() as n | sort n desc, g | limit 10",
                                 {dir.file("input.csv")}, 4096, 2, false);
  CHECK(top.out == first_lines(all, 11));
}

// A sort of the scanned rows keeps them in the tables the scan made (taken
// whole, or rows pushed one at a time around bad rows), orders them on
// threads and formats them on threads: a naive stable sort gives the same
// rows, ties in input order, at every partition size; an evaluation that
// fails after the sort fails the run as one row after another would.
TEST_CASE("diff: a full sort of the scanned rows matches a naive stable sort, bad rows among them") {
  std::mt19937_64 rng(31);
  struct Row {
    bool null_k;
    int k;
    std::string s;
    int v;
  };
  std::vector<Row> good;
  std::string text = "k,s,v\n";
  for (int r = 0; r < 40000; ++r) {
    const bool null_k = rng() % 30 == 0;
    const int k = static_cast<int>(rng() % 100);
    const std::string s = "s" + std::to_string(rng() % 50);
    const bool bad = rng() % 997 == 0;
    text += (null_k ? std::string() : std::to_string(k)) + "," + s + "," + std::to_string(r) + (bad ? ",extra" : "") +
            "\n";
    if (!bad) good.push_back(Row{null_k, k, s, r});
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  // sort k desc (nulls last), then s; ties in input order.
  std::vector<Row> sorted = good;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) {
    if (a.null_k != b.null_k) return b.null_k;
    if (!a.null_k && a.k != b.k) return a.k > b.k;
    return a.s < b.s;
  });
  std::string by_k_s = "k,s,v\n", by_upper_s = "v,s\n";
  for (const Row& r : sorted) by_k_s += (r.null_k ? "" : std::to_string(r.k)) + "," + r.s + "," + std::to_string(r.v) + "\n";
  std::stable_sort(good.begin(), good.end(), [](const Row& a, const Row& b) { return a.s > b.s; });
  for (const Row& r : good) by_upper_s += std::to_string(r.v) + "," + r.s + "\n";
  for (const auto& [chunk, threads] :
       std::vector<std::pair<uint64_t, int>>{{1ull << 30, 1}, {1 << 20, 3}, {4096, 2}, {64, 3}}) {
    INFO("chunk " << chunk << ", threads " << threads);
    const RunResult a = run_tool(dir, "sort k desc, s", {dir.file("input.csv")}, chunk, threads, true);
    REQUIRE(a.code == 0);
    CHECK(a.out == by_k_s);
    const RunResult b = run_tool(dir, "sort upper(s) desc | select v, s", {dir.file("input.csv")}, chunk, threads, true);
    REQUIRE(b.code == 0);
    CHECK(b.out == by_upper_s);
    // 10^18 * v overflows from v = 10 on: the run fails at the first such row in sorted order.
    const RunResult c =
        run_tool(dir, "sort v | select 1000000000000000000 * v as big", {dir.file("input.csv")}, chunk, threads, true);
    CHECK(c.code != 0);
    CHECK(c.error.find("evaluation failed in 'select 1000000000000000000 * v as big'") != std::string::npos);
  }
}

TEST_CASE("diff: a sort that reads only the columns later stages name gives the bytes of one that reads them all") {
  // Columns a, b, t, u: with names the scan parses only those named; with $N it parses every column.
  std::mt19937_64 rng(45);
  TempDir dir;
  write_file(dir.file("input.csv"), batch_rows_csv(rng, true));
  const std::pair<std::string, std::string> pairs[] = {
      {"sort b, t desc | select t, a", "sort $2, $3 desc | select t, a"},
      {"filter u < 90 | sort A desc, u | filter t > 0 | limit 40 | select u * 2 as du, b", "filter u < 90 | sort $1 desc, u | filter t > 0 | limit 40 | select u * 2 as du, b"},
      {"sort t | limit 7 | select lower(a) as la", "sort $3 | limit 7 | select lower(a) as la"},
      {"groupby b | top 2 by t desc, u | select a, t", "groupby $2 | top 2 by $3 desc, u | select a, t"},
      {"top 5 by u desc | filter b > 0 | select a", "top 5 by $4 desc | filter b > 0 | select a"},
  };
  for (const auto& [named, positional] : pairs)
    for (bool skip : {false, true}) {
      INFO(named << ", --bad-rows " << (skip ? "skip" : "fail"));
      const RunResult want = run_tool(dir, positional, {dir.file("input.csv")}, 1ull << 30, 1, skip);
      const RunResult got = run_everywhere(dir, named, {dir.file("input.csv")}, skip);
      CHECK(got.code == want.code);
      CHECK(got.out == want.out);
      CHECK(got.rejects == want.rejects);
    }
}

TEST_CASE("diff: holistic aggregates over numbers: listed rows (compacted) give the bytes of grouping by them") {
  // 2.2M rows: past the first compaction of a thread's list (a million rows). v has few distinct
  // values (the lists compact), w nearly all distinct (they stop compacting).
  std::mt19937_64 rng(29);
  std::string text = "g,v,w\n";
  for (int r = 0; r < 2200000; ++r)
    text += std::to_string(rng() % 5) + "," + std::to_string(rng() % 50) + "," +
            std::to_string(static_cast<int64_t>(rng() % 2000000001) - 1000000000) + "e-3\n";
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  std::string pipeline = "groupby g | agg count_distinct(v) as dv, median(v) as mv, quantile(w, 0.3) as qw, "
                         "median(w) as mw, count_distinct(w) as dw, sum(v) as sv";
  auto run = [&](int threads, bool by_groups) {
    Options opts;
    opts.pipeline = pipeline;
    opts.files = {dir.file("input.csv")};
    opts.device = "cpu";
    opts.threads = threads;
    opts.holistic_by_groups = by_groups;
    opts.output_path = dir.file("out.csv");
    REQUIRE(run_pipeline(opts) == 0);
    return read_file(opts.output_path);
  };
  const std::string grouped = run(2, true);
  CHECK(std::count(grouped.begin(), grouped.end(), '\n') == 6);
  for (int threads : {1, 2, 3}) {
    INFO("threads " << threads);
    CHECK(run(threads, false) == grouped);
  }
  // v alone: every list compacts to (group, value, rows).
  pipeline = "groupby g | agg count_distinct(v) as dv, median(v) as mv, quantile(v, 0.99) as qv, count() as n";
  const std::string few = run(2, true);
  for (int threads : {1, 3}) {
    INFO("v alone, threads " << threads);
    CHECK(run(threads, false) == few);
  }
  // No groupby: one bucket of 2.2M values, sorted on every thread past one thread (on one below).
  pipeline = "agg median(w) as mw, count_distinct(w) as dw, quantile(w, 0.001) as qw, median(v) as mv";
  const std::string one_group = run(1, false);
  CHECK(std::count(one_group.begin(), one_group.end(), '\n') == 2);
  for (int threads : {2, 3}) {
    INFO("no groupby, threads " << threads);
    CHECK(run(threads, false) == one_group);
    CHECK(run(threads, true) == one_group);
  }
}

TEST_CASE("diff: holistic aggregates over many small groups, one aggregate an argument, match a reference") {
  // 90000 rows in 40000 groups: the threads' lists share one counter per group when they are
  // bucketed. median(v) and quantile(d, 0.7) are their arguments' only aggregates (selected, not
  // sorted), also in one group of all rows; count_distinct(v) shares v with a median in the second
  // pipeline (sorted). Nulls too.
  std::mt19937_64 rng(41);
  std::string text = "g,v,d\n";
  std::map<int, std::vector<int64_t>> vs, ds;  // d in hundredths
  for (int r = 0; r < 90000; ++r) {
    const int g = static_cast<int>(rng() % 40000);
    const bool v_null = rng() % 10 == 0;
    const int64_t v = static_cast<int64_t>(rng() % 1000) - 500, d = static_cast<int64_t>(rng() % 100000) - 50000;
    text += std::to_string(g) + "," + (v_null ? "" : std::to_string(v)) + "," + (d < 0 ? "-" : "") +
            std::to_string(std::abs(d) / 100) + "." + std::to_string(std::abs(d) % 100 / 10) +
            std::to_string(std::abs(d) % 10) + "\n";
    if (!v_null) vs[g].push_back(v);
    else vs[g];
    ds[g].push_back(d);
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  std::vector<std::vector<Cell>> single, shared;
  std::vector<int64_t> all_v, all_d;
  for (auto& [g, v] : vs) {
    all_v.insert(all_v.end(), v.begin(), v.end());
    all_d.insert(all_d.end(), ds[g].begin(), ds[g].end());
  }
  std::sort(all_v.begin(), all_v.end());
  std::sort(all_d.begin(), all_d.end());
  for (auto& [g, v] : vs) {
    std::sort(v.begin(), v.end());
    std::vector<int64_t>& d = ds[g];
    std::sort(d.begin(), d.end());
    single.push_back({int_cell(g), opt_float(quantile_of(v, 0.5L), 1e-15), opt_float(quantile_of(d, 0.7L, 100), 1e-15)});
    shared.push_back({int_cell(g), opt_float(quantile_of(v, 0.5L), 1e-15), int_cell(distinct_of(v))});
  }
  for (int threads : {1, 2, 4})
    for (bool by_groups : {false, true})
      for (uint64_t chunk : {uint64_t{4096}, uint64_t{1} << 20}) {
        INFO("threads " << threads << " chunk " << chunk << (by_groups ? ", grouped by the argument" : ", listed"));
        Options opts;
        opts.files = {dir.file("input.csv")};
        opts.device = "cpu";
        opts.threads = threads;
        opts.chunk_size = chunk;
        opts.holistic_by_groups = by_groups;
        opts.output_path = dir.file("out.csv");
        opts.pipeline = "groupby g | agg median(v) as m, quantile(d, 0.7) as q";
        REQUIRE(run_pipeline(opts) == 0);
        check_output(read_file(opts.output_path), {"g", "m", "q"}, single);
        opts.pipeline = "groupby g | agg median(v) as m, count_distinct(v) as c";
        REQUIRE(run_pipeline(opts) == 0);
        check_output(read_file(opts.output_path), {"g", "m", "c"}, shared);
        // One group of every value: selected in one bucket, however many threads.
        opts.pipeline = "agg median(v) as m, quantile(d, 0.7) as q";
        REQUIRE(run_pipeline(opts) == 0);
        check_output(read_file(opts.output_path), {"m", "q"},
                     {{opt_float(quantile_of(all_v, 0.5L), 1e-15), opt_float(quantile_of(all_d, 0.7L, 100), 1e-15)}});
      }
}

TEST_CASE("diff: holistic aggregates over strings that share long prefixes sort like the strings") {
  // Strings of a's and b's: most share a 30-byte prefix, some are prefixes of others, some repeat,
  // some are 60 bytes long; group 0 holds most rows, so that past one thread its bucket is sorted on
  // every thread. Group "all" is the agg without keys.
  std::mt19937_64 rng(31);
  const std::string shared = "https://example.com/items/aab/";
  auto random_string = [&]() {
    std::string s = rng() % 8 ? shared.substr(0, rng() % 4 ? shared.size() : rng() % shared.size() + 1) : "";
    const size_t tail = rng() % 4 == 0 ? rng() % 30 : rng() % 3;
    for (size_t i = 0; i < tail; ++i) s += rng() % 2 ? 'a' : 'b';
    return s.empty() ? std::string("b") : s;  // an empty field is null
  };
  std::string text = "g,s\n";
  std::map<std::string, std::vector<std::string>> values;
  for (int r = 0; r < 200000; ++r) {
    const std::string g = r % 4 ? "g0" : "g" + std::to_string(1 + rng() % 500);
    const std::string s = random_string();
    text += g + "," + s + "\n";
    values[g].push_back(s);
    values["all"].push_back(s);
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  auto expect_of = [&](const std::string& g) {
    std::vector<std::string> v = values[g];
    std::sort(v.begin(), v.end());
    std::vector<std::string> u = v;
    u.erase(std::unique(u.begin(), u.end()), u.end());
    std::vector<Cell> row;
    if (g != "all") row.push_back(text_cell(g));
    row.push_back(int_cell(static_cast<int64_t>(u.size())));
    row.push_back(text_cell(v[(v.size() - 1) / 2]));
    row.push_back(text_cell(v[(v.size() - 1) / 10]));  // quantile 0.1: position floor((n - 1) / 10)
    return row;
  };
  std::vector<std::vector<Cell>> grouped;
  for (const auto& [g, v] : values)
    if (g != "all") grouped.push_back(expect_of(g));
  const std::string aggs = "count_distinct(s) as c, median(s) as m, quantile(s, 0.1) as q";
  for (int threads : {1, 2, 3})
    for (bool by_groups : {false, true}) {
      INFO("threads " << threads << (by_groups ? ", grouped by the argument" : ", listed rows"));
      for (const bool keyed : {true, false}) {
        Options opts;
        opts.pipeline = keyed ? "groupby g | agg " + aggs : "agg " + aggs;
        opts.files = {dir.file("input.csv")};
        opts.device = "cpu";
        opts.threads = threads;
        opts.holistic_by_groups = by_groups;
        opts.output_path = dir.file("out.csv");
        REQUIRE(run_pipeline(opts) == 0);
        if (keyed) check_output(read_file(opts.output_path), {"g", "c", "m", "q"}, grouped);
        else check_output(read_file(opts.output_path), {"c", "m", "q"}, {expect_of("all")});
      }
    }
}

TEST_CASE("diff: median and quantile order values beyond 64 bits among the others") {
  // i * 10^13 passes int64 for |i| > 922337: a sort by 64-bit prefixes must not take its low half.
  // (As a decimal: int arithmetic past 64 bits is a bad row; decimals hold 128 bits.)
  std::mt19937_64 rng(37);
  std::string text = "g,i\n";
  std::map<std::string, std::vector<int64_t>> values;
  for (int r = 0; r < 30000; ++r) {
    const std::string g = "g" + std::to_string(rng() % 3);
    const int64_t i = static_cast<int64_t>(rng() % 2000001) - 1000000;
    text += g + "," + std::to_string(i) + "\n";
    values[g].push_back(i);
  }
  TempDir dir;
  write_file(dir.file("input.csv"), text);
  std::vector<std::vector<Cell>> expect;
  for (auto& [g, v] : values) {
    std::sort(v.begin(), v.end());
    expect.push_back({text_cell(g), opt_float(quantile_of(v, 0.5L, 1e-13L), 1e-15),
                      opt_float(quantile_of(v, 0.0L, 1e-13L), 1e-15), opt_float(quantile_of(v, 0.9L, 1e-13L), 1e-15),
                      int_cell(distinct_of(v))});
  }
  for (int threads : {1, 2})
    for (bool by_groups : {false, true}) {
      INFO("threads " << threads << (by_groups ? ", grouped by the argument" : ", listed rows"));
      Options opts;
      opts.pipeline =
          "groupby g | agg median(i * 10000000000000.0) as m, quantile(i * 10000000000000.0, 0) as q0, "
          "quantile(i * 10000000000000.0, 0.9) as q9, count_distinct(i * 10000000000000.0) as d";
      opts.files = {dir.file("input.csv")};
      opts.device = "cpu";
      opts.threads = threads;
      opts.holistic_by_groups = by_groups;
      opts.output_path = dir.file("out.csv");
      REQUIRE(run_pipeline(opts) == 0);
      check_output(read_file(opts.output_path), {"g", "m", "q0", "q9", "d"}, expect);
    }
}

TEST_CASE("holistic lists: compaction sums the rows of equal (group, value) and stops when it does not pay") {
  // Floats: -0.0 and 0.0 are one value; groups i % 2, values i % 3 - 1 (and the zeros): 6 pairs.
  ArgList floats(Type::Float);
  for (int i = 0; i < 3000; ++i) floats.add(static_cast<uint32_t>(i % 2), Value::of_float(i % 3 == 1 ? (i % 4 ? -0.0 : 0.0) : i % 3 - 1.0));
  floats.compact();
  REQUIRE(floats.size() == 6);
  REQUIRE(floats.weighted());
  uint64_t total = 0;
  for (size_t i = 0; i < floats.size(); ++i) {
    total += floats.weight(i);
    CHECK(floats.weight(i) == 500);
    if (floats.value(i).f == 0) CHECK(!std::signbit(floats.value(i).f));  // the zeros are one value, kept as 0
  }
  CHECK(total == 3000);
  // It paid: from now on each value merges into its equal as it comes.
  CHECK(floats.merging());
  for (int i = 0; i < 3000; ++i) floats.add(static_cast<uint32_t>(i % 2), Value::of_float(i % 3 == 1 ? -0.0 : i % 3 - 1.0));
  floats.add(7, Value::of_float(2.5));
  REQUIRE(floats.size() == 7);
  for (size_t i = 0; i < 6; ++i) CHECK(floats.weight(i) == 1000);
  CHECK(floats.group(6) == 7);
  CHECK(floats.weight(6) == 1);
  // A merging list of ints that meets a value past 64 bits turns wide and goes on merging.
  ArgList ints(Type::Int);
  for (int i = 0; i < 100; ++i) ints.add(0, Value::of_int(i % 4));
  ints.compact();
  REQUIRE(ints.merging());
  const int128 big = static_cast<int128>(1) << 100;
  for (int i = 0; i < 10; ++i) {
    ints.add(0, Value::of_int(big));
    ints.add(0, Value::of_int(i % 4));
  }
  CHECK(ints.form() == ArgList::Form::Wide);
  REQUIRE(ints.size() == 5);
  CHECK(ints.value(4).i == big);
  CHECK(ints.weight(4) == 10);
  CHECK(ints.weight(0) + ints.weight(1) + ints.weight(2) + ints.weight(3) == 110);
  // Strings and ints past 64 bits compact by their values too.
  ArgList strings(Type::String);
  ArgList wide(Type::Decimal);
  for (int i = 0; i < 1000; ++i) {
    const std::string s = "s" + std::to_string(i % 7);
    strings.add(0, Value::of_str(s.data(), static_cast<uint32_t>(s.size())));
    wide.add(1, Value::of_int(static_cast<int128>(i % 5) << 70));
  }
  CHECK(wide.form() == ArgList::Form::Wide);
  strings.compact();
  wide.compact();
  CHECK(strings.size() == 7);
  CHECK(wide.size() == 5);
  CHECK(std::string(strings.value(0).s.ptr, strings.value(0).s.len) == "s0");
  CHECK(wide.value(1).i == static_cast<int128>(1) << 70);
  CHECK(wide.weight(1) == 200);
  // Nearly all distinct: the list stays as it was, without weights, and is never compacted again.
  ArgList distinct(Type::Int);
  for (int i = 0; i < 1000; ++i) distinct.add(0, Value::of_int(i % 700));
  distinct.compact();
  CHECK(distinct.size() == 1000);
  CHECK(!distinct.weighted());
  CHECK(distinct.value(999).i == 299);
  CHECK(distinct.next_compaction() == SIZE_MAX);
}

TEST_CASE("holistic lists: a long list's sample decides whether it is counted for compaction") {
  constexpr int kRows = 1 << 20;
  std::mt19937_64 rng(7);
  // Distinct values in random order: the sample says so, and nothing changes.
  ArgList all(Type::Int);
  for (int i = 0; i < kRows; ++i) all.add(static_cast<uint32_t>(i % 3), Value::of_int(static_cast<int64_t>(rng() >> 1)));
  all.compact();
  CHECK(all.size() == static_cast<size_t>(kRows));
  CHECK(!all.weighted());
  CHECK(all.next_compaction() == SIZE_MAX);
  // Sorted input: runs of 64 equal values one after another; a sample at a
  // stride would see them all distinct. It compacts to one value a run.
  ArgList runs(Type::Int);
  for (int i = 0; i < kRows; ++i) runs.add(0, Value::of_int(i / 64));
  runs.compact();
  REQUIRE(runs.size() == static_cast<size_t>(kRows / 64));
  CHECK(runs.weight(0) == 64);
  CHECK(runs.merging());
  // An eighth distinct, in random order: compacts to them.
  ArgList eighth(Type::Decimal);
  for (int i = 0; i < kRows; ++i) eighth.add(1, Value::of_int(static_cast<int64_t>(rng() % (kRows / 8))));
  eighth.compact();
  CHECK(eighth.size() <= static_cast<size_t>(kRows / 8));
  CHECK(eighth.size() > static_cast<size_t>(kRows / 9));
  CHECK(eighth.merging());
}
