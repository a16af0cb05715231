// The CPU executor's aggregation of plain rows a batch at a time, for plans
// whose listed holistic arguments are columns as read. A batch's rows are
// split and their fields parsed first, then joined with their lookup rows
// (each stage of a probe prefetched for the whole batch before the next),
// then filtered, then their computed keys and arguments evaluated, then
// hashed with their table slots prefetched, then looked up and updated: the
// per-row machinery of the general path (rows in flight, values copied
// between stages, a closure per row, a probe's cache misses one after
// another) costs more than the work. Any row the general path would treat
// otherwise (a used field to unescape, a row of several lines, a comment, a
// wrong field count, a value that does not parse, a program that fails, a
// row with more joined copies than the batch has room for, a row at the
// window's end) ends the batch before it: the caller's general path takes
// that row, so issues and results are the same.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cpu/fast_row.hpp"
#include "cpu/fast_value.hpp"
#include "cpu/small_groups.hpp"
#include "exec/group_table.hpp"
#include "exec/holistic.hpp"
#include "warpcsv/core/eval.hpp"
#include "warpcsv/core/field.hpp"
#include "warpcsv/core/lookup.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

// What a batched aggregation reads of the plan, fixed for a run.
struct AggregateBatchPlan {
  static constexpr int kNoArg = -1;    // an aggregate without this argument
  static constexpr int kComputed = -2;  // a key or argument its program computes
  const Dialect* dialect = nullptr;
  uint32_t ncols = 0;                 // columns of a row
  std::vector<int> col_to_slot;       // per column: its slot, or -1 when unused
  std::vector<ColumnType> slot_types;  // the parsed slots'
  std::vector<bool> slot_inferred;    // per parsed slot: type inferred, not from --schema
  uint32_t nslots = 0;                // a row's slots: the parsed ones, then the joins'
  std::vector<std::string> null_tokens;
  std::vector<JoinView> joins;        // in pipeline order
  std::vector<int> key_slots;         // per key: the slot it reads, or kComputed
  std::vector<ProgramView> key_progs;
  std::vector<int> arg0_slots, arg1_slots;  // per aggregate: the slot, kNoArg or kComputed
  std::vector<ProgramView> arg0_progs, arg1_progs;
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
  // Rows a batch holds: its rows read, then the further copies its joins make
  // of rows with several lookup rows.
  static constexpr uint32_t kCapacity = 2 * kRows;
  static constexpr size_t kGroupsInCache = 4096;
  static constexpr uint32_t kGroupAhead = 8;

  explicit AggregateBatches(const AggregateBatchPlan* plan) : p_(plan) {
    nslots_ = p_->nslots;
    values_.resize(kCapacity * nslots_);
    keys_.resize(kCapacity * p_->key_slots.size());
    hashes_.resize(kCapacity);
    kept_.resize(kCapacity);
    origin_.resize(kCapacity);
    spans_.resize(p_->slot_types.size());
    ends_.resize(p_->slot_types.size());
    row_begin_.resize(kRows + 1);
    slot_inferred_.assign(p_->slot_inferred.begin(), p_->slot_inferred.end());
    exact_.resize(kCapacity);
    group_.resize(kCapacity);
    states_.resize(kCapacity);
    stored_string_.resize(kCapacity);
    row_keys_.resize(kCapacity);
    const int nparsed = static_cast<int>(p_->slot_types.size());
    first_key_slot_ = p_->key_slots.empty() ? 0 : p_->key_slots[0];
    for (size_t k = 0; k < p_->key_slots.size(); ++k) {
      const int slot = p_->key_slots[k];
      if (slot != p_->key_slots[0] + static_cast<int>(k) || slot < 0) first_key_slot_ = -1;
      computed_keys_ |= slot < 0;
      keys_in_window_ &= slot >= 0 && slot < nparsed;
    }
    const size_t naggs = p_->arg0_slots.size();
    for (size_t a = 0; a < naggs; ++a)
      computed_args_ |= p_->arg0_slots[a] == AggregateBatchPlan::kComputed ||
                        p_->arg1_slots[a] == AggregateBatchPlan::kComputed;
    if (computed_args_) {
      args0_.resize(kCapacity * naggs);
      args1_.resize(kCapacity * naggs);
    }
    if (!p_->joins.empty()) {
      join_keys_.resize(kCapacity * kMaxJoinKeys);
      join_hashes_.resize(kCapacity);
      join_candidates_.resize(kCapacity);
      joined_.resize(kCapacity);
    }
    scratch_.resize(1 << 16);
    const ProgramView& f = p_->filter;
    if (p_->has_filter && f.length == 2 && f.code[0].op == Op::Column &&
        (f.code[1].op == Op::IsNull || f.code[1].op == Op::IsNotNull)) {
      null_test_slot_ = f.code[0].arg;
      null_test_keeps_nulls_ = f.code[1].op == Op::IsNull;
    }
    for (const auto& t : p_->null_tokens) max_null_token_ = std::max(max_null_token_, t.size());
    setup_small_groups();
  }

