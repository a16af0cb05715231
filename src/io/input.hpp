// The input as one table: every file (or standard input) opened, its leading
// lines skipped, its header read and checked against the first file's, and
// its data handed out as windows of bytes that start at a row start.
#pragma once
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/grow_array.hpp"
#include "warpcsv/core/dialect.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/plan.hpp"
#include "warpcsv/table.hpp"

namespace warpcsv {

class ByteSource;
class StreamAhead;

// A contiguous run of one source's data bytes. `offset` is the position of
// data[0] in the source's data (after the header); data[0] is a row start.
struct Window {
  const char* data = nullptr;
  uint64_t size = 0;
  uint64_t offset = 0;
  bool at_eof = false;
};

// One input file (or stdin) positioned after its header.
class InputSource {
 public:
  InputSource(const std::string& path, const DialectOptions& opts, const Dialect& dialect);
  ~InputSource();
  InputSource(const InputSource&) = delete;
  InputSource& operator=(const InputSource&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<std::string>& header() const { return header_; }
  // Lines before the first data row (skipped lines, comments, the header).
  uint64_t header_lines() const { return header_lines_; }
  // Data bytes of a regular file (for progress), else 0.
  uint64_t size_bytes() const { return file_size_ > data_start_ ? file_size_ - data_start_ : 0; }
  // Whether the whole input can be read again (a restart after widening a type).
  bool rereadable() const { return rereadable_; }
  // --delimiter auto: what the sniffer chose from this source's first bytes (else empty).
  const std::optional<SniffResult>& sniffed() const { return sniffed_; }

  // Regular files: data bytes can be read at any offset, from several threads.
  bool can_pread() const { return fd_ >= 0; }
  // Reads data bytes [from, from + n) into dst (fewer only at the end of the
  // file); only when can_pread(). Thread-safe; a read error throws InputError.
  uint64_t pread(char* dst, uint64_t n, uint64_t from) const;

  // Makes bytes [from, from + want) of the data available (fewer at EOF;
  // more may be returned). `from` must not go backwards. With `wait_ms` >= 0
  // a stream may return fewer: once bytes past what it held before have
  // come, when wait_ms have passed (0: when no more has come). A limit over
  // `tail -f` then answers as rows come instead of after a full window.
  // When bytes past `from` are held already, wait_ms counts from the call
  // even for the first new byte. kTakeReady: the bytes held and read ahead
  // now, without waiting, unless none lie past `from` (then kWaitForNew): a
  // scan that made progress goes on with rows already come. kWaitForNew: at
  // least one new byte (or the end), then what is ready.
  Window window(uint64_t from, uint64_t want, int wait_ms = kWaitForAll);
  static constexpr int kWaitForAll = -1;
  static constexpr int kTakeReady = -2;
  static constexpr int kWaitForNew = -3;
  // Up to `n` bytes from the start of the data, for type inference: a slow
  // stream gives what it sent in its first second.
  Window sample(uint64_t n) { return window(0, n, 1000); }
  // Only data bytes [begin, end) are this run's (a rank's share; both row
  // starts): windows and reads see them as the whole data, and line numbers
  // count the `lines_before` begin. Regular files only.
  void keep_range(uint64_t begin, uint64_t end, uint64_t lines_before);
  // None of this source's rows are this run's (a rank's share without it).
  void keep_nothing();
  // A regular file's window [from, from + want) will be asked for next: a
  // helper thread maps it and faults its pages in now, while the caller works
  // on the current window (which stays mapped), and unmaps the window before
  // that. The next window() call takes the mapping when it asks for the same
  // bytes. Nothing for a stream.
  // Returns the bytes it maps (0: none).
  uint64_t map_ahead(uint64_t from, uint64_t want);
  // The window map_ahead maps, waiting until it is mapped, without taking it:
  // the next window() for the same bytes returns it. No data when nothing is
  // mapped ahead. Not to be called while window() or itself runs.
  Window window_ahead();
  // The scan is done with this source: its buffers and its read-ahead go
  // (a run over many compressed files holds one file's at a time).
  void done();

 private:
  void read_header(const DialectOptions& opts, const Dialect& dialect);
  // Stream: read until the buffer covers `upto` (or, with wait_ms >= 0, it
  // has grown and wait_ms have passed; a plain read that comes short, before
  // the read-ahead starts, counts as that).
  // `time_first_byte`: wait_ms limits the wait for a first new byte too.
  bool fill_stream(uint64_t upto, int wait_ms, bool time_first_byte);

  std::string name_;
  std::shared_ptr<ByteSource> src_;
  std::unique_ptr<StreamAhead> ahead_;  // streams, once opened: read ahead of the windows
  bool opened_ = false;                 // the header is read
  bool finished_ = false;               // a stream after done()
  std::vector<std::string> header_;
  uint64_t header_lines_ = 0;
  bool rereadable_ = false;
  std::optional<SniffResult> sniffed_;

  // Regular files are mapped window by window; streams are buffered.
  int fd_ = -1;
  uint64_t file_size_ = 0;
  uint64_t data_start_ = 0;  // file offset of the first data byte
  // File bytes [raw, end) mapped from the page that holds raw.
  struct Mapping {
    void* addr = nullptr;
    uint64_t len = 0;
    uint64_t raw = 0, end = 0;  // the file's bytes it was asked for
  };
  Mapping current_;                // the window given last
  std::future<Mapping> next_map_;  // map_ahead's
  Mapping mapped_ahead_;           // map_ahead's, once window_ahead waited for it
  Mapping retired_;                // the window before current_: unmapped by the next map_ahead
  static Mapping map_range(int fd, const char* path, uint64_t raw, uint64_t end);
  Window window_of(const Mapping& m) const;  // the bytes m was asked for
  static void unmap(Mapping& m) noexcept;  // and forgets it
  void unmap_all();

  // Stream: bytes [buf_offset_, buf_offset_ + buf_.size()). It grows with
  // realloc: a vector's copy held the old and the new window at once while
  // a long row doubled it.
  GrowArray<char> buf_;
  uint64_t buf_offset_ = 0;
  bool stream_eof_ = false;
  bool kept_nothing_ = false;  // keep_nothing(): no data at all
};

// All inputs of a run, with the table schema they share.
struct InputSet {
  std::vector<std::unique_ptr<InputSource>> sources;
  std::vector<std::string> column_names;
  Dialect dialect;

