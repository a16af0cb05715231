// The bounds that cut the groups' key order into one range per GPU
// (cuda/key_ranges.hpp): in the result's order, nulls last, and with about
// as many sampled keys in each range. Host code, so it runs without a GPU.
#ifdef WARPCSV_HAVE_CUDA
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cuda/key_ranges.hpp"
#include "warpcsv/core/eval.hpp"

using namespace warpcsv;
using warpcsv::cuda::KeySample;

namespace {

// Keys a (string, nullable) and b (int, nullable) per row; the string's bytes
// go into the sample's arena and its StrRef::ptr holds their offset.
void add_row(KeySample& s, const std::string* a, const int64_t* b) {
  Value va = Value::make_null();
  if (a) {
    va.null = false;
    va.s.len = static_cast<uint32_t>(a->size());
    va.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(s.arena.size()));
    s.arena.insert(s.arena.end(), a->begin(), a->end());
  }
  s.keys.push_back(va);
  s.keys.push_back(b ? Value::of_int(*b) : Value::make_null());
}

// <0, 0, >0 as row x sorts before, with or after row y (nulls last).
int compare_rows(const Value* x, const char* ax, const Value* y, const char* ay) {
  const Type types[2] = {Type::String, Type::Int};
  for (int k = 0; k < 2; ++k) {
    Value p = x[k], q = y[k];
    if (p.null || q.null) {
      if (p.null != q.null) return p.null ? 1 : -1;
      continue;
    }
    if (types[k] == Type::String) {
      p.s.ptr = ax + reinterpret_cast<uintptr_t>(p.s.ptr);
      q.s.ptr = ay + reinterpret_cast<uintptr_t>(q.s.ptr);
    }
    if (const int c = compare_values(p, q, types[k])) return c;
  }
  return 0;
}

}  // namespace

TEST_CASE("key range bounds: in the result's order, the sampled keys shared evenly", "[key_ranges]") {
  const std::vector<Type> types = {Type::String, Type::Int};
  std::mt19937_64 rng(5);
  for (size_t nsamples : {1, 3, 4, 100}) {
    // Distinct rows spread over samples of several GPUs, with nulls and
    // strings that share prefixes.
    std::vector<KeySample> samples(nsamples);
    std::vector<std::pair<size_t, size_t>> rows;  // (sample, row) of every row
    const size_t total = 997;
    for (size_t i = 0; i < total; ++i) {
      KeySample& s = samples[rng() % nsamples];
      const std::string a = "ab" + std::string(i % 7, 'x') + std::to_string(i / 7);
      // Groups are distinct: rows without a string have distinct ints.
      const bool no_a = i % 13 == 0, no_b = i % 11 == 0 && !no_a;
      const int64_t b = no_a ? static_cast<int64_t>(i) : static_cast<int64_t>(i % 5) - 2;
      rows.emplace_back(static_cast<size_t>(&s - samples.data()), s.keys.size() / 2);
      add_row(s, no_a ? nullptr : &a, no_b ? nullptr : &b);
    }
    for (size_t ranges : {2, 3, 8, 64}) {
      const KeySample bounds = cuda::choose_key_bounds(samples, types, ranges);
      INFO(nsamples << " samples, " << ranges << " ranges");
      REQUIRE(bounds.keys.size() == 2 * (ranges - 1));
      const char* ab = bounds.arena.data();
      for (size_t r = 1; r + 1 < ranges; ++r)
        CHECK(compare_rows(&bounds.keys[2 * (r - 1)], ab, &bounds.keys[2 * r], ab) <= 0);
      // Each row's range: the bounds not greater than it.
      std::vector<size_t> in_range(ranges);
      for (const auto& [si, ri] : rows) {
        const KeySample& s = samples[si];
        size_t r = 0;
        while (r + 1 < ranges && compare_rows(&bounds.keys[2 * r], ab, &s.keys[2 * ri], s.arena.data()) <= 0) ++r;
        ++in_range[r];
      }
      for (size_t r = 0; r < ranges; ++r) {
        INFO("range " << r);
        CHECK(in_range[r] + 1 >= total / ranges);
        CHECK(in_range[r] <= total / ranges + 1);
      }
    }
  }
  // No samples (no groups anywhere): no bounds.
  CHECK(cuda::choose_key_bounds(std::vector<KeySample>(2), types, 2).keys.empty());
}
#endif
