// The partitioner's fast transition vector (cpu/fast_vector.hpp) against the
// core's byte-by-byte tv_of_bytes: random bytes drawn mostly from each
// dialect's special ones (quotes, doubled quotes, escapes, comments, CR, LF,
// delimiter bytes and their overlaps), every length from 0 to 80 and longer
// runs of text between them.
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cpu/fast_vector.hpp"

using namespace warpcsv;

TEST_CASE("fast transition vector equals tv_of_bytes for every dialect") {
  struct Case {
    std::string delimiter;
    char quote;
    int escape, comment;
  };
  const std::vector<Case> dialects = {{",", '"', -1, -1},   {";", '\'', -1, '#'}, {"\t", '"', '\\', -1},
                                      {"||", '"', -1, -1},  {"|||", '"', '\\', '#'}, {", ", '"', -1, -1},
                                      {"\xc2\xa6", '"', -1, -1}, {"abab", '"', '\\', '#'}};
  std::mt19937_64 rng(3);
  for (const Case& c : dialects) {
    INFO("delimiter '" << c.delimiter << "'");
    const Dialect d = make_dialect(c.delimiter, c.quote, c.escape, c.comment);
    std::string alphabet = c.delimiter + c.quote + c.quote + "\n\r\nxy \xc3\xa9";
    if (c.escape >= 0) alphabet += static_cast<char>(c.escape);
    if (c.comment >= 0) alphabet += static_cast<char>(c.comment);
    for (int i = 0; i < 4000; ++i) {
      std::string s;
      const size_t n = i < 3000 ? rng() % 81 : rng() % 2000;
      while (s.size() < n) {
        if (rng() % 8 == 0) s.append(rng() % 40, 'z');  // a run of text the fast path skips
        else s += alphabet[rng() % alphabet.size()];
      }
      INFO("bytes '" << s << "'");
      CHECK(tv_of_bytes_fast(d, s.data(), s.size()) == tv_of_bytes(d, s.data(), s.size()));
    }
  }
}
