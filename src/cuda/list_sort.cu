// Sorting a GPU's holistic lists by (group, key), apart from kernels.cu so
// that the two compile side by side.
#include <cub/device/device_radix_sort.cuh>

#include "cuda/gpu_plan.hpp"

namespace warpcsv {
namespace cuda {

namespace {

using u64 = unsigned long long;

// Both radix sorts, or (temp null) their temporary storage: `bytes` is set
// to the larger of the two.
void sort_pairs(const ListSort& l, void* temp, size_t& bytes, uint32_t** groups, u64** keys, cudaStream_t stream) {
  const int64_t n = static_cast<int64_t>(l.n);
  cub::DoubleBuffer<u64> k(l.keys[0], l.keys[1]);
  cub::DoubleBuffer<uint32_t> g(l.groups[0], l.groups[1]);
  size_t b1 = bytes, b2 = bytes;
  WCSV_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, b1, k, g, n, 0, 64, stream));
  // LSD radix sorts are stable: by group now, ties keep the key order.
  cub::DoubleBuffer<uint32_t> g2(g.Current(), g.Alternate());
  cub::DoubleBuffer<u64> k2(k.Current(), k.Alternate());
  WCSV_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp, b2, g2, k2, n, 0, l.group_bits, stream));
  if (!temp) bytes = b1 > b2 ? b1 : b2;
  *groups = g2.Current();
  *keys = k2.Current();
}

}  // namespace

size_t list_sort_temp_bytes(const ListSort& l) {
  size_t bytes = 0;
  uint32_t* g;
  u64* k;
  sort_pairs(l, nullptr, bytes, &g, &k, nullptr);
  return bytes;
}

void launch_sort_list(const ListSort& l, void* temp, size_t temp_bytes, uint32_t** groups, u64** keys,
                      cudaStream_t stream) {
  sort_pairs(l, temp, temp_bytes, groups, keys, stream);
}

}  // namespace cuda
}  // namespace warpcsv
