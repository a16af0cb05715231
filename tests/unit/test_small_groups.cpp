// The CPU's small-group table (cpu/small_groups.hpp) against the general
// table: rows split between the two (what the small table turns away goes to
// the general one), then flushed, must leave every group's states as rows
// all given to the general table do.
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cpu/small_groups.hpp"
#include "exec/group_table.hpp"
#include "warpcsv/core/agg.hpp"

using namespace warpcsv;

namespace {

// One string key; count(), count(x), min(x), max(x), sum(x) over ints and mean(y) over decimals.
GroupLayout small_layout() {
  GroupLayout layout;
  layout.key_types = {Type::String};
  const AggOp ops[] = {AggOp::CountStar, AggOp::Count, AggOp::Min, AggOp::Max, AggOp::SumExact, AggOp::MeanExact};
  uint32_t off = 0;
  for (int i = 0; i < 6; ++i) {
    AggDesc d{};
    d.op = ops[i];
    d.in_type = i == 5 ? Type::Decimal : Type::Int;
    d.in_scale = i == 5 ? 2 : 0;
    d.offset = off;
    off += (agg_state_size(d.op) + kAggStateAlign - 1) / kAggStateAlign * kAggStateAlign;
    layout.aggs.push_back(d);
  }
  layout.state_bytes = off;
  return layout;
}
// Row slots: the key, x, y.
const std::vector<SmallGroups::Agg> kAggs = {{AggOp::CountStar, SmallGroups::kNoSlot}, {AggOp::Count, 1},
                                             {AggOp::Min, 1}, {AggOp::Max, 1}, {AggOp::SumExact, 1},
                                             {AggOp::MeanExact, 2}};

void update_general(const GroupLayout& layout, PartitionedGroups& groups, const Value* row) {
  const uint64_t hash = groups.hash_keys(row);
  GroupTable& table = groups.part_for(hash);
  char* block = table.find_or_insert(row, hash);
  for (size_t a = 0; a < layout.aggs.size(); ++a)
    agg_update(layout.aggs[a], block, row[a == 5 ? 2 : a == 0 ? 0 : 1], Value::make_null(), 0);
}

// A group's states as text: counts, extremes (or null), sums with their third limb.
std::string states_text(const GroupLayout& layout, const char* s) {
  std::string t;
  for (const AggDesc& a : layout.aggs) {
    const char* at = s + a.offset;
    switch (a.op) {
      case AggOp::CountStar:
      case AggOp::Count: t += std::to_string(reinterpret_cast<const CountState*>(at)->n); break;
      case AggOp::Min:
      case AggOp::Max: {
        const Value& v = reinterpret_cast<const ExtremeState*>(at)->v;
        t += v.null ? "null" : std::to_string(static_cast<int64_t>(v.i));
        break;
      }
      default: {
        const auto* st = reinterpret_cast<const SumExactState*>(at);
        const auto u = static_cast<unsigned __int128>(st->sum);
        t += std::to_string(static_cast<uint64_t>(u >> 64)) + ":" + std::to_string(static_cast<uint64_t>(u)) + "^" +
             std::to_string(st->ext) + "/" + std::to_string(st->n);
      }
    }
    t += " ";
  }
  return t;
}

}  // namespace

TEST_CASE("small groups: rows split between it and the general table give the general table's states") {
  const GroupLayout layout = small_layout();
  for (const uint32_t names : {40u, 30000u}) {  // all held; more than it holds
    std::mt19937_64 rng(names);
    // Key bytes with room past the last for the two 8-byte loads.
    std::vector<std::string> keys(names);
    for (auto& k : keys) {
      k = "k" + std::to_string(rng() % 1000000);
      if (rng() % 8 == 0) k += " of more than fifteen bytes";
      if (rng() % 50 == 0) k.clear();  // empty, not null
    }
    std::string bytes;
    std::vector<uint32_t> at(names);
    for (uint32_t i = 0; i < names; ++i) {
      at[i] = static_cast<uint32_t>(bytes.size());
      bytes += keys[i];
    }
    bytes.append(16, '\0');
    const char* readable = bytes.data() + bytes.size();
    const int64_t extremes[] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -1, 0};
    auto random_value = [&](bool wide_ok) {
      const uint64_t pick = rng() % 40;
      if (pick == 0) return Value::make_null();
      if (pick == 1) return Value::of_int(extremes[rng() % 4]);
      if (pick == 2 && wide_ok) return Value::of_int(static_cast<__int128>(1) << 70);  // beyond 64 bits
      return Value::of_int(static_cast<int64_t>(rng() % 2000001) - 1000000);
    };
    const uint32_t rows = 60000;
    std::vector<Value> values(size_t{rows} * 3);
    for (uint32_t r = 0; r < rows; ++r) {
      Value* row = &values[size_t{r} * 3];
      const uint32_t k = static_cast<uint32_t>(rng() % names);
      row[0] = rng() % 100 == 0 ? Value::make_null() : Value::of_str(bytes.data() + at[k], static_cast<uint32_t>(keys[k].size()));
      row[1] = random_value(true);
      row[2] = random_value(false);
    }
    PartitionedGroups all(&layout, 8), split(&layout, 8);
    for (uint32_t r = 0; r < rows; ++r) update_general(layout, all, &values[size_t{r} * 3]);
    SmallGroups small(0, 3, kAggs);
    std::vector<uint32_t> batch;
    uint32_t taken = 0;
    for (uint32_t first = 0; first < rows; first += 256) {
      batch.clear();
      for (uint32_t r = first; r < std::min(rows, first + 256); ++r) batch.push_back(r);
      const uint32_t n = static_cast<uint32_t>(batch.size());
      const uint32_t rest = small.take(values.data(), batch.data(), n, readable);
      taken += n - rest;
      for (uint32_t i = 0; i < rest; ++i) update_general(layout, split, &values[size_t{batch[i]} * 3]);
      // Flushed part way too: the table is used again after a fold.
      if (first == 256 * 40) small.flush(split);
    }
    small.flush(split);
    CHECK(small.size() == 0);
    CHECK(taken > rows / (names > SmallGroups::kMaxGroups ? 10 : 2));  // it took rows, and turned some away
    CHECK(taken < rows);
    REQUIRE(split.size() == all.size());
    for (GroupTable& part : all.parts())
      for (size_t g = 0; g < part.size(); ++g) {
        Value key;
        part.keys_of(g, &key);
        const uint64_t hash = part.hash_of(g);
        const char* mine = split.part_for(hash).find_or_insert(&key, hash);
        INFO("key " << (key.null ? std::string("null") : std::string(key.s.ptr, key.s.len)));
        REQUIRE(states_text(layout, mine) == states_text(layout, part.state(g)));
      }
  }
}
