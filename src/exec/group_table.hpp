// The host's partial aggregate table: open addressing over group keys, one
// state block per group laid out by the plan's AggDescs. A table stays
// resident across the partitions a thread processes; tables merge with the
// core's agg_merge.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/grow_array.hpp"
#include "exec/packed_keys.hpp"
#include "runtime/prefetch.hpp"
#include "runtime/parallel.hpp"

#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// Key types and aggregate layout shared by every table of a run.
struct GroupLayout {
  std::vector<Type> key_types;
  // Per key: an int, date or timestamp read as a column, so 64 bits hold it
  // (PackedKeys); computed ones may need 128.
  std::vector<bool> narrow_keys;
  std::vector<AggDesc> aggs;
  uint32_t state_bytes = 0;  // one group's block, a multiple of kAggStateAlign

  static GroupLayout from_plan(const Plan& plan);
};

// The bits that choose a group's part: the hash's middle bits, mixed (slots
// use the low bits and tags the high ones, which stay spread within a part).
inline uint64_t part_bits(uint64_t hash) { return (hash * 0x9e3779b97f4a7c15ull) >> 32; }
// Which of `nparts` parts a group of this hash goes to.
inline size_t hash_part(uint64_t hash, size_t nparts) { return static_cast<size_t>(part_bits(hash) % nparts); }

class GroupTable {
 public:
  explicit GroupTable(const GroupLayout* layout);

  size_t size() const { return hashes_.size(); }
  // Host bytes the table holds: index, hashes, blocks and key strings.
  size_t memory_bytes() const {
    return (slots_.capacity() + hashes_.capacity()) * sizeof(uint64_t) + blocks_.capacity() + strings_.bytes();
  }
  // The state block of the group with these keys (hash from hash_keys),
  // created (and its key strings copied) when new.
  char* find_or_insert(const Value* keys, uint64_t hash);
  // The number of the group with keys that packed_keys() packs exactly
  // (packs_exactly) into `packed`, compared as bytes without a switch per
  // key, created (from `keys`) when new: inline, with no call and no
  // division (group_of) for the group already here that most rows find.
  uint32_t group_for_packed(const char* packed, const Value* keys, uint64_t hash) {
    return probe(hash, [&](const char* b) { return packed_.bytes_equal(b, packed); },
                 [&](size_t slot) { return insert_new(keys, hash, slot); });
  }
  // The index of the group whose state find_or_insert just returned.
  size_t group_of(const char* state) const {
    return static_cast<size_t>(state - key_bytes_ - blocks_.data()) / block_bytes_;
  }
  // An agg without keys has its one group even over no rows.
  void ensure_group_without_keys() {
    if (nkeys_ == 0 && size() == 0) find_or_insert(nullptr, hash_keys(nullptr));
  }
  // Frees the lookup index, which the next lookup rebuilds: a finished
  // table's groups are read, not looked up.
  void drop_index() {
    slots_ = GrowArray<uint64_t>();
    indexed_ = false;
  }
  // Makes room for `groups` groups in all without growing on the way.
  void reserve(size_t groups);
  // Hints that the slot for `hash` will be looked up soon.
  void prefetch(uint64_t hash) const {
    if (indexed_) prefetch_read(&slots_[hash & mask_]);
  }
  // Hints that the group in the slot for `hash` (prefetched a while before)
  // will be read soon, when its tag is the hash's: the second miss of a
  // lookup, its keys and state.
  void prefetch_group(uint64_t hash) const {
    if (!indexed_) return;
    const uint64_t s = slots_[hash & mask_];
    if (s == 0 || (s & 0xffffffff00000000ull) != (hash & 0xffffffff00000000ull)) return;
    const char* b = block((s & 0xffffffffull) - 1);
    prefetch_read(b);
    prefetch_read(b + block_bytes_ - 1);
  }
  // Appends n groups that differ from each other and from every group here
  // (one GPU's finished table), looking none up: fill(g, keys, state) writes
  // group g's keys and its state (already agg_init'ed) and runs on up to
  // `threads` threads. Key strings must point into `strings`, which the table
  // takes over. The lookup index is rebuilt when next needed.
  template <class Fill>
  void append_distinct(size_t n, const uint64_t* hashes, std::unique_ptr<char[]> strings, int threads, Fill&& fill) {
    const size_t first = size();
    hashes_.append(hashes, n);
    blocks_.resize(blocks_.size() + n * block_bytes_);
    strings_.adopt(std::move(strings));
    parallel_ranges(n, threads, [&](size_t b, size_t e) {
      std::vector<Value> keys(nkeys_ + 1);
      for (size_t g = first + b; g < first + e; ++g) {
        char* b = block(g);
        for (const auto& a : layout_->aggs) agg_init(a, b + key_bytes_);
        fill(g - first, keys.data(), b + key_bytes_);
        packed_.pack(keys.data(), b);
      }
    });
    indexed_ = false;
  }
  // Folds into this table a group whose block (packed keys, then states, as
  // block_of gives) is elsewhere: another table's, or one read back from a file.
  void merge_block(uint64_t hash, const char* block);
  // Folds every group of `other` into this table, in other's group order;
  // `where`, if given, gets the group each of other's groups is in here.
  // Groups are looked up by their packed keys (group_for_packing), and the
  // slots and groups of later ones are prefetched: a fold of large tables is
  // mostly lookups that miss the caches.
  void merge_from(const GroupTable& other, uint32_t* where = nullptr);
  // Folds every group of `tables` into this table on up to `threads`
  // threads: each table's groups are listed by hash partition, thread p
  // folds those of partition p from all the tables into a table of its own,
  // and the partitions, which share no group, are then appended whole. The
  // groups and states are those of merge_from one table after another
  // (merges are order-free); the group order differs, and this table's own
  // groups are renumbered too. On an error (memory, the group limit) this
  // table is left as it was. `inputs_done`, if given, is called once
  // `tables` are no longer read, before the partitions are appended:
  // freeing them then keeps the inputs and the copy from both being held at
  // once (an error after that leaves this table as it was and the inputs
  // gone: the caller's run fails). `renumbered`, if given, gets where every
  // group went: [i][g] for group g of tables[i], and [tables.size()][g] for
  // this table's own group g (left empty when its groups kept their numbers).
  void merge_all(const std::vector<const GroupTable*>& tables, int threads,
                 const std::function<void()>& inputs_done = {},
                 std::vector<std::vector<uint32_t>>* renumbered = nullptr);
  // Appends the groups of `parts`, which share no group with each other or
  // with this table, and takes over their strings: part i's group g becomes
  // group size() + (groups of the parts before i) + g.
  void append_disjoint(std::vector<GroupTable>& parts, int threads);
  // Gives a string that an agg_update/agg_merge just stored a stable copy.
  void stabilize_strings(char* block);

