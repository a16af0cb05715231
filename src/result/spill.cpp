#include "result/spill.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "result/sorted_parts.hpp"
#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

// ---- records -------------------------------------------------------------------------------

GroupRecords::GroupRecords(const GroupLayout& layout)
    : layout_(&layout), packed_(layout.key_types, layout.narrow_keys) {
  key_bytes_ = (packed_.bytes() + kAggStateAlign - 1) / kAggStateAlign * kAggStateAlign;
  block_bytes_ = key_bytes_ + layout.state_bytes;
}

namespace {
// Where agg `a`'s string is in a block's states.
const Value* string_state(const char* states, const AggDesc& a) {
  const char* state = states + a.offset;
  return a.op == AggOp::Min || a.op == AggOp::Max ? &reinterpret_cast<const ExtremeState*>(state)->v
                                                  : &reinterpret_cast<const OrderedState*>(state)->v;
}
}  // namespace

template <class Fn>
void GroupRecords::each_string(const char* block, Fn&& fn) const {
  for (size_t k = 0; k < layout_->key_types.size(); ++k) {
    if (layout_->key_types[k] != Type::String) continue;
    const Value v = packed_.unpack(block, k);
    if (!v.null && PackedKeys::needs_copy(v)) fn(v.s);
  }
  for (const AggDesc& a : layout_->aggs) {
    if (!agg_holds_string(a)) continue;
    const Value* v = string_state(block + key_bytes_, a);
    if (!v->null && v->s.len) fn(v->s);
  }
}

void GroupRecords::point_strings(char* block, const char* at) const {
  for (size_t k = 0; k < layout_->key_types.size(); ++k) {
    if (layout_->key_types[k] != Type::String) continue;
    const Value v = packed_.unpack(block, k);
    if (v.null || !PackedKeys::needs_copy(v)) continue;
    packed_.set_string(block, k, at);
    at += v.s.len;
  }
  for (const AggDesc& a : layout_->aggs) {
    if (!agg_holds_string(a)) continue;
    auto* v = const_cast<Value*>(string_state(block + key_bytes_, a));
    if (v->null || !v->s.len) continue;
    v->s.ptr = at;
    at += v->s.len;
  }
}

void GroupRecords::write(const GroupTable& t, size_t g, SpillFile& to, std::vector<char>& buffer) const {
  append(t, g, buffer);
  if (buffer.size() >= kSpillBufferBytes) flush(to, buffer);
}

size_t GroupRecords::read_record(const char* p, size_t n, uint64_t* hash, char* block) const {
  if (n < 8 + block_bytes_) throw InternalError("internal error: a group record cut short");
  std::memcpy(hash, p, 8);
  std::memcpy(block, p + 8, block_bytes_);
  size_t total = 0;
  each_string(block, [&](StrRef s) { total += s.len; });
  if (n - 8 - block_bytes_ < total) throw InternalError("internal error: a group record's strings cut short");
  point_strings(block, p + 8 + block_bytes_);
  return 8 + block_bytes_ + total;
}

void GroupRecords::each_record(const char* p, size_t n,
                               const std::function<void(uint64_t, const char*)>& fn) const {
  AlignedBlock block(block_bytes_);
  uint64_t hash = 0;
  for (size_t at = 0; at < n;) {
    at += read_record(p + at, n - at, &hash, block.get());
    fn(hash, block.get());
  }
}

void GroupRecords::append(const GroupTable& t, size_t g, std::vector<char>& buffer) const {
  const uint64_t hash = t.hash_of(g);
  const char* block = t.block_of(g);  // aligned, unlike its copy in the buffer
  const char* h = reinterpret_cast<const char*>(&hash);
  buffer.insert(buffer.end(), h, h + 8);
  buffer.insert(buffer.end(), block, block + block_bytes_);
  // The strings' bytes follow; the block's pointers to them mean nothing once read back.
  each_string(block, [&](StrRef s) { buffer.insert(buffer.end(), s.ptr, s.ptr + s.len); });
}

void GroupRecords::flush(SpillFile& to, std::vector<char>& buffer) {
  to.append(buffer.data(), buffer.size());
  buffer.clear();
}

GroupRecords::Reader::Reader(const GroupRecords& records, const SpillFile& file)
    : records_(&records), in_(file, kSpillBufferBytes), block_(records.block_bytes()) {}

bool GroupRecords::Reader::next() {
  const size_t head = 8 + records_->block_bytes();
  if (!in_.fill(head)) return false;
  record_offset_ = in_.offset();
  std::memcpy(&hash_, in_.data(), 8);
  std::memcpy(block_.data(), in_.data() + 8, records_->block_bytes());
  in_.skip(head);
  size_t total = 0;
  records_->each_string(block_.data(), [&](StrRef s) { total += s.len; });
  if (!in_.fill(total)) throw InternalError("a spill file ends inside a record");
  strings_.assign(in_.data(), in_.data() + total);
  in_.skip(total);
  records_->point_strings(block_.data(), strings_.data());
  return true;
}

