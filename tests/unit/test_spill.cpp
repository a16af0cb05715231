// Spill files read back what was appended, compressed or not; sorted parts
// merged in key ranges on threads give the order and states one sort of
// every group gives, whatever the sampling, range size, run size and
// thread count.
#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/group_table.hpp"
#include "result/group_rows.hpp"
#include "result/sorted_parts.hpp"
#include "result/spill.hpp"
#include "result/spill_file.hpp"
#include "runtime/parallel.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

namespace {

Plan sorted_parts_plan() {
  const std::vector<OutputColumn> schema = {{"s", ColumnType{Type::String, 0}},
                                            {"k", ColumnType{Type::Int, 0}},
                                            {"a", ColumnType{Type::Int, 0}},
                                            {"t", ColumnType{Type::String, 0}}};
  return build_plan("groupby s, k | agg sum(a), max(t)", schema);
}

// `rows` random rows folded into one table: string keys short, long (kept
// out of the block) and null, int keys with nulls, string maxima.
GroupTable random_groups(const GroupLayout& layout, size_t rows, uint64_t seed) {
  GroupTable t(&layout);
  std::mt19937_64 rng(seed);
  const size_t distinct = rows / 2 + 1;
  for (size_t r = 0; r < rows; ++r) {
    const uint64_t key = rng() % distinct;
    std::string s = key % 3 == 0 ? "k" + std::to_string(key) : "a-rather-long-key-" + std::to_string(key * 7919);
    const std::string v = "v" + std::to_string(rng() % 1000000);
    Value keys[2] = {Value::of_str(s.data(), static_cast<uint32_t>(s.size())),
                     Value::of_int(static_cast<int64_t>(key % 5) - 2)};
    if (key % 17 == 0) keys[0] = Value{};
    if (key % 13 == 0) keys[1] = Value{};
    const Value x[2] = {Value::of_int(static_cast<int64_t>(rng() % 1000) - 500),
                        Value::of_str(v.data(), static_cast<uint32_t>(v.size()))};
    char* block = t.find_or_insert(keys, t.hash_keys(keys));
    bool strings = false;
    for (size_t a = 0; a < 2; ++a) strings |= agg_update(layout.aggs[a], block, x[a], Value{}, r);
    if (strings) t.stabilize_strings(block);
  }
  return t;
}

// A row as text: its keys, then its states (the sum, the max's bytes).
std::string row_text(const GroupLayout& layout, const GroupRun& run, size_t r) {
  const size_t g = run.group(r);
  std::string text;
  for (size_t k = 0; k < 2; ++k) {
    const Value v = run.keys.at(g, k);
    text += v.null ? "null" : k == 0 ? std::string(v.s.ptr, v.s.len) : std::to_string(static_cast<int64_t>(v.i));
    text += "|";
  }
  const char* held = run.held_state(g);
  const auto* sum = reinterpret_cast<const SumExactState*>(held + layout.aggs[0].offset);
  const auto* max = reinterpret_cast<const ExtremeState*>(held + layout.aggs[1].offset);
  return text + std::to_string(static_cast<int64_t>(sum->sum)) + "/" + std::to_string(sum->n) + "/" +
         std::string(max->v.s.ptr, max->v.s.len);
}

std::vector<std::string> all_rows(const GroupLayout& layout, OrderedGroups& ordered, size_t run_rows) {
  std::vector<std::string> rows;
  for (GroupRun run = ordered.next(); run.n; run = ordered.next()) {
    CHECK(run.n <= run_rows);
    for (size_t r = 0; r < run.n; ++r) rows.push_back(row_text(layout, run, r));
  }
  return rows;
}

// The groups of `all` split into `nparts` tables by hash, each sorted and
// written as a sorted part sampled every `sample_every` records.
std::vector<SortedPart> sorted_parts(const Plan& plan, const GroupLayout& layout, const GroupTable& all,
                                     size_t nparts, size_t sample_every) {
  std::vector<std::unique_ptr<GroupTable>> tables;
  for (size_t p = 0; p < nparts; ++p) tables.push_back(std::make_unique<GroupTable>(&layout));
  for (size_t g = 0; g < all.size(); ++g)
    tables[hash_part(all.hash_of(g), nparts)]->merge_block(all.hash_of(g), all.block_of(g));
  const GroupRecords records(layout);
  std::vector<SortedPart> parts;
  for (const auto& t : tables) {
    SortedPartWriter out(records, spill_directory(), sample_every);
    SortedHostGroups ordered(plan, {t.get()}, nullptr, 1);
    for (GroupRun run = ordered.next(); run.n; run = ordered.next())
      for (size_t r = 0; r < run.n; ++r) out.add(*t, run.group(r));
    parts.push_back(out.finish());
  }
  return parts;
}

// Sets how spill files compress for one scope.
class CompressionFor {
 public:
  explicit CompressionFor(SpillCompression c) { set_spill_compression(c); }
  ~CompressionFor() { set_spill_compression(SpillCompression::Auto); }
};

}  // namespace