  static InputSet open(const Options& opts);
  bool rereadable() const;
};

// Inference reads the first kInferSampleBytes of the first source, in pieces
// of at least kInferPieceBytes on `threads` threads.
constexpr uint64_t kInferSampleBytes = 1 << 20;
constexpr uint64_t kInferPieceBytes = 64 << 10;

// The narrowest types that hold the sampled rows of the first source, with
// --schema overrides applied. `unobserved` (optional) gets, per column,
// whether the sample held no value for it (no evidence for any type);
// `longest_row` (optional) the bytes of the sample's longest row, its
// terminator included (a row the sample cuts counts the bytes sampled; 0:
// no data).
std::vector<OutputColumn> infer_schema(InputSet& in, const Options& opts, int threads,
                                       std::vector<bool>* unobserved = nullptr, uint64_t* longest_row = nullptr);

// Per column of `schema` read as a string: the tokens that stand for a missing value (NA,
// NULL, N/A, -, ...) among the sampled fields of the first source when its other fields are
// numbers, else none. For the --null fix in the message of a numeric use of such a column.
std::vector<std::vector<std::string>> null_like_tokens(InputSet& in, const Options& opts,
                                                       const std::vector<OutputColumn>& schema);

// The first sampled value of `column` that is text, when the column's other
// values are numbers: what made it a string column, for the message of a
// numeric use of it. `numbers` is the type its numbers alone would have.
struct SampledText {
  std::string text, source;
  uint64_t line = 0, column = 0;
  ColumnType numbers;
};
std::optional<SampledText> text_among_numbers(InputSet& in, const Options& opts, size_t column);

}  // namespace warpcsv
