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
