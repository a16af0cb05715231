// A scan thread's table of few groups keyed by one short string, in front of
// its general table (PartitionedGroups). Narrow rows ("station;temperature")
// spent most of their aggregation in the general table's machinery: keys as
// Values, packed and compared as bytes, and a pass over the batch per
// aggregate through the core's agg_update. Here a key is two words compared
// in place, and a group's aggregates are 64-bit counts, minima and maxima and
// 128-bit sums in one entry, a cache line for the usual few aggregates,
// found through an index of 32-bit slots (a hash tag and the entry's
// number) kept at most half full: probing 64-byte entries in place had cost
// a cache line a probe (10,000 keys at 5/8 load: 10% of a narrow-row scan). The
// entries fold into the general table (flush) before that is read; a row
// this table cannot take (a long or null key, a value beyond 64 bits, no
// room) goes to the general table as before. Merges are order-free, so a
// group's rows may go to both.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "exec/group_table.hpp"
#include "runtime/prefetch.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/hash.hpp"

namespace warpcsv {

class SmallGroups {
 public:
  // Groups held at most (fewer when many aggregates make entries long: the
  // table stays within kMaxBytes): past that a new key's rows go to the
  // general table, and a table this full that turns most rows away stops
  // being asked.
  static constexpr uint32_t kMaxGroups = 20000;
  static constexpr size_t kMaxBytes = 4 << 20;
  static constexpr uint32_t kNoSlot = UINT32_MAX;

  // What each aggregate reads: its op and its argument's slot in a row of
  // `nslots` Values (kNoSlot: none).
  struct Agg {
    AggOp op;
    uint32_t slot;
  };
  // Whether aggregates of these ops and argument types can be held here:
  // count(), and count, min, max, sum and mean of an int or decimal column
  // (count of any column) read as is.
  static bool takes(AggOp op, bool has_arg, Type arg_type) {
    switch (op) {
      case AggOp::CountStar: return !has_arg;
      case AggOp::Count: return has_arg;
      case AggOp::Min:
      case AggOp::Max:
      case AggOp::SumExact:
      case AggOp::MeanExact: return has_arg && (arg_type == Type::Int || arg_type == Type::Decimal);
      default: return false;
    }
  }

  SmallGroups(uint32_t key_slot, uint32_t nslots, const std::vector<Agg>& aggs) : key_slot_(key_slot), nslots_(nslots) {
    // An entry: the key's two words, the row count, a non-null count per
    // argument slot, then each aggregate's words (none for counts).
    uint32_t word = kFirstCount;
    for (const Agg& a : aggs) {
      if (a.slot == kNoSlot) continue;
      if (std::find(counted_slots_.begin(), counted_slots_.end(), a.slot) == counted_slots_.end()) {
        counted_slots_.push_back(a.slot);
        ++word;
      }
    }
    for (const Agg& a : aggs) {
      Op op;
      op.op = a.op;
      op.slot = a.slot;
      op.count_word = kRowsWord;
      for (size_t c = 0; c < counted_slots_.size(); ++c)
        if (counted_slots_[c] == a.slot) op.count_word = static_cast<uint32_t>(kFirstCount + c);
      op.word = word;
      if (a.op == AggOp::Min || a.op == AggOp::Max) word += 1;
      if (a.op == AggOp::SumExact || a.op == AggOp::MeanExact) word += 2;
      ops_.push_back(op);
      if (a.slot != kNoSlot && a.op != AggOp::Count) checked_slots_.push_back(a.slot);
    }
    std::sort(checked_slots_.begin(), checked_slots_.end());
    checked_slots_.erase(std::unique(checked_slots_.begin(), checked_slots_.end()), checked_slots_.end());
    stride_ = word;
    max_groups_ = static_cast<uint32_t>(std::min<size_t>(kMaxGroups, kMaxBytes / (stride_ * 8)));
    entries_.resize(size_t{kFirstSlots / 2} * stride_);
    resize_index(kFirstSlots);
  }

  uint32_t size() const { return size_; }

