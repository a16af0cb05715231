#include "result/sorted_parts.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/parallel.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

// ---- writing and sampling -------------------------------------------------------------------

SortedPartWriter::SortedPartWriter(const GroupRecords& records, const std::string& dir, size_t sample_every)
    : records_(&records) {
  part_.file = std::make_unique<SpillFile>(dir);
  part_.sample_every = std::max<size_t>(sample_every, 1);
}

void SortedPartWriter::add(const GroupTable& t, size_t g) {
  const size_t start = buffer_.size();
  const uint64_t offset = part_.file->size() + start;
  records_->append(t, g, buffer_);
  if (written_++ % part_.sample_every == 0) {
    part_.samples.insert(part_.samples.end(), buffer_.begin() + static_cast<ptrdiff_t>(start), buffer_.end());
    part_.sample_offsets.push_back(offset);
  }
  if (buffer_.size() >= kSpillBufferBytes) GroupRecords::flush(*part_.file, buffer_);
}

SortedPart SortedPartWriter::finish() {
  GroupRecords::flush(*part_.file, buffer_);
  return std::move(part_);
}

SortedPart sample_sorted_file(const GroupRecords& records, std::unique_ptr<SpillFile> file, size_t sample_every) {
  SortedPart part;
  part.sample_every = std::max<size_t>(sample_every, 1);
  GroupRecords::Reader reader(records, *file);
  for (size_t i = 0; reader.next(); ++i) {
    if (i % part.sample_every) continue;
    // The record again as written: hash, block (its pointers mean nothing), strings.
    const uint64_t hash = reader.hash();
    const char* h = reinterpret_cast<const char*>(&hash);
    part.samples.insert(part.samples.end(), h, h + 8);
    part.samples.insert(part.samples.end(), reader.block(), reader.block() + records.block_bytes());
    const StrRef s = reader.strings();
    part.samples.insert(part.samples.end(), s.ptr, s.ptr + s.len);
    part.sample_offsets.push_back(reader.record_offset());
  }
  part.file = std::move(file);
  return part;
}

namespace {

// ---- reading records in key order ------------------------------------------------------------

// The records in bytes [p, end), one at a time, each with its keys unpacked
// for comparing in output order (keys ascending, nulls last, as
// result/order.hpp orders them). The bytes must outlive the cursor's use.
class RecordCursor {
 public:
  RecordCursor(const GroupRecords& records, const GroupLayout& layout)
      : records_(&records),
        types_(&layout.key_types),
        block_(records.block_bytes()),
        keys_(layout.key_types.size()),
        ranks_(layout.key_types.size()) {}

  void reset(const char* p, const char* end) {
    p_ = p;
    end_ = end;
    live_ = false;
  }

  // The next record; false (and not live) at the end of the bytes.
  bool next() {
    live_ = p_ < end_;
    if (!live_) return false;
    uint64_t hash;
    record_ = p_;
    p_ += records_->read_record(p_, static_cast<size_t>(end_ - p_), &hash, block_.get());
    records_->packed().unpack_all(block_.get(), keys_.data());
    for (size_t k = 0; k < keys_.size(); ++k) ranks_[k] = key_rank(keys_[k], (*types_)[k]);
    return true;
  }
  void stop() { live_ = false; }

  bool live() const { return live_; }
  // The record's block, its strings pointing into the bytes read.
  const char* block() const { return block_.get(); }
  // The record's strings, one after another, as block() points at them.
  StrRef strings() const {
    const char* s = record_ + 8 + records_->block_bytes();
    return StrRef{s, static_cast<uint32_t>(p_ - s)};
  }

  // <0, 0 or >0 as this record's keys sort before, with or after o's.
  int compare(const RecordCursor& o) const {
    for (size_t k = 0; k < keys_.size(); ++k)
      if (const int c = compare_ranked(ranks_[k], keys_[k], o.ranks_[k], o.keys_[k], (*types_)[k])) return c;
    return 0;
  }

