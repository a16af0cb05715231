// The host's ceilings for feeding GPUs from a page-cached file, with no scan:
// THREADS threads pread 512 KiB pieces (the readers' piece size) of FILE in
// order into 8 huge-page buffers of 33 MiB (two GPUs' staging rings), alone,
// and again while each of GPUS GPUs copies a pinned 4 x 33 MiB ring in
// without pause. Reading and copying share the host's memory, so the second
// pair of numbers bounds what a read-then-copy pipeline can reach on this
// machine; they differ between machines of the same kind. gpu-check.sh runs
// it and prints one line.
//
//   nvcc -O2 -std=c++17 -o read_copy_ceiling tools/lab/read_copy_ceiling.cu
//   read_copy_ceiling FILE THREADS GPUS
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {
using Clock = std::chrono::steady_clock;
constexpr size_t kPiece = 512 << 10, kRingPieces = 8 * 66;
constexpr size_t kCopy = 33ull << 20, kCopyRing = 4;

double seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// Anonymous memory in huge pages where THP allows, faulted in.
char* huge_block(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  for (size_t i = 0; i < bytes; i += 4096) static_cast<char*>(p)[i] = 0;
  return static_cast<char*>(p);
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  exit(1);
}

// GB/s of the best of three passes of THREADS readers over the file.
double read_ceiling(int fd, size_t size, int threads, char* ring) {
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::atomic<size_t> next{0};
    std::vector<std::thread> readers;
    const auto t0 = Clock::now();
    for (int t = 0; t < threads; ++t)
      readers.emplace_back([&] {
        for (size_t k; (k = next++) * kPiece < size;) {
          const size_t at = k * kPiece, len = std::min(kPiece, size - at);
          if (pread(fd, ring + (k % kRingPieces) * kPiece, len, static_cast<off_t>(at)) != static_cast<ssize_t>(len)) {
            perror("pread");
            exit(1);
          }
        }
      });
    for (auto& r : readers) r.join();
    best = std::max(best, size / seconds(t0) / 1e9);
  }
  return best;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE THREADS GPUS\n", argv[0]);
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const int threads = std::max(1, atoi(argv[2]));
  int gpus = std::max(0, atoi(argv[3])), have = 0;
  if (cudaGetDeviceCount(&have) != cudaSuccess) have = 0;
  gpus = std::min(gpus, have);
  char* ring = huge_block(kRingPieces * kPiece);
  const double alone = read_ceiling(fd, size, threads, ring);
  printf("read alone: %d threads %.1f GB/s", threads, alone);
  if (gpus == 0) {
    printf("\n");
    return 0;
  }
  std::vector<char*> host(gpus);
  std::vector<void*> dev(gpus);
  std::vector<cudaStream_t> stream(gpus);
  for (int g = 0; g < gpus; ++g) {
    check(cudaSetDevice(g), "cudaSetDevice");
    host[g] = huge_block(kCopy * kCopyRing);
    check(cudaHostRegister(host[g], kCopy * kCopyRing, cudaHostRegisterPortable), "cudaHostRegister");
    check(cudaMalloc(&dev[g], kCopy * kCopyRing), "cudaMalloc");
    check(cudaStreamCreate(&stream[g]), "cudaStreamCreate");
  }
  // GB/s of all GPUs copying in without pause while `during` runs.
  auto copy_rate = [&](const auto& during) {
    std::atomic<bool> stop{false};
    std::vector<double> copied(gpus, 0);
    std::vector<std::thread> copiers;
    const auto t0 = Clock::now();
    for (int g = 0; g < gpus; ++g)
      copiers.emplace_back([&, g] {
        // A copy of each ring buffer stays queued, so the link keeps busy
        // while this thread waits for a core among the readers.
        check(cudaSetDevice(g), "cudaSetDevice");
        cudaEvent_t done[kCopyRing];
        for (auto& e : done) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
        for (size_t n = 0; !stop; ++n) {
          const size_t k = n % kCopyRing;
          if (n >= kCopyRing) {
            check(cudaEventSynchronize(done[k]), "cudaEventSynchronize");
            copied[g] += kCopy;
          }
          check(cudaMemcpyAsync(static_cast<char*>(dev[g]) + k * kCopy, host[g] + k * kCopy, kCopy,
                                cudaMemcpyHostToDevice, stream[g]),
                "cudaMemcpyAsync");
          check(cudaEventRecord(done[k], stream[g]), "cudaEventRecord");
        }
        check(cudaStreamSynchronize(stream[g]), "cudaStreamSynchronize");
        for (auto& e : done) cudaEventDestroy(e);
      });
    during();
    stop = true;
    for (auto& c : copiers) c.join();
    double total = 0;
    for (double c : copied) total += c;
    return total / seconds(t0) / 1e9;
  };
  // Copies alone first: idle copy links start slow, so this also warms them.
  const double copies_alone = copy_rate([] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); });
  double shared = 0;
  const double copies_shared = copy_rate([&] { shared = read_ceiling(fd, size, threads, ring); });
  printf("; copies alone %.1f GB/s; while %d GPU(s) copy in: read %.1f GB/s, copies %.1f GB/s\n", copies_alone, gpus,
         shared, copies_shared);
  return 0;
}
