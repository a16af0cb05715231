// The cost of memory a process touches for the first time: maps MIB
// mebibytes (with MADV_HUGEPAGE or without), writes a byte a 4 KiB page,
// unmaps, three times in one process. On a VM whose host takes freed memory
// back, the first pass can cost many times the later ones, and 2 MiB pages
// more than 4 KiB ones: what growing group tables and holistic lists pay.
// cc -O2 -o first_touch_probe tools/lab/first_touch_probe.c && ./first_touch_probe 256 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MIB HUGE(0|1)\n", argv[0]);
    return 2;
  }
  const size_t bytes = (size_t)atoi(argv[1]) << 20;
  const int huge = atoi(argv[2]);
  for (int pass = 1; pass <= 3; ++pass) {
    char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);
    const double t = now();
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    const double s = now() - t;
    printf("%zu MiB, %s pages, pass %d: %.3f s, %.0f MB/s\n", bytes >> 20, huge ? "2 MiB" : "4 KiB", pass, s,
           bytes / s / 1e6);
    munmap(p, bytes);
  }
  return 0;
}