 private:
  const GroupRecords* records_;
  const std::vector<Type>* types_;
  AlignedBlock block_;  // a member: keys_ point into it (short strings)
  std::vector<Value> keys_;
  std::vector<KeyRank> ranks_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  const char* record_ = nullptr;
  bool live_ = false;
};

// Sources merged by their heads through a tree of losers: taking the winner
// replays one path of log2(k) comparisons. first(a, b) says whether source
// a's head goes out before b's (a source at its end goes last).
class LoserTree {
 public:
  template <class First>
  void start(size_t k, First&& first) {
    k_ = k;
    losers_.assign(std::max<size_t>(k, 1), 0);
    winner_ = k ? play(1, first) : 0;
  }
  size_t winner() const { return winner_; }
  // Source r's head changed: its path to the root is played again.
  template <class First>
  void replay(size_t r, First&& first) {
    size_t candidate = r;
    for (size_t p = (r + k_) / 2; p >= 1; p /= 2)
      if (first(losers_[p], candidate)) std::swap(losers_[p], candidate);
    winner_ = candidate;
  }

 private:
  // Nodes 1..2k-1, node p's children 2p and 2p + 1, source i at node k + i;
  // losers_[p] holds the source that lost at node p. Returns the winner below p.
  template <class First>
  size_t play(size_t p, First& first) {
    if (p >= k_) return p - k_;
    const size_t a = play(2 * p, first), b = play(2 * p + 1, first);
    const bool a_wins = first(a, b);
    losers_[p] = a_wins ? b : a;
    return a_wins ? a : b;
  }

  size_t k_ = 0, winner_ = 0;
  std::vector<size_t> losers_;
};

// Whether cursor a's record goes out before b's: no two parts share a
// group, so live heads never tie.
bool goes_first(const std::vector<RecordCursor>& c, size_t a, size_t b) {
  if (!c[a].live() || !c[b].live()) return c[a].live() && !c[b].live();
  return c[a].compare(c[b]) < 0;
}

// A range of the key order: per part, the bytes that hold its records
// (and, before them, fewer than kSampleEvery records of the range before),
// and the samples that bound it: records from `lower` on, before `upper`.
struct KeyRange {
  std::vector<uint64_t> begin, end;  // per part
  size_t lower_part = SIZE_MAX, lower_sample = 0;  // SIZE_MAX: from the start
  size_t upper_part = SIZE_MAX, upper_sample = 0;  // SIZE_MAX: to the end
};

// Bytes kept from one batch to the next, grown when a range needs more:
// not zeroed, and their pages touched once, not once a batch.
class ReusedBytes {
 public:
  char* get(size_t n) {
    if (n > capacity_) {  // with room to spare: ranges differ a little in size
      capacity_ = n + n / 4;
      bytes_.reset(new char[capacity_]);  // aligned for any state (operator new)
    }
    return bytes_.get();
  }
  const char* data() const { return bytes_.get(); }

 private:
  std::unique_ptr<char[]> bytes_;
  size_t capacity_ = 0;
};

// A range's groups, merged: blocks in output order, their strings apart;
// and the bytes read for it.
struct MergedRange {
  ReusedBytes read, blocks, strings;
  size_t n = 0;
};

class RangeMergedParts : public OrderedGroups {
 public:
  RangeMergedParts(const GroupRecords& records, const GroupLayout& layout, std::vector<SortedPart> parts,
                   size_t groups, size_t run_rows, int threads, uint64_t memory_budget, size_t range_records)
      : records_(records),
        layout_(layout),
        parts_(std::move(parts)),
        n_(groups),
        run_rows_(std::max<size_t>(run_rows, 1)),
        threads_(std::max(threads, 1)) {
    // Where each sample's record starts in its part's samples.
    sample_at_.resize(parts_.size());
    uint64_t bytes = 0;
    AlignedBlock block(records_.block_bytes());
    for (size_t i = 0; i < parts_.size(); ++i) {
      const SortedPart& part = parts_[i];
      for (size_t at = 0; at < part.samples.size();) {
        sample_at_[i].push_back(at);
        uint64_t hash;
        at += records_.read_record(part.samples.data() + at, part.samples.size() - at, &hash, block.get());
      }
      if (sample_at_[i].size() != part.sample_offsets.size())
        throw InternalError("internal error: a sorted part's samples do not match their offsets");
      bytes += part.file->size();
    }
    // A batch (a range a thread, each read in and merged out) within the
    // budget, and no range over 64 MiB of records.
    const uint64_t record_bytes = std::max<uint64_t>(1, bytes / std::max<size_t>(n_, 1));
    const uint64_t budget = memory_budget ? memory_budget : (1ull << 30);
    const uint64_t range_bytes =
        std::clamp<uint64_t>(budget / (4 * static_cast<uint64_t>(threads_)), 1 << 20, 64 << 20);
    if (!range_records) range_records = range_bytes / record_bytes;
    const size_t sample_every = parts_.empty() ? 1 : parts_[0].sample_every;
    plan_ranges(std::max<size_t>(1, range_records / sample_every));
  }

