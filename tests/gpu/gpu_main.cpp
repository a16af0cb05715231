// main() of the GPU tests: on a machine where no GPU can run this build they
// do not run, and exit with kSkipped so that ctest reports them as skipped
// (never as passed).
#include <cstdio>

#if __has_include(<catch2/catch_session.hpp>)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#ifdef WARPCSV_HAVE_CUDA
#include "cuda/cuda_executor.hpp"
#include "cuda/gpu_plan.hpp"
#endif

namespace {
constexpr int kSkipped = 77;  // SKIP_RETURN_CODE in tests/CMakeLists.txt

// Why the GPU tests cannot run here, or nullptr when they can.
const char* why_no_gpu() {
#ifdef WARPCSV_HAVE_CUDA
  if (warpcsv::cuda_device_count() == 0) return "no CUDA device was found";
  if (!warpcsv::cuda::kernels_load_on(0)) return "GPU 0 cannot run this build's GPU code";
  return nullptr;
#else
  return "this build has no CUDA executor";
#endif
}
}  // namespace

int main(int argc, char** argv) {
  if (const char* why = why_no_gpu()) {
    std::printf("gpu_tests: skipped: %s\n", why);
    return kSkipped;
  }
  return Catch::Session().run(argc, argv);
}
