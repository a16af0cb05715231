// Narrow rows in the shape of the One Billion Row Challenge: "station;temperature\n", no header,
// about 14 bytes a row. Station names are real-looking UTF-8 words made of syllables (some with
// accents), unique per station; each station has its own mean, and temperatures are normal
// around it with one decimal, within -99.9..99.9.
//
//   gen_stations ROWS STATIONS SEED OUT [THREADS]
//
// Rows are made in blocks, each from its own seed, so the file is the same whatever THREADS is:
// a first pass measures each block's bytes, a second writes every block at its offset.
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kBlockRows = 1 << 20, kNameBytes = 48 };

static const char* const kSyllables[] = {
    "ba", "ko", "ri", "san", "to", "mé", "lu", "nø", "ve", "da", "zü", "ha", "pol", "er", "gi", "ça",
    "mo", "ren", "tå", "li", "sé", "na", "bur", "gó", "fa", "ły", "wa", "ki", "os", "te", "ån", "du",
    "vi", "ra", "şe", "mu", "el", "dor", "ni", "quí"};
enum { kNumSyllables = sizeof kSyllables / sizeof kSyllables[0] };

static uint64_t rows_total, stations;
static uint64_t seed;
static int fd;
static uint64_t nblocks;
static uint64_t* block_bytes;  // pass 1: bytes of each block; pass 2: its offset
static char (*names)[kNameBytes];
static int* name_len;
static double* means;

static uint64_t splitmix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double uniform(uint64_t* s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

// Station i's name: syllables of the digits of i in base kNumSyllables (unique for every i), at
// least two, the first letter upper case.
static void make_name(uint64_t i) {
  char* out = names[i];
  int n = 0, count = 0;
  uint64_t v = i;
  do {
    const char* s = kSyllables[v % kNumSyllables];
    size_t len = strlen(s);
    memcpy(out + n, s, len);
    n += (int)len;
    v /= kNumSyllables;
    ++count;
  } while (v || count < 2);
  if (out[0] >= 'a' && out[0] <= 'z') out[0] = (char)(out[0] - 'a' + 'A');
  name_len[i] = n;
}

// Formats block b's rows into buf (when non-null); returns their bytes. Writes through `flush`
// in pieces of about 1 MiB when writing.
static uint64_t block(uint64_t b, int write_out) {
  uint64_t s = seed * 0x100000001b3ull + b;
  const uint64_t first = b * kBlockRows;
  const uint64_t last = first + kBlockRows < rows_total ? first + kBlockRows : rows_total;
  static __thread char buf[(1 << 20) + 128];
  size_t used = 0;
  uint64_t bytes = 0, at = write_out ? block_bytes[b] : 0;
  for (uint64_t r = first; r < last; ++r) {
    const uint64_t st = splitmix(&s) % stations;
    // Box-Muller; one normal per row keeps the stream simple.
    const double u1 = uniform(&s) + 1e-12, u2 = uniform(&s);
    double t = means[st] + 10.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    if (t > 99.9) t = 99.9;
    if (t < -99.9) t = -99.9;
    long tenths = lround(t * 10.0);
    char* p = buf + used;
    memcpy(p, names[st], (size_t)name_len[st]);
    int n = name_len[st];
    n += sprintf(p + n, ";%s%ld.%ld\n", tenths < 0 ? "-" : "", labs(tenths) / 10, labs(tenths) % 10);
    used += (size_t)n;
    if (used >= (1 << 20) || r + 1 == last) {
      if (write_out) {
        if (pwrite(fd, buf, used, (off_t)at) != (ssize_t)used) {
          perror("gen_stations: write");
          exit(1);
        }
        at += used;
      }
      bytes += used;
      used = 0;
    }
  }
  return bytes;
}

static int nthreads;
static int pass;
static void* worker(void* arg) {
  const long id = (long)arg;
  for (uint64_t b = (uint64_t)id; b < nblocks; b += (uint64_t)nthreads) {
    if (pass == 1) block_bytes[b] = block(b, 0);
    else block(b, 1);
  }
  return NULL;
}

static void run_pass(int p) {
  pass = p;
  pthread_t th[256];
  for (long i = 0; i < nthreads; ++i) pthread_create(&th[i], NULL, worker, (void*)i);
  for (int i = 0; i < nthreads; ++i) pthread_join(th[i], NULL);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: gen_stations ROWS STATIONS SEED OUT [THREADS]\n");
    return 2;
  }
  rows_total = (uint64_t)strtod(argv[1], NULL);
  stations = (uint64_t)strtod(argv[2], NULL);
  seed = strtoull(argv[3], NULL, 10);
  nthreads = argc > 5 ? atoi(argv[5]) : 1;
  if (nthreads < 1) nthreads = 1;
  if (nthreads > 256) nthreads = 256;
  if (stations < 1 || stations > (uint64_t)kNumSyllables * kNumSyllables * kNumSyllables) {
    fprintf(stderr, "gen_stations: STATIONS must be 1 to %d\n", kNumSyllables * kNumSyllables * kNumSyllables);
    return 2;
  }
  names = calloc(stations, kNameBytes);
  name_len = calloc(stations, sizeof *name_len);
  means = calloc(stations, sizeof *means);
  uint64_t s = seed ^ 0x5bd1e995u;
  for (uint64_t i = 0; i < stations; ++i) {
    make_name(i);
    means[i] = -20.0 + 50.0 * uniform(&s);
  }
  nblocks = (rows_total + kBlockRows - 1) / kBlockRows;
  block_bytes = calloc(nblocks + 1, sizeof *block_bytes);
  fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(argv[4]);
    return 1;
  }
  run_pass(1);
  uint64_t off = 0;
  for (uint64_t b = 0; b < nblocks; ++b) {
    const uint64_t n = block_bytes[b];
    block_bytes[b] = off;
    off += n;
  }
  run_pass(2);
  if (ftruncate(fd, (off_t)off) != 0 || close(fd) != 0) {
    perror(argv[4]);
    return 1;
  }
  return 0;
}
