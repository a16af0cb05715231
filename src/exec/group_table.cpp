#include "exec/group_table.hpp"

#include <algorithm>
#include <cstring>

#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {
constexpr size_t kMaxMergeKeys = 16;  // more keys unpack into a vector

bool is_exact_input(Type t) { return t == Type::Int || t == Type::Decimal || t == Type::Bool; }

AggOp op_for(const AggSpec& s) {
  const Type t = s.arg0.empty() ? Type::Int : s.arg0.result.type;
  const bool exact = is_exact_input(t);
  switch (s.kind) {
    case AggKind::CountStar: return AggOp::CountStar;
    case AggKind::Count: return AggOp::Count;
    case AggKind::Sum: return exact ? AggOp::SumExact : AggOp::SumFloat;
    case AggKind::Min: return AggOp::Min;
    case AggKind::Max: return AggOp::Max;
    case AggKind::Mean: return exact ? AggOp::MeanExact : AggOp::MeanFloat;
    case AggKind::Var: return exact ? AggOp::VarExact : AggOp::VarFloat;
    case AggKind::Std: return exact ? AggOp::StdExact : AggOp::StdFloat;
    case AggKind::First: return AggOp::First;
    case AggKind::Last: return AggOp::Last;
    case AggKind::FirstRow: return AggOp::FirstRow;
    case AggKind::Corr:
      return exact && is_exact_input(s.arg1.result.type) ? AggOp::CorrExact : AggOp::CorrFloat;
    case AggKind::CountDistinct:
    case AggKind::Median:
    case AggKind::Quantile:
    case AggKind::NthValue: break;  // holistic: never a scan aggregate
  }
  throw InternalError("unknown aggregate kind");
}
}  // namespace

GroupLayout GroupLayout::from_plan(const Plan& plan) {
  GroupLayout l;
  for (const auto& k : plan.scan.keys) {
    l.key_types.push_back(k.result.type);
    // A column as read holds 64 bits (a later agg's row slot, unless wide);
    // a computed int may hold more.
    l.narrow_keys.push_back(k.bare_slot() >= 0 && !k.code[0].wide);
  }
  uint32_t off = 0;
  for (const auto& s : plan.scan.aggs) {
    AggDesc d{};
    d.op = op_for(s);
    d.in_type = s.arg0.empty() ? Type::Int : s.arg0.result.type;
    d.in_scale = s.arg0.empty() ? 0 : s.arg0.result.scale;
    d.in_type2 = s.arg1.empty() ? Type::Int : s.arg1.result.type;
    d.in_scale2 = s.arg1.empty() ? 0 : s.arg1.result.scale;
    d.offset = off;
    off += (agg_state_size(d.op) + kAggStateAlign - 1) / kAggStateAlign * kAggStateAlign;
    l.aggs.push_back(d);
  }
  l.state_bytes = off ? off : kAggStateAlign;
  return l;
}

GroupTable::GroupTable(const GroupLayout* layout)
    : layout_(layout),
      nkeys_(layout->key_types.size()),
      packed_(layout->key_types, layout->narrow_keys),
      key_bytes_((packed_.bytes() + kAggStateAlign - 1) / kAggStateAlign * kAggStateAlign),
      block_bytes_(key_bytes_ + layout->state_bytes) {
  slots_.assign_zero(64);
  mask_ = 63;
}

char* GroupTable::find_or_insert(const Value* keys, uint64_t hash) {
  return state(probe(hash, [&](const char* b) { return packed_.equal(b, keys); },
                     [&](size_t slot) { return insert_new(keys, hash, slot); }));
}

uint32_t GroupTable::group_for_packing(const char* packed, uint64_t hash) {
  Value keys[kMaxMergeKeys];
  std::vector<Value> many;
  Value* k = keys;
  if (nkeys_ > kMaxMergeKeys) {
    many.resize(nkeys_);
    k = many.data();
  }
  if (packed_.packing_is_value(packed))  // unpacked only for a new group
    return probe(hash, [&](const char* b) { return packed_.bytes_equal(b, packed); },
                 [&](size_t slot) {
                   packed_.unpack_all(packed, k);
                   return insert_new(k, hash, slot);
                 });
  packed_.unpack_all(packed, k);
  return probe(hash, [&](const char* b) { return packed_.equal(b, k); },
               [&](size_t slot) { return insert_new(k, hash, slot); });
}

