// Ordering a GPU's group table for output and gathering runs of it
// (result_order.hpp), apart from kernels.cu so that the two compile side by
// side.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "cuda/result_order.hpp"
#include "warpcsv/core/agg.hpp"
#include "warpcsv/core/eval.hpp"

namespace warpcsv {
namespace cuda {

namespace {

using u64 = unsigned long long;
constexpr u64 kSign = 1ull << 63;

__device__ u64 digit_of(const Value& v, Digit d, int word, const char* arena) {
  if (d == Digit::Null) return v.null ? 1 : 0;
  if (v.null) return 0;
  switch (d) {
    case Digit::Length: return v.s.len;
    case Digit::StringWord: {
      const char* p = arena + reinterpret_cast<uintptr_t>(v.s.ptr);
      u64 w = 0;
      for (uint32_t i = 8u * static_cast<uint32_t>(word), e = i + 8; i < e; ++i)
        w = (w << 8) | (i < v.s.len ? static_cast<unsigned char>(p[i]) : 0u);
      return w;
    }
    case Digit::IntLow: return static_cast<u64>(v.i);
    case Digit::IntLowFlip: return holistic_key(v, Type::Int);
    case Digit::IntHighFlip: return static_cast<u64>(static_cast<unsigned __int128>(v.i) >> 64) ^ kSign;
    case Digit::IntWide: return v.i != static_cast<__int128>(static_cast<int64_t>(v.i)) ? 1 : 0;
    case Digit::Float: return holistic_key(v, Type::Float);
    default: return 0;
  }
}

__global__ void k_identity(uint32_t* perm, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    perm[i] = static_cast<uint32_t>(i);
}

__global__ void k_digits(GpuTable t, int nkeys, int key, Digit d, int word, const uint32_t* perm, uint64_t n,
                         u64* digits, u64* span) {
  u64 lo = ~0ull, hi = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const u64 x = digit_of(t.keys[uint64_t(perm[i]) * nkeys + key], d, word, t.arena);
    digits[i] = x;
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
  }
  for (int o = 16; o > 0; o /= 2) {
    const u64 l = __shfl_down_sync(0xffffffffu, lo, o), h = __shfl_down_sync(0xffffffffu, hi, o);
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMin(&span[0], lo);
    atomicMax(&span[1], hi);
  }
}

__global__ void k_rebase(u64* digits, uint64_t n, const u64* span) {
  const u64 least = span[0];
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    digits[i] -= least;
}

__global__ void k_string_bytes(GpuTable t, int nkeys, uint32_t string_keys, const uint32_t* perm, uint64_t n,
                               u64* bytes) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const Value* k = t.keys + uint64_t(perm[i]) * nkeys;
    u64 b = 0;
    for (int j = 0; j < nkeys; ++j)
      if ((string_keys >> j) & 1u && !k[j].null) b += k[j].s.len;
    bytes[i] = b;
  }
}

// One thread per (row, key): keys are copied whole (string bytes one by one:
// keys are short), then one per state word.
__global__ void k_gather(GpuTable t, int nkeys, int nwords, uint32_t string_keys, const uint32_t* perm,
                         const u64* offsets, uint64_t begin, uint64_t count, GroupGather out) {
  const uint64_t step = uint64_t(gridDim.x) * blockDim.x;
  const u64 base = offsets[begin];
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < count * nkeys; e += step) {
    const uint64_t r = e / nkeys;
    const int j = static_cast<int>(e % nkeys);
    const uint64_t g = perm[begin + r];
    Value v = t.keys[g * nkeys + j];
    if ((string_keys >> j) & 1u && !v.null) {
      u64 at = offsets[begin + r] - base;
      const Value* k = t.keys + g * nkeys;
      for (int m = 0; m < j; ++m)
        if ((string_keys >> m) & 1u && !k[m].null) at += k[m].s.len;
      const char* from = t.arena + reinterpret_cast<uintptr_t>(v.s.ptr);
      for (uint32_t b = 0; b < v.s.len; ++b) out.arena[at + b] = from[b];
      v.s.ptr = reinterpret_cast<const char*>(static_cast<uintptr_t>(at));
    }
    out.keys[e] = v;
  }
  for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < count * nwords; e += step) {
    const uint64_t r = e / nwords;
    out.words[e] = t.words[uint64_t(perm[begin + r]) * nwords + e % nwords];
  }
  if (out.hashes)
    for (uint64_t e = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; e < count; e += step)
      out.hashes[e] = t.hashes[perm[begin + e]];
}

// The order of the host's sort: key by key, nulls last, each key by the
// core's compare_values. String keys are offsets into their arena.
__device__ int compare_key_rows(const Value* a, const char* arena_a, const Value* b, const char* arena_b,
                                const KeyBounds& kb) {
  for (int k = 0; k < kb.nkeys; ++k) {
    Value x = a[k], y = b[k];
    if (x.null || y.null) {
      if (x.null != y.null) return x.null ? 1 : -1;
      continue;
    }
    if (kb.types[k] == Type::String) {
      x.s.ptr = arena_a + reinterpret_cast<uintptr_t>(x.s.ptr);
      y.s.ptr = arena_b + reinterpret_cast<uintptr_t>(y.s.ptr);
    }
    const int c = compare_values(x, y, kb.types[k]);
    if (c) return c;
  }
  return 0;
}

