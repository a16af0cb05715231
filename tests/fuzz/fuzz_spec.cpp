// libFuzzer target: any pipeline text either binds to a plan or fails with a
// UsageError; a bound plan's programs evaluate on sample rows without crashing.
#include <cstdint>
#include <string>
#include <vector>

#include "warpcsv/core/eval.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

using namespace warpcsv;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::vector<OutputColumn> schema = {
      {"id", {Type::Int, 0}},      {"name", {Type::String, 0}},  {"amount", {Type::Decimal, 2}},
      {"ratio", {Type::Float, 0}}, {"ok", {Type::Bool, 0}},      {"day", {Type::Date, 0}},
      {"ts", {Type::Timestamp, 0}}};
  try {
    check_pipeline_syntax(text);
    const Plan plan = build_plan(text, schema);
    (void)explain_plan(plan);
    // Evaluate the scan programs on a row of plain and of null values.
    std::vector<Value> slots(plan.scan.used_columns.size());
    char scratch[4096];
    for (int variant = 0; variant < 2; ++variant) {
      for (size_t i = 0; i < slots.size(); ++i) {
        const Type t = plan.scan.slot_types[i].type;
        if (variant == 1) slots[i] = Value::make_null();
        else if (t == Type::String) slots[i] = Value::of_str("Ab,c", 4);
        else if (t == Type::Float) slots[i] = Value::of_float(-2.5);
        else slots[i] = Value::of_int(variant ? 0 : 1234);
      }
      EvalContext ctx = make_eval_context(scratch, sizeof scratch);
      if (!plan.scan.filter.empty()) eval_program(plan.scan.filter.view(), slots.data(), ctx);
      for (const auto& k : plan.scan.keys) eval_program(k.view(), slots.data(), ctx);
      for (const auto& o : plan.scan.outputs) eval_program(o.view(), slots.data(), ctx);
      for (const auto& a : plan.scan.aggs) {
        if (!a.arg0.empty()) eval_program(a.arg0.view(), slots.data(), ctx);
        if (!a.arg1.empty()) eval_program(a.arg1.view(), slots.data(), ctx);
      }
    }
  } catch (const UsageError&) {
  }
  return 0;
}
