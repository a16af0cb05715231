// The result's columns in their final form: which print their fields as
// written, and names made unique.
#pragma once
#include "warpcsv/plan.hpp"

namespace warpcsv {
namespace spec {

// Marks the columns of row output (no agg) that are bare input columns, at
// every stage, as printed as written (OutputColumn::as_written), and renames
// repeated output names as repeated header names are (`day`, `day_2`, ...).
void finish_output_columns(Plan& plan);

}  // namespace spec
}  // namespace warpcsv
