// Which int arithmetic of a plan runs over 128-bit sums (Instr::wide).
#pragma once
#include "warpcsv/plan.hpp"

namespace warpcsv {
namespace spec {

// Int is 64-bit, but `sum` over ints is exact in 128 bits. Marks as wide the
// int arithmetic of the finalize and post programs that takes such a sum (or
// a value computed from one), so that the evaluator checks it against the
// 128-bit range; every other int result must fit 64 bits. Scan programs read
// input columns only: none of theirs is wide; a later agg's keys and
// arguments read row slots, which may be.
void mark_wide_ints(Plan& plan);

}  // namespace spec
}  // namespace warpcsv
