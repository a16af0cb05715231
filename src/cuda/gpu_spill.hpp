// Groups that leave the GPUs during the scan: when a GPU's group table would
// outgrow its room (--gpu-memory-limit, or the memory the GPU has free), its
// groups are copied back a piece at a time, each piece written to the hash
// parts of one SpilledGroups that the run's GPUs share, and the table starts
// empty again. After the scan the tables' last groups follow, and the parts
// are aggregated one by one on the host and merged in output order
// (result/spill.hpp), so a group spilled several times counts once.
#pragma once
#include <cstdint>
#include <mutex>

#include "exec/device.hpp"
#include "result/spill.hpp"

namespace warpcsv {
namespace cuda {

class GpuSpill {
 public:
  // `table_limit`: bytes each GPU's group table and key arena may take (0:
  // what the GPU has free). `host_budget`: host bytes the parts may take
  // together while they are aggregated. `threads`: host threads that write.
  GpuSpill(const GroupLayout& layout, uint64_t table_limit, uint64_t host_budget, int threads)
      : groups_(layout, kGpuSpillParts, host_budget), table_limit_(table_limit), threads_(threads) {}

  uint64_t table_limit() const { return table_limit_; }
  int threads() const { return threads_; }

  // Writes the groups of `piece` to their parts; from any GPU's thread.
  void take(const GroupTable& piece) {
    std::lock_guard<std::mutex> lock(m_);
    groups_.spill_table(piece, threads_);
    spilled_groups_ += piece.size();
  }

  // Whether any group was spilled (read once the GPUs' threads are done).
  bool any() const { return spilled_groups_ > 0; }
  uint64_t spilled_groups() const { return spilled_groups_; }
  SpilledGroups& groups() { return groups_; }

 private:
  std::mutex m_;
  SpilledGroups groups_;
  uint64_t table_limit_;
  int threads_;
  uint64_t spilled_groups_ = 0;
};

}  // namespace cuda
}  // namespace warpcsv
