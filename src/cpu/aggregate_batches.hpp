// The CPU executor's aggregation of plain rows a batch at a time, for plans
// whose keys, aggregate arguments and listed holistic arguments are columns
// as read (no joins). A batch's rows are split and their fields parsed first,
// then filtered, then hashed with their table slots prefetched, then looked
// up and updated: the per-row machinery of the general path (rows in flight,
// values copied between stages, a closure per row) costs more than the work
// on narrow rows. Any row the general path would treat otherwise (a used
// field to unescape, a row of several lines, a comment, a wrong field count,
// a value that does not parse, a filter that fails, a row at the window's
// end) ends the batch before it: the caller's general path takes that row,
// so issues and results are the same.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/fast_row.hpp"
#include "cpu/fast_value.hpp"
#include "exec/group_table.hpp"
#include "exec/holistic.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

// What a batched aggregation reads of the plan, fixed for a run.
struct AggregateBatchPlan {
  const Dialect* dialect = nullptr;
  uint32_t ncols = 0;                 // columns of a row
  std::vector<int> col_to_slot;       // per column: its slot, or -1 when unused
  std::vector<ColumnType> slot_types;
  std::vector<bool> slot_inferred;    // per slot: type inferred, not from --schema
  std::vector<std::string> null_tokens;
  std::vector<int> key_slots;         // per key: the slot it reads
  std::vector<int> arg0_slots, arg1_slots;  // per aggregate: the slot, or -1 for none
  std::vector<int> list_slots;        // per holistic argument listed: the slot it reads
  ProgramView filter{};
  bool has_filter = false;
  const GroupLayout* layout = nullptr;
};

// Where a run of batches stopped, and what it consumed.
struct BatchProgress {
  uint64_t pos;       // the next row's start: the end, or a row for the general path
  uint32_t rows = 0;  // rows aggregated or filtered out, a line each
};

class AggregateBatches {
 public:
  static constexpr uint32_t kRows = 256;
  static constexpr size_t kGroupsInCache = 4096;
  static constexpr uint32_t kGroupAhead = 8;

  explicit AggregateBatches(const AggregateBatchPlan* plan) : p_(plan) {
    nslots_ = p_->slot_types.size();
    values_.resize(kRows * nslots_);
    keys_.resize(kRows * p_->key_slots.size());
    hashes_.resize(kRows);
    kept_.resize(kRows);
    spans_.resize(nslots_);
    ends_.resize(nslots_);
    row_begin_.resize(kRows + 1);
    slot_inferred_.assign(p_->slot_inferred.begin(), p_->slot_inferred.end());
    exact_.resize(kRows);
    group_.resize(kRows);
    states_.resize(kRows);
    stored_string_.resize(kRows);
    row_keys_.resize(kRows);
    first_key_slot_ = p_->key_slots.empty() ? 0 : p_->key_slots[0];
    for (size_t k = 1; k < p_->key_slots.size(); ++k)
      if (p_->key_slots[k] != p_->key_slots[0] + static_cast<int>(k)) first_key_slot_ = -1;
    scratch_.resize(1 << 16);
    const ProgramView& f = p_->filter;
    if (p_->has_filter && f.length == 2 && f.code[0].op == Op::Column &&
        (f.code[1].op == Op::IsNull || f.code[1].op == Op::IsNotNull)) {
      null_test_slot_ = f.code[0].arg;
      null_test_keeps_nulls_ = f.code[1].op == Op::IsNull;
    }
    for (const auto& t : p_->null_tokens) max_null_token_ = std::max(max_null_token_, t.size());
  }

  // Aggregates the rows that start in [pos, end) into `groups`, and lists
  // their holistic arguments' values in `lists` (one per list_slots), until
  // a row needs the general path, the end, or Ctrl-C. `data[0, size)` is the
  // window; rows are numbered on from `rows_before` (the partition's rows
  // before pos) in `order_base`'s low bits, as first/last order them.
  BatchProgress run(const char* data, uint64_t pos, uint64_t end, uint64_t size, PartitionedGroups& groups,
                    uint64_t order_base, uint32_t rows_before, StrRef file, std::vector<ArgList>& lists) {
    BatchProgress out{pos};
    while (out.pos < end && !interrupted()) {
      const uint32_t read = split_and_parse(data, out.pos, end, size);
      uint32_t good = 0;
      const uint32_t kept = filter(read, file, &good);
      update(groups, kept, order_base | (rows_before + out.rows + 1));
      list_values(kept, lists);
      out.rows += good;
      out.pos = row_begin_[good];
      if (good < kRows) break;
    }
    return out;
  }

