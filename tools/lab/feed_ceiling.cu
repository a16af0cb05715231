// The ceiling of warpcsv's GPU feed with no parsing: THREADS readers pread
// 2 MiB pieces of FILE into SLOTS shared pinned slots and copy each to a GPU
// at once (16 pieces per batch, batches alternating over GPUS GPUs, 8 copy
// streams per GPU), as src/cuda does, but with no kernels, no batch tails and
// no state chain. Other ways of filling a slot, measured with it:
//   mode 0: pread straight into the slot (warpcsv's way);
//   mode 1: pread into a per-thread buffer that stays in the cache, memcpy into the slot;
//   mode 2: the same with non-temporal stores;
//   mode 3: pread into the slot, then flush it from the cache (clflushopt);
//   mode 4: pread into the slot, queue its copy only after the thread's next piece is read.
// Mode 0 was the fastest; warpcsv's in-process q1 runs near its ceiling, which
// the host's memory sets, not the GPUs (numbers: docs/performance.md, "Feed ceiling").
//
//   nvcc -O2 -std=c++17 -arch=sm_90 -Xcompiler -mavx2,-mclflushopt -o feed_ceiling tools/lab/feed_ceiling.cu
//   feed_ceiling FILE THREADS SLOTS [GPUS [MODES]]   (MODES: digits run in turn, default 0123401234)
#include <cuda_runtime.h>
#include <fcntl.h>
#include <immintrin.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1); } } while (0)
constexpr size_t kPiece = 2 << 20;
int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: feed_ceiling FILE THREADS SLOTS [GPUS [MODES]]\n");
    return 2;
  }
  const char* path = argv[1];
  const int T = atoi(argv[2]), S = atoi(argv[3]);
  int ngpu = 0;
  CK(cudaGetDeviceCount(&ngpu));
  if (argc > 4) ngpu = atoi(argv[4]);
  int fd = open(path, O_RDONLY);
  if (fd < 0 || T < 1 || S < 1 || ngpu < 1) {
    fprintf(stderr, "feed_ceiling: cannot open %s, or no GPU, or no threads or slots\n", path);
    return 1;
  }
  struct stat st;
  fstat(fd, &st);
  const size_t size = st.st_size;
  std::vector<char*> dev(ngpu);
  std::vector<std::vector<cudaStream_t>> streams(ngpu, std::vector<cudaStream_t>(8));
  std::vector<std::vector<cudaEvent_t>> ev(ngpu, std::vector<cudaEvent_t>(S));
  for (int g = 0; g < ngpu; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaMalloc(&dev[g], 64 << 20));
    for (auto& s : streams[g]) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto& e : ev[g]) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  char* pinned;
  CK(cudaHostAlloc(&pinned, S * kPiece, cudaHostAllocPortable));
  memset(pinned, 0, S * kPiece);
  const char* modes = argc > 5 ? argv[5] : "0123401234";
  for (const char* mc = modes; *mc; ++mc) {
    const int mode = *mc - '0';
    if (mode < 0 || mode > 4) continue;
    std::mutex m;
    std::condition_variable cv;
    std::deque<int> free_;
    std::vector<cudaEvent_t> last(S, nullptr);
    for (int i = 0; i < S; ++i) free_.push_back(i);
    auto take = [&] {
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, [&] { return !free_.empty(); });
      int i = free_.front();
      free_.pop_front();
      cudaEvent_t e = last[i];
      l.unlock();
      if (e) CK(cudaEventSynchronize(e));
      return i;
    };
    auto give = [&](int i, cudaEvent_t e) {
      { std::lock_guard<std::mutex> l(m); last[i] = e; free_.push_back(i); }
      cv.notify_one();
    };
    std::atomic<size_t> next{0};
    auto copy = [&](int slot, size_t at, size_t len) {
      const size_t p = at / kPiece, batch = p / 16;
      const int g = batch % ngpu;
      CK(cudaSetDevice(g));
      cudaStream_t s = streams[g][(batch / ngpu) % 8];
      CK(cudaMemcpyAsync(dev[g] + (p % 32) * kPiece, pinned + slot * kPiece, len, cudaMemcpyHostToDevice, s));
      CK(cudaEventRecord(ev[g][slot], s));
      give(slot, ev[g][slot]);
    };
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> th;
    for (int t = 0; t < T; ++t)
      th.emplace_back([&] {
        char* hot = static_cast<char*>(aligned_alloc(4096, kPiece));
        memset(hot, 0, kPiece);
        int held = -1;
        size_t held_at = 0, held_len = 0;
        for (;;) {
          const size_t at = next.fetch_add(kPiece);
          if (at >= size) break;
          const size_t len = size - at < kPiece ? size - at : kPiece;
          const int slot = take();
          char* dst = pinned + slot * kPiece;
          if (mode == 1 || mode == 2) {
            if (pread(fd, hot, len, at) != (ssize_t)len) abort();
            if (mode == 1) memcpy(dst, hot, len);
            else {
              for (size_t i = 0; i + 32 <= len; i += 32)
                _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_load_si256(reinterpret_cast<const __m256i*>(hot + i)));
              memcpy(dst + len / 32 * 32, hot + len / 32 * 32, len % 32);
              _mm_sfence();
            }
          } else {
            if (pread(fd, dst, len, at) != (ssize_t)len) abort();
            if (mode == 3) { for (size_t i = 0; i < len; i += 64) _mm_clflushopt(dst + i); _mm_sfence(); }
          }
          if (mode == 4) {
            if (held >= 0) copy(held, held_at, held_len);
            held = slot; held_at = at; held_len = len;
          } else {
            copy(slot, at, len);
          }
        }
        if (held >= 0) copy(held, held_at, held_len);
        free(hot);
      });
    for (auto& x : th) x.join();
    for (int g = 0; g < ngpu; ++g) { CK(cudaSetDevice(g)); CK(cudaDeviceSynchronize()); }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("mode %d threads %d slots %d gpus %d: %.1f GB/s\n", mode, T, S, ngpu, size / s / 1e9);
  }
}
