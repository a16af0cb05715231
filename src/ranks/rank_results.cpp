#include "ranks/rank_results.hpp"

#include <cstring>

#include <fmt/format.h>

#include "ranks/ranks.hpp"
#include "ranks/wire.hpp"

namespace warpcsv {

namespace {

// Messages between rank 0 and another rank after the scan.
enum Tag : int { kAsk = 1, kChunk = 2, kAllSent = 3, kFailed = 4 };
constexpr char kNext = 'n', kStop = 's';
// Chunk kinds: a frame of rows and issues, or group records.
constexpr char kFrame = 'F', kGroups = 'G';
// Record kinds within a frame.
constexpr char kRow = 'R', kIssue = 'I';

constexpr size_t kChunkBytes = 4 << 20;
constexpr size_t kMadeChunkBytes = 64 << 20;

using wire::get;
using wire::get_text;
using wire::put;
using wire::put_text;

// Whether column c's value carries bytes of its own (Table::copy_owned's rule).
bool carries_string(const OutputColumn& c) { return c.type.type == Type::String; }
bool carries_text(const OutputColumn& c) { return c.type.type != Type::String && c.as_written; }

}  // namespace

std::string encode_issue(const RowIssue& i) {
  std::string s;
  put(s, static_cast<uint8_t>(i.kind));
  put_text(s, i.source);
  put(s, i.line);
  put(s, i.column);
  put(s, static_cast<int32_t>(i.field));
  put_text(s, i.text);
  put_text(s, i.row);
  put_text(s, i.message);
  return s;
}

RowIssue decode_issue(const std::string& s, size_t* at) {
  RowIssue i{};
  i.kind = static_cast<RowIssue::Kind>(get<uint8_t>(s, at));
  i.source = get_text(s, at);
  i.line = get<uint64_t>(s, at);
  i.column = get<uint64_t>(s, at);
  i.field = get<int32_t>(s, at);
  i.text = get_text(s, at);
  i.row = get_text(s, at);
  i.message = get_text(s, at);
  return i;
}

std::string encode_widening(const TypeWidening& w) {
  std::string s;
  put(s, static_cast<int32_t>(w.column));
  put_text(s, w.text);
  return s + encode_issue(w.where);
}

TypeWidening decode_widening(const std::string& s) {
  size_t at = 0;
  const int32_t column = get<int32_t>(s, &at);
  std::string text = get_text(s, &at);
  return TypeWidening{column, std::move(text), decode_issue(s, &at)};
}

void add_rank_stats(ScanStats& stats, double scan_seconds, std::vector<StageTiming>& stages) {
  std::string mine;
  for (uint64_t n : {stats.rows, stats.skipped, stats.padded, stats.bytes, stats.partitions}) put(mine, n);
  put(mine, scan_seconds);
  const std::vector<std::string> all = Ranks::allgather(mine);
  if (Ranks::rank() != 0) return;
  for (size_t r = 0; r < all.size(); ++r) {
    size_t at = 0;
    uint64_t n[5];
    for (auto& x : n) x = get<uint64_t>(all[r], &at);
    const double seconds = get<double>(all[r], &at);
    stages.push_back(StageTiming{fmt::format("rank {}: scan of {} rows", r, n[0]), fmt::format("rank{}", r), seconds,
                                 n[3], 0});
    if (r == 0) continue;
    stats.rows += n[0];
    stats.skipped += n[1];
    stats.padded += n[2];
    stats.bytes += n[3];
    stats.partitions += n[4];
  }
}

std::string describe_rank_results(const Plan& plan) {
  if (!plan.scan.aggregate)
    return "  rank results: each rank's rows and bad rows go to rank 0 in input order after the scan (held in a "
           "temporary file until then), and through its post stages after its own\n";
  if (groups_may_stay(plan))
    return "  rank results: the groups are exchanged by hash after the scan; each rank merges and sorts its range "
           "of them on its threads, and rank 0 merges the sorted ranges (in temporary files) as it finalizes and "
           "writes them\n";
  return "  rank results: each rank's groups (holistic arguments as keys) go to rank 0 as records after the scan "
         "and merge into its table, which is finalized, sorted and written there\n";
}

// ---- a rank other than 0 -------------------------------------------------------------------

RankOutbox::RankOutbox(std::vector<OutputColumn> columns) : columns_(std::move(columns)) {}
RankOutbox::~RankOutbox() = default;

void RankOutbox::add_rows(const Table& t, size_t begin, size_t end) {
  WCSV_EXPECTS(t.width() == columns_.size(), "rows of another shape than the scan's");
  const size_t w = t.width();
  for (size_t r = begin; r < end; ++r) {
    const Value* row = t.row(r);
    frame_.push_back(kRow);
    const char* cells = reinterpret_cast<const char*>(row);
    frame_.insert(frame_.end(), cells, cells + w * sizeof(Value));
    for (size_t c = 0; c < w; ++c) {
      if (row[c].null) continue;
      if (carries_string(columns_[c])) frame_.insert(frame_.end(), row[c].s.ptr, row[c].s.ptr + row[c].s.len);
      else if (carries_text(columns_[c])) frame_.insert(frame_.end(), row[c].text, row[c].text + row[c].text_len);
    }
    if (frame_.size() >= kChunkBytes) end_frame();
  }
}

void RankOutbox::add_issue(const RowIssue& issue) {
  const std::string bytes = encode_issue(issue);
  frame_.push_back(kIssue);
  frame_.insert(frame_.end(), bytes.begin(), bytes.end());
  if (frame_.size() >= kChunkBytes) end_frame();
}

void RankOutbox::end_frame() {
  if (frame_.empty()) return;
  if (!file_) file_ = std::make_unique<SpillFile>(spill_directory());
  file_->append(frame_.data(), frame_.size());
  frame_ends_.push_back(file_->size());
  frame_.clear();
}

void RankOutbox::serve(const GroupTable* groups, const std::vector<std::vector<char>>* made) {
  end_frame();
  std::unique_ptr<GroupRecords> records;
  if (groups) records = std::make_unique<GroupRecords>(groups->layout());
  size_t frame = 0, group = 0;
  size_t segment = 0, in_segment = 0;  // of `made`
  for (;;) {
    int tag = 0;
    const std::string ask = Ranks::receive(0, &tag);
    if (ask.size() != 1 || ask[0] != kNext) return;  // stop: rank 0 has what it wants
    try {
      std::string chunk;
      if (frame < frame_ends_.size()) {
        const uint64_t from = frame ? frame_ends_[frame - 1] : 0, to = frame_ends_[frame];
        chunk.resize(1 + to - from);
        chunk[0] = kFrame;
        if (file_->read(from, chunk.data() + 1, to - from) != to - from)
          throw InternalError("internal error: a rank's frame file came back short");
        ++frame;
      } else if (groups && group < groups->size()) {
        std::vector<char> bytes{kGroups};
        while (group < groups->size() && bytes.size() < kChunkBytes) records->append(*groups, group++, bytes);
        chunk.assign(bytes.begin(), bytes.end());
      } else if (made && segment < made->size()) {
        // Made records go in large pieces, cut anywhere: rank 0 appends them to a file.
        const std::vector<char>& s = (*made)[segment];
        const size_t n = std::min(kMadeChunkBytes, s.size() - in_segment);
        chunk.reserve(1 + n);
        chunk.push_back(kGroups);
        chunk.append(s.data() + in_segment, n);
        in_segment += n;
        if (in_segment == s.size()) ++segment, in_segment = 0;
      } else {
        Ranks::send(0, kAllSent, "");
        return;
      }
      Ranks::send(0, kChunk, chunk);
    } catch (...) {
      Ranks::send(0, kFailed, "");  // rank 0 stops asking; this rank's error is the one agreed on
      throw;
    }
  }
}

// ---- rank 0 ------------------------------------------------------------------------------

RankInbox::RankInbox(std::vector<OutputColumn> columns, const GroupLayout* layout)
    : columns_(std::move(columns)), done_(static_cast<size_t>(Ranks::size()), false) {
  if (layout) records_ = std::make_unique<GroupRecords>(*layout);
  done_[0] = true;
}

RankInbox::~RankInbox() {
  for (size_t r = 1; r < done_.size(); ++r)
    if (!done_[r]) Ranks::send(static_cast<int>(r), kAsk, std::string(1, kStop));
}

bool RankInbox::take(int r, const std::function<bool(const Value*)>& on_row,
                     const std::function<void(const RowIssue&)>& on_issue, GroupTable* groups, SpillFile* records) {
  const size_t w = columns_.size();
  std::vector<Value> row(w);
  for (;;) {
    Ranks::send(r, kAsk, std::string(1, kNext));
    int tag = 0;
    const std::string chunk = Ranks::receive(r, &tag);
    if (tag == kAllSent || tag == kFailed) {
      done_[static_cast<size_t>(r)] = true;
      if (tag == kFailed) throw OtherRankFailed(r);
      return true;
    }
    WCSV_EXPECTS(tag == kChunk && !chunk.empty(), "an unknown message from a rank");
    if (chunk[0] == kGroups && records) {
      records->append(chunk.data() + 1, chunk.size() - 1);
      continue;
    }
    if (chunk[0] == kGroups) {
      WCSV_EXPECTS(groups && records_, "groups from a rank of a plan without them");
      records_->each_record(chunk.data() + 1, chunk.size() - 1,
                            [&](uint64_t hash, const char* block) { groups->merge_block(hash, block); });
      continue;
    }
    for (size_t at = 1; at < chunk.size();) {
      const char kind = chunk[at++];
      if (kind == kIssue) {
        on_issue(decode_issue(chunk, &at));
        continue;
      }
      WCSV_EXPECTS(kind == kRow && at + w * sizeof(Value) <= chunk.size(), "a row record cut short");
      std::memcpy(static_cast<void*>(row.data()), chunk.data() + at, w * sizeof(Value));
      at += w * sizeof(Value);
      for (size_t c = 0; c < w; ++c) {
        Value& v = row[c];
        if (v.null) continue;
        if (carries_string(columns_[c])) {
          v.s.ptr = chunk.data() + at;
          v.text = nullptr;
          at += v.s.len;
        } else if (carries_text(columns_[c])) {
          v.text = chunk.data() + at;
          at += v.text_len;
        }
        WCSV_EXPECTS(at <= chunk.size(), "a row record's strings cut short");
      }
      if (!on_row(row.data())) {
        Ranks::send(r, kAsk, std::string(1, kStop));
        done_[static_cast<size_t>(r)] = true;
        return false;
      }
    }
  }
}

}  // namespace warpcsv