 private:
  // Splits rows from pos on and parses their used fields into values_, up to
  // kRows rows or the first row that needs the general path; returns the rows
  // read. row_begin_ gets each one's start and the position after the last.
  uint32_t split_and_parse(const char* data, uint64_t pos, uint64_t end, uint64_t size) {
    readable_end_ = data + size;
    const PlainRowSplitter splitter(*p_->dialect);
    // Locals, not members: the stores of values would make the compiler load each again per row.
    const uint32_t ncols = p_->ncols;
    const int* const col_to_slot = p_->col_to_slot.data();
    const ColumnType* const types = p_->slot_types.data();
    const uint8_t* const inferred = slot_inferred_.data();
    uint64_t* const begins = spans_.data();
    uint64_t* const ends = ends_.data();
    uint64_t* const row_begin = row_begin_.data();
    const size_t nslots = nslots_;
    const bool null_tokens = max_null_token_ > 0;
    Value* const values = values_.data();  // not values_[]: empty when no column is used
    uint32_t r = 0;
    for (; r < kRows && pos < end; ++r) {
      Value* row = values + r * nslots;
      uint32_t fields = 0;
      bool last_empty = false;
      auto sink = [&](uint32_t i, uint64_t b, uint64_t e, uint8_t) {
        if (i < ncols) {
          const int slot = col_to_slot[i];
          if (slot >= 0) {
            begins[slot] = b;
            ends[slot] = e;
          }
        }
        fields = i + 1;
        last_empty = b == e;
      };
      RowResult rr;
      if (!splitter.split(data, pos, size, sink, rr)) {
        const GeneralRow g = split_general_row(data, pos, size);
        if (!g.usable) break;
        rr = g.rr;
        fields = g.fields;
        last_empty = g.last_empty;
      }
      if (fields == ncols + 1 && last_empty) fields = ncols;  // a trailing delimiter
      if (fields != ncols || rr.next > end) break;
      bool ok = true;
      for (size_t k = 0; k < nslots && ok; ++k) {
        const char* f = data + begins[k];
        const uint32_t len = static_cast<uint32_t>(ends[k] - begins[k]);
        if (len == 0 || (null_tokens && len <= max_null_token_ && is_null_token(f, len))) {
          row[k] = Value::make_null();
          continue;
        }
        ok = field_to_value_fast(types[k], f, len, &row[k], inferred[k] != 0);
      }
      if (!ok) break;
      row_begin[r] = pos;
      pos = rr.next;
    }
    row_begin[r] = pos;
    return r;
  }

  // A row the plain splitter declined (a quote, a delimiter of several bytes)
  // is split by the core's tokenizer. It stays in the batch when it is one
  // line and no field it uses needs unescaping: a quoted name the plan does
  // not read no longer sends every such row to the general path. What it
  // found is returned, not written through pointers: the hot loop's locals
  // would otherwise live in memory (18M more instructions for 1e6 narrow rows).
  struct GeneralRow {
    RowResult rr;
    uint32_t fields = 0;
    bool last_empty = false;
    bool usable = false;
  };
  __attribute__((noinline)) GeneralRow split_general_row(const char* data, uint64_t pos, uint64_t size) {
    const uint32_t ncols = p_->ncols;
    const int* const col_to_slot = p_->col_to_slot.data();
    uint64_t* const begins = spans_.data();
    uint64_t* const ends = ends_.data();
    GeneralRow g;
    bool escaped = false;
    g.rr = parse_row(*p_->dialect, data, pos, size, /*at_eof=*/false, [&](uint32_t i, uint64_t b, uint64_t e, uint8_t f) {
      if (i < ncols) {
        const int slot = col_to_slot[i];
        if (slot >= 0) {
          begins[slot] = b;
          ends[slot] = e;
          escaped = escaped || (f & kFieldEscaped) != 0;
        }
      }
      g.fields = i + 1;
      g.last_empty = b == e && f == 0;
    });
    const RowResult& r = g.rr;
    g.usable = r.error == RowError::None && !r.incomplete && !r.comment && !r.empty && r.lines == 1 && !escaped;
    return g;
  }

