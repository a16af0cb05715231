/* gen_customers: write a customer lookup file for the sales table of gen_sales.c, the second
   file of "revenue per customer segment" questions (a lookup join):
     customer_id  "C%07d" for 0 .. CUSTOMERS-1, in a shuffled order; 1 in 20 customers has no
                  row (their sales do not join), 1 in 50 has two rows (their sales join twice)
     segment      consumer, smb, enterprise, public
     country      two-letter code, 1 in 10 quoted with a comma ("US, east")
     since        a date 2015-01-01 .. 2024-12-31
     credit       decimal with 2 places, 0.00 .. 50000.00, empty (null) in 1 of 16 rows
   Usage: gen_customers CUSTOMERS SEED OUT.csv
   Build: cc -O2 -o gen_customers gen_customers.c
   Output is a function of CUSTOMERS and SEED only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state;
static uint64_t next(void) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return (uint64_t)(((unsigned __int128)next() * n) >> 64); }

static const char *segments[] = {"consumer", "smb", "enterprise", "public"};
static const char *countries[] = {"US", "DE", "JP", "BR", "IN", "FR", "NG", "AU"};

static void civil(int64_t days, int *y, int *m, int *d) { /* days since 1970-01-01 -> date */
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = (int)(yoe + era * 400 + (*m <= 2));
}

static void row(FILE *f, uint64_t id) {
  int y, m, d;
  civil(16436 + (int64_t)below(3653), &y, &m, &d); /* 2015-01-01 + up to ten years */
  fprintf(f, "C%07llu,%s,", (unsigned long long)id, segments[below(4)]);
  if (below(10) == 0) fprintf(f, "\"%s, east\",", countries[below(8)]);
  else fprintf(f, "%s,", countries[below(8)]);
  fprintf(f, "%04d-%02d-%02d,", y, m, d);
  if (below(16) == 0) fputc('\n', f);
  else {
    const uint64_t cents = below(5000001);
    fprintf(f, "%llu.%02llu\n", (unsigned long long)(cents / 100), (unsigned long long)(cents % 100));
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: gen_customers CUSTOMERS SEED OUT.csv\n");
    return 2;
  }
  const uint64_t n = strtoull(argv[1], 0, 10);
  state = strtoull(argv[2], 0, 10) * 0x2545f4914f6cdd1dULL + 7;
  FILE *f = fopen(argv[3], "w");
  if (!f) {
    perror(argv[3]);
    return 1;
  }
  uint64_t *ids = malloc(n * sizeof *ids);
  if (!ids && n) return 1;
  for (uint64_t i = 0; i < n; ++i) ids[i] = i;
  for (uint64_t i = n; i > 1; --i) { /* Fisher-Yates: lookup files are rarely sorted by key */
    const uint64_t j = below(i), t = ids[i - 1];
    ids[i - 1] = ids[j];
    ids[j] = t;
  }
  fputs("customer_id,segment,country,since,credit\n", f);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t pick = below(100);
    if (pick < 5) continue;
    row(f, ids[i]);
    if (pick < 7) row(f, ids[i]);
  }
  free(ids);
  return fclose(f) == 0 ? 0 : 1;
}
