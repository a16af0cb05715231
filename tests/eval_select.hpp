// Evaluates one expression of a `select` over a row given for a whole
// schema, as the scan would: the plan picks the columns it uses as slots.
#pragma once
#include <string>
#include <vector>

#include "warpcsv/core/eval.hpp"
#include "warpcsv/output.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv::testing {

struct Evaluated {
  Value value;
  EvalStatus status;
  std::string text;  // as the output prints it ("" for null)
  ColumnType type;
};

inline Evaluated eval_select(const std::string& expr, const std::vector<OutputColumn>& schema,
                             const std::vector<Value>& row) {
  const Plan plan = build_plan("select " + expr + " as x", schema);
  const Program& p = plan.scan.outputs.back();
  std::vector<char> scratch(1024);
  EvalContext ctx = make_eval_context(scratch.data(), static_cast<uint32_t>(scratch.size()));
  std::vector<Value> slots;
  for (int col : plan.scan.used_columns) slots.push_back(row[static_cast<size_t>(col)]);
  Evaluated e;
  e.value = eval_program(p.view(), slots.data(), ctx);
  e.status = ctx.status;
  e.type = p.result;
  e.text = e.value.null ? "" : format_value(e.value, p.result);
  return e;
}

}  // namespace warpcsv::testing