// Appends of any size, bytes that compress and bytes that do not, read back
// at any offset and length, on several threads at once.
TEST_CASE("spill file: what was appended reads back at any offset, compressed or not, on threads") {
  std::mt19937_64 rng(17);
  std::string bytes;
  while (bytes.size() < 10 * kSpillFrameBytes + 123) {
    const size_t n = rng() % 3 == 0 ? rng() % (3 * kSpillFrameBytes) : rng() % 5000;
    const bool noise = rng() % 4 == 0;  // stored as it is even when compressing
    for (size_t i = 0; i < n; ++i) bytes += noise ? static_cast<char>(rng()) : "record,"[i % 7];
  }
  for (SpillCompression c : {SpillCompression::Never, SpillCompression::Always}) {
    const CompressionFor mode(c);
    SpillFile file(spill_directory());
    for (size_t at = 0; at < bytes.size();) {
      const size_t n = std::min<size_t>(bytes.size() - at, rng() % 40000);
      file.append(bytes.data() + at, n);
      at += n;
    }
    REQUIRE(file.size() == bytes.size());
    if (c == SpillCompression::Always) CHECK(file.stored_bytes() < bytes.size() * 3 / 4);
    else CHECK(file.stored_bytes() == bytes.size());
    std::vector<std::pair<uint64_t, size_t>> reads;
    for (int i = 0; i < 400; ++i) reads.emplace_back(rng() % (bytes.size() + 10), rng() % (2 * kSpillFrameBytes + 9));
    reads.emplace_back(0, bytes.size());
    reads.emplace_back(kSpillFrameBytes, kSpillFrameBytes);
    std::atomic<size_t> wrong{0};
    parallel_for(reads.size(), 4, [&](size_t i, int) {
      const auto [offset, n] = reads[i];
      std::string got(n, '?');
      const size_t m = file.read(offset, got.data(), n);
      const size_t want = offset >= bytes.size() ? 0 : std::min(n, bytes.size() - offset);
      if (m != want || got.compare(0, m, bytes, offset, m) != 0) ++wrong;
    });
    CHECK(wrong == 0);
  }
}

TEST_CASE("sorted parts: merged in key ranges on threads, the order and states of one sort") {
  const Plan plan = sorted_parts_plan();
  const GroupLayout layout = GroupLayout::from_plan(plan);
  REQUIRE(layout.aggs.size() == 2);
  const GroupRecords records(layout);
  for (size_t rows : {size_t{0}, size_t{1}, size_t{50}, size_t{20000}}) {
    const GroupTable all = random_groups(layout, rows, rows + 5);
    SortedHostGroups one_sort(plan, {&all}, nullptr, 1);
    const std::vector<std::string> expected = all_rows(layout, one_sort, kResultRunRows);
    REQUIRE(expected.size() == all.size());
    for (size_t nparts : {size_t{1}, size_t{7}, size_t{64}}) {
      for (size_t sample_every : {size_t{1}, size_t{3}, size_t{256}}) {
        for (size_t range_records : {size_t{1}, size_t{10}, size_t{1000}, size_t{0}}) {
          for (int threads : {1, 3}) {
            const CompressionFor mode(threads == 1 ? SpillCompression::Never : SpillCompression::Always);
            const size_t run_rows = range_records == 10 ? 4 : 777;
            INFO(rows << " rows, " << nparts << " parts, a sample every " << sample_every << ", ranges of "
                      << range_records << ", " << threads << " threads");
            auto ordered = merge_sorted_parts(records, layout, sorted_parts(plan, layout, all, nparts, sample_every),
                                              all.size(), run_rows, threads, 0, range_records);
            CHECK(ordered->size() == all.size());
            CHECK(all_rows(layout, *ordered, run_rows) == expected);
          }
        }
      }
    }
  }
}

// Files written without samples (as ranks send them) are sampled, then merged alike.
TEST_CASE("sorted parts: files without samples are sampled and merged in order") {
  const Plan plan = sorted_parts_plan();
  const GroupLayout layout = GroupLayout::from_plan(plan);
  const GroupTable all = random_groups(layout, 30000, 3);
  SortedHostGroups one_sort(plan, {&all}, nullptr, 1);
  const std::vector<std::string> expected = all_rows(layout, one_sort, kResultRunRows);
  for (int threads : {1, 4}) {
    std::vector<std::unique_ptr<SpillFile>> files;
    for (SortedPart& part : sorted_parts(plan, layout, all, 5, 1)) files.push_back(std::move(part.file));
    auto ordered = merge_sorted_records(layout, std::move(files), all.size(), 1000, threads);
    CHECK(all_rows(layout, *ordered, 1000) == expected);
  }
}