  // Keeps the rows the filter passes (kept_[0, returned)); *good gets the
  // rows before the first whose filter fails (the batch ends there), else n.
  uint32_t filter(uint32_t n, StrRef file, uint32_t* good) {
    uint32_t kept = 0;
    if (null_test_slot_ >= 0) {  // `filter c is [not] null`: no evaluator
      const Value* column = values_.data() + null_test_slot_;
      for (uint32_t r = 0; r < n; ++r)
        if (column[r * nslots_].null == null_test_keeps_nulls_) kept_[kept++] = r;
      *good = n;
      return kept;
    }
    for (uint32_t r = 0; r < n; ++r) {
      if (p_->has_filter) {
        EvalContext ctx = make_eval_context(scratch_.data(), static_cast<uint32_t>(scratch_.size()));
        ctx.file = file;
        const Value keep = eval_program(p_->filter, values_.data() + r * nslots_, ctx);
        if (ctx.status != EvalStatus::Ok) {
          *good = r;
          return kept;
        }
        if (keep.null || keep.i == 0) continue;
      }
      kept_[kept++] = r;
    }
    *good = n;
    return kept;
  }

  // Hashes the kept rows' keys and prefetches their slots, then looks each up
  // and updates its aggregates, with the group of the row kGroupAhead rows
  // on prefetched (a lookup's two cache misses: slot, then group). `order` is
  // the batch's first row's order key.
  void update(PartitionedGroups& groups, uint32_t kept, uint64_t order) {
    const PackedKeys& packer = groups.parts()[0].packed_keys();
    const uint32_t packed_bytes = packer.bytes();
    if (packed_.size() < size_t{kRows} * packed_bytes) packed_.resize(size_t{kRows} * packed_bytes);
    // A table that fits in the caches gains nothing from prefetches.
    const bool prefetch = groups.size_estimate() > kGroupsInCache;
    // Locals, not members: stores through char pointers would make the compiler load each again per row.
    const uint32_t* const rows = kept_.data();
    uint64_t* const hashes = hashes_.data();
    uint8_t* const exact = exact_.data();
    char* const packed = packed_.data();
    uint32_t* const group = group_.data();
    char** const states = states_.data();
    const char* const readable = readable_end_;
    const bool one_string_key = packer.one_string_key();
    const Value** const row_keys = row_keys_.data();
    for (uint32_t i = 0; i < kept; ++i) {
      const Value* keys = row_keys[i] = keys_of(i, rows[i]);  // null in a plan without keys
      if (one_string_key && short_string(keys[0], readable)) {
        // Narrow rows' one short key: hashed and packed from the same two loads.
        uint64_t lo, hi;
        load_short_bytes(keys[0].s.ptr, keys[0].s.len, &lo, &hi);
        hashes[i] = GroupTable::hash_of_one_key(hash_short_words(lo, hi, keys[0].s.len));
        packer.pack_short_string(lo, hi, keys[0].s.len, packed + i * packed_bytes);
        exact[i] = 1;
      } else {
        hashes[i] = groups.hash_keys(keys, readable);
        exact[i] = packer.packs_exactly(keys);
        if (exact[i]) packer.pack(keys, packed + i * packed_bytes);
      }
      if (prefetch) groups.prefetch(hashes[i]);
    }
    // Every row's group first (a lookup may move the part's blocks: groups
    // are held by number until the last), then each aggregate over the rows.
    for (uint32_t i = 0; i < kept; ++i) {
      if (prefetch && i + kGroupAhead < kept) groups.prefetch_group(hashes[i + kGroupAhead]);
      GroupTable& table = groups.part_for(hashes[i]);
      const Value* keys = row_keys[i];
      const char* state = exact[i] ? table.find_or_insert_packed(packed + i * packed_bytes, keys, hashes[i])
                                   : table.find_or_insert(keys, hashes[i]);
      group[i] = static_cast<uint32_t>(table.group_of(state));
    }
    for (uint32_t i = 0; i < kept; ++i) states[i] = groups.part_for(hashes[i]).state(group[i]);
    const auto& aggs = p_->layout->aggs;
    bool strings = false;
    for (size_t a = 0; a < aggs.size(); ++a) {
      switch (aggs[a].op) {  // the common ones with the op known, so that its update inlines
        case AggOp::CountStar: update_agg<AggOp::CountStar>(aggs[a], a, kept, order); break;
        case AggOp::Count: update_agg<AggOp::Count>(aggs[a], a, kept, order); break;
        case AggOp::SumExact: update_agg<AggOp::SumExact>(aggs[a], a, kept, order); break;
        case AggOp::MeanExact: update_agg<AggOp::MeanExact>(aggs[a], a, kept, order); break;
        case AggOp::Min: strings |= update_agg<AggOp::Min>(aggs[a], a, kept, order); break;
        case AggOp::Max: strings |= update_agg<AggOp::Max>(aggs[a], a, kept, order); break;
        default: strings |= update_any_agg(aggs[a], a, kept, order); break;
      }
    }
    if (strings)
      for (uint32_t i = 0; i < kept; ++i)
        if (stored_string_[i]) {
          groups.part_for(hashes_[i]).stabilize_strings(states_[i]);
          stored_string_[i] = 0;
        }
  }