  size_t size() const override { return n_; }

  GroupRun next() override {
    for (;;) {  // to a range with groups left, merging the next batch when this one is out
      if (current_ < batch_n_ && out_ < batch_[current_].n) break;
      if (current_ < batch_n_) {
        ++current_;
        out_ = 0;
        continue;
      }
      if (next_range_ == ranges_.size()) return GroupRun{};
      merge_batch();
    }
    const MergedRange& range = batch_[current_];
    const size_t bytes = records_.block_bytes();
    GroupRun run;
    run.n = std::min(run_rows_, range.n - out_);
    run.keys.base = range.blocks.data() + out_ * bytes;
    run.keys.stride = bytes;
    run.keys.packed = &records_.packed();
    run.states = run.keys.base + (bytes - layout_.state_bytes);
    run.state_stride = bytes;
    out_ += run.n;
    return run;
  }

 private:
  // Cuts the key order every `samples_per_range` samples of the merged
  // samples. At a cut, the sample taken next (the upper bound) is the first
  // of its part not yet taken; in every other part the next sample is past
  // the bound and the one before it (taken) is not.
  void plan_ranges(size_t samples_per_range) {
    const size_t k = parts_.size();
    std::vector<RecordCursor> heads(k, RecordCursor(records_, layout_));
    std::vector<size_t> taken(k, 0);
    for (size_t i = 0; i < k; ++i) {
      heads[i].reset(parts_[i].samples.data(), parts_[i].samples.data() + parts_[i].samples.size());
      heads[i].next();
    }
    auto first = [&](size_t a, size_t b) { return goes_first(heads, a, b); };
    LoserTree tree;
    tree.start(k, first);
    KeyRange range;
    range.begin.assign(k, 0);
    for (size_t n = 0; k && heads[tree.winner()].live(); ++n) {
      const size_t w = tree.winner();
      if (n && n % samples_per_range == 0) {
        KeyRange next;
        next.begin.resize(k);
        range.end.resize(k);
        for (size_t i = 0; i < k; ++i) {
          const std::vector<uint64_t>& offsets = parts_[i].sample_offsets;
          range.end[i] = taken[i] < offsets.size() ? offsets[taken[i]] : parts_[i].file->size();
          next.begin[i] = i == w ? offsets[taken[i]] : taken[i] ? offsets[taken[i] - 1] : 0;
        }
        range.upper_part = next.lower_part = w;
        range.upper_sample = next.lower_sample = taken[w];
        ranges_.push_back(std::move(range));
        range = std::move(next);
      }
      ++taken[w];
      heads[w].next();
      tree.replay(w, first);
    }
    range.end.resize(k);
    for (size_t i = 0; i < k; ++i) range.end[i] = parts_[i].file->size();
    ranges_.push_back(std::move(range));
  }

  // The next ranges, a thread each, merged.
  void merge_batch() {
    const size_t n = std::min<size_t>(static_cast<size_t>(threads_), ranges_.size() - next_range_);
    if (batch_.size() < n) batch_.resize(n);
    parallel_for(n, threads_, [&](size_t i, int) { merge_range(ranges_[next_range_ + i], batch_[i]); });
    batch_n_ = n;
    next_range_ += n;
    current_ = out_ = 0;
  }

