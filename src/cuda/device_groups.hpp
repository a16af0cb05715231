// A GPU's group table as the result's groups: ordered on the GPU, then
// brought back a run at a time into pinned buffers (the next run is gathered
// and copied while the host finalizes and writes this one), so the host
// holds two runs, never the table.
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda/gpu_plan.hpp"
#include "cuda/group_text.hpp"
#include "cuda/result_order.hpp"
#include "exec/group_table.hpp"
#include "exec/scan.hpp"
#include "result/group_rows.hpp"

namespace warpcsv {
namespace cuda {

// A finished group table on its GPU: `groups` groups of `nkeys` keys and
// `nwords` state words each; aggregate a's words start at agg_words[a].
struct DeviceTable {
  int device = 0;
  GpuTable table{};
  uint64_t groups = 0;
  int nkeys = 0, nwords = 0;
  std::vector<int> agg_words;
  GpuShape shape;
  cudaStream_t stream = nullptr;
};

class DeviceGroups : public OrderedGroups {
 public:
  // Orders `t`'s groups by their keys (types from `layout`); nullptr, with
  // nothing left allocated, when the GPU has no room for it. The table must
  // stay on the GPU, unchanged, while the result is read.
  static std::unique_ptr<DeviceGroups> order(const DeviceTable& t, const GroupLayout& layout,
                                             size_t run_rows = kResultRunRows);
  ~DeviceGroups() override;
  DeviceGroups(const DeviceGroups&) = delete;
  DeviceGroups& operator=(const DeviceGroups&) = delete;

  size_t size() const override { return t_.groups; }
  GroupRun next() override;
  // The rows are finalized and formatted on the GPU: only their text comes back.
  bool start_text(const Plan& plan, const GroupLayout& layout, DelimitedText text) override;
  TextRun next_text() override;
  // --profile's lines: ordering on the GPU, and the host waiting for runs.
  void add_stages(std::vector<StageTiming>& stages) const;

 private:
  DeviceGroups(const DeviceTable& t, const GroupLayout& layout, size_t run_rows);
  bool allocate_order();
  void sort();
  bool allocate_runs();
  void enqueue(uint64_t begin, int buf);
  // Gathers, measures and formats the run at `begin` into text_dev_.
  void enqueue_text(uint64_t begin);
  void free_all() noexcept;

  DeviceTable t_;
  const GroupLayout& layout_;
  size_t run_rows_;
  uint32_t string_keys_ = 0;  // a bit per string key
  // Ordering: double-buffered permutation and digits; perm_[cur_] is the order.
  uint32_t* perm_[2] = {};
  unsigned long long* digits_[2] = {};  // n + 1 words each; one becomes the string offsets
  unsigned long long* span_ = nullptr;
  unsigned long long* offsets_ = nullptr;  // string bytes before each ordered group
  void* temp_ = nullptr;
  size_t temp_bytes_ = 0;
  int cur_ = 0;
  // Runs: one set of arrays on the GPU, two in pinned host memory.
  std::vector<unsigned long long> run_string_at_;  // string bytes before each run, and in all
  GroupGather dev_{};
  GroupGather host_[2] = {};
  cudaEvent_t copied_[2] = {};
  uint64_t queued_count_[2] = {};
  bool queued_[2] = {};
  int buf_ = 0;
  uint64_t at_ = 0;
  uint64_t arena_cap_ = 1;  // the most string bytes of one run
  // Text (start_text): a run's row offsets and text on the GPU, the text of
  // two runs in pinned memory (one is written while the next comes), and
  // the run's bytes and first failure copied back.
  std::unique_ptr<TextLayout> text_;
  const Plan* plan_ = nullptr;
  unsigned long long* text_offsets_ = nullptr;
  unsigned long long* text_failure_ = nullptr;
  char* text_dev_ = nullptr;
  char* text_host_[2] = {};
  unsigned long long* text_totals_ = nullptr;  // pinned: bytes, failure
  uint64_t text_cap_ = 0;
  cudaEvent_t text_made_ = nullptr;
  bool text_queued_ = false;
  uint64_t text_count_ = 0;
  double order_s_ = 0, wait_s_ = 0;
  uint64_t copied_bytes_ = 0, text_runs_ = 0;
};

}  // namespace cuda
}  // namespace warpcsv
