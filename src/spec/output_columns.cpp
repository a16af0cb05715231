// Pass-through and unique names of the result's columns (see output_columns.hpp).
#include "spec/output_columns.hpp"

#include <string>
#include <vector>

#include "warpcsv/io.hpp"

namespace warpcsv {
namespace spec {
namespace {

void rename_repeated(std::vector<OutputColumn>& cols) {
  std::vector<std::string> names;
  for (const auto& c : cols) names.push_back(c.name);
  make_names_unique(names);
  for (size_t c = 0; c < cols.size(); ++c) cols[c].name = std::move(names[c]);
}

}  // namespace

void finish_output_columns(Plan& plan) {
  // A scan output that only reads a slot is the input column's field; a
  // select after the scan that only reads a column keeps what it held; a
  // join's lookup values keep their fields' text (as an input column's).
  if (!plan.scan.aggregate)
    for (size_t c = 0; c < plan.scan_output.size() && c < plan.scan.outputs.size(); ++c)
      plan.scan_output[c].as_written = plan.scan.outputs[c].bare_slot() >= 0;
  const std::vector<OutputColumn>* in = plan.scan.aggregate ? &plan.finalized_output : &plan.scan_output;
  for (PostStage& st : plan.post) {
    for (size_t c = 0; c < st.output.size(); ++c) {
      if (st.kind == PostStage::Agg) {
        st.output[c].as_written = false;  // its keys and values are made anew: one text per value
      } else if (st.kind == PostStage::Select || st.kind == PostStage::Distinct) {
        const int s = c < st.exprs.size() ? st.exprs[c].bare_slot() : -1;
        st.output[c].as_written = s >= 0 && static_cast<size_t>(s) < in->size() && (*in)[s].as_written;
      } else {
        st.output[c].as_written = c < in->size() ? (*in)[c].as_written : st.kind == PostStage::Join;
      }
    }
    in = &st.output;
  }
  for (size_t c = 0; c < plan.output.size() && c < in->size(); ++c) plan.output[c].as_written = (*in)[c].as_written;
  // Names as the writers print them: JSON keys (and CSV headers) must differ.
  for (PostStage& st : plan.post) rename_repeated(st.output);
  rename_repeated(plan.output);
}

}  // namespace spec
}  // namespace warpcsv
