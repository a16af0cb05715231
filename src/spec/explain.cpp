// --explain: the plan as indented text, stage by stage.
#include <string>

#include "spec/bind_util.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv {

namespace {
std::string schema_text(const std::vector<OutputColumn>& cols) {
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i)
    out += (i ? ", " : "") + cols[i].name + " " + spec::type_name(cols[i].type);
  return out;
}
// A join: its file, how keys match, and the columns its rows add.
std::string describe_join(const JoinSpec& j, const std::vector<Program>& keys) {
  std::string out = std::string(j.left ? "left join" : "join") + " '" + j.path + "' (read whole, indexed by its keys) on ";
  for (size_t k = 0; k < keys.size(); ++k)
    out += (k ? ", " : "") + keys[k].text + " = " + j.lookup_schema[static_cast<size_t>(j.key_columns[k])].name + " (" +
           spec::type_name(j.key_types[k]) + ")";
  out += "; its rows add:";
  if (j.columns.empty()) out += " nothing (it only keeps or repeats rows)";
  for (size_t c = 0; c < j.columns.size(); ++c) {
    const OutputColumn& col = j.lookup_schema[static_cast<size_t>(j.columns[c])];
    out += (c ? ", " : " ") + col.name + " " + spec::type_name(col.type);
  }
  return out;
}

// An aggregate plan's groups.
std::string groups_text(const Plan& plan) {
  const ScanPlan& s = plan.scan;
  if (plan.group_keys == 0) return "    aggregate: all rows as one group\n";
  std::string out = "    group by:";
  for (size_t k = 0; k < plan.group_keys; ++k)
    out += (k ? ", " : " ") + s.keys[k].text + " " + spec::type_name(s.keys[k].result);
  return out + " (output ordered by the keys unless sorted)\n";
}

std::string aggregates_text(const Plan& plan) {
  std::string out;
  for (const AggSpec& a : plan.scan.aggs) out += "    aggregate: " + a.text + " -> " + spec::type_name(a.result) + "\n";
  return out;
}

// The agg stage's items over its groups' keys and aggregates.
std::string finalize_text(const Plan& plan) {
  std::string out = "finalize:";
  for (size_t k = 0; k < plan.finalize.size(); ++k) {
    const OutputColumn& c = plan.finalized_output[plan.group_keys + k];
    out += (k ? ", " : " ") + c.name;
    if (c.name != plan.finalize[k].text) out += " = " + plan.finalize[k].text;
  }
  return out + "\n";
}

// A groupby/agg after the scan: its plan's groups, aggregates and items.
std::string post_agg_text(const Plan& agg) {
  std::string out = groups_text(agg) + aggregates_text(agg);
  for (const HolisticSpec& h : agg.holistic)
    out += "    holistic: " + h.text + " -> " + spec::type_name(h.result) + " (from the values of " +
           agg.scan.keys[static_cast<size_t>(h.key)].text + ")\n";
  return out + "    " + finalize_text(agg);
}
}  // namespace

std::string explain_plan(const Plan& plan) {
  const ScanPlan& s = plan.scan;
  std::string out = "plan:\n";
  out += "  input: " + std::to_string(plan.input.size()) + " columns\n";
  out += "  scan: parse " + std::to_string(s.used_columns.size()) + " of them:";
  if (s.used_columns.empty()) out += " (none, rows are only counted)";
  for (size_t k = 0; k < s.used_columns.size(); ++k) {
    const OutputColumn& c = plan.input[s.used_columns[k]];
    out += (k ? ", " : " ") + c.name + " " + spec::type_name(c.type) + " (#" +
           std::to_string(s.used_columns[k] + 1) + ")";
  }
  out += "\n";
  for (const ScanJoin& sj : s.joins) out += "    " + describe_join(plan.joins[static_cast<size_t>(sj.join)], sj.keys) + "\n";
  if (!s.filter.empty()) out += "    filter: " + s.filter.text + "\n";
  if (s.aggregate) {
    const size_t nkeys = plan.group_keys;
    out += groups_text(plan);
    if (s.keys.size() > nkeys) {
      out += "    and by the values of:";
      for (size_t k = nkeys; k < s.keys.size(); ++k)
        out += (k > nkeys ? ", " : " ") + s.keys[k].text + " " + spec::type_name(s.keys[k].result);
      out += " (for the holistic aggregates; regrouped after the scan)\n";
    }
    out += aggregates_text(plan);
    for (const HolisticSpec& h : plan.holistic) {
      const std::string& arg = s.keys[static_cast<size_t>(h.key)].text;
      out += "  holistic: " + h.text + " -> " + spec::type_name(h.result) +
             (h.kind == AggKind::NthValue ? " (an order statistic of the group's sorted values of " + arg + ")\n"
                                          : " (from the distinct values of " + arg + " and their row counts)\n");
    }
    out += "  " + finalize_text(plan);
  } else {
    out += "    output: " + schema_text(plan.scan_output) + "\n";
  }
  for (const PostStage& p : plan.post) {
    if (p.kind == PostStage::Join)
      out += "  then: " + describe_join(plan.joins[static_cast<size_t>(p.join)], p.exprs) + "\n";
    else if (!p.text.empty())
      out += "  then: " + p.text + "\n";
    if (p.kind == PostStage::Agg) out += post_agg_text(*p.agg);
  }
  out += "  result: " + schema_text(plan.output) + "\n";
  return out;
}

}  // namespace warpcsv
