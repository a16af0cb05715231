#include "result/spill.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {

constexpr size_t kBufferBytes = 256 << 10;  // per file written or read

[[noreturn]] void spill_failed(const std::string& what, const std::string& dir) {
  throw ResourceError(fmt::format("{} the groups spilled past a memory limit in {}: {}; set TMPDIR to a directory "
                                  "with room, or raise --memory-limit (--gpu-memory-limit for the GPUs' groups)",
                                  what, dir, std::strerror(errno)));
}

}  // namespace

std::string spill_directory() {
  const char* d = std::getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

SpillFile::SpillFile(const std::string& dir) : dir_(dir) {
#ifdef O_TMPFILE
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
    std::string path = dir + "/warpcsv-spill-XXXXXX";
    fd_ = ::mkstemp(path.data());
    if (fd_ >= 0) ::unlink(path.c_str());
  }
  if (fd_ < 0) spill_failed("cannot make a file for", dir);
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::append(const char* p, size_t n) {
  while (n) {
    const ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(size_));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) spill_failed("cannot write", dir_);
    p += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<uint64_t>(w);
  }
}

size_t SpillFile::read(uint64_t offset, char* to, size_t n) const {
  size_t got = 0;
  while (got < n && offset + got < size_) {
    const ssize_t r = ::pread(fd_, to + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) spill_failed("cannot read back", dir_);
    got += static_cast<size_t>(r);
  }
  return got;
}

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
  if (buffer.size() >= kBufferBytes) flush(to, buffer);
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
    : records_(&records), file_(&file), buf_(kBufferBytes), block_(records.block_bytes()) {}

bool GroupRecords::Reader::fill(size_t n) {
  if (end_ - at_ >= n) return true;
  std::memmove(buf_.data(), buf_.data() + at_, end_ - at_);
  offset_ += at_;
  end_ -= at_;
  at_ = 0;
  if (buf_.size() < n) buf_.resize(std::max(n, 2 * buf_.size()));
  end_ += file_->read(offset_ + end_, buf_.data() + end_, buf_.size() - end_);
  return end_ >= n;
}

bool GroupRecords::Reader::next() {
  const size_t head = 8 + records_->block_bytes();
  if (!fill(head)) return false;
  std::memcpy(&hash_, buf_.data() + at_, 8);
  std::memcpy(block_.data(), buf_.data() + at_ + 8, records_->block_bytes());
  at_ += head;
  size_t total = 0;
  records_->each_string(block_.data(), [&](StrRef s) { total += s.len; });
  if (!fill(total)) throw InternalError("a spill file ends inside a record");
  strings_.assign(buf_.data() + at_, buf_.data() + at_ + total);
  at_ += total;
  records_->point_strings(block_.data(), strings_.data());
  return true;
}

// ---- spilled groups --------------------------------------------------------------------------

SpilledGroups::SpilledGroups(const GroupLayout& layout, size_t nparts, uint64_t memory_budget)
    : layout_(&layout), records_(layout), dir_(spill_directory()), files_(nparts), memory_budget_(memory_budget) {}

