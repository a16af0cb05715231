// A lookup join's table on one GPU (see device_lookup.hpp).
#include "cuda/device_lookup.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "cuda/gpu_plan.hpp"
#include "runtime/parallel.hpp"

namespace warpcsv {
namespace cuda {

namespace {
size_t aligned(size_t n) { return (n + 255) & ~size_t{255}; }
}  // namespace

DeviceLookup::DeviceLookup(const LookupTable& t) {
  const LookupView& host = t.view();
  const Table& rows = t.table();
  const size_t n = t.rows(), width = host.width;
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<size_t> string_columns;
  for (size_t c = 0; c < width; ++c)
    if (rows.columns[c].type.type == Type::String) string_columns.push_back(c);
  // The block is laid out on the host as on the device and copied at once;
  // chunks of rows fill it on threads, each chunk's strings after the last's.
  const size_t chunks = std::max<size_t>(1, std::min<size_t>(n / 65536 + 1, static_cast<size_t>(threads) * 4));
  auto first = [&](size_t c) { return n * c / chunks; };
  std::vector<size_t> string_at(chunks + 1, 0);
  parallel_for(chunks, threads, [&](size_t c, int) {
    size_t bytes = 0;
    for (size_t r = first(c); r < first(c + 1); ++r)
      for (size_t k : string_columns)
        if (!rows.row(r)[k].null) bytes += rows.row(r)[k].s.len;
    string_at[c + 1] = bytes;
  });
  for (size_t c = 0; c < chunks; ++c) string_at[c + 1] += string_at[c];
  const size_t cells_at = aligned(string_at[chunks] + 1);
  const size_t hashes_at = cells_at + aligned(n * width * sizeof(Value));
  const size_t next_at = hashes_at + aligned(n * sizeof(uint64_t));
  const size_t buckets_at = next_at + aligned(n * sizeof(uint32_t));
  const size_t total = buckets_at + aligned(t.buckets().size() * sizeof(uint32_t));
  WCSV_CUDA_TRY(cudaMalloc(&mem_, total));
  std::unique_ptr<char[]> block(new char[total]);  // filled below, padding aside
  char* const text = block.get();
  Value* const cells = reinterpret_cast<Value*>(block.get() + cells_at);
  parallel_for(chunks, threads, [&](size_t c, int) {
    size_t at = string_at[c];
    for (size_t r = first(c); r < first(c + 1); ++r) {
      Value* row = cells + r * width;
      std::memcpy(static_cast<void*>(row), rows.row(r), width * sizeof(Value));
      for (size_t k = 0; k < width; ++k) {
        row[k].text = nullptr;  // the GPU formats no output
        row[k].text_len = 0;
      }
      for (size_t k : string_columns) {  // the string's bytes in the block; the pointer, the device's
        if (row[k].null) continue;
        std::memcpy(text + at, row[k].s.ptr, row[k].s.len);
        row[k].s.ptr = mem_ + at;
        at += row[k].s.len;
      }
    }
  });
  std::memcpy(block.get() + hashes_at, t.hashes().data(), n * sizeof(uint64_t));
  std::memcpy(block.get() + next_at, t.next().data(), n * sizeof(uint32_t));
  std::memcpy(block.get() + buckets_at, t.buckets().data(), t.buckets().size() * sizeof(uint32_t));
  WCSV_CUDA_TRY(cudaMemcpy(mem_, block.get(), total, cudaMemcpyHostToDevice));
  view_ = host;
  view_.cells = reinterpret_cast<const Value*>(mem_ + cells_at);
  view_.hashes = reinterpret_cast<const uint64_t*>(mem_ + hashes_at);
  view_.next = reinterpret_cast<const uint32_t*>(mem_ + next_at);
  view_.buckets = reinterpret_cast<const uint32_t*>(mem_ + buckets_at);
}

DeviceLookup::~DeviceLookup() { cudaFree(mem_); }

}  // namespace cuda
}  // namespace warpcsv
