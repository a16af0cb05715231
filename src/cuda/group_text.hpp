// The result's rows finalized and formatted where the groups are: a GPU
// turns its ordered groups' keys and state words into the exact bytes the
// host's CSV or TSV writer would print, so only text comes back. Plain C++
// without CUDA: the CPU-only tests check it against the host's writer.
#pragma once
#include <cstdint>

#include "cuda/gpu_states.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/field_text.hpp"
#include "warpcsv/core/types.hpp"
#include "warpcsv/core/value_text.hpp"

namespace warpcsv {

struct Plan;
struct GroupLayout;

namespace cuda {

constexpr int kMaxTextColumns = 64;
constexpr int kMaxTextAggs = 32;
constexpr uint32_t kMaxTextState = 2048;  // bytes of a group's state block, on the GPU thread's stack

// An output column: a group key's value, or an aggregate's result.
struct TextColumn {
  int8_t key = -1;  // the key's index, or -1
  int8_t agg = -1;  // the aggregate's index in the layout, or -1
  ColumnType type;
};

// What a GPU needs to format a result row; passed to its kernels by value.
struct TextLayout {
  DelimitedText text;
  int ncols = 0, nkeys = 0, naggs = 0;
  uint32_t string_columns = 0;  // how many columns are strings (their escaping may grow them)
  TextColumn cols[kMaxTextColumns];
  AggDesc aggs[kMaxTextAggs];
  uint16_t agg_words[kMaxTextAggs];  // aggregate a's first word in the group's words
};

// The layout for `plan`'s result when a GPU can format it: no post stages to
// run on the host, every output column a key or an aggregate as it is (no
// expression), none printed as written; false otherwise.
bool make_text_layout(const Plan& plan, const GroupLayout& layout, const int* agg_words, DelimitedText text,
                      TextLayout* out);

// The most bytes a run of `rows` rows whose string keys hold `string_bytes`
// bytes can take as text.
uint64_t text_bound(const TextLayout& t, uint64_t rows, uint64_t string_bytes);

// Failures are packed as (row << 8) | aggregate, so the least is the first
// row's first aggregate, as the host reports it; kNoTextFailure: none.
constexpr unsigned long long kNoTextFailure = ~0ull;

// One group's row as text into `out` (nullptr: only measured); returns its
// bytes. `keys` are the group's nkeys keys, string keys' pointers holding
// offsets into `arena`; `words` its state words. An exact sum past 128 bits
// makes it return 0 with *failed_agg set to the first such aggregate.
template <bool kWrite>
WCSV_HD inline uint32_t group_row_text(const TextLayout& t, const Value* keys, const u64* words,
                                       const char* arena, char* out, int* failed_agg) {
  alignas(kAggStateAlign) char block[kMaxTextState];
  for (int a = 0; a < t.naggs; ++a) {
    agg_init(t.aggs[a], block);
    state_from_words(t.aggs[a], words + t.agg_words[a], block);
  }
  for (int a = 0; a < t.naggs; ++a)
    if (agg_overflowed(t.aggs[a], block)) {
      *failed_agg = a;
      return 0;
    }
  uint32_t k = 0;
  char buf[kMaxValueText];
  for (int c = 0; c < t.ncols; ++c) {
    const TextColumn& col = t.cols[c];
    if (c) {
      if (kWrite) out[k] = t.text.sep;
      ++k;
    }
    Value v = col.key >= 0 ? keys[col.key] : agg_finalize(t.aggs[col.agg], block);
    if (v.null) continue;
    // -0.0 and 0.0 are one group: it prints as 0.0, whichever came first.
    if (col.key >= 0 && col.type.type == Type::Float && v.f == 0.0) v.f = 0.0;
    if (col.type.type == Type::String) {
      const char* p = col.key >= 0 ? arena + reinterpret_cast<uintptr_t>(v.s.ptr) : v.s.ptr;
      k += kWrite ? write_field_text(p, v.s.len, t.text, out + k) : field_text_bytes(p, v.s.len, t.text);
      continue;
    }
    uint32_t len = 0;
    write_value_text(v, col.type, kWrite ? out + k : buf, &len);
    k += len;
  }
  if (kWrite) out[k] = '\n';
  return k + 1;
}

}  // namespace cuda
}  // namespace warpcsv
