// A lookup join's table on one GPU (see device_lookup.hpp).
#include "cuda/device_lookup.hpp"

#include <cuda_runtime.h>

#include <vector>

#include "cuda/gpu_plan.hpp"

namespace warpcsv {
namespace cuda {

namespace {
size_t aligned(size_t n) { return (n + 255) & ~size_t{255}; }
}  // namespace

DeviceLookup::DeviceLookup(const LookupTable& t) {
  const std::string& text = t.strings();
  const size_t strings_at = 0, cells_at = aligned(text.size() + 1);
  const size_t hashes_at = cells_at + aligned(t.cells().size() * sizeof(Value));
  const size_t next_at = hashes_at + aligned(t.hashes().size() * sizeof(uint64_t));
  const size_t buckets_at = next_at + aligned(t.next().size() * sizeof(uint32_t));
  const size_t total = buckets_at + aligned(t.buckets().size() * sizeof(uint32_t));
  WCSV_CUDA_TRY(cudaMalloc(&mem_, total));
  std::vector<Value> cells(t.cells());
  const LookupView& host = t.view();
  for (size_t r = 0; r < t.rows(); ++r)
    for (uint32_t c = 0; c < host.width; ++c) {
      Value& v = cells[r * host.width + c];
      v.text = nullptr;  // the GPU formats no output
      v.text_len = 0;
      // A string points into the file's text: the same offset in the device's copy.
      if (!v.null && t.cell_types()[c] == Type::String) v.s.ptr = mem_ + strings_at + (v.s.ptr - text.data());
    }
  WCSV_CUDA_TRY(cudaMemcpy(mem_ + strings_at, text.data(), text.size() + 1, cudaMemcpyHostToDevice));
  WCSV_CUDA_TRY(cudaMemcpy(mem_ + cells_at, cells.data(), cells.size() * sizeof(Value), cudaMemcpyHostToDevice));
  WCSV_CUDA_TRY(cudaMemcpy(mem_ + hashes_at, t.hashes().data(), t.hashes().size() * sizeof(uint64_t),
                           cudaMemcpyHostToDevice));
  WCSV_CUDA_TRY(cudaMemcpy(mem_ + next_at, t.next().data(), t.next().size() * sizeof(uint32_t), cudaMemcpyHostToDevice));
  WCSV_CUDA_TRY(cudaMemcpy(mem_ + buckets_at, t.buckets().data(), t.buckets().size() * sizeof(uint32_t),
                           cudaMemcpyHostToDevice));
  view_ = host;
  view_.cells = reinterpret_cast<const Value*>(mem_ + cells_at);
  view_.hashes = reinterpret_cast<const uint64_t*>(mem_ + hashes_at);
  view_.next = reinterpret_cast<const uint32_t*>(mem_ + next_at);
  view_.buckets = reinterpret_cast<const uint32_t*>(mem_ + buckets_at);
}

DeviceLookup::~DeviceLookup() { cudaFree(mem_); }

}  // namespace cuda
}  // namespace warpcsv
