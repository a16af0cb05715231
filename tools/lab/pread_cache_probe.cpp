// How fast host threads can `pread` a page-cached file when the destination
// stays in their cores' caches, with no GPU: THREADS threads (8..32) read
// PIECE-byte pieces of FILE in order, each into its own BUFS buffers in turn
// (BUFS = 1 or 2: cache-hot; 8 x 2 MiB per thread: spills to memory). It showed
// that reading alone is not what bounds the GPUs' feed (docs/performance.md,
// "Host read and copy ceilings").
//
//   g++ -O2 -pthread -o pread_cache_probe tools/lab/pread_cache_probe.cpp
//   pread_cache_probe FILE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: pread_cache_probe FILE\n");
    return 2;
  }
  const char* path = argv[1];
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    std::perror(path);
    return 1;
  }
  struct stat st;
  fstat(fd, &st);
  const size_t size = st.st_size;
  for (size_t piece : {2ul << 20, 512ul << 10}) {
    for (int bufs : {1, 2, 8}) {
      for (int T : {8, 16, 24, 28, 32}) {
        std::atomic<size_t> next{0};
        std::atomic<int> ready{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> th;
        for (int t = 0; t < T; ++t)
          th.emplace_back([&] {
            char* mem = static_cast<char*>(mmap(nullptr, piece * bufs, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
            madvise(mem, piece * bufs, MADV_HUGEPAGE);
            for (size_t i = 0; i < piece * bufs; i += 4096) mem[i] = 1;
            ++ready;
            while (!go) {}
            size_t k = 0;
            for (;;) {
              size_t at = next.fetch_add(piece);
              if (at >= size) break;
              size_t len = size - at < piece ? size - at : piece;
              if (pread(fd, mem + (k++ % bufs) * piece, len, at) != (ssize_t)len) abort();
            }
            munmap(mem, piece * bufs);
          });
        while (ready < T) {}
        auto t0 = std::chrono::steady_clock::now();
        go = true;
        for (auto& x : th) x.join();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        printf("piece %zu KiB bufs/thread %d threads %d: %.1f GB/s\n", piece >> 10, bufs, T, size / s / 1e9);
      }
    }
  }
}
