// Differential tests of lookup joins: seeded random inputs and lookup files
// (keys repeated, missing and null on both sides, quoted names), run at every
// chunk size and thread count, against a naive nested-loop reference built
// from the generator's own cells.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_files.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

struct InputRow {
  int id;
  std::optional<int> k;
  int amount;
};
struct LookupRow {
  std::optional<int> k;
  std::string name;
  int w;
};

// A name with the characters CSV must quote.
std::string random_name(std::mt19937_64& rng) {
  static const char* const kParts[] = {"acme", "north, wind", "the \"best\"", "zeta", "o'neil", "multi\nline"};
  return kParts[rng() % 6] + std::to_string(rng() % 5);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

struct Tables {
  std::vector<InputRow> input;
  std::vector<LookupRow> lookup;
  std::string input_csv, lookup_csv;
};

Tables make_tables(uint64_t seed, int rows, int lookup_rows, int keys) {
  std::mt19937_64 rng(seed);
  Tables t;
  t.input_csv = "id,k,amount\n";
  for (int i = 0; i < rows; ++i) {
    InputRow r{i + 1, std::nullopt, static_cast<int>(rng() % 1000) - 200};
    if (rng() % 10) r.k = static_cast<int>(rng() % keys);
    t.input.push_back(r);
    t.input_csv += std::to_string(r.id) + "," + (r.k ? std::to_string(*r.k) : "") + "," + std::to_string(r.amount) + "\n";
  }
  t.lookup_csv = "k,name,w\n";
  for (int i = 0; i < lookup_rows; ++i) {
    LookupRow r{std::nullopt, random_name(rng), static_cast<int>(rng() % 100)};
    if (rng() % 12) r.k = static_cast<int>(rng() % (keys + keys / 2));  // some keys no row has
    t.lookup.push_back(r);
    t.lookup_csv += (r.k ? std::to_string(*r.k) : "") + "," + csv_field(r.name) + "," + std::to_string(r.w) + "\n";
  }
  return t;
}

std::string run_join(const TempDir& dir, const std::string& pipeline, uint64_t chunk, int threads) {
  Options opts;
  opts.pipeline = pipeline;
  opts.files = {dir.file("in.csv")};
  opts.chunk_size = chunk;
  opts.threads = threads;
  opts.device = "cpu";
  opts.output_path = dir.file("out.csv");
  std::string error;
  const int code = run_to_exit(opts, error);
  INFO(pipeline << " chunk " << chunk << " threads " << threads << ": " << error);
  REQUIRE(code == 0);
  return read_file(opts.output_path);
}

// The joined rows in input order, each input row's matches in lookup-file order.
template <class Emit>
void naive_join(const Tables& t, bool left, Emit&& emit) {
  for (const InputRow& r : t.input) {
    bool matched = false;
    for (const LookupRow& l : t.lookup)
      if (r.k && l.k && *r.k == *l.k) {
        matched = true;
        emit(r, &l);
      }
    if (!matched && left) emit(r, nullptr);
  }
}

}  // namespace

TEST_CASE("join: rows, left rows, groups and a join after agg match a nested-loop reference at every setting") {
  for (uint64_t seed : {1u, 2u, 3u}) {
    TempDir dir;
    const Tables t = make_tables(seed, 400, seed == 3 ? 60 : 25, seed == 3 ? 40 : 12);
    write_file(dir.file("in.csv"), t.input_csv);
    write_file(dir.file("lookup.csv"), t.lookup_csv);

    std::string inner = "id,k,amount,name,w\n", left = inner;
    naive_join(t, false, [&](const InputRow& r, const LookupRow* l) {
      inner += std::to_string(r.id) + "," + std::to_string(*r.k) + "," + std::to_string(r.amount) + "," +
               csv_field(l->name) + "," + std::to_string(l->w) + "\n";
    });
    naive_join(t, true, [&](const InputRow& r, const LookupRow* l) {
      left += std::to_string(r.id) + "," + (r.k ? std::to_string(*r.k) : "") + "," + std::to_string(r.amount) + "," +
              (l ? csv_field(l->name) + "," + std::to_string(l->w) : ",") + "\n";
    });
    // Per name: joined rows and the sum of amount * w, in name order.
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;
    naive_join(t, false, [&](const InputRow& r, const LookupRow* l) {
      auto& g = by_name[l->name];
      g.first += 1;
      g.second += static_cast<int64_t>(r.amount) * l->w;
    });
    std::string grouped = "name,n,s\n";
    for (const auto& [name, g] : by_name)
      grouped += csv_field(name) + "," + std::to_string(g.first) + "," + std::to_string(g.second) + "\n";
    // After the agg: per key its rows, then each lookup row of the key (the key's `k` is not repeated).
    std::map<int, int> rows_per_key;
    for (const InputRow& r : t.input)
      if (r.k) ++rows_per_key[*r.k];
    std::string after = "k,n,name,w\n";
    for (const auto& [k, n] : rows_per_key)
      for (const LookupRow& l : t.lookup)
        if (l.k && *l.k == k) after += std::to_string(k) + "," + std::to_string(n) + "," + csv_field(l.name) + "," +
                                       std::to_string(l.w) + "\n";

    const std::string lookup = "'" + dir.file("lookup.csv") + "'";
    for (uint64_t chunk : {1ull, 7ull, 64ull, 1000ull, 1ull << 20})
      for (int threads : {1, 3}) {
        CHECK(run_join(dir, "join " + lookup + " on k", chunk, threads) == inner);
        CHECK(run_join(dir, "left join " + lookup + " on k", chunk, threads) == left);
        CHECK(run_join(dir, "join " + lookup + " on k | groupby name | agg count() as n, sum(amount * w) as s", chunk,
                       threads) == grouped);
        CHECK(run_join(dir, "filter k is not null | groupby k | agg count() as n | join " + lookup + " on k", chunk,
                       threads) == after);
      }
  }
}

TEST_CASE("join: two joins, an expression key and clashing names") {
  TempDir dir;
  write_file(dir.file("in.csv"), "id,code,region\n1,A1,n\n2,b2,s\n3,C3,n\n4,,s\n5,a1,n\n");
  write_file(dir.file("codes.csv"), "code,label,id\na1,first,100\nb2,second,200\nc3,third,300\na1,again,400\n");
  write_file(dir.file("regions.tsv"), "region\tname\nn\tNorth\ns\tSouth\n");
  const std::string codes = "'" + dir.file("codes.csv") + "'", regions = "'" + dir.file("regions.tsv") + "'";
  for (uint64_t chunk : {1ull, 5ull, 1ull << 20}) {
    // lower(code) = code: the lookup's `code` is added (renamed), its `id` clashes with the input's.
    CHECK(run_join(dir, "join " + codes + " on lower(code) = code | join " + regions + " delimiter tab on region",
                   chunk, 2) ==
          "id,code,region,code_2,label,id_2,name\n"
          "1,A1,n,a1,first,100,North\n1,A1,n,a1,again,400,North\n2,b2,s,b2,second,200,South\n"
          "3,C3,n,c3,third,300,North\n5,a1,n,a1,first,100,North\n5,a1,n,a1,again,400,North\n");
    CHECK(run_join(dir, "join " + codes + " on lower(code) = code as c | select id, c.id, label", chunk, 2) ==
          "id,c.id,label\n1,100,first\n1,400,again\n2,200,second\n3,300,third\n5,100,first\n5,400,again\n");
  }
}