  // Folds the groups held in front of `groups` (SmallGroups) into it, before
  // the thread tables fold (the small table's memory is bounded, so the
  // thread tables' budget leaves it out).
  void flush_small_groups(PartitionedGroups& groups) {
    if (small_) small_->flush(groups);
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
      uint32_t good = read;  // lowered to a row that ends the batch early
      for (uint32_t r = 0; r < read; ++r) kept_[r] = origin_[r] = r;
      uint32_t kept = read;
      copies_ = 0;
      for (const JoinView& j : p_->joins) kept = before_good(join(j, kept, file, &good), good);
      kept = before_good(filter(kept, file, &good), good);
      if (computed_keys_ || computed_args_) kept = before_good(compute(kept, file, &good), good);
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
    const size_t nparsed = p_->slot_types.size(), nslots = nslots_;
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
      for (size_t k = 0; k < nparsed && ok; ++k) {
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

  // The kept rows (kept_[0, n)) but those of batch rows from `good` on,
  // which a stage's early end left behind (copies of one row lie together).
  uint32_t before_good(uint32_t n, uint32_t good) const {
    while (n > 0 && origin_[kept_[n - 1]] >= good) --n;
    return n;
  }

  // Joins the kept rows (kept_[0, n)) with their lookup rows in join j:
  // hashes every row's key and prefetches its bucket, then finds the first
  // bucket from there whose hash bits match and prefetches the row it names,
  // then that row's key strings, then probes. A row without a match
  // leaves an inner join (a left join's slots get nulls); a row with several
  // gets a copy per lookup row, in file order, after it. A row whose key
  // fails, or whose copies do not fit, ends the batch (*good) before it.
  // Returns the rows kept, in kept_.
  uint32_t join(const JoinView& j, uint32_t n, StrRef file, uint32_t* good) {
    const LookupView& t = j.table;
    const uint32_t nkeys = t.nkeys;
    uint32_t* const rows = kept_.data();
    Value* const keys = join_keys_.data();
    uint64_t* const hashes = join_hashes_.data();
    EvalContext ctx = make_eval_context(scratch_.data(), static_cast<uint32_t>(scratch_.size()));
    ctx.file = file;
    int bare[kMaxJoinKeys];  // per key: the slot it only reads, else -1
    for (uint32_t c = 0; c < nkeys; ++c)
      bare[c] = j.keys[c].length == 1 && j.keys[c].code[0].op == Op::Column ? j.keys[c].code[0].arg : -1;
    for (uint32_t i = 0; i < n; ++i) {
      Value* k = keys + i * kMaxJoinKeys;
      const Value* row = values_.data() + rows[i] * nslots_;
      for (uint32_t c = 0; c < nkeys; ++c) k[c] = bare[c] >= 0 ? row[bare[c]] : eval_program(j.keys[c], row, ctx);
      if (ctx.status != EvalStatus::Ok) {
        *good = origin_[rows[i]];
        n = i;
        break;
      }
      hashes[i] = lookup_hash(k, j.key_types, nkeys);
      prefetch_read(home_bucket(t, hashes[i]));
    }
    const uint64_t row_bytes = uint64_t{t.width} * sizeof(Value);
    LookupBucket* const candidate = join_candidates_.data();
    for (uint32_t i = 0; i < n; ++i) {
      const LookupBucket b = candidate[i] = first_tag_match(t, hashes[i]);
      if (bucket_row(b) == kNoLookupRow) continue;
      const char* cells = reinterpret_cast<const char*>(t.cells + uint64_t{bucket_row(b)} * t.width);
      prefetch_read(cells);
      prefetch_read(cells + row_bytes - 1);
    }
    // A string key's bytes lie apart from its row: prefetched once the row is in.
    if (has_string_key(j))
      for (uint32_t i = 0; i < n; ++i) {
        const LookupBucket b = candidate[i];
        if (bucket_row(b) == kNoLookupRow) continue;
        const Value* cells = t.cells + uint64_t{bucket_row(b)} * t.width;
        for (uint32_t c = 0; c < nkeys; ++c)
          if (j.key_types[c] == Type::String && !cells[c].null) prefetch_read(cells[c].s.ptr);
      }
    uint32_t* const joined = joined_.data();
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t row = rows[i];
      const LookupBucket b = lookup_first(t, keys + i * kMaxJoinKeys, j.key_types, hashes[i]);
      const uint32_t r = bucket_row(b);
      if (r == kNoLookupRow && !j.left) continue;
      if (b & kBucketHasMore) {
        if (copy_for_each_match(j, row, r, joined, &kept)) continue;
        *good = origin_[row];
        break;
      }
      fill_join_slots(j, values_.data() + row * nslots_, r);
      joined[kept++] = row;
    }
    std::copy(joined, joined + kept, rows);
    return kept;
  }

  // Row `row` joined with lookup row r, listed in `joined`, then a copy of it
  // per later row of r's chain; false, and nothing listed, when the copies
  // do not fit in the batch.
  bool copy_for_each_match(const JoinView& j, uint32_t row, uint32_t r, uint32_t* joined, uint32_t* kept) {
    uint32_t more = 0;
    for (uint32_t q = j.table.next[r]; q != kNoLookupRow; q = j.table.next[q]) ++more;
    if (copies_ + more > kCapacity - kRows) return false;
    Value* from = values_.data() + row * nslots_;
    fill_join_slots(j, from, r);
    joined[(*kept)++] = row;
    for (uint32_t q = j.table.next[r]; q != kNoLookupRow; q = j.table.next[q]) {
      const uint32_t copy = kRows + copies_++;
      Value* to = values_.data() + copy * nslots_;
      std::copy(from, from + nslots_, to);
      fill_join_slots(j, to, q);
      origin_[copy] = origin_[row];
      joined[(*kept)++] = copy;
    }
    return true;
  }

  // The first bucket from h's home on whose hash bits match h (most often
  // the key's), or kEmptyBucket: a row's key is compared only with its row.
  static LookupBucket first_tag_match(const LookupView& t, uint64_t h) {
    const uint32_t mask = (1u << t.bucket_bits) - 1;
    const LookupBucket* buckets = t.buckets + (uint64_t{lookup_part(h)} << t.bucket_bits);
    for (uint32_t b = static_cast<uint32_t>(h) & mask;; b = (b + 1) & mask) {
      const LookupBucket bucket = buckets[b];
      if (bucket_row(bucket) == kNoLookupRow || bucket_matches(bucket, h)) return bucket;
    }
  }

  static bool has_string_key(const JoinView& j) {
    for (uint32_t c = 0; c < j.table.nkeys; ++c)
      if (j.key_types[c] == Type::String) return true;
    return false;
  }

  // Keeps the kept rows (kept_[0, n)) the filter passes, in kept_; a row
  // whose filter fails ends the batch (*good) before it.
  uint32_t filter(uint32_t n, StrRef file, uint32_t* good) {
    uint32_t* const rows = kept_.data();
    uint32_t kept = 0;
    if (null_test_slot_ >= 0) {  // `filter c is [not] null`: no evaluator
      const Value* column = values_.data() + null_test_slot_;
      for (uint32_t i = 0; i < n; ++i)
        if (column[rows[i] * nslots_].null == null_test_keeps_nulls_) rows[kept++] = rows[i];
      return kept;
    }
    if (!p_->has_filter) return n;
    for (uint32_t i = 0; i < n; ++i) {
      EvalContext ctx = make_eval_context(scratch_.data(), static_cast<uint32_t>(scratch_.size()));
      ctx.file = file;
      const Value keep = eval_program(p_->filter, values_.data() + rows[i] * nslots_, ctx);
      if (ctx.status != EvalStatus::Ok) {
        *good = origin_[rows[i]];
        return kept;
      }
      if (!keep.null && keep.i != 0) rows[kept++] = rows[i];
    }
    return kept;
  }

  // The kept rows' computed keys (into keys_, with the others gathered) and
  // arguments (args0_, args1_, by row); their strings stay in scratch_ until
  // the update. A row whose program fails ends the batch (*good) before it.
  uint32_t compute(uint32_t n, StrRef file, uint32_t* good) {
    EvalContext ctx = make_eval_context(scratch_.data(), static_cast<uint32_t>(scratch_.size()));
    ctx.file = file;
    const size_t nkeys = p_->key_slots.size(), naggs = p_->arg0_slots.size();
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = kept_[i];
      const Value* row = values_.data() + r * nslots_;
      if (computed_keys_) {
        Value* keys = keys_.data() + i * nkeys;
        for (size_t k = 0; k < nkeys; ++k) {
          const int slot = p_->key_slots[k];
          keys[k] = slot >= 0 ? row[slot] : eval_program(p_->key_progs[k], row, ctx);
        }
      }
      if (computed_args_)
        for (size_t a = 0; a < naggs; ++a) {
          if (p_->arg0_slots[a] == AggregateBatchPlan::kComputed)
            args0_[r * naggs + a] = eval_program(p_->arg0_progs[a], row, ctx);
          if (p_->arg1_slots[a] == AggregateBatchPlan::kComputed)
            args1_[r * naggs + a] = eval_program(p_->arg1_progs[a], row, ctx);
        }
      if (ctx.status != EvalStatus::Ok) {
        *good = origin_[r];
        return i;
      }
    }
    return n;
  }