uint32_t GroupTable::insert_new(const Value* keys, uint64_t hash, size_t slot) {
  const size_t g = hashes_.size();
  if (g >= 0xfffffffeull) throw ResourceError("more than 4 billion groups");
  slots_[slot] = (hash & 0xffffffff00000000ull) | (g + 1);
  hashes_.push_back(hash);
  blocks_.resize(blocks_.size() + block_bytes_);
  char* b = block(g);
  packed_.pack(keys, b);
  for (size_t i = 0; i < nkeys_; ++i)
    if (!keys[i].null && layout_->key_types[i] == Type::String && PackedKeys::needs_copy(keys[i]))
      packed_.set_string(b, i, strings_.add(keys[i].s).ptr);
  for (const auto& a : layout_->aggs) agg_init(a, b + key_bytes_);
  if ((g + 1) * 2 > slots_.size()) grow();
  return static_cast<uint32_t>(g);
}

void GroupTable::reserve(size_t groups) {
  hashes_.reserve(groups);
  blocks_.reserve(groups * block_bytes_);
  if (!indexed_) rebuild_index();
  while (groups * 2 > slots_.size()) grow();
}

void GroupTable::rebuild_index() {
  size_t n = 64;
  while (hashes_.size() * 2 > n) n *= 2;
  slots_.assign_zero(n / 2);  // grow() doubles it and inserts every group
  indexed_ = true;
  grow();
}

void GroupTable::grow() {
  GrowArray<uint64_t> bigger;
  bigger.assign_zero(slots_.size() * 2);
  const uint64_t mask = bigger.size() - 1;
  for (size_t g = 0; g < hashes_.size(); ++g) {
    size_t s = hashes_[g] & mask;
    while (bigger[s]) s = (s + 1) & mask;
    bigger[s] = (hashes_[g] & 0xffffffff00000000ull) | (g + 1);
  }
  slots_ = std::move(bigger);
  mask_ = mask;
}

void GroupTable::stabilize_strings(char* block) {
  for (const auto& a : layout_->aggs) {
    if (!agg_holds_string(a)) continue;
    Value* v = a.op == AggOp::Min || a.op == AggOp::Max
                   ? &reinterpret_cast<ExtremeState*>(block + a.offset)->v
                   : &reinterpret_cast<OrderedState*>(block + a.offset)->v;
    if (!v->null && v->s.len) v->s = strings_.add(v->s);
  }
}

namespace {

// Folds the states at `from` into the group whose states are at `dst`.
void merge_states(GroupTable& t, char* dst, const char* from) {
  bool copied = false;
  for (const auto& a : t.layout().aggs) copied |= agg_merge(a, dst, from);
  if (copied) t.stabilize_strings(dst);
}
}  // namespace

void GroupTable::merge_block(uint64_t hash, const char* block) {
  merge_states(*this, state(group_for_packing(block, hash)), block + key_bytes_);
}

void GroupTable::merge_from(const GroupTable& other, uint32_t* where) {
  if (!indexed_) rebuild_index();
  constexpr size_t kSlotAhead = 16, kGroupAhead = 8;
  const size_t n = other.size();
  for (size_t g = 0; g < n; ++g) {
    if (g + kSlotAhead < n) prefetch(other.hashes_[g + kSlotAhead]);
    if (g + kGroupAhead < n) prefetch_group(other.hashes_[g + kGroupAhead]);
    const uint32_t to = group_for_packing(other.block(g), other.hashes_[g]);
    if (where) where[g] = to;
    merge_states(*this, state(to), other.state(g));
  }
}

