#include "cuda/gpu_support.hpp"

#include <algorithm>
#include <cstdint>

#include "exec/lookup_table.hpp"

namespace warpcsv {
namespace cuda {

namespace {

bool gpu_aggregate(const AggDesc& a) {
  if (a.op == AggOp::Min || a.op == AggOp::Max) return is_integral_repr(a.in_type) || a.in_type == Type::Float;
  return agg_words(a.op) > 0;
}

// What in a program has no GPU form, or null: a batch on a GPU does not know
// its rows' files.
const char* host_only(const Program& p) {
  for (const Instr& in : p.code)
    if (in.op == Op::FileName) return "filename()";
  return nullptr;
}

// Whether rows of the plan may take the short way, and then their states'
// layout (short_key_layout): two columns read, a string key read as is and
// an int or decimal that every aggregate reads as is (or none, count()).
void set_short_keys(GpuPlan& p) {
  p.short_keys = false;
  const int key = p.nkeys == 1 ? p.key_direct[0] : -1;
  if (key < 0 || p.key_types[0] != Type::String || p.nslots != 2 || p.has_filter || p.njoins || p.nlists ||
      p.n_null || p.slot_types[key].type != Type::String)
    return;
  const int value = 1 - key;
  if (p.slot_types[value].type != Type::Int && p.slot_types[value].type != Type::Decimal) return;
  AggOp ops[kMaxAggs];
  uint8_t states[kMaxAggs];
  for (int a = 0; a < p.naggs; ++a) {
    const GpuAgg& g = p.aggs[a];
    const int arg = g.op == AggOp::CountStar ? -2 : value;
    if (g.arg0_direct != arg || g.arg1_direct != -2 || g.word > 255) return;
    ops[a] = g.op;
  }
  int words = 0;
  if (!short_key_layout(ops, p.naggs, states, words)) return;
  for (int a = 0; a < p.naggs; ++a)
    p.short_aggs[a] = ShortKeyAgg{p.aggs[a].op, states[a], static_cast<uint8_t>(p.aggs[a].word)};
  p.value_slot = value;
  p.short_key_state_words = words;
  p.short_keys = true;
}

}  // namespace

std::string gpu_unsupported(const Plan& plan, const GroupLayout& layout, size_t ncols, bool lists_holistic) {
  const ScanPlan& s = plan.scan;
  if (!s.aggregate) return "not an aggregate";
  std::vector<const Program*> programs = {&s.filter};
  for (const ScanJoin& j : s.joins)
    for (const Program& k : j.keys) programs.push_back(&k);
  for (const Program& k : s.keys) programs.push_back(&k);
  for (const AggSpec& a : s.aggs) programs.insert(programs.end(), {&a.arg0, &a.arg1});
  for (const Program* p : programs)
    if (const char* why = host_only(*p)) return why;
  int words = 0;
  for (const auto& a : layout.aggs) {
    if (!gpu_aggregate(a)) return "aggregate without a GPU form";
    words += agg_words(a.op);
  }
  if (s.slot_count() > static_cast<size_t>(kMaxSlots) || s.keys.size() > static_cast<size_t>(kMaxKeys) ||
      s.aggs.size() > static_cast<size_t>(kMaxAggs) || words > kMaxWords || ncols > static_cast<size_t>(kMaxColumns))
    return "plan larger than the GPU limits";
  // Unlisted, a string argument makes the GPU group by every argument: a
  // group per distinct number (count_distinct(id2), quantile(v3, 0.9) by id1
  // over 1e8 rows: 31.7 s, the CPU's lists 4.5 s). String arguments alone
  // group well.
  bool strings = false, others = false;
  for (size_t k = plan.group_keys; k < s.keys.size(); ++k)
    (s.keys[k].result.type == Type::String ? strings : others) = true;
  if (strings && others && !plan.holistic.empty() && !lists_holistic)
    return "holistic aggregates over strings and other values together";
  return "";
}

uint64_t lookup_bytes(const ScanSettings& settings) {
  uint64_t bytes = 0;
  if (settings.lookups)
    for (const LookupTable& t : *settings.lookups)
      bytes += t.table().cells.size() * sizeof(Value) + t.table().strings.bytes() + t.next().size() * sizeof(uint32_t) +
               t.buckets().size() * sizeof(LookupBucket);
  return bytes;
}

bool gpu_lists_holistic(const Plan& plan) {
  const size_t n = plan.scan.keys.size() - plan.group_keys;
  if (plan.holistic.empty() || n > static_cast<size_t>(kMaxLists)) return false;
  for (size_t k = plan.group_keys; k < plan.scan.keys.size(); ++k)
    if (plan.scan.keys[k].result.type != Type::String) return true;
  return false;
}

GpuPlan make_host_plan(const Plan& plan, const GroupLayout& layout, const Dialect& d, size_t ncols,
                       size_t nnull, const std::vector<bool>& type_from_schema) {
  GpuPlan p{};
  const ScanPlan& s = plan.scan;
  p.dialect = d;
  p.ncols = static_cast<int32_t>(ncols);
  p.nslots = static_cast<int32_t>(s.used_columns.size());
  // The layout's keys: all the scan's, or the agg's own when the rest (holistic arguments) are listed.
  p.nkeys = static_cast<int32_t>(layout.key_types.size());
  p.naggs = static_cast<int32_t>(s.aggs.size());
  p.n_null = static_cast<int32_t>(nnull);
  for (int c = 0; c < kMaxColumns; ++c) p.col_to_slot[c] = -1;
  for (size_t i = 0; i < s.used_columns.size(); ++i) {
    p.col_to_slot[s.used_columns[i]] = static_cast<int8_t>(i);
    p.slot_types[i] = s.slot_types[i];
    const size_t col = static_cast<size_t>(s.used_columns[i]);
    p.slot_inferred[i] = !(col < type_from_schema.size() && type_from_schema[col]);
  }
  p.has_filter = !s.filter.empty();
  for (size_t k = 0; k < layout.key_types.size(); ++k) {
    p.key_direct[k] = static_cast<int8_t>(s.keys[k].bare_slot());
    p.key_types[k] = layout.key_types[k];
  }
  for (size_t k = layout.key_types.size(); k < s.keys.size(); ++k) {
    const int l = p.nlists++;
    p.list_direct[l] = static_cast<int8_t>(s.keys[k].bare_slot());
    p.list_types[l] = s.keys[k].result.type;
  }
  int word = 0;
  for (size_t a = 0; a < s.aggs.size(); ++a) {
    GpuAgg& g = p.aggs[a];
    g.op = layout.aggs[a].op;
    g.in_type = layout.aggs[a].in_type;
    g.in_scale = layout.aggs[a].in_scale;
    g.in_type2 = layout.aggs[a].in_type2;
    g.in_scale2 = layout.aggs[a].in_scale2;
    g.arg0_direct = static_cast<int8_t>(s.aggs[a].arg0.empty() ? -2 : s.aggs[a].arg0.bare_slot());
    g.arg1_direct = static_cast<int8_t>(s.aggs[a].arg1.empty() ? -2 : s.aggs[a].arg1.bare_slot());
    g.word = static_cast<uint16_t>(word);
    g.words = static_cast<uint16_t>(agg_words(g.op));
    agg_init_words(g.op, p.init_words + word);
    word += g.words;
  }
  p.nwords = std::max(1, word);
  // Joins: the tables and key programs are set per GPU (upload_plan).
  p.njoins = static_cast<int32_t>(s.joins.size());
  for (size_t j = 0; j < s.joins.size(); ++j)
    p.joins[j] = join_view_shape(plan.joins[static_cast<size_t>(s.joins[j].join)], s.joins[j].first_slot);
  set_short_keys(p);
  return p;
}

}  // namespace cuda
}  // namespace warpcsv