  // Group g's key k, and all its keys into `out` (nkeys Values).
  Value key(size_t g, size_t k) const { return packed_.unpack(block(g), k); }
  void keys_of(size_t g, Value* out) const { packed_.unpack_all(block(g), out); }
  // Group g's block: its packed keys (packed_keys()), then its states.
  const char* block_of(size_t g) const { return block(g); }
  const PackedKeys& packed_keys() const { return packed_; }
  const char* state(size_t g) const { return block(g) + key_bytes_; }
  char* state(size_t g) { return block(g) + key_bytes_; }
  uint64_t hash_of(size_t g) const { return hashes_[g]; }
  const GroupLayout& layout() const { return *layout_; }
  // Bytes from one group's keys (or states) to the next's.
  size_t block_bytes() const { return block_bytes_; }

  // The keys' hash. `readable`, if given: bytes up to there may be loaded
  // past a key string's end, so that one of up to 15 bytes is hashed from
  // two loads (to the same hash).
  uint64_t hash_keys(const Value* keys, const char* readable = nullptr) const {
    uint64_t h = kGroupKeysSeed;
    for (size_t k = 0; k < nkeys_; ++k) {
      const Value& v = keys[k];
      const Type t = layout_->key_types[k];
      const bool loads = readable && t == Type::String && !v.null && v.s.len <= 15 && v.s.ptr + 16 <= readable;
      h = hash_combine(h, loads ? hash_short_bytes(v.s.ptr, v.s.len) : hash_value(v, t));
    }
    return h;
  }
  // hash_keys of one string key of n <= 15 bytes given as load_short_bytes
  // gives them (core/hash.hpp).
  static uint64_t hash_of_short_string(uint64_t lo, uint64_t hi, uint32_t n) {
    return hash_combine(kGroupKeysSeed, hash_short_words(lo, hi, n));
  }

