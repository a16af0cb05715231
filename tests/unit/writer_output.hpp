// Runs a RowWriter over rows into a temporary FILE and gives back its bytes:
// the writers' tests read what a real FILE received.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "catch.hpp"
#include "warpcsv/output.hpp"

namespace warpcsv::testing {

// Everything written to `f` so far.
inline std::string written(std::FILE* f) {
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  return out;
}

// The bytes a writer of `fmt` gives for `cols` and `rows`.
inline std::string write_all(OutputFormat fmt, const std::vector<OutputColumn>& cols,
                             const std::vector<std::vector<Value>>& rows, bool with_header = true) {
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  auto w = make_writer(fmt, tmp, with_header);
  w->begin(cols);
  for (const auto& r : rows) w->row(r.data());
  w->end();
  std::string out = written(tmp);
  std::fclose(tmp);
  return out;
}

}  // namespace warpcsv::testing