  // A sample's record, its keys unpacked into `c` (which then points into the sample).
  void read_sample(size_t part, size_t sample, RecordCursor& c) const {
    const std::vector<char>& s = parts_[part].samples;
    c.reset(s.data() + sample_at_[part][sample], s.data() + s.size());
    c.next();
  }

  void merge_range(const KeyRange& range, MergedRange& out) const {
    const size_t k = parts_.size();
    RecordCursor lower(records_, layout_), upper(records_, layout_);
    if (range.lower_part != SIZE_MAX) read_sample(range.lower_part, range.lower_sample, lower);
    if (range.upper_part != SIZE_MAX) read_sample(range.upper_part, range.upper_sample, upper);
    uint64_t total = 0;
    for (size_t i = 0; i < k; ++i) total += range.end[i] - range.begin[i];
    char* read = out.read.get(total);
    std::vector<RecordCursor> heads(k, RecordCursor(records_, layout_));
    auto advance = [&](size_t i) {
      if (heads[i].next() && upper.live() && heads[i].compare(upper) >= 0) heads[i].stop();
    };
    for (size_t i = 0; i < k; ++i) {
      const size_t n = range.end[i] - range.begin[i];
      if (parts_[i].file->read(range.begin[i], read, n) != n)
        throw InternalError("internal error: a sorted part ends before its samples say");
      heads[i].reset(read, read + n);
      read += n;
      advance(i);
      while (heads[i].live() && lower.live() && heads[i].compare(lower) < 0) advance(i);  // the range before's
    }
    // Room for every record read: a block each at most, and strings no longer than read.
    const size_t block_bytes = records_.block_bytes();
    char* blocks = out.blocks.get(total / (8 + block_bytes) * block_bytes);
    char* strings = out.strings.get(total);
    out.n = 0;
    auto first = [&](size_t a, size_t b) { return goes_first(heads, a, b); };
    LoserTree tree;
    tree.start(k, first);
    while (k && heads[tree.winner()].live()) {
      const size_t w = tree.winner();
      char* block = blocks + out.n++ * block_bytes;
      std::memcpy(block, heads[w].block(), block_bytes);
      // Its strings, copied to live as long as the range.
      const StrRef s = heads[w].strings();
      if (s.len) {
        std::memcpy(strings, s.ptr, s.len);
        records_.point_strings(block, strings);
        strings += s.len;
      }
      advance(w);
      tree.replay(w, first);
    }
  }

  GroupRecords records_;
  const GroupLayout& layout_;
  std::vector<SortedPart> parts_;
  std::vector<std::vector<size_t>> sample_at_;  // per part, where each sample starts in its samples
  std::vector<KeyRange> ranges_;
  size_t n_, run_rows_;
  int threads_;
  size_t next_range_ = 0;           // the first range not yet merged
  std::vector<MergedRange> batch_;  // ranges merged (the first batch_n_), being handed out
  size_t batch_n_ = 0;
  size_t current_ = 0, out_ = 0;    // in batch_: the range, and its groups handed out
};

}  // namespace

std::unique_ptr<OrderedGroups> merge_sorted_parts(const GroupRecords& records, const GroupLayout& layout,
                                                  std::vector<SortedPart> parts, size_t groups, size_t run_rows,
                                                  int threads, uint64_t memory_budget, size_t range_records) {
  return std::make_unique<RangeMergedParts>(records, layout, std::move(parts), groups, run_rows, threads,
                                            memory_budget, range_records);
}

std::unique_ptr<OrderedGroups> merge_sorted_records(const GroupLayout& layout,
                                                    std::vector<std::unique_ptr<SpillFile>> files, size_t groups,
                                                    size_t run_rows, int threads) {
  const GroupRecords records(layout);
  std::vector<SortedPart> parts(files.size());
  parallel_for(files.size(), threads,
               [&](size_t i, int) { parts[i] = sample_sorted_file(records, std::move(files[i])); });
  return merge_sorted_parts(records, layout, std::move(parts), groups, run_rows, threads, 0);
}

}  // namespace warpcsv
