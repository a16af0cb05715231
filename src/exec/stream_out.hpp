// Rows that stream out as they are produced, instead of being held for a
// re-read after a late value widens a column's type.
//
// Row output is held (up to 64 MiB, exec/driver.cpp) so that a value past the
// inference sample that widens a column can still drop it and read the input
// again. Rows whose printed text no widening can change need no hold: they go
// out at once (`| head` answers in milliseconds). When a widening comes after
// some went out, the input is read again all the same, and the bytes the new
// reading writes first must be the ones already out: they are checked (by a
// hash) and dropped, and the run goes on after them. Should they differ (a
// filter that keeps other rows under the wider type: pathological), the run
// stops with the --schema that avoids it, as held output past 64 MiB does.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/types.h>
#include <vector>

#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// Whether the rows of `plan` can stream out: row output (no agg, no sort, no
// assert) to standard output in a format that writes rows as they come (csv,
// tsv, json, ndjson), and either an input that cannot be read again (a
// widening then fails the run whether or not the rows were held), or printed
// text that no widening can change: every output column is computed from
// columns of a fixed type only (`fixed[c]`: given by --schema, or a string),
// or is a bare column printed as written (csv and tsv print its text whatever
// its type; json prints a number or bool by its type, so only dates and
// timestamps, strings either way, keep their text there).
bool rows_can_stream(const Plan& plan, const Options& opts, const std::vector<bool>& fixed, bool rereadable);

// The input columns `plan` only prints as written, in csv or tsv: bare
// columns of its rows that nothing else reads (no filter, no computation, no
// stage after the scan but limits). No type changes a byte of their output,
// so they are read as text: a later value cannot widen them, and standard
// input need not be read again for one.
std::vector<int> text_only_columns(const Plan& plan, const Options& opts);

// A 64-bit hash of a byte stream, the same however the bytes are cut.
class StreamHash {
 public:
  void add(const char* p, size_t n);
  uint64_t digest() const;

 private:
  void block(const unsigned char* p);
  uint64_t lane_[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull, 0x082efa98ec4e6c89ull};
  unsigned char held_[32];
  size_t nheld_ = 0;
  uint64_t total_ = 0;
};

// What went to standard output across the attempts of one run (an attempt is
// a reading of the input; a widening starts the next one).
class StreamedOutput {
 public:
  // One attempt's stream: what the writer writes goes to `dest`, past the
  // bytes earlier attempts put out (those are checked against them).
  class Attempt {
   public:
    Attempt(StreamedOutput& owner, std::FILE* dest);
    ~Attempt();
    Attempt(const Attempt&) = delete;
    Attempt& operator=(const Attempt&) = delete;
    std::FILE* file() const { return f_; }

   private:
    std::FILE* f_ = nullptr;
  };

  // `check`: hash what goes out, so that a later attempt can be checked
  // (false when the input cannot be read again).
  explicit StreamedOutput(bool check) : check_(check) {}
  // A type widened: the next attempt is checked against what went out.
  // Flushes the stream. `message`: the error should the check fail.
  void restart(const std::string& message);
  // Whether bytes went out (so later attempts must stream and be checked).
  bool started() const { return out_ > 0; }
  // Sends what was written through to the terminal or pipe; throws
  // OutputClosed when its reader went away, InputError when the new
  // attempt's bytes differ from those out.
  void flush();
  // At the end of an attempt: throws InputError unless every byte that went
  // out was written again the same.
  void check_complete() const;

 private:
  static ssize_t write(void* cookie, const char* buf, size_t n);
  [[noreturn]] void diverged() const;

  bool check_;
  std::FILE* dest_ = nullptr;
  uint64_t out_ = 0;   // bytes that went out, in all attempts
  uint64_t seen_ = 0;  // bytes this attempt wrote
  StreamHash sent_;    // of the bytes out
  StreamHash again_;   // of this attempt's first `out_` bytes
  bool differs_ = false;
  std::string message_;
};

}  // namespace warpcsv
