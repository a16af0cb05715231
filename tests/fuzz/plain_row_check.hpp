// Shared by the unit tests and the fuzz target: the fast path for rows
// without quotes (cpu/fast_row.hpp) must give a row exactly as parse_row
// does, or decline it.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/fast_row.hpp"
#include "warpcsv/core/tokenize.hpp"

namespace warpcsv {

// Whether parse_plain_row gives the row at `pos` of p[0, end) as parse_row
// does (its fields with their flags, its end, field and line counts and
// error), or declines it; `*taken` says which.
inline bool plain_row_agrees(const Dialect& d, const char* p, uint64_t pos, uint64_t end, bool at_eof,
                             bool* taken) {
  struct Field {
    uint32_t i;
    uint64_t b, e;
    uint8_t flags;
    bool operator==(const Field& o) const { return i == o.i && b == o.b && e == o.e && flags == o.flags; }
  };
  std::vector<Field> fast, general;
  RowResult fr{};
  *taken = parse_plain_row(d, p, pos, end, [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
    fast.push_back(Field{i, b, e, f});
  }, fr);
  if (!*taken) return true;
  const RowResult gr = parse_row(d, p, pos, end, at_eof, [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
    general.push_back(Field{i, b, e, f});
  });
  return !gr.incomplete && !gr.comment && !gr.empty && gr.error == fr.error && gr.next == fr.next &&
         gr.fields == fr.fields && gr.lines == fr.lines && fast == general;
}

}  // namespace warpcsv