  // Aggregates the rows rows[0, n) of `values` (rows of nslots Values) that
  // it can take; the others are listed in rows[0, returned), in their order,
  // for the general table. `readable`: bytes up to there may be loaded past
  // a key's end.
  uint32_t take(const Value* values, uint32_t* rows, uint32_t n, const char* readable) {
    if (off_) return n;
    if (lo_.size() < n) {
      lo_.resize(n);
      hi_.resize(n);
      hash_.resize(n);
    }
    // First every row's key words and hash (independent rows, no waiting),
    // then the lookups and updates; past the first level of cache, the index
    // slot of the row kAhead * 2 on is asked for early, and the entry its
    // first slot names kAhead rows before its lookup.
    const bool prefetch = (index_.size() * 4 + size_ * stride_ * 8) > kPrefetchBytes;
    uint64_t* const los = lo_.data();
    uint64_t* const his = hi_.data();
    uint64_t* const hashes = hash_.data();
    for (uint32_t i = 0; i < n; ++i) {
      const Value* row = values + size_t{rows[i]} * nslots_;
      const Value& key = row[key_slot_];
      bool ok = !key.null && key.s.len <= PackedKeys::kInlineString && key.s.ptr + 16 <= readable;
      for (uint32_t s : checked_slots_) ok &= row[s].null || row[s].i == static_cast<int64_t>(row[s].i);
      uint64_t lo = 0, hi = 0;
      if (ok) {
        load_short_bytes(key.s.ptr, key.s.len, &lo, &hi);
        hi |= uint64_t{key.s.len} << 56;
      }
      los[i] = lo;
      his[i] = ok ? hi : kEmpty;
      hashes[i] = slot_hash(lo, hi);
    }
    uint32_t rest = 0, turned_away = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = rows[i];
      if (prefetch) {
        if (i + 2 * kAhead < n) prefetch_read(&index_[hashes[i + 2 * kAhead] >> shift_]);
        if (i + kAhead < n) {
          const uint32_t first = index_[hashes[i + kAhead] >> shift_];
          if (first != 0) prefetch_read(entry(first));
        }
      }
      uint64_t* e = his[i] == kEmpty ? nullptr : find_or_add(los[i], his[i], hashes[i]);
      if (!e) {
        turned_away += his[i] != kEmpty;
        rows[rest++] = r;
        continue;
      }
      const Value* row = values + size_t{r} * nslots_;
      e[kRowsWord] += 1;
      for (size_t c = 0; c < counted_slots_.size(); ++c) e[kFirstCount + c] += row[counted_slots_[c]].null ? 0 : 1;
      for (const Op& op : ops_) {
        if (op.slot == kNoSlot) continue;
        const Value& x = row[op.slot];
        if (x.null) continue;
        const int64_t v = static_cast<int64_t>(x.i);
        int64_t* w = reinterpret_cast<int64_t*>(e + op.word);
        switch (op.op) {
          case AggOp::Min: *w = std::min(*w, v); break;
          case AggOp::Max: *w = std::max(*w, v); break;
          case AggOp::SumExact:
          case AggOp::MeanExact: {
            // The sum's low word, then the high word with the carry and the value's sign.
            const uint64_t low = e[op.word] + static_cast<uint64_t>(v);
            e[op.word + 1] += (low < e[op.word] ? 1 : 0) + (v < 0 ? ~uint64_t{0} : 0);
            e[op.word] = low;
            break;
          }
          default: break;
        }
      }
    }
    // Full, and most of a batch turned away: rows of many groups, which this
    // table would only delay.
    if (size_ >= max_groups_ && turned_away * 2 > n) off_ = true;
    return rest;
  }

  // Folds every group here into `groups` (whose one string key and
  // aggregates, in this order, are this table's), and empties this table.
  void flush(PartitionedGroups& groups) {
    if (size_ == 0) return;
    const GroupLayout& layout = groups.parts()[0].layout();
    const PackedKeys& packer = groups.parts()[0].packed_keys();
    std::vector<int128> scratch((layout.state_bytes + sizeof(int128) - 1) / sizeof(int128) + 1);
    char* state = reinterpret_cast<char*>(scratch.data());
    std::vector<char> packed(packer.bytes());
    for (uint32_t g = 0; g < size_; ++g) {
      const uint64_t* e = entry_at(g);
      const uint64_t lo = e[kLoWord], hi = e[kHiWord] & ~(uint64_t{0xff} << 56);
      const uint32_t len = static_cast<uint32_t>(e[kHiWord] >> 56);
      char bytes[16];
      std::memcpy(bytes, &lo, 8);
      std::memcpy(bytes + 8, &hi, 8);
      const Value key = Value::of_str(bytes, len);
      const uint64_t hash = GroupTable::hash_of_short_string(lo, hi, len);
      packer.pack_short_string(lo, hi, len, packed.data());
      GroupTable& table = groups.part_for(hash);
      char* into = table.state(table.group_for_packed(packed.data(), &key, hash));
      for (size_t a = 0; a < ops_.size(); ++a) {
        const AggDesc& desc = layout.aggs[a];
        agg_init(desc, state);
        state_of(ops_[a], e, state + desc.offset);
        agg_merge(desc, into, state);
      }
    }
    clear();
  }

 private:
  static constexpr uint32_t kLoWord = 0, kHiWord = 1, kRowsWord = 2, kFirstCount = 3;
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no key's high word (its top byte is its length): a row not taken
  static constexpr uint32_t kFirstSlots = 1024;  // index slots at first
  static constexpr uint32_t kMaxProbe = 32;  // a longer chain sends the row to the general table
  static constexpr size_t kPrefetchBytes = 32 << 10;
  static constexpr uint32_t kAhead = 8;  // rows between an entry's prefetch and its lookup

  struct Op {
    AggOp op;
    uint32_t slot;
    uint32_t count_word;  // the non-null count of its argument (the row count for count())
    uint32_t word;        // its own words
  };

