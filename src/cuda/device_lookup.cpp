// A lookup join's table on one GPU (see device_lookup.hpp).
#include "cuda/device_lookup.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "cuda/gpu_plan.hpp"
#include "runtime/parallel.hpp"

namespace warpcsv {
namespace cuda {

namespace {
size_t aligned(size_t n) { return (n + 255) & ~size_t{255}; }
}  // namespace

DeviceLookup::DeviceLookup(const LookupTable& t, const PutBytes& put, uint64_t piece_bytes) {
  const LookupView& host = t.view();
  const Table& rows = t.table();
  const size_t n = t.rows(), width = host.width, row_bytes = width * sizeof(Value);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<size_t> string_columns;
  for (size_t c = 0; c < width; ++c)
    if (rows.columns[c].type.type == Type::String) string_columns.push_back(c);
  // Cells go in pieces of whole rows, each piece's strings in the text after
  // the last piece's; the text is gathered on the host, then copied too.
  const size_t piece_rows = std::max<size_t>(1, piece_bytes / std::max<size_t>(row_bytes, 1));
  const size_t pieces = (n + piece_rows - 1) / piece_rows;
  auto first = [&](size_t c) { return std::min(n, c * piece_rows); };
  std::vector<size_t> string_at(pieces + 1, 0);
  parallel_for(pieces, threads, [&](size_t c, int) {
    size_t bytes = 0;
    for (size_t r = first(c); r < first(c + 1); ++r)
      for (size_t k : string_columns)
        if (!rows.row(r)[k].null) bytes += rows.row(r)[k].s.len;
    string_at[c + 1] = bytes;
  });
  for (size_t c = 0; c < pieces; ++c) string_at[c + 1] += string_at[c];
  const size_t text_bytes = string_at[pieces];
  const size_t cells_at = aligned(text_bytes + 1);
  const size_t next_at = cells_at + aligned(n * row_bytes);
  const size_t buckets_at = next_at + aligned(n * sizeof(uint32_t));
  const size_t total = buckets_at + aligned(t.buckets().size() * sizeof(LookupBucket));
  WCSV_CUDA_TRY(cudaMalloc(&mem_, total));
  UninitVector<char> text(text_bytes);
  parallel_for(pieces, threads, [&](size_t c, int) {
    put(mem_ + cells_at + first(c) * row_bytes, (first(c + 1) - first(c)) * row_bytes, [&](char* out) {
      size_t at = string_at[c];
      for (size_t r = first(c); r < first(c + 1); ++r) {
        Value* row = reinterpret_cast<Value*>(out) + (r - first(c)) * width;
        std::memcpy(static_cast<void*>(row), rows.row(r), row_bytes);
        for (size_t k = 0; k < width; ++k) {
          row[k].text = nullptr;  // the GPU formats no output
          row[k].text_len = 0;
        }
        for (size_t k : string_columns) {  // the string's bytes in the text; the pointer, the device's
          if (row[k].null) continue;
          std::memcpy(text.data() + at, row[k].s.ptr, row[k].s.len);
          row[k].s.ptr = mem_ + at;
          at += row[k].s.len;
        }
      }
    });
  });
  // Arrays the host holds as the device does, piece by piece.
  auto copy_array = [&](size_t dev_at, const void* src, size_t bytes) {
    const size_t count = (bytes + piece_bytes - 1) / piece_bytes;
    parallel_for(count, threads, [&](size_t i, int) {
      const size_t at = i * piece_bytes, len = std::min<size_t>(piece_bytes, bytes - at);
      put(mem_ + dev_at + at, len, [&](char* out) { std::memcpy(out, static_cast<const char*>(src) + at, len); });
    });
  };
  copy_array(0, text.data(), text_bytes);
  copy_array(next_at, t.next().data(), n * sizeof(uint32_t));
  copy_array(buckets_at, t.buckets().data(), t.buckets().size() * sizeof(LookupBucket));
  view_ = host;
  view_.cells = reinterpret_cast<const Value*>(mem_ + cells_at);
  view_.next = reinterpret_cast<const uint32_t*>(mem_ + next_at);
  view_.buckets = reinterpret_cast<const LookupBucket*>(mem_ + buckets_at);
}

DeviceLookup::~DeviceLookup() { cudaFree(mem_); }

}  // namespace cuda
}  // namespace warpcsv
