// A sweep over polluted files (diff/polluted_csv.hpp): each pollution, in the
// first, second, middle and last row, with delimiters of one and of several
// bytes. Given the dialect, the lines to skip and the column names, as a
// loader benchmark gives them, `--bad-rows pad` keeps every clean row of every
// file, keeps a row short of a field with a null for it, and reports each
// polluted row in --rejects at its line, at every chunk size and thread count.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "catch.hpp"
#include "diff/polluted_csv.hpp"
#include "diff/random_csv.hpp"
#include "test_files.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

using namespace warpcsv;
using namespace warpcsv::testing;

namespace {

struct Loaded {
  int code = 0;
  std::string out, rejects, error;
};

Loaded load(const TempDir& dir, const PollutedFile& f, uint64_t chunk, int threads) {
  write_file(dir.file("in.csv"), f.text);
  Options opts;
  opts.pipeline = "select *";
  opts.files = {dir.file("in.csv")};
  opts.device = "cpu";
  opts.chunk_size = chunk;
  opts.threads = threads;
  opts.quiet = true;
  opts.dialect.delimiter = f.delimiter;
  opts.dialect.header = false;
  opts.dialect.skip_lines = f.skip_lines;
  opts.dialect.names = polluted_column_names();
  opts.bad_rows = BadRows::Pad;
  opts.output_path = dir.file("out.csv");
  opts.rejects_path = dir.file("rejects.csv");
  std::remove(opts.output_path.c_str());
  std::remove(opts.rejects_path.c_str());
  Loaded l;
  {
    CaptureStderr quiet(dir.file("stderr.txt"));
    l.code = run_to_exit(opts, l.error);
  }
  l.out = read_file(opts.output_path);
  l.rejects = read_file(opts.rejects_path);
  return l;
}

using Row = std::vector<std::optional<std::string>>;

// What the file must read as: every clean row, and the polluted one only
// where padding keeps it.
std::vector<Row> expected_rows(const PollutedFile& f) {
  std::vector<Row> rows;
  rows.push_back(Row(polluted_column_names().begin(), polluted_column_names().end()));
  for (size_t r = 0; r < f.clean_rows.size(); ++r) {
    if (f.polluted_row == r) {
      if (!f.padded_fields.empty()) rows.push_back(f.padded_fields);
      continue;
    }
    rows.push_back(Row(f.clean_rows[r].begin(), f.clean_rows[r].end()));
  }
  return rows;
}

}  // namespace

TEST_CASE("messy: every clean row of every polluted file is kept, each polluted row reported") {
  TempDir dir;
  const size_t rows = 40;
  uint64_t seed = 900;
  int files = 0;
  for (const std::string delimiter : {",", ";", "\t", "|", ", ", "||"}) {
    for (Pollution p : {Pollution::None, Pollution::MissingSeparator, Pollution::ExtraSeparator,
                        Pollution::StrayQuote, Pollution::MultiRowHeader, Pollution::Preamble}) {
      for (size_t row : {size_t{0}, size_t{1}, rows / 2, rows - 1, rows / 3, rows - 2}) {
        const PollutedFile f = make_polluted(seed++, p, rows, row, delimiter);
        ++files;
        INFO("delimiter '" << delimiter << "', pollution " << static_cast<int>(p) << ", row " << row << "\n"
                           << f.text);
        for (const auto& [chunk, threads] : {std::pair<uint64_t, int>{1 << 20, 1}, {7, 3}}) {
          const Loaded l = load(dir, f, chunk, threads);
          INFO("chunk " << chunk << ", threads " << threads << ", error: " << l.error);
          REQUIRE(l.code == 0);
          CHECK(naive_split(l.out) == expected_rows(f));
          const auto rejects = naive_split(l.rejects);
          REQUIRE(rejects.size() == (f.polluted_row ? 2u : 1u));
          if (f.polluted_row) {
            const uint64_t line = static_cast<uint64_t>(f.skip_lines) + *f.polluted_row + 1;
            CHECK(rejects[1][1] == std::to_string(line));
            CHECK((rejects[1][3]->find("padded with nulls") != std::string::npos) == !f.padded_fields.empty());
          }
        }
        if (p == Pollution::MultiRowHeader || p == Pollution::Preamble || p == Pollution::None) break;
      }
    }
  }
  CHECK(files == 6 * (3 * 6 + 3));
}