// Each group's range: the bounds not greater than its keys, by binary
// search; counted per block in shared memory, then once per range.
__global__ void k_key_ranges(GpuTable t, KeyBounds b, uint64_t n, u64* ranges, u64* counts) {
  __shared__ unsigned int seen[kMaxKeyRanges];
  for (int r = threadIdx.x; r <= b.count; r += blockDim.x) seen[r] = 0;
  __syncthreads();
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const Value* k = t.keys + i * b.nkeys;
    int lo = 0, hi = b.count;  // the first bound greater than k
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (compare_key_rows(b.keys + mid * b.nkeys, b.arena, k, t.arena, b) > 0) hi = mid;
      else lo = mid + 1;
    }
    ranges[i] = static_cast<u64>(lo);
    atomicAdd(&seen[lo], 1u);
  }
  __syncthreads();
  for (int r = threadIdx.x; r <= b.count; r += blockDim.x)
    if (seen[r]) atomicAdd(&counts[r], static_cast<u64>(seen[r]));
}

}  // namespace

size_t order_temp_bytes(uint64_t n) {
  size_t sort_bytes = 0, scan_bytes = 0;
  cub::DoubleBuffer<u64> k(nullptr, nullptr);
  cub::DoubleBuffer<uint32_t> v(nullptr, nullptr);
  WCSV_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, k, v, static_cast<int64_t>(n), 0, 64));
  WCSV_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<u64*>(nullptr),
                                              static_cast<u64*>(nullptr), static_cast<int64_t>(n + 1)));
  return sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
}

void launch_identity(const OrderArrays& o, const GpuShape& shape, cudaStream_t stream) {
  k_identity<<<grid_for(o.n, 256, shape.sms), 256, 0, stream>>>(o.perm[0], o.n);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_digits(const GpuTable& t, int nkeys, int key, Digit d, int word, const OrderArrays& o, int cur,
                   const GpuShape& shape, cudaStream_t stream) {
  const u64 init[2] = {~0ull, 0};
  WCSV_CUDA_TRY(cudaMemcpyAsync(o.span, init, sizeof init, cudaMemcpyHostToDevice, stream));
  k_digits<<<grid_for(o.n, 256, shape.sms), 256, 0, stream>>>(t, nkeys, key, d, word, o.perm[cur], o.n, o.digits[cur],
                                                         o.span);
  WCSV_CUDA_TRY(cudaGetLastError());
}

int launch_sort_digits(const OrderArrays& o, int cur, int bits, const GpuShape& shape, cudaStream_t stream) {
  k_rebase<<<grid_for(o.n, 256, shape.sms), 256, 0, stream>>>(o.digits[cur], o.n, o.span);
  WCSV_CUDA_TRY(cudaGetLastError());
  cub::DoubleBuffer<u64> k(o.digits[cur], o.digits[1 - cur]);
  cub::DoubleBuffer<uint32_t> v(o.perm[cur], o.perm[1 - cur]);
  size_t bytes = o.temp_bytes;
  WCSV_CUDA_TRY(cub::DeviceRadixSort::SortPairs(o.temp, bytes, k, v, static_cast<int64_t>(o.n), 0, bits, stream));
  const int now = v.Current() == o.perm[0] ? 0 : 1;
  // The digits follow the permutation's buffer (the next pass overwrites them anyway).
  return now;
}

void launch_key_ranges(const GpuTable& t, const KeyBounds& b, const OrderArrays& o, u64* counts,
                       const GpuShape& shape, cudaStream_t stream) {
  const u64 span[2] = {0, static_cast<u64>(b.count)};
  WCSV_CUDA_TRY(cudaMemcpyAsync(o.span, span, sizeof span, cudaMemcpyHostToDevice, stream));
  WCSV_CUDA_TRY(cudaMemsetAsync(counts, 0, (static_cast<size_t>(b.count) + 1) * sizeof(u64), stream));
  if (o.n == 0) return;
  k_key_ranges<<<grid_for(o.n, 256, shape.sms), 256, 0, stream>>>(t, b, o.n, o.digits[0], counts);
  WCSV_CUDA_TRY(cudaGetLastError());
}

void launch_string_offsets(const GpuTable& t, int nkeys, uint32_t string_keys, const uint32_t* perm, uint64_t n,
                           u64* offsets, void* temp, size_t temp_bytes, const GpuShape& shape, cudaStream_t stream) {
  WCSV_CUDA_TRY(cudaMemsetAsync(offsets + n, 0, sizeof(u64), stream));
  k_string_bytes<<<grid_for(n, 256, shape.sms), 256, 0, stream>>>(t, nkeys, string_keys, perm, n, offsets);
  WCSV_CUDA_TRY(cudaGetLastError());
  size_t bytes = temp_bytes;
  WCSV_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, bytes, offsets, offsets, static_cast<int64_t>(n + 1), stream));
}

void launch_gather_groups(const GpuTable& t, int nkeys, int nwords, uint32_t string_keys, const uint32_t* perm,
                          const u64* offsets, uint64_t begin, uint64_t count, const GroupGather& out,
                          const GpuShape& shape, cudaStream_t stream) {
  if (count == 0) return;
  const uint64_t items = count * static_cast<uint64_t>(nkeys > nwords ? nkeys : nwords);
  k_gather<<<grid_for(items, 256, shape.sms), 256, 0, stream>>>(t, nkeys, nwords, string_keys, perm, offsets, begin, count,
                                                           out);
  WCSV_CUDA_TRY(cudaGetLastError());
}

}  // namespace cuda
}  // namespace warpcsv
