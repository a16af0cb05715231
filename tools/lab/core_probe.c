// How much one thread's work slows when every core runs the same: a loop of
// independent integer operations (high IPC, the kind that suffers when two
// threads share a physical core's units) and a chain of dependent
// multiplies (latency bound, which shares well), each timed alone and on 2,
// 4, 8 and N threads at once. Per thread the same work; the printed time is
// the slowest thread's. A VM's vCPUs that are hyperthreads of fewer cores
// show the independent loop slowing near 2x from N/2 threads on, where
// frequency alone slows both loops alike.
//
//   cc -O2 -pthread -o core_probe tools/lab/core_probe.c && ./core_probe 16
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile uint64_t sink;
static int kind;  // 0: independent adds and xors; 1: dependent multiplies

static void* work(void* arg) {
  double* seconds = arg;
  const double t0 = now();
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
  if (kind == 0) {
    for (uint64_t i = 0; i < 400000000ull; ++i) {
      a += i; b ^= i; c += b; d ^= a; e += i >> 1; f ^= e; g += d; h ^= c;
      __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    }
  } else {
    for (uint64_t i = 0; i < 100000000ull; ++i) a = a * 0x9e3779b97f4a7c15ull + i;
  }
  sink = a + b + c + d + e + f + g + h;
  *seconds = now() - t0;
  return NULL;
}

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? atoi(argv[1]) : 16;
  int counts[8], n = 0;
  for (int t = 1; t < max_threads; t *= 2) counts[n++] = t;
  counts[n++] = max_threads;
  for (kind = 0; kind < 2; ++kind) {
    printf("%s:", kind == 0 ? "independent integer ops" : "dependent multiplies");
    for (int k = 0; k < n; ++k) {
      pthread_t th[256];
      double s[256], worst = 0;
      for (int t = 0; t < counts[k]; ++t) pthread_create(&th[t], NULL, work, &s[t]);
      for (int t = 0; t < counts[k]; ++t) {
        pthread_join(th[t], NULL);
        if (s[t] > worst) worst = s[t];
      }
      printf("  %d threads %.3f s", counts[k], worst);
    }
    printf("\n");
  }
  return 0;
}
