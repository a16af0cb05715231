// A lookup join's table on one GPU (see device_lookup.hpp).
#include "cuda/device_lookup.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cuda/gpu_plan.hpp"

namespace warpcsv {
namespace cuda {

namespace {
size_t aligned(size_t n) { return (n + 255) & ~size_t{255}; }
}  // namespace

DeviceLookup::DeviceLookup(const LookupTable& t) {
  const LookupView& host = t.view();
  const Table& rows = t.table();
  // The strings of the cells, gathered into one block the device copy points into.
  std::vector<Value> cells(rows.cells.begin(), rows.cells.end());
  std::string text;
  std::vector<size_t> string_at(cells.size(), 0);
  for (size_t i = 0; i < cells.size(); ++i) {
    Value& v = cells[i];
    v.text = nullptr;  // the GPU formats no output
    v.text_len = 0;
    if (v.null || rows.columns[i % host.width].type.type != Type::String) continue;
    string_at[i] = text.size();
    text.append(v.s.ptr, v.s.len);
  }
  const size_t strings_at = 0, cells_at = aligned(text.size() + 1);
  const size_t hashes_at = cells_at + aligned(cells.size() * sizeof(Value));
  const size_t next_at = hashes_at + aligned(t.hashes().size() * sizeof(uint64_t));
  const size_t buckets_at = next_at + aligned(t.next().size() * sizeof(uint32_t));
  const size_t total = buckets_at + aligned(t.buckets().size() * sizeof(uint32_t));
  WCSV_CUDA_TRY(cudaMalloc(&mem_, total));
  for (size_t i = 0; i < cells.size(); ++i)
    if (!cells[i].null && rows.columns[i % host.width].type.type == Type::String)
      cells[i].s.ptr = mem_ + strings_at + string_at[i];
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
