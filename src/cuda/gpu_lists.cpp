// One GPU's holistic lists: each holistic argument listed per row with its
// group, grown as the rows in flight need, sorted and copied back.
#include "cuda/gpu.hpp"

#include <algorithm>
#include <chrono>

#include "runtime/stopwatch.hpp"

namespace warpcsv {
namespace cuda {

namespace {

// Device allocations that may fail for want of room, which is no error
// there (the caller hands the scan to the CPU): freed when the scope ends
// unless released.
class DeviceAllocs {
 public:
  DeviceAllocs() = default;
  ~DeviceAllocs() {
    for (void* p : held_) cudaFree(p);
  }
  DeviceAllocs(const DeviceAllocs&) = delete;
  DeviceAllocs& operator=(const DeviceAllocs&) = delete;
  // False (the error cleared) when the GPU has no room for `bytes`.
  template <class T>
  bool get(T** p, uint64_t bytes) {
    void* q = nullptr;
    if (cudaMalloc(&q, std::max<uint64_t>(1, bytes)) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    held_.push_back(q);
    *p = static_cast<T*>(q);
    return true;
  }
  void release() { held_.clear(); }

 private:
  std::vector<void*> held_;
};

}  // namespace

bool Gpu::copy_back_lists(std::vector<std::vector<ArgList>>& lists, const GpuCounters& c, int threads) {
  WCSV_CUDA_TRY(cudaSetDevice(id_));
  int group_bits = 1;
  while (group_bits < 32 && (1ull << group_bits) < c.groups) ++group_bits;
  for (int l = 0; l < hplan_.nlists; ++l) {
    const uint64_t n = c.listed[l];
    WCSV_EXPECTS(n <= list_cap_, "a GPU list holds more values than its room");
    if (n == 0) continue;
    ListSort sort{{list_groups_[l], nullptr}, {list_keys_[l], nullptr}, n, group_bits};
    const size_t temp_bytes = list_sort_temp_bytes(sort);
    void* temp = nullptr;
    DeviceAllocs scratch;  // freed once the list is on the host (download waits for it)
    if (!scratch.get(&sort.groups[1], n * 4) || !scratch.get(&sort.keys[1], n * 8) || !scratch.get(&temp, temp_bytes))
      return false;
    uint32_t* groups = nullptr;
    unsigned long long* keys = nullptr;
    launch_sort_list(sort, temp, temp_bytes, &groups, &keys, compute_);
    uint32_t* host_groups;
    uint64_t* host_keys;
    lists[static_cast<size_t>(l)][0].fill_sorted(n, &host_groups, &host_keys);
    download(host_groups, groups, n * 4, threads, slots_bounce());
    download(host_keys, keys, n * 8, threads, slots_bounce());
  }
  return true;
}

uint64_t Gpu::most_listed(const GpuCounters& c) const {
  uint64_t n = 0;
  for (int l = 0; l < hplan_.nlists; ++l) n = std::max<uint64_t>(n, c.listed[l]);
  return n;
}

void Gpu::free_lists() noexcept {
  for (int l = 0; l < kMaxLists; ++l) {
    cudaFree(list_groups_[l]);
    cudaFree(list_keys_[l]);
    list_groups_[l] = nullptr;
    list_keys_[l] = nullptr;
  }
  list_cap_ = 0;
}

bool Gpu::grow_lists(uint64_t cap, const GpuCounters& c) {
  const auto t_grow = std::chrono::steady_clock::now();
  DeviceAllocs grown;
  uint32_t* groups[kMaxLists] = {};
  unsigned long long* keys[kMaxLists] = {};
  for (int l = 0; l < hplan_.nlists; ++l)
    if (!grown.get(&groups[l], cap * 4) || !grown.get(&keys[l], cap * 8)) {
      flags_seen_ |= kFlagCapacity;
      grow_s += seconds_since(t_grow);
      return false;
    }
  for (int l = 0; l < hplan_.nlists; ++l) {
    const uint64_t n = std::min<uint64_t>(c.listed[l], list_cap_);
    if (!n) continue;
    WCSV_CUDA_TRY(cudaMemcpyAsync(groups[l], list_groups_[l], n * 4, cudaMemcpyDeviceToDevice, compute_));
    WCSV_CUDA_TRY(cudaMemcpyAsync(keys[l], list_keys_[l], n * 8, cudaMemcpyDeviceToDevice, compute_));
  }
  WCSV_CUDA_TRY(cudaStreamSynchronize(compute_));
  free_lists();
  grown.release();
  for (int l = 0; l < hplan_.nlists; ++l) {
    list_groups_[l] = groups[l];
    list_keys_[l] = keys[l];
  }
  list_cap_ = cap;
  grow_s += seconds_since(t_grow);
  return true;
}

}  // namespace cuda
}  // namespace warpcsv
