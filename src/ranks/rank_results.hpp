// What the other ranks hand rank 0 after the scan, and how rank 0 takes it.
//
// A rank other than 0 records its share's output rows (a plan without an
// aggregate) and its bad-row issues as it scans, in input order, in frames
// of a temporary file; its groups stay in its table. After the scan rank 0
// asks each rank in turn, chunk by chunk: the frames, then the groups as
// records (result/spill.hpp's format). Rows go into rank 0's post stages
// after its own and those of the ranks before, so the output is the one
// process's; groups merge into rank 0's table, which is then finalized,
// sorted and written as in one process.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/group_table.hpp"
#include "exec/scan.hpp"
#include "result/group_rows.hpp"
#include "result/spill.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

// A rank's bad row or widening as bytes, and back.
std::string encode_issue(const RowIssue& issue);
RowIssue decode_issue(const std::string& bytes, size_t* at);

// A type widening, for the ranks' agreement.
std::string encode_widening(const TypeWidening& w);
TypeWidening decode_widening(const std::string& bytes);

// Collective, right after the scan's agreement: rank 0's `stats` get the
// other ranks' counts added, and `stages` a line per rank (--profile).
void add_rank_stats(ScanStats& stats, double scan_seconds, std::vector<StageTiming>& stages);

// How the ranks' results come together, for --explain.
std::string describe_rank_results(const Plan& plan);

// On a rank other than 0.
class RankOutbox {
 public:
  // `columns`: the scan's output rows (Plan::scan_output).
  explicit RankOutbox(std::vector<OutputColumn> columns);
  ~RankOutbox();

  void add_rows(const Table& t, size_t begin, size_t end);
  void add_issue(const RowIssue& issue);
  // Answers rank 0's requests: the frames, then the records of `groups`
  // (null: none) or else the records already made in `records` (segments
  // sent in turn), until rank 0 has them all or says stop.
  void serve(const GroupTable* groups, const std::vector<std::vector<char>>* records = nullptr);

 private:
  void end_frame();

  std::vector<OutputColumn> columns_;
  std::unique_ptr<SpillFile> file_;
  std::vector<char> frame_;
  std::vector<uint64_t> frame_ends_;  // in file_
};

// On rank 0.
class RankInbox {
 public:
  RankInbox(std::vector<OutputColumn> columns, const GroupLayout* layout);
  // Tells the ranks it did not take all of to stop.
  ~RankInbox();
  RankInbox(const RankInbox&) = delete;
  RankInbox& operator=(const RankInbox&) = delete;

  // Takes rank r's rows (to on_row, until it returns false), issues (to
  // on_issue) and groups: merged into `groups`, or their records appended
  // as they come to `records` (a rank's sorted part). Returns false once
  // on_row wanted no more: later ranks are not asked. Throws
  // OtherRankFailed when rank r failed as it answered.
  bool take(int r, const std::function<bool(const Value*)>& on_row,
            const std::function<void(const RowIssue&)>& on_issue, GroupTable* groups, SpillFile* records = nullptr);

 private:
  std::vector<OutputColumn> columns_;
  std::unique_ptr<GroupRecords> records_;
  std::vector<bool> done_;  // per rank: told to stop, or it sent all
};

}  // namespace warpcsv
