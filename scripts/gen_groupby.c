/* A db-benchmark G1-shaped table (id1..id6, v1, v2, v3) for scripts/bench.sh and gpu-check.sh:
   gen ROWS K SEED OUT THREADS. id1,id2 "id%03d" of K; id3 "id%010d" of ROWS/K;
   id4,id5 1..K; id6 1..ROWS/K; v1 1..5; v2 1..15; v3 [0,100) with up to 6 decimals. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static uint64_t rows, k, seed;
typedef struct { uint64_t b, e; char *buf; size_t len; } part;
static uint64_t nx(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint64_t below(uint64_t *s, uint64_t n) { return (uint64_t)(((unsigned __int128)nx(s) * n) >> 64); }
static char *pu(char *p, uint64_t v) {
  char t[24]; int n = 0;
  do { t[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  while (n) *p++ = t[--n];
  return p;
}
static char *pp(char *p, uint64_t v, int w) {
  for (int i = w - 1; i >= 0; i--) { p[i] = (char)('0' + v % 10); v /= 10; }
  return p + w;
}
static void *work(void *a) {
  part *pt = a;
  uint64_t s = seed * 0x100000001b3ULL + pt->b, g3 = rows / k ? rows / k : 1;
  char *p = pt->buf = malloc((pt->e - pt->b) * 80 + 64);
  for (uint64_t i = pt->b; i < pt->e; i++) {
    *p++ = 'i'; *p++ = 'd'; p = pp(p, 1 + below(&s, k), 3); *p++ = ',';
    *p++ = 'i'; *p++ = 'd'; p = pp(p, 1 + below(&s, k), 3); *p++ = ',';
    *p++ = 'i'; *p++ = 'd'; p = pp(p, 1 + below(&s, g3), 10); *p++ = ',';
    p = pu(p, 1 + below(&s, k)); *p++ = ',';
    p = pu(p, 1 + below(&s, k)); *p++ = ',';
    p = pu(p, 1 + below(&s, g3)); *p++ = ',';
    p = pu(p, 1 + below(&s, 5)); *p++ = ',';
    p = pu(p, 1 + below(&s, 15)); *p++ = ',';
    uint64_t v3 = below(&s, 100000000ULL), fr = v3 % 1000000;
    p = pu(p, v3 / 1000000);
    if (fr) {
      char f[6]; int n = 6;
      for (int d = 5; d >= 0; d--) { f[d] = (char)('0' + fr % 10); fr /= 10; }
      while (n > 0 && f[n - 1] == '0') n--;
      *p++ = '.'; memcpy(p, f, n); p += n;
    }
    *p++ = '\n';
  }
  pt->len = (size_t)(p - pt->buf);
  return NULL;
}
int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: gen ROWS K SEED OUT [THREADS]\n"); return 2; }
  rows = strtoull(argv[1], 0, 10); k = strtoull(argv[2], 0, 10); seed = strtoull(argv[3], 0, 10);
  int nt = argc > 5 ? atoi(argv[5]) : 8;
  FILE *f = fopen(argv[4], "wb");
  if (!f) { perror(argv[4]); return 1; }
  fputs("id1,id2,id3,id4,id5,id6,v1,v2,v3\n", f);
  const uint64_t block = 1000000;
  for (uint64_t b = 0; b < rows; b += block * nt) {
    part ps[64]; pthread_t th[64]; int n = 0;
    for (; n < nt && b + n * block < rows; n++) {
      ps[n].b = b + n * block;
      ps[n].e = ps[n].b + block < rows ? ps[n].b + block : rows;
      pthread_create(&th[n], 0, work, &ps[n]);
    }
    for (int i = 0; i < n; i++) {
      pthread_join(th[i], 0);
      fwrite(ps[i].buf, 1, ps[i].len, f);
      free(ps[i].buf);
    }
  }
  return fclose(f) ? 1 : 0;
}
