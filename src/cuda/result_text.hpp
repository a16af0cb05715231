// A run of ordered groups, gathered on the GPU (launch_gather_groups),
// finalized and formatted there as the writer's text (group_text.hpp):
// each row's bytes measured, their offsets summed, then written.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/group_text.hpp"
#include "cuda/result_order.hpp"

namespace warpcsv {
namespace cuda {

// offsets[i] = the text bytes of rows [0, i) of the gathered run, for i in
// [0, count]; offsets has count + 1 words. *failure (kNoTextFailure unless
// a row cannot be finalized) gets the first such row and aggregate, packed.
// `temp` is CUB storage of order_temp_bytes(count) bytes or more.
void launch_text_offsets(const TextLayout& t, const GroupGather& run, int nwords, uint64_t count,
                         unsigned long long* offsets, unsigned long long* failure, void* temp, size_t temp_bytes,
                         const GpuShape& shape, cudaStream_t stream);

// Writes the run's rows at their offsets into `text`.
void launch_write_text(const TextLayout& t, const GroupGather& run, int nwords, uint64_t count,
                       const unsigned long long* offsets, char* text, const GpuShape& shape, cudaStream_t stream);

}  // namespace cuda
}  // namespace warpcsv