void GroupTable::merge_all(const std::vector<const GroupTable*>& tables, int threads,
                           const std::function<void()>& inputs_done,
                           std::vector<std::vector<uint32_t>>* renumbered) {
  size_t total = 0;
  for (const GroupTable* t : tables) total += t->size();
  if (renumbered) {
    renumbered->assign(tables.size() + 1, {});
    for (size_t i = 0; i < tables.size(); ++i) (*renumbered)[i].resize(tables[i]->size());
  }
  // Below this many groups the hand-over to threads costs more than it saves.
  constexpr size_t kSerialGroups = 1 << 15;
  if (threads <= 1 || total < kSerialGroups) {
    for (size_t i = 0; i < tables.size(); ++i) merge_from(*tables[i], renumbered ? (*renumbered)[i].data() : nullptr);
    if (inputs_done) inputs_done();
    return;
  }
  std::vector<const GroupTable*> inputs = tables;
  GroupTable mine(layout_);  // this table's own groups are folded like the others'
  if (size()) {
    mine = std::move(*this);
    *this = GroupTable(layout_);
    inputs.push_back(&mine);
  }
  try {
    const size_t nparts = static_cast<size_t>(threads);
    auto part_of = [nparts](uint64_t h) { return hash_part(h, nparts); };
    // Each table's groups listed by partition in one pass over it, so that a
    // partition's thread reads only its own groups.
    std::vector<std::vector<std::vector<uint32_t>>> listed(inputs.size(), std::vector<std::vector<uint32_t>>(nparts));
    parallel_for(inputs.size(), threads, [&](size_t i, int) {
      const GroupTable& t = *inputs[i];
      for (size_t g = 0; g < t.size(); ++g) listed[i][part_of(t.hashes_[g])].push_back(static_cast<uint32_t>(g));
    });
    std::vector<GroupTable> parts;
    parts.reserve(nparts);
    for (size_t p = 0; p < nparts; ++p) parts.emplace_back(layout_);
    // Where each input group goes (inputs[i] is tables[i], then mine): its
    // group in its partition, then (once the partitions' sizes are known)
    // that plus the groups before the partition.
    if (renumbered && mine.size()) renumbered->back().resize(mine.size());
    parallel_for(nparts, threads, [&](size_t p, int) {
      GroupTable& out = parts[p];
      std::vector<Value> keys(nkeys_ + 1);
      size_t most = 0;
      for (const auto& l : listed) most = std::max(most, l[p].size());
      out.reserve(most);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const GroupTable& t = *inputs[i];
        for (const uint32_t g : listed[i][p]) {
          t.keys_of(g, keys.data());
          char* dst = out.find_or_insert(keys.data(), t.hashes_[g]);
          if (renumbered) (*renumbered)[i][g] = static_cast<uint32_t>(out.group_of(dst));
          bool copied = false;
          for (const auto& a : layout_->aggs) copied |= agg_merge(a, dst, t.state(g));
          if (copied) out.stabilize_strings(dst);
        }
      }
    });
    if (renumbered) {
      std::vector<uint32_t> before(nparts, 0);  // this table is empty now: the parts start at 0
      for (size_t p = 1; p < nparts; ++p) before[p] = before[p - 1] + static_cast<uint32_t>(parts[p - 1].size());
      parallel_for(inputs.size(), threads, [&](size_t i, int) {
        const GroupTable& t = *inputs[i];
        for (size_t g = 0; g < t.size(); ++g) (*renumbered)[i][g] += before[part_of(t.hashes_[g])];
      });
    }
    listed.clear();
    if (inputs_done) inputs_done();
    append_disjoint(parts, threads);
  } catch (...) {
    *this = std::move(mine);  // as it was
    throw;
  }
}

void GroupTable::append_disjoint(std::vector<GroupTable>& parts, int threads) {
  std::vector<size_t> first(parts.size() + 1, size());
  for (size_t i = 0; i < parts.size(); ++i) first[i + 1] = first[i] + parts[i].size();
  if (first.back() >= 0xfffffffeull) throw ResourceError("more than 4 billion groups");  // as insert_new
  hashes_.resize(first.back());
  blocks_.resize(first.back() * block_bytes_);
  parallel_for(parts.size(), threads, [&](size_t i, int) {
    const GroupTable& p = parts[i];
    if (p.size() == 0) return;  // an empty part's vectors may hold no buffer: memcpy from null is UB
    std::memcpy(hashes_.data() + first[i], p.hashes_.data(), p.size() * sizeof(uint64_t));
    std::memcpy(blocks_.data() + first[i] * block_bytes_, p.blocks_.data(), p.size() * block_bytes_);
  });
  for (auto& p : parts) strings_.absorb(std::move(p.strings_));
  indexed_ = false;
}

PartitionedGroups::PartitionedGroups(const GroupLayout* layout, size_t nparts) : layout_(layout) {
  WCSV_EXPECTS(nparts && (nparts & (nparts - 1)) == 0, "parts: a power of two");
  parts_.reserve(nparts);
  for (size_t p = 0; p < nparts; ++p) parts_.emplace_back(layout);
}

size_t PartitionedGroups::size() const {
  size_t n = 0;
  for (const GroupTable& t : parts_) n += t.size();
  return n;
}

size_t PartitionedGroups::memory_bytes() const {
  size_t n = 0;
  for (const GroupTable& t : parts_) n += t.memory_bytes();
  return n;
}

std::vector<const GroupTable*> PartitionedGroups::tables() const {
  std::vector<const GroupTable*> out;
  for (const GroupTable& t : parts_)
    if (t.size()) out.push_back(&t);
  return out;
}

void PartitionedGroups::fold(const std::vector<PartitionedGroups*>& others, int threads) {
  parallel_for(parts_.size(), threads, [&](size_t p, int) {
    std::vector<GroupTable*> kind{&parts_[p]};
    for (PartitionedGroups* o : others) kind.push_back(&o->parts_[p]);
    auto largest = std::max_element(kind.begin(), kind.end(),
                                    [](const GroupTable* a, const GroupTable* b) { return a->size() < b->size(); });
    std::swap(*kind[0], **largest);
    for (size_t i = 1; i < kind.size(); ++i) {
      if (kind[i]->size() == 0) continue;
      kind[0]->merge_from(*kind[i]);
      *kind[i] = GroupTable(layout_);
    }
  });
}

}  // namespace warpcsv
