// Host/device portability for the shared core: the same functions compile for
// CPU threads and CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define WCSV_HD __host__ __device__
#define WCSV_FORCEINLINE __forceinline__
#else
#define WCSV_HD
#define WCSV_FORCEINLINE inline __attribute__((always_inline))
#endif

#include <cstdint>

namespace warpcsv {
// Leading zeros of a non-zero 64-bit value.
WCSV_HD WCSV_FORCEINLINE int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return __builtin_clzll(x);
#endif
}
}  // namespace warpcsv
