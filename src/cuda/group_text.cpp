#include "cuda/group_text.hpp"

#include <vector>

#include "exec/group_table.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {
namespace cuda {

bool make_text_layout(const Plan& plan, const GroupLayout& layout, const int* agg_words, DelimitedText text,
                      TextLayout* out) {
  TextLayout t;
  t.text = text;
  t.nkeys = static_cast<int>(plan.group_keys);
  t.naggs = static_cast<int>(layout.aggs.size());
  const size_t ncols = plan.group_keys + plan.finalize.size();
  if (!plan.post.empty() || !plan.holistic.empty() || plan.output.size() != ncols ||
      ncols > static_cast<size_t>(kMaxTextColumns) || layout.aggs.size() > static_cast<size_t>(kMaxTextAggs) ||
      layout.state_bytes > kMaxTextState || plan.group_keys != layout.key_types.size())
    return false;
  // Every aggregate is an output's (the host checks the outputs' aggregates
  // for overflow; so does the GPU, all of them).
  std::vector<bool> used(layout.aggs.size(), false);
  for (const int src : plan.agg_sources) {
    if (src < 0 || static_cast<size_t>(src) >= layout.aggs.size()) return false;
    used[static_cast<size_t>(src)] = true;
  }
  for (const bool u : used)
    if (!u) return false;
  for (size_t a = 0; a < layout.aggs.size(); ++a) {
    t.aggs[a] = layout.aggs[a];
    t.agg_words[a] = static_cast<uint16_t>(agg_words[a]);
  }
  for (size_t c = 0; c < ncols; ++c) {
    const OutputColumn& oc = plan.output[c];
    if (oc.as_written) return false;
    TextColumn& col = t.cols[c];
    col.type = oc.type;
    if (c < plan.group_keys) {
      col.key = static_cast<int8_t>(c);
    } else {
      const int slot = plan.finalize[c - plan.group_keys].bare_slot();
      if (slot < 0) return false;  // an expression: evaluated on the host
      if (static_cast<size_t>(slot) < plan.group_keys) {
        col.key = static_cast<int8_t>(slot);
      } else {
        const size_t j = static_cast<size_t>(slot) - plan.group_keys;
        if (j >= plan.agg_sources.size()) return false;
        col.agg = static_cast<int8_t>(plan.agg_sources[j]);
        if (oc.type.type == Type::String) return false;  // no aggregate kept on a GPU gives a string
      }
    }
    if (col.key >= 0 && layout.key_types[static_cast<size_t>(col.key)] != oc.type.type) return false;
    if (oc.type.type == Type::String) ++t.string_columns;
  }
  t.ncols = static_cast<int>(ncols);
  *out = t;
  return true;
}

uint64_t text_bound(const TextLayout& t, uint64_t rows, uint64_t string_bytes) {
  const uint64_t ncols = static_cast<uint64_t>(t.ncols), strings = t.string_columns;
  // A separator or the newline after each field; a number's longest text; a
  // string's two quotes, and each of its bytes doubled at most (in every
  // column that prints a string key: a key may be printed twice).
  return rows * (ncols + (ncols - strings) * kMaxValueText + strings * 2) + 2 * string_bytes * strings;
}

}  // namespace cuda
}  // namespace warpcsv
