// The result side: the order of groups (packed codes and a radix sort, or
// comparing) on keys of every type, and runs of any size writing the same bytes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "exec/packed_keys.hpp"
#include "result/order.hpp"
#include "warpcsv/core/eval.hpp"

using namespace warpcsv;

namespace {

// Random keys of `types`, n rows, with nulls, ties and the values that order
// badly; strings point into `store`.
// `wide`: some integers past 64 bits, and strings of one length (coded by
// their bytes) instead of strings of many lengths, some with NUL bytes or
// over 16 bytes (ranked).
std::vector<Value> random_keys(std::mt19937_64& rng, size_t n, const std::vector<Type>& types, int distinct,
                               bool wide, std::vector<std::string>& store) {
  static const double kFloats[] = {-0.0, 0.0, std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(), std::nan(""), 1e300, -1e-300, 2.5};
  store.clear();
  store.reserve(n * types.size());
  std::vector<Value> keys(n * types.size());
  for (size_t r = 0; r < n; ++r)
    for (size_t k = 0; k < types.size(); ++k) {
      Value& v = keys[r * types.size() + k];
      const int x = static_cast<int>(rng() % static_cast<uint64_t>(distinct));
      if (rng() % 10 == 0) {
        v = Value::make_null();
        continue;
      }
      switch (types[k]) {
        case Type::String: {
          std::string s = std::string(x % 5 * 4, 'p') + std::to_string(x);
          if (x % 7 == 0) s += std::string(1, '\0') + "z";  // bytes after a NUL still count
          if (x % 11 == 0) s.clear();
          if (wide) s = "k" + std::to_string(10000000 + x);  // one length: "k10000042"
          store.push_back(s);
          v = Value::of_str(store.back().data(), static_cast<uint32_t>(store.back().size()));
          break;
        }
        case Type::Float: v = Value::of_float(x % 3 ? (x - distinct / 2) * 0.25 : kFloats[x % 8]); break;
        case Type::Bool: v = Value::of_int(x & 1); break;
        default: {
          int128 i = x - distinct / 2;
          if (wide && x % 4 == 0) i *= static_cast<int128>(1) << (60 + x % 40);  // |i| < 2^20: below 2^120
          v = Value::of_int(i);
        }
      }
    }
  return keys;
}

// The order by the evaluator's comparison, nulls last, stable: the reference.
std::vector<uint32_t> reference_order(size_t n, const std::vector<Value>& keys, const std::vector<Type>& types,
                                      const std::vector<bool>& desc) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const size_t w = types.size();
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    for (size_t k = 0; k < w; ++k) {
      const Value &x = keys[a * w + k], &y = keys[b * w + k];
      if (x.null != y.null) return y.null;
      if (x.null) continue;
      const int c = compare_values(x, y, types[k]);
      if (c != 0) return desc[k] ? c > 0 : c < 0;
    }
    return false;
  });
  return order;
}

}  // namespace

TEST_CASE("compare_sort_keys: sort_order's order for any two rows of keys of every type") {
  const std::vector<std::vector<Type>> shapes = {
      {Type::Int}, {Type::String}, {Type::Float}, {Type::String, Type::Int, Type::Float}, {Type::Decimal, Type::Bool}};
  std::mt19937_64 rng(20261205);
  std::vector<std::string> store;
  for (const auto& types : shapes)
    for (int distinct : {3, 1000})
      for (bool wide : {false, true}) {
        std::vector<bool> desc(types.size());
        for (size_t k = 0; k < desc.size(); ++k) desc[k] = rng() % 2 == 0;
        const size_t n = 400;
        const std::vector<Value> keys = random_keys(rng, n, types, distinct, wide, store);
        const std::vector<uint32_t> order = reference_order(n, keys, types, desc);
        std::vector<size_t> place(n);  // where each row comes in the order
        for (size_t i = 0; i < n; ++i) place[order[i]] = i;
        INFO("keys " << types.size() << ", distinct " << distinct << ", wide " << wide);
        for (size_t a = 0; a < n; ++a)
          for (size_t b = a + 1; b < n; b += 7) {
            const int c = compare_sort_keys(&keys[a * types.size()], &keys[b * types.size()], types, desc);
            const int back = compare_sort_keys(&keys[b * types.size()], &keys[a * types.size()], types, desc);
            CHECK(c == -back);
            // a comes first when it sorts before b or ties with it (the order is stable).
            CHECK((c <= 0) == (place[a] < place[b]));
          }
      }
}

TEST_CASE("sort_order: packed codes and comparing give the reference order on keys of every type") {
  const std::vector<std::vector<Type>> shapes = {
      {Type::Int},
      {Type::String},
      {Type::Float},
      {Type::String, Type::Int, Type::Float},
      {Type::Bool, Type::Date, Type::String, Type::Timestamp},
      {Type::Decimal, Type::Decimal, Type::Decimal},  // wide: past 128 bits together, compared
      {Type::String, Type::String, Type::String, Type::Int, Type::Int, Type::Int},
  };
  std::mt19937_64 rng(20261202);
  std::vector<std::string> store;
  for (const auto& types : shapes)
    for (size_t n : {0, 1, 2, 57, 5000, 20000})
      for (int distinct : {3, 1000, 1 << 20})
        for (bool wide : {false, true}) {
          std::vector<bool> desc(types.size());
          for (size_t k = 0; k < desc.size(); ++k) desc[k] = rng() % 3 == 0;
          const std::vector<Value> keys = random_keys(rng, n, types, distinct, wide, store);
          const KeyRows rows{reinterpret_cast<const char*>(keys.data()), types.size() * sizeof(Value)};
          const std::vector<uint32_t> want = reference_order(n, keys, types, desc);
          INFO("keys " << types.size() << ", rows " << n << ", distinct " << distinct << ", wide " << wide);
          for (int threads : {1, 4}) {
            CHECK(sort_order(n, rows, types, desc, threads, SortMethod::Comparing) == want);
            CHECK(sort_order(n, rows, types, desc, threads, SortMethod::Auto) == want);
          }
          // Packed as a host table packs them (ints in 64 bits unless some are wider),
          // the keys come back as they were and sort the same.
          const PackedKeys packed(types, std::vector<bool>(types.size(), !wide));
          std::vector<char> buf(n * packed.bytes() + 1);
          size_t changed = 0;
          for (size_t r = 0; r < n; ++r) {
            packed.pack(&keys[r * types.size()], buf.data() + r * packed.bytes());
            for (size_t k = 0; k < types.size(); ++k) {
              const Value& was = keys[r * types.size() + k];
              const Value back = packed.unpack(buf.data() + r * packed.bytes(), k);
              changed += !key_equal(was, back, types[k]) || was.null != back.null ||
                         (types[k] == Type::Float && !was.null && std::signbit(was.f) != std::signbit(back.f));
            }
            changed += !packed.equal(buf.data() + r * packed.bytes(), &keys[r * types.size()]);
          }
          CHECK(changed == 0);
          const KeyRows packed_rows{buf.data(), packed.bytes(), nullptr, &packed};
          CHECK(sort_order(n, packed_rows, types, desc, 2, SortMethod::Auto) == want);
          CHECK(sort_order(n, packed_rows, types, desc, 2, SortMethod::Comparing) == want);
        }
}