// ---- spilled groups --------------------------------------------------------------------------

SpilledGroups::SpilledGroups(const GroupLayout& layout, size_t nparts, uint64_t memory_budget)
    : layout_(&layout), records_(layout), dir_(spill_directory()), files_(nparts), memory_budget_(memory_budget) {}

std::string SpilledGroups::describe_bytes() const {
  return fmt::format("{:.1f} MiB of records, {:.1f} MiB in {}", static_cast<double>(bytes_) / (1 << 20),
                     static_cast<double>(stored_) / (1 << 20), dir_);
}

uint64_t SpilledGroups::append_to_part(size_t p, const GroupTable& t, const uint32_t* groups, size_t n) {
  if (!files_[p]) files_[p] = std::make_unique<SpillFile>(dir_);
  const uint64_t before = files_[p]->size(), stored_before = files_[p]->stored_bytes();
  std::vector<char> buffer;
  for (size_t i = 0; i < n; ++i) records_.write(t, groups ? groups[i] : i, *files_[p], buffer);
  GroupRecords::flush(*files_[p], buffer);
  stored_ += files_[p]->stored_bytes() - stored_before;
  return files_[p]->size() - before;
}

void SpilledGroups::spill(std::vector<GroupTable>& parts, int threads) {
  const size_t n = std::min(parts.size(), files_.size());
  std::atomic<uint64_t> bytes{0};
  parallel_for(n, threads, [&](size_t p, int) {
    GroupTable& t = parts[p];
    if (t.size() == 0) return;
    bytes += append_to_part(p, t, nullptr, t.size());
    t = GroupTable(layout_);
  });
  bytes_ += bytes;
  ++spills_;
}

void SpilledGroups::spill_table(const GroupTable& t, int threads) {
  if (t.size() == 0) return;
  // The groups in part order (a counting sort), so each part's file is
  // written by one thread.
  const size_t nparts = files_.size();
  auto part = [&](size_t g) { return static_cast<size_t>(part_bits(t.hash_of(g)) & (nparts - 1)); };
  std::vector<size_t> start(nparts + 1, 0);
  for (size_t g = 0; g < t.size(); ++g) ++start[part(g) + 1];
  for (size_t p = 0; p < nparts; ++p) start[p + 1] += start[p];
  std::vector<uint32_t> order(t.size());
  std::vector<size_t> at(start.begin(), start.end() - 1);
  for (size_t g = 0; g < t.size(); ++g) order[at[part(g)]++] = static_cast<uint32_t>(g);
  std::atomic<uint64_t> bytes{0};
  parallel_for(nparts, threads, [&](size_t p, int) {
    if (start[p] < start[p + 1]) bytes += append_to_part(p, t, order.data() + start[p], start[p + 1] - start[p]);
  });
  bytes_ += bytes;
  ++spills_;
}

std::unique_ptr<OrderedGroups> SpilledGroups::sorted(const Plan& plan, int threads, size_t run_rows) {
  std::vector<size_t> spilled;
  for (size_t p = 0; p < files_.size(); ++p)
    if (files_[p]) spilled.push_back(p);
  // Parts on the threads, one each at a time: memory holds that many parts,
  // each about twice its records' bytes as a table, within the budget.
  uint64_t largest = 1;
  for (size_t p : spilled) largest = std::max<uint64_t>(largest, files_[p]->size());
  int workers = threads;
  if (memory_budget_)
    workers = static_cast<int>(std::clamp<uint64_t>(memory_budget_ / (2 * largest), 1, static_cast<uint64_t>(threads)));
  std::vector<SortedPart> sorted_parts(spilled.size());
  std::atomic<size_t> groups{0};
  std::atomic<uint64_t> bytes{0};
  parallel_for(spilled.size(), workers, [&](size_t i, int) {
    std::unique_ptr<SpillFile>& file = files_[spilled[i]];
    GroupTable part(layout_);
    GroupRecords::Reader reader(records_, *file);
    while (reader.next()) part.merge_block(reader.hash(), reader.block());
    file.reset();  // read: its disk space goes
    part.drop_index();
    SortedPartWriter out(records_, dir_);
    SortedHostGroups ordered(plan, {&part}, nullptr, 1, run_rows);
    for (GroupRun run = ordered.next(); run.n; run = ordered.next())
      for (size_t r = 0; r < run.n; ++r) out.add(part, run.group(r));
    sorted_parts[i] = out.finish();
    bytes += sorted_parts[i].file->size();
    stored_ += sorted_parts[i].file->stored_bytes();
    groups += part.size();
  });
  bytes_ += bytes;
  return merge_sorted_parts(records_, *layout_, std::move(sorted_parts), groups, run_rows, threads, memory_budget_);
}

}  // namespace warpcsv
