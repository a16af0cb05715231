// A seeded CSV whose columns are group keys of every type with the values
// that order badly: strings sharing long prefixes, empty and non-ASCII ones;
// negative and large integers; floats with -0.0, infinities and NaN; dates,
// timestamps, booleans and decimals; nulls (empty fields) in every column.
// The result side's order and runs are checked on it.
#pragma once
#include <cstdint>
#include <random>
#include <string>

namespace warpcsv::testing {

// Columns: s, i, d (decimal, 2 places), f, dt (date), ts (timestamp), b, v
// (an int to aggregate). `distinct` bounds each key column's distinct values.
inline std::string key_types_csv(uint64_t seed, size_t rows, int distinct) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto maybe_null = [&](const std::string& s) { return pick(12) == 0 ? std::string() : s; };
  static const char* const kPrefixes[] = {"", "a", "ab", "abcdefgh", "abcdefghijklmnopq", "zz", "\xc3\xa9t\xc3\xa9",
                                          "B", "abcdefgh\x7f"};
  static const char* const kFloats[] = {"-0.0", "0.0", "0", "inf", "-inf", "nan", "1e300", "-1e-300", "2.5", "-2.5"};
  std::string text = "s,i,d,f,dt,ts,b,v\n";
  for (size_t r = 0; r < rows; ++r) {
    const int x = pick(distinct);
    std::string s = kPrefixes[x % 9];
    if (x >= 9) s += std::to_string(x * 7 % (distinct + 1));
    const int64_t big = (x % 3 == 0 ? 1 : -1) * (int64_t{1} << (x % 62)) + x;
    std::string f = x % 4 == 0 ? kFloats[x % 10] : std::to_string((x % 50 - 25) * 0.375);
    text += maybe_null(s) + "," + maybe_null(std::to_string(big)) + "," +
            maybe_null(std::to_string(x % 200 - 100) + "." + std::to_string(10 + x % 90)) + "," + maybe_null(f) + "," +
            maybe_null("20" + std::to_string(10 + x % 20) + "-0" + std::to_string(1 + x % 9) + "-1" +
                       std::to_string(x % 10)) +
            "," + maybe_null("2024-03-0" + std::to_string(1 + x % 9) + "T1" + std::to_string(x % 10) + ":00:0" +
                             std::to_string(x % 7)) +
            "," + maybe_null(x % 2 ? "true" : "false") + "," + std::to_string(pick(1000) - 500) + "\n";
  }
  return text;
}

}  // namespace warpcsv::testing