 private:
  void grow();
  void rebuild_index();
  // Makes group number size() with `keys` in the empty slot `slot`.
  uint32_t insert_new(const Value* keys, uint64_t hash, size_t slot);
  // The group of the keys packed at `packed` (another table's block, or a
  // record read back), made when new: compared as bytes where the packing is
  // their value (packing_is_value), else by the values unpacked.
  uint32_t group_for_packing(const char* packed, uint64_t hash);
  // The number of the group whose block same_keys accepts among those of the
  // hash's tag, else the one make_new(slot) makes.
  template <class SameKeys, class InsertNew>
  uint32_t probe(uint64_t hash, SameKeys&& same_keys, InsertNew&& make_new) {
    if (!indexed_) rebuild_index();
    const uint64_t tag = hash & 0xffffffff00000000ull;
    for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      const uint64_t s = slots_[slot];
      if (s == 0) return make_new(slot);
      const uint32_t g = static_cast<uint32_t>((s & 0xffffffffull) - 1);
      if ((s & 0xffffffff00000000ull) == tag && same_keys(block(g))) return g;
    }
  }

  // A group's keys and its aggregate states share one block, so a lookup
  // that hits touches two cache lines at most: its slot and its block.
  const char* block(size_t g) const { return blocks_.data() + g * block_bytes_; }
  char* block(size_t g) { return blocks_.data() + g * block_bytes_; }

  const GroupLayout* layout_;
  size_t nkeys_;
  PackedKeys packed_;
  size_t key_bytes_;    // packed_.bytes(), rounded to kAggStateAlign
  size_t block_bytes_;  // key_bytes_ + layout_->state_bytes
  GrowArray<uint64_t> slots_;  // (hash >> 32) << 32 | (group + 1); 0 = empty
  uint64_t mask_ = 0;
  bool indexed_ = true;  // slots_ holds every group (false after append_distinct)
  GrowArray<uint64_t> hashes_;  // per group, for growing and merging
  GrowArray<char> blocks_;  // every byte a block's keys and states use is written
  StringArena strings_;
};

// Groups split by hash into tables that share no group (parts). Each scan
// thread fills one; the threads' tables then fold part by part, each part
// into the largest of its kind, so a group is copied at most once and an
// input part's memory goes as soon as it is folded.
class PartitionedGroups {
 public:
  // `nparts`: a power of two.
  PartitionedGroups(const GroupLayout* layout, size_t nparts);

  // hash_part's part, with a mask for its remainder: a division per row cost
  // more than the lookup of a small table.
  size_t part_of(uint64_t hash) const { return static_cast<size_t>(part_bits(hash) & (parts_.size() - 1)); }
  GroupTable& part_for(uint64_t hash) { return parts_[part_of(hash)]; }
  void prefetch(uint64_t hash) const { parts_[part_of(hash)].prefetch(hash); }
  void prefetch_group(uint64_t hash) const { parts_[part_of(hash)].prefetch_group(hash); }
  uint64_t hash_keys(const Value* keys, const char* readable = nullptr) const {
    return parts_[0].hash_keys(keys, readable);
  }
  size_t size() const;
  // About size(), from the first part alone (groups spread evenly over the
  // parts by hash): one cache line read instead of one for each part.
  size_t size_estimate() const { return parts_[0].size() * parts_.size(); }
  size_t memory_bytes() const;
  std::vector<GroupTable>& parts() { return parts_; }
  // The parts that hold groups.
  std::vector<const GroupTable*> tables() const;
  // Folds the parts of `others` (as many as here) into these on up to
  // `threads` threads; theirs are left empty.
  void fold(const std::vector<PartitionedGroups*>& others, int threads);

 private:
  const GroupLayout* layout_;
  std::vector<GroupTable> parts_;
};

// Parts of a scan thread's table (and of their fold) for `threads` threads:
// two a thread at least, so that the fold keeps every thread busy, and no
// more: the larger a part, the sooner its arrays sit in 2 MiB pages. With a
// million groups in 64 parts of 4 KiB pages a lookup missed the TLB; 8 parts
// took a quarter off the scan.
inline size_t thread_table_parts(int threads) {
  size_t parts = 8;
  while (parts < 2 * static_cast<size_t>(std::max(1, threads)) && parts < 64) parts *= 2;
  return parts;
}

}  // namespace warpcsv