uint64_t SpilledGroups::append_to_part(size_t p, const GroupTable& t, const uint32_t* groups, size_t n) {
  if (!files_[p]) files_[p] = std::make_unique<SpillFile>(dir_);
  const uint64_t before = files_[p]->size();
  std::vector<char> buffer;
  for (size_t i = 0; i < n; ++i) records_.write(t, groups ? groups[i] : i, *files_[p], buffer);
  GroupRecords::flush(*files_[p], buffer);
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

namespace {

// The sorted parts, merged by their keys as they are read, through a tree
// of losers: taking a record replays one path of log2(parts) comparisons,
// where a heap's pop and push took about twice as many. No two parts share
// a group, so the heads never tie.
class MergedSortedParts : public OrderedGroups {
 public:
  MergedSortedParts(const GroupRecords& records, const GroupLayout& layout,
                    std::vector<std::unique_ptr<SpillFile>> files, size_t groups, size_t run_rows)
      : records_(records), layout_(layout), files_(std::move(files)), n_(groups), run_rows_(run_rows) {
    const size_t k = files_.size();
    readers_.reserve(k);
    head_keys_.assign(k, std::vector<Value>(layout_.key_types.size() + 1));
    head_ranks_.assign(k, std::vector<KeyRank>(layout_.key_types.size()));
    live_.assign(k, false);
    for (const auto& f : files_) {
      readers_.emplace_back(records_, *f);
      live_[readers_.size() - 1] = advance(readers_.size() - 1);
    }
    losers_.assign(k, 0);
    if (k) winner_ = play(1);
  }

  size_t size() const override { return n_; }

  GroupRun next() override {
    run_blocks_.clear();
    run_strings_ = StringArena();
    const size_t bytes = records_.block_bytes();
    size_t n = 0;
    while (n < run_rows_ && !files_.empty() && live_[winner_]) {
      const size_t r = winner_;
      const size_t at = run_blocks_.size();
      run_blocks_.resize(at + bytes);
      std::memcpy(run_blocks_.data() + at, readers_[r].block(), bytes);
      // Its strings, copied to live as long as the run.
      const StrRef strings = readers_[r].strings();
      if (strings.len) records_.point_strings(run_blocks_.data() + at, run_strings_.add(strings).ptr);
      ++n;
      live_[r] = advance(r);
      replay(r);
    }
    GroupRun run;
    run.n = n;
    run.keys.base = run_blocks_.data();
    run.keys.stride = bytes;
    run.keys.packed = &records_.packed();
    run.states = run_blocks_.data() + (bytes - layout_.state_bytes);
    run.state_stride = bytes;
    return run;
  }

 private:
  // The tree over k parts: nodes 1..2k-1, node p's children 2p and 2p + 1,
  // part i at node k + i; losers_[p] holds the part that lost at node p.

  // The winner below node p, recording the losers on the way.
  size_t play(size_t p) {
    const size_t k = files_.size();
    if (p >= k) return p - k;
    const size_t a = play(2 * p), b = play(2 * p + 1);
    const bool a_wins = first(a, b);
    losers_[p] = a_wins ? b : a;
    return a_wins ? a : b;
  }

  // Part r's head changed: its path to the root is played again.
  void replay(size_t r) {
    size_t candidate = r;
    for (size_t p = (r + files_.size()) / 2; p >= 1; p /= 2)
      if (first(losers_[p], candidate)) std::swap(losers_[p], candidate);
    winner_ = candidate;
  }

  // Whether part a's head goes out before part b's: a part read to its end goes last.
  bool first(size_t a, size_t b) const {
    if (!live_[a] || !live_[b]) return live_[a] && !live_[b];
    return sorts_before(a, b);
  }

  // Reader r's next record, its keys unpacked for comparing; false at its end.
  bool advance(size_t r) {
    if (!readers_[r].next()) return false;
    records_.packed().unpack_all(readers_[r].block(), head_keys_[r].data());
    for (size_t k = 0; k < layout_.key_types.size(); ++k)
      head_ranks_[r][k] = key_rank(head_keys_[r][k], layout_.key_types[k]);
    return true;
  }

  // Keys ascending, nulls last, as the result is ordered (result/order.hpp).
  bool sorts_before(size_t a, size_t b) const {
    for (size_t k = 0; k < layout_.key_types.size(); ++k) {
      const int c = compare_ranked(head_ranks_[a][k], head_keys_[a][k], head_ranks_[b][k], head_keys_[b][k],
                                   layout_.key_types[k]);
      if (c) return c < 0;
    }
    return a < b;
  }

  GroupRecords records_;
  const GroupLayout& layout_;
  std::vector<std::unique_ptr<SpillFile>> files_;
  std::vector<GroupRecords::Reader> readers_;
  std::vector<std::vector<Value>> head_keys_;  // per reader, its record's keys
  std::vector<std::vector<KeyRank>> head_ranks_;
  std::vector<bool> live_;  // per reader, whether it holds a record
  std::vector<size_t> losers_;
  size_t winner_ = 0;
  size_t n_, run_rows_;
  std::vector<char> run_blocks_;
  StringArena run_strings_;
};

}  // namespace

std::unique_ptr<OrderedGroups> merge_sorted_records(const GroupLayout& layout,
                                                    std::vector<std::unique_ptr<SpillFile>> files, size_t groups,
                                                    size_t run_rows) {
  return std::make_unique<MergedSortedParts>(GroupRecords(layout), layout, std::move(files), groups, run_rows);
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
  std::vector<std::unique_ptr<SpillFile>> sorted_files(spilled.size());
  std::atomic<size_t> groups{0};
  std::atomic<uint64_t> bytes{0};
  parallel_for(spilled.size(), workers, [&](size_t i, int) {
    std::unique_ptr<SpillFile>& file = files_[spilled[i]];
    GroupTable part(layout_);
    GroupRecords::Reader reader(records_, *file);
    while (reader.next()) part.merge_block(reader.hash(), reader.block());
    file.reset();  // read: its disk space goes
    part.drop_index();
    auto out = std::make_unique<SpillFile>(dir_);
    std::vector<char> buffer;
    SortedHostGroups ordered(plan, {&part}, nullptr, 1, run_rows);
    for (GroupRun run = ordered.next(); run.n; run = ordered.next())
      for (size_t r = 0; r < run.n; ++r) records_.write(part, run.group(r), *out, buffer);
    GroupRecords::flush(*out, buffer);
    bytes += out->size();
    groups += part.size();
    sorted_files[i] = std::move(out);
  });
  bytes_ += bytes;
  return std::make_unique<MergedSortedParts>(records_, *layout_, std::move(sorted_files), groups, run_rows);
}

}  // namespace warpcsv
