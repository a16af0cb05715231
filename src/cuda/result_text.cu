// The result's rows as text on the GPU (result_text.hpp), a thread a row.
#include <cub/device/device_scan.cuh>

#include "cuda/result_text.hpp"

namespace warpcsv {
namespace cuda {

namespace {

using u64 = unsigned long long;


__global__ void k_text_lengths(TextLayout t, GroupGather run, int nwords, uint64_t count, u64* lengths,
                               u64* failure) {
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < count; r += uint64_t(gridDim.x) * blockDim.x) {
    int failed = -1;
    lengths[r] = group_row_text<false>(t, run.keys + r * t.nkeys, run.words + r * nwords, run.arena, nullptr, &failed);
    if (failed >= 0) atomicMin(failure, (static_cast<u64>(r) << 8) | static_cast<u64>(failed));
  }
}

__global__ void k_write_text(TextLayout t, GroupGather run, int nwords, uint64_t count, const u64* offsets,
                             char* text) {
  for (uint64_t r = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; r < count; r += uint64_t(gridDim.x) * blockDim.x) {
    int failed = -1;  // a row that fails writes nothing (and the run is not used)
    group_row_text<true>(t, run.keys + r * t.nkeys, run.words + r * nwords, run.arena, text + offsets[r], &failed);
  }
}

}  // namespace

void launch_text_offsets(const TextLayout& t, const GroupGather& run, int nwords, uint64_t count, u64* offsets,
                         u64* failure, void* temp, size_t temp_bytes, const GpuShape& shape, cudaStream_t stream) {
  WCSV_CUDA_TRY(cudaMemsetAsync(failure, 0xff, sizeof(u64), stream));  // kNoTextFailure
  WCSV_CUDA_TRY(cudaMemsetAsync(offsets + count, 0, sizeof(u64), stream));
  if (count) {
    k_text_lengths<<<grid_for(count, 128, shape.sms), 128, 0, stream>>>(t, run, nwords, count, offsets, failure);
    WCSV_CUDA_TRY(cudaGetLastError());
  }
  size_t bytes = temp_bytes;
  WCSV_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, bytes, offsets, offsets, static_cast<int64_t>(count + 1), stream));
}

void launch_write_text(const TextLayout& t, const GroupGather& run, int nwords, uint64_t count, const u64* offsets,
                       char* text, const GpuShape& shape, cudaStream_t stream) {
  if (count == 0) return;
  k_write_text<<<grid_for(count, 128, shape.sms), 128, 0, stream>>>(t, run, nwords, count, offsets, text);
  WCSV_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda
}  // namespace warpcsv
