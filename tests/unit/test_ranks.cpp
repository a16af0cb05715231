// The parts of running as ranks that need no launcher: where the input is
// cut, the row start after a cut, the line count before it, and which GPUs a
// rank takes. The runs themselves are tests/ranks/run_rank_tests.sh.
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "ranks/rank_setup.hpp"
#include "ranks/shares.hpp"

using namespace warpcsv;

TEST_CASE("input cuts: even shares of all the bytes, moved off small and unsplittable files", "[ranks]") {
  SECTION("one large file is cut evenly") {
    const auto cuts = plan_cuts({{1000, true}}, 4, 10);
    REQUIRE(cuts.size() == 4);
    CHECK(cuts[0].offset == 0);
    CHECK(cuts[1].source == 0);
    CHECK(cuts[1].offset == 250);
    CHECK(cuts[2].offset == 500);
    CHECK(cuts[3].offset == 750);
  }
  SECTION("a small file goes whole to the rank nearer its start or end") {
    // 100 + 10 + 100 bytes: the cut at 105 falls in the 10-byte file, past its middle: its end.
    const auto cuts = plan_cuts({{100, true}, {10, true}, {100, true}}, 2, 50);
    REQUIRE(cuts.size() == 2);
    CHECK(cuts[1].source == 2);
    CHECK(cuts[1].offset == 0);
  }
  SECTION("a compressed file or stream is never cut") {
    const auto cuts = plan_cuts({{1000, false}}, 3, 1);
    REQUIRE(cuts.size() == 3);
    for (const auto& c : cuts) CHECK(c.offset == 0);
    CHECK(cuts[1].source == 0);  // 333 < 500: before the middle
    CHECK(cuts[2].source == 1);  // 666: past the end (no source)
  }
  SECTION("more ranks than bytes: cuts never go back") {
    const auto cuts = plan_cuts({{3, true}}, 8, 1);
    REQUIRE(cuts.size() == 8);
    for (size_t r = 1; r < cuts.size(); ++r) CHECK(cuts[r].offset >= cuts[r - 1].offset);
  }
}

TEST_CASE("line ends: LF, CRLF once, a lone CR, a CR at the end decided by the next byte", "[ranks]") {
  CHECK(count_line_ends("a\nb\r\nc\rd", 8, -1) == 3);
  CHECK(count_line_ends("ab\r", 3, '\n') == 0);
  CHECK(count_line_ends("ab\r", 3, 'x') == 1);
  CHECK(count_line_ends("ab\r", 3, -1) == 1);
  CHECK(count_line_ends("", 0, -1) == 0);
}

namespace {

// Random CSV bytes with quoted fields holding newlines, doubled quotes,
// CRLF and lone CR line ends, and blank lines.
std::string random_csv(std::mt19937& rng, size_t rows) {
  const char* pieces[] = {"ab", "1", "\"q,\"", "\"x\ny\"", "\"a\"\"b\"", "\"\r\n\"", "", "zz"};
  const char* ends[] = {"\n", "\r\n", "\r", "\n\n"};
  std::string s;
  for (size_t r = 0; r < rows; ++r) {
    const int fields = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < fields; ++f) {
      if (f) s += ',';
      s += pieces[rng() % 8];
    }
    s += ends[rng() % 4];
  }
  return s;
}

}  // namespace

TEST_CASE("the row start after a cut, and the lines before it, match a walk from the start", "[ranks]") {
  const Dialect d = make_dialect(',', '"', -1, -1);
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    const std::string text = random_csv(rng, 30);
    // The walk: the state before each byte.
    std::vector<uint8_t> state(text.size() + 1);
    state[0] = kRowStart;
    for (size_t i = 0; i < text.size(); ++i) state[i + 1] = csv_step(d, state[i], static_cast<uint8_t>(text[i]));
    auto row_start = [&](size_t p) {
      return p == text.size() ||
             (state[p] == kRowStart && !(p > 0 && text[p] == '\n' && text[p - 1] == '\r'));
    };
    for (size_t c = 1; c < text.size(); ++c) {
      size_t expected = c;
      while (!row_start(expected)) ++expected;
      RowStartFound found;
      REQUIRE(find_row_start(d, state[c], text[c - 1] == '\r', text.data() + c, text.size() - c, true, &found));
      INFO("round " << round << ", cut at " << c);
      CHECK(c + found.distance == expected);
      CHECK(count_line_ends(text.data(), c, static_cast<unsigned char>(text[c])) + found.lines ==
            count_line_ends(text.data(), expected, expected < text.size() ? static_cast<unsigned char>(text[expected]) : -1));
      // Fewer bytes than the row start needs: it asks for more, or gives the same answer.
      RowStartFound part;
      const size_t have = (expected - c) / 2;
      if (find_row_start(d, state[c], text[c - 1] == '\r', text.data() + c, have, false, &part))
        CHECK(c + part.distance == expected);
    }
  }
}

TEST_CASE("GPUs of a host's ranks: even blocks, or one shared in turn", "[ranks]") {
  CHECK(gpus_for_local_rank(0, 2, 4) == std::vector<int>{0, 1});
  CHECK(gpus_for_local_rank(1, 2, 4) == std::vector<int>{2, 3});
  CHECK(gpus_for_local_rank(2, 3, 8) == std::vector<int>{5, 6, 7});
  CHECK(gpus_for_local_rank(1, 2, 1) == std::vector<int>{0});
  CHECK(gpus_for_local_rank(3, 4, 2) == std::vector<int>{1});
  CHECK(gpus_for_local_rank(0, 1, 0).empty());
}