  static uint64_t slot_hash(uint64_t lo, uint64_t hi) {
    return ((lo ^ (hi << 29 | hi >> 35)) + hi) * 0x9e3779b97f4a7c15ull;
  }
  // An index slot's high half: 16 bits of the hash below those that pick the slot.
  static uint32_t tag_of(uint64_t hash) { return static_cast<uint32_t>(hash >> 16) & 0xffff0000u; }
  // Entry g, and the entry a non-empty index slot names (its low half: the entry + 1).
  uint64_t* entry_at(uint32_t g) { return entries_.data() + size_t{g} * stride_; }
  uint64_t* entry(uint32_t slot) { return entry_at((slot & 0xffff) - 1); }

  // The entry of key (lo, hi) of this hash, made when new; null when there
  // is no room or its chain is too long.
  uint64_t* find_or_add(uint64_t lo, uint64_t hi, uint64_t hash) {
    const uint32_t tag = tag_of(hash);
    uint64_t s = hash >> shift_;
    for (uint32_t probe = 0; probe < kMaxProbe; ++probe, s = (s + 1) & mask_) {
      const uint32_t slot = index_[s];
      if (slot == 0) return add(lo, hi, hash, s, tag);
      if ((slot & 0xffff0000u) != tag) continue;
      uint64_t* e = entry(slot);
      if (e[kHiWord] == hi && e[kLoWord] == lo) return e;
    }
    return nullptr;
  }

  // A new entry for key (lo, hi) in the empty index slot s.
  __attribute__((noinline)) uint64_t* add(uint64_t lo, uint64_t hi, uint64_t hash, uint64_t s, uint32_t tag) {
    if (size_ >= max_groups_) return nullptr;
    if ((size_ + 1) * 2 > mask_ + 1) {  // past half full: twice the slots
      resize_index(2 * (mask_ + 1));
      return find_or_add(lo, hi, hash);
    }
    if (entries_.size() < size_t{size_ + 1} * stride_)
      entries_.resize(std::min(entries_.size() * 2, size_t{max_groups_} * stride_));
    uint64_t* e = entry_at(size_);
    index_[s] = tag | (size_ + 1);
    ++size_;
    e[kLoWord] = lo;
    e[kHiWord] = hi;
    std::fill(e + kRowsWord, e + stride_, 0);
    for (const Op& op : ops_) {
      if (op.op == AggOp::Min) e[op.word] = static_cast<uint64_t>(INT64_MAX);
      if (op.op == AggOp::Max) e[op.word] = static_cast<uint64_t>(INT64_MIN);
    }
    return e;
  }

  // The core's state of aggregate `op` for entry e, written at `to` (agg_init'ed).
  static void state_of(const Op& op, const uint64_t* e, char* to) {
    const int64_t n = static_cast<int64_t>(e[op.count_word]);
    switch (op.op) {
      case AggOp::CountStar:
      case AggOp::Count: reinterpret_cast<CountState*>(to)->n = n; break;
      case AggOp::Min:
      case AggOp::Max:
        if (n > 0) reinterpret_cast<ExtremeState*>(to)->v = Value::of_int(static_cast<int64_t>(e[op.word]));
        break;
      case AggOp::SumExact:
      case AggOp::MeanExact: {
        auto* st = reinterpret_cast<SumExactState*>(to);
        st->sum = static_cast<int128>((static_cast<uint128>(e[op.word + 1]) << 64) | e[op.word]);
        st->ext = st->sum < 0 ? -1 : 0;
        st->n = n;
        break;
      }
      default: break;
    }
  }

  // An index of `slots` slots over the entries there are.
  void resize_index(uint64_t slots) {
    index_.assign(slots, 0);
    mask_ = slots - 1;
    shift_ = static_cast<uint32_t>(64 - __builtin_ctzll(slots));
    for (uint32_t g = 0; g < size_; ++g) {
      const uint64_t* e = entry_at(g);
      const uint64_t hash = slot_hash(e[kLoWord], e[kHiWord]);
      uint64_t s = hash >> shift_;
      while (index_[s] != 0) s = (s + 1) & mask_;
      index_[s] = tag_of(hash) | (g + 1);
    }
  }

  void clear() {
    std::fill(index_.begin(), index_.end(), 0);
    size_ = 0;
  }

  uint32_t key_slot_, nslots_;
  std::vector<uint32_t> counted_slots_;  // the argument slots, each once: entry words kFirstCount on
  std::vector<uint32_t> checked_slots_;  // the slots whose values must fit 64 bits
  std::vector<Op> ops_;
  uint32_t stride_ = 0;  // words an entry
  std::vector<uint64_t> entries_;  // size_ entries of stride_ words, in the order made
  std::vector<uint32_t> index_;    // per slot: the hash's tag bits, then entry + 1; 0 empty
  uint64_t mask_ = 0;
  uint32_t shift_ = 64;
  uint32_t size_ = 0;
  uint32_t max_groups_ = 0;
  bool off_ = false;
  std::vector<uint64_t> lo_, hi_, hash_;  // per row of a batch: its key's words (hi_ kEmpty: not taken), slot_hash
};

}  // namespace warpcsv