  // Each kept row's non-null holistic arguments, listed with its group (the
  // group's number in its part: plans with lists keep one part).
  void list_values(uint32_t kept, std::vector<ArgList>& lists) const {
    const uint32_t* const rows = kept_.data();
    const uint32_t* const group = group_.data();
    for (size_t a = 0; a < lists.size(); ++a) {
      const Value* const column = values_.data() + p_->list_slots[a];
      ArgList& list = lists[a];
      for (uint32_t i = 0; i < kept; ++i) {
        const Value& v = column[rows[i] * nslots_];
        if (!v.null) list.add(group[i], v);
      }
    }
  }

  // Aggregate a (of op Op) over the kept rows; notes the rows that stored a
  // string pointing into the input (stored_string_). Returns whether any did.
  template <AggOp Op>
  __attribute__((flatten)) bool update_agg(AggDesc agg, size_t a, uint32_t kept, uint64_t order) {
    agg.op = Op;
    return update_rows(agg, a, kept, order);
  }
  __attribute__((noinline)) bool update_any_agg(const AggDesc& agg, size_t a, uint32_t kept, uint64_t order) {
    return update_rows(agg, a, kept, order);
  }
  bool update_rows(const AggDesc& agg, size_t a, uint32_t kept, uint64_t order) {
    const Value none = Value::make_null();
    const int s0 = p_->arg0_slots[a], s1 = p_->arg1_slots[a];
    const uint32_t* const rows = kept_.data();
    char* const* const states = states_.data();
    uint8_t* const stored_string = stored_string_.data();
    const Value* const values = values_.data();
    const size_t nslots = nslots_;
    bool any = false;
    for (uint32_t i = 0; i < kept; ++i) {
      const Value* row = values + rows[i] * nslots;
      const bool stored = agg_update(agg, states[i], s0 >= 0 ? row[s0] : none, s1 >= 0 ? row[s1] : none, order + rows[i]);
      stored_string[i] |= stored;
      any |= stored;
    }
    return any;
  }


  // Kept row i's keys (row r of the batch): where they lie in the row when
  // their slots follow each other, else gathered.
  const Value* keys_of(uint32_t i, uint32_t r) {
    const Value* row = values_.data() + r * nslots_;
    if (first_key_slot_ >= 0) return row + first_key_slot_;
    const size_t nkeys = p_->key_slots.size();
    Value* keys = keys_.data() + i * nkeys;
    for (size_t k = 0; k < nkeys; ++k) keys[k] = row[p_->key_slots[k]];
    return keys;
  }

  // Whether string key v packs inline and its 16 bytes from v.s.ptr on may be loaded.
  static bool short_string(const Value& v, const char* readable) {
    return !v.null && v.s.len <= PackedKeys::kInlineString && v.s.ptr + 16 <= readable;
  }

  bool is_null_token(const char* p, uint32_t n) const {
    for (const auto& t : p_->null_tokens)
      if (t.size() == n && std::memcmp(t.data(), p, n) == 0) return true;
    return false;
  }

  const AggregateBatchPlan* p_;
  size_t nslots_ = 0;
  size_t max_null_token_ = 0;
  std::vector<Value> values_;  // kRows rows of nslots_ values
  std::vector<Value> keys_;    // kRows rows of the keys, gathered
  std::vector<uint64_t> hashes_;
  std::vector<char> packed_;    // kRows rows of packed keys, where exact_
  std::vector<uint8_t> exact_;  // per kept row: its keys pack exactly (PackedKeys::packs_exactly)
  std::vector<uint32_t> group_;  // per kept row: its group in its part
  std::vector<char*> states_;    // per kept row: its group's states
  std::vector<uint8_t> stored_string_;  // per kept row: an update stored a string from the input
  std::vector<const Value*> row_keys_;   // per kept row: its keys (keys_of)
  int first_key_slot_ = -1;  // the keys' first slot when their slots follow each other
  // A filter that only tests one column for null: its slot, and which rows it keeps.
  int null_test_slot_ = -1;
  bool null_test_keeps_nulls_ = false;
  const char* readable_end_ = nullptr;  // the window's end: bytes up to here may be loaded
  std::vector<uint32_t> kept_;
  std::vector<uint64_t> spans_, ends_;  // the current row's used fields
  std::vector<uint64_t> row_begin_;     // each read row's start, then the position after the last
  std::vector<uint8_t> slot_inferred_;  // the plan's, as bytes
  std::vector<char> scratch_;
};

}  // namespace warpcsv
