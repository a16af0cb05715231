// The host's ceiling for reading a page-cached file into staging memory:
// THREADS threads pread 512 KiB pieces (the readers' piece size) of FILE in
// order into 8 huge-page buffers of 33 MiB (two GPUs' staging rings), as
// warpcsv's readers do, with no GPU, no copy to it and no waiting for one.
// gpu-check.sh prints it beside the scan's GB/s, because this ceiling differs
// between machines of the same kind.
//
//   cc -O2 -pthread -o read_ceiling scripts/read_ceiling.c
//   read_ceiling FILE THREADS...   # one line per thread count: best of 3 passes
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kPiece = 512 << 10, kRingPieces = 8 * 66 };  // 8 buffers of 33 MiB

static int fd;
static uint64_t size;
static atomic_uint_fast64_t next_piece;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static char* ring;

static void* reader(void* arg) {
  (void)arg;
  for (;;) {
    const uint64_t k = atomic_fetch_add(&next_piece, 1);
    const uint64_t at = k * (uint64_t)kPiece;
    if (at >= size) return NULL;
    const size_t len = size - at < kPiece ? size - at : kPiece;
    if (pread(fd, ring + (k % kRingPieces) * (uint64_t)kPiece, len, (off_t)at) != (ssize_t)len) {
      perror("pread");
      exit(1);
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FILE THREADS...\n", argv[0]);
    return 2;
  }
  fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  size = (uint64_t)st.st_size;
  const size_t bytes = (size_t)kRingPieces * kPiece;
  ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  madvise(ring, bytes, MADV_HUGEPAGE);
  memset(ring, 0, bytes);  // faulted in before the clock starts, as a pinned ring is
  for (int a = 2; a < argc; ++a) {
    const int threads = atoi(argv[a]);
    if (threads < 1) continue;
    double best = 0;
    for (int pass = 0; pass < 3; ++pass) {
      atomic_store(&next_piece, 0);
      pthread_t* th = calloc((size_t)threads, sizeof *th);
      const double t0 = now();
      for (int t = 0; t < threads; ++t) pthread_create(&th[t], NULL, reader, NULL);
      for (int t = 0; t < threads; ++t) pthread_join(th[t], NULL);
      const double gbs = size / (now() - t0) / 1e9;
      if (gbs > best) best = gbs;
      free(th);
    }
    printf("read ceiling: %d threads, %.1f GB/s (best of 3 passes over %.2f GB)\n", threads, best, size / 1e9);
  }
  return 0;
}