  // Hashes the kept rows' keys and prefetches their slots, then looks each up
  // and updates its aggregates, with the group of the row kGroupAhead rows
  // on prefetched (a lookup's two cache misses: slot, then group). `order` is
  // the batch's first row's order key.
  void update(PartitionedGroups& groups, uint32_t kept, uint64_t order) {
    if (small_) kept = small_->take(values_.data(), kept_.data(), kept, readable_end_);
    const PackedKeys& packer = groups.parts()[0].packed_keys();
    const uint32_t packed_bytes = packer.bytes();
    if (packed_.size() < size_t{kCapacity} * packed_bytes) packed_.resize(size_t{kCapacity} * packed_bytes);
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
      if (one_string_key && keys_in_window_ && short_string(keys[0], readable)) {
        // Narrow rows' one short key: hashed and packed from the same two loads.
        uint64_t lo, hi;
        load_short_bytes(keys[0].s.ptr, keys[0].s.len, &lo, &hi);
        hashes[i] = GroupTable::hash_of_short_string(lo, hi, keys[0].s.len);
        packer.pack_short_string(lo, hi, keys[0].s.len, packed + i * packed_bytes);
        exact[i] = 1;
      } else {
        hashes[i] = groups.hash_keys(keys, keys_in_window_ ? readable : nullptr);
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
      group[i] = exact[i] ? table.group_for_packed(packed + i * packed_bytes, keys, hashes[i])
                          : static_cast<uint32_t>(table.group_of(table.find_or_insert(keys, hashes[i])));
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
        case AggOp::FirstRow: update_agg<AggOp::FirstRow>(aggs[a], a, kept, order); break;  // distinct
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
    // Row r's arguments are x0[r * stride0] and x1[r * stride1].
    size_t stride0 = 0, stride1 = 0;
    const Value* const x0 = argument(p_->arg0_slots[a], args0_, a, none, &stride0);
    const Value* const x1 = argument(p_->arg1_slots[a], args1_, a, none, &stride1);
    const uint32_t* const rows = kept_.data();
    const uint32_t* const origin = origin_.data();
    char* const* const states = states_.data();
    uint8_t* const stored_string = stored_string_.data();
    bool any = false;
    for (uint32_t i = 0; i < kept; ++i) {
      const uint32_t r = rows[i];
      const bool stored = agg_update(agg, states[i], x0[r * stride0], x1[r * stride1], order + origin[r]);
      stored_string[i] |= stored;
      any |= stored;
    }
    return any;
  }


  // An aggregate's argument in a batch: the first row's, and the stride
  // from one row's to the next (0: none, the same null for every row).
  const Value* argument(int slot, const std::vector<Value>& computed, size_t a, const Value& none,
                        size_t* stride) const {
    if (slot == AggregateBatchPlan::kNoArg) return &none;
    if (slot == AggregateBatchPlan::kComputed) {
      *stride = p_->arg0_slots.size();
      return computed.data() + a;
    }
    *stride = nslots_;
    return values_.data() + slot;
  }

  // Kept row i's keys (row r of the batch): where they lie in the row when
  // their slots follow each other, else gathered (or computed, by compute()).
  const Value* keys_of(uint32_t i, uint32_t r) {
    const size_t nkeys = p_->key_slots.size();
    Value* keys = keys_.data() + i * nkeys;
    if (computed_keys_) return keys;
    const Value* row = values_.data() + r * nslots_;
    if (first_key_slot_ >= 0) return row + first_key_slot_;
    for (size_t k = 0; k < nkeys; ++k) keys[k] = row[p_->key_slots[k]];
    return keys;
  }

  // A table of few groups in front of the general one (cpu/small_groups.hpp)
  // when the plan groups by one string field and aggregates only counts,
  // minima, maxima, sums and means of int or decimal fields.
  void setup_small_groups() {
    const size_t nparsed = p_->slot_types.size();
    const auto parsed = [&](int slot) { return slot >= 0 && static_cast<size_t>(slot) < nparsed; };
    if (!p_->list_slots.empty() || p_->key_slots.size() != 1 || !parsed(p_->key_slots[0]) ||
        p_->slot_types[static_cast<size_t>(p_->key_slots[0])].type != Type::String)
      return;
    std::vector<SmallGroups::Agg> aggs;
    for (size_t a = 0; a < p_->layout->aggs.size(); ++a) {
      const int slot = p_->arg0_slots[a];
      if (p_->arg1_slots[a] != AggregateBatchPlan::kNoArg || !(parsed(slot) || slot == AggregateBatchPlan::kNoArg))
        return;
      const bool has_arg = slot >= 0;
      const Type type = has_arg ? p_->slot_types[static_cast<size_t>(slot)].type : Type::Int;
      if (!SmallGroups::takes(p_->layout->aggs[a].op, has_arg, type)) return;
      aggs.push_back({p_->layout->aggs[a].op, has_arg ? static_cast<uint32_t>(slot) : SmallGroups::kNoSlot});
    }
    small_ = std::make_unique<SmallGroups>(static_cast<uint32_t>(p_->key_slots[0]), static_cast<uint32_t>(nslots_), aggs);
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
  std::vector<Value> values_;  // kCapacity rows of nslots_ values
  std::vector<Value> keys_;    // per kept row: its keys, gathered or computed
  std::vector<uint64_t> hashes_;
  std::vector<char> packed_;    // per kept row: its packed keys, where exact_
  std::vector<uint8_t> exact_;  // per kept row: its keys pack exactly (PackedKeys::packs_exactly)
  std::vector<uint32_t> group_;  // per kept row: its group in its part
  std::vector<char*> states_;    // per kept row: its group's states
  std::vector<uint8_t> stored_string_;  // per kept row: an update stored a string from the input
  std::vector<const Value*> row_keys_;   // per kept row: its keys (keys_of)
  int first_key_slot_ = -1;  // the keys' first slot when their slots follow each other
  bool computed_keys_ = false, computed_args_ = false;  // some key, some argument
  bool keys_in_window_ = true;  // every key a field of the row, its bytes in the window
  std::vector<Value> args0_, args1_;  // computed arguments: per row of values_, one per aggregate
  std::vector<Value> join_keys_;      // a join's keys: per kept row, kMaxJoinKeys
  std::vector<uint64_t> join_hashes_;
  std::vector<LookupBucket> join_candidates_;  // per kept row: first_tag_match
  // A filter that only tests one column for null: its slot, and which rows it keeps.
  int null_test_slot_ = -1;
  bool null_test_keeps_nulls_ = false;
  const char* readable_end_ = nullptr;  // the window's end: bytes up to here may be loaded
  std::vector<uint32_t> kept_;    // the rows the batch's stages keep, by their place in values_
  std::vector<uint32_t> origin_;  // per row of values_: the row read it is (a copy of)
  std::vector<uint32_t> joined_;  // a join's kept rows, as it lists them
  uint32_t copies_ = 0;           // copies made, from values_ row kRows on
  std::vector<uint64_t> spans_, ends_;  // the current row's used fields
  std::vector<uint64_t> row_begin_;     // each read row's start, then the position after the last
  std::vector<uint8_t> slot_inferred_;  // the plan's, as bytes
  std::vector<char> scratch_;
  std::unique_ptr<SmallGroups> small_;  // groups of one short string key, in front of the general table
};

}  // namespace warpcsv
