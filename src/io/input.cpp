#include "io/input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "runtime/parallel.hpp"
#include "exec/partitioner.hpp"
#include "io/row_issue.hpp"
#include "io/stream_ahead.hpp"
#include "warpcsv/core/tokenize.hpp"
#include "warpcsv/core/utf8.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {
// A stream is read ahead in blocks of this size, at most this far.
constexpr size_t kStreamBlockBytes = 4u << 20;
constexpr size_t kStreamAheadBytes = 64u << 20;

// Without a header, the table's width: the field count most of the first rows
// have (the earliest such count on a tie), so one ragged first row is one bad
// row, not the width of every other. Rows the window cuts are not counted.
uint32_t common_field_count(const Dialect& dialect, const char* p, uint64_t pos, uint64_t n, bool at_eof) {
  constexpr int kRows = 1000;
  std::vector<std::pair<uint32_t, int>> counts;  // field count, rows; in order of first appearance
  for (int row = 0; row < kRows && pos < n;) {
    const RowResult r = parse_row(dialect, p, pos, n, at_eof, [](uint32_t, uint64_t, uint64_t, uint8_t) {});
    if (r.incomplete) break;
    pos = r.next;
    if (r.comment || r.empty || r.error != RowError::None) continue;
    ++row;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == r.fields; });
    if (it == counts.end()) counts.emplace_back(r.fields, 1);
    else ++it->second;
  }
  uint32_t best = 1;
  int most = 0;
  for (const auto& [fields, rows] : counts)
    if (rows > most) best = fields, most = rows;
  return best;
}

uint64_t page_size() {
  static const uint64_t p = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return p;
}
}  // namespace

InputSource::InputSource(const std::string& path, const DialectOptions& opts,
                         const Dialect& dialect)
    : src_(open_source(path)) {
  name_ = src_->name();
  // Regular uncompressed files are mapped: no copy, and memory stays bounded
  // because each window's mapping is dropped before the next.
  if (src_->can_pread() && path != "-") {
    fd_ = ::open(path.c_str(), O_RDONLY);
    struct stat st{};
    if (fd_ >= 0 && fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      file_size_ = static_cast<uint64_t>(st.st_size);
      rereadable_ = true;
    } else if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  if (fd_ < 0 && path != "-") {  // compressed files can be read again; pipes cannot
    struct stat st{};
    rereadable_ = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }
  if (opts.delimiter_auto) {  // look at the first bytes before any of them is read as a header
    const Window w = window(0, kDelimiterSniffBytes);
    sniffed_ = sniff_delimiter(w.data, static_cast<size_t>(w.size), w.at_eof, opts.quote,
                               opts.escape, opts.comment, opts.skip_lines);
    read_header(opts, make_dialect(sniffed_->delimiter, opts.quote, opts.escape, opts.comment));
  } else {
    read_header(opts, dialect);
  }
  // From here on a stream is read ahead (see fill_stream); opening every
  // input reads only its header, so inputs not yet scanned hold no blocks.
  opened_ = true;
}

void InputSource::done() {
  finished_ = fd_ < 0;  // a file can be mapped again; a stream's bytes are gone
  ahead_.reset();
  buf_ = GrowArray<char>();
  unmap_all();
}

InputSource::~InputSource() {
  unmap_all();
  if (fd_ >= 0) ::close(fd_);
}

void InputSource::unmap(Mapping& m) noexcept {
  if (m.addr) {
    forget_mapped_file(m.addr);
    munmap(m.addr, m.len);
  }
  m = Mapping{};
}

void InputSource::unmap_all() {
  if (next_map_.valid()) {
    Mapping m = next_map_.get();
    unmap(m);
  }
  unmap(mapped_ahead_);
  unmap(retired_);
  unmap(current_);
}

// Maps file bytes [raw, end) (from the page before raw); addr is null when mmap fails.
InputSource::Mapping InputSource::map_range(int fd, const char* path, uint64_t raw, uint64_t end) {
  Mapping m;
  m.raw = raw;
  m.end = end;
  const uint64_t base = raw / page_size() * page_size();
  m.len = end - base;
  void* p = mmap(nullptr, m.len, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(base));
  if (p == MAP_FAILED) return m;
  m.addr = p;
  note_mapped_file(p, m.len, path);
  madvise(p, m.len, MADV_SEQUENTIAL);  // advice values are not flags: one call each
  madvise(p, m.len, MADV_WILLNEED);
  return m;
}

uint64_t InputSource::map_ahead(uint64_t from, uint64_t want) {
  if (fd_ < 0 || kept_nothing_ || next_map_.valid() || mapped_ahead_.addr) return 0;
  const uint64_t raw = data_start_ + from;
  if (raw >= file_size_) return 0;
  const uint64_t end = std::min(file_size_, raw + want);
  Mapping old = retired_;
  retired_ = Mapping{};
  next_map_ = std::async(std::launch::async, [fd = fd_, path = name_.c_str(), raw, end, old]() mutable {
    unmap(old);
    Mapping m = map_range(fd, path, raw, end);
#if defined(MADV_POPULATE_READ)
    // Page faults taken here, not by the threads that split the window.
    if (m.addr) madvise(m.addr, m.len, MADV_POPULATE_READ);
#endif
    return m;
  });
  return end - raw;
}

Window InputSource::window_ahead() {
  if (next_map_.valid()) mapped_ahead_ = next_map_.get();
  return mapped_ahead_.addr ? window_of(mapped_ahead_) : Window{};
}

Window InputSource::window_of(const Mapping& m) const {
  Window w;
  w.offset = m.raw - data_start_;
  w.data = static_cast<const char*>(m.addr) + (m.raw - m.raw / page_size() * page_size());
  w.size = m.end - m.raw;
  w.at_eof = m.end == file_size_;
  return w;
}

bool InputSource::fill_stream(uint64_t upto, int wait_ms, bool time_first_byte) {
  bool came_short = false;
  while (!stream_eof_ && !came_short && buf_offset_ + buf_.size() < upto) {
    const size_t have = buf_.size();
    const size_t need = static_cast<size_t>(upto - buf_offset_ - have);
    const size_t ask = std::max<size_t>(need, 1 << 16);
    buf_.resize(have + ask);
    size_t got = 0;
    while (got < ask) {
      // Streams are read (and decompressed) on a thread of their own once
      // opened, while the windows before are scanned: `cat FILE |` and
      // gzip no longer wait for the scan, nor the scan for them.
      if (!ahead_ && opened_) ahead_ = std::make_unique<StreamAhead>(src_, kStreamBlockBytes, kStreamAheadBytes);
      const size_t asked = ask - got;
      if (wait_ms == kTakeReady) {  // what the read-ahead holds now, no waiting (0 is not the end)
        const size_t n = ahead_ ? ahead_->read_ready(buf_.data() + have + got, asked) : 0;
        got += n;
        if (n < asked) {
          came_short = true;
          break;
        }
        continue;
      }
      // Bytes already held for the window: the time limit counts from now,
      // not from a first new byte (`tail -f` of a file that does not grow).
      const bool timed_first = wait_ms >= 0 && time_first_byte;
      const size_t n = !ahead_         ? src_->read(buf_.data() + have + got, asked)
                       : wait_ms >= 0 ? ahead_->read_some(buf_.data() + have + got, asked, wait_ms, !timed_first)
                                      : ahead_->read(buf_.data() + have + got, asked);
      if (n == 0 && timed_first && ahead_) {
        came_short = true;  // nothing came in time; not the end
        break;
      }
      if (n == 0) {
        stream_eof_ = true;
        break;
      }
      got += n;
      if (wait_ms >= 0 && n < asked) {
        came_short = true;
        break;
      }
    }
    buf_.resize(have + got);
  }
  return buf_offset_ + buf_.size() >= upto;
}

void InputSource::keep_range(uint64_t begin, uint64_t end, uint64_t lines_before) {
  WCSV_EXPECTS(fd_ >= 0 && begin <= end && data_start_ + end <= file_size_, "a share of a stream or past its end");
  file_size_ = data_start_ + end;
  data_start_ += begin;
  header_lines_ += lines_before;
}

void InputSource::keep_nothing() {
  if (fd_ >= 0) file_size_ = data_start_;
  kept_nothing_ = true;
}

uint64_t InputSource::pread(char* dst, uint64_t n, uint64_t from) const {
  WCSV_EXPECTS(fd_ >= 0, "pread on a stream");
  // Not past the data's end: a share (keep_range) ends before the file does.
  n = data_start_ + from >= file_size_ ? 0 : std::min(n, file_size_ - data_start_ - from);
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd_, dst + got, n - got, static_cast<off_t>(data_start_ + from + got));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw InputError("cannot read " + name_ + ": " + std::strerror(errno));
    }
    if (r == 0) break;
    got += static_cast<uint64_t>(r);
  }
  return got;
}

Window InputSource::window(uint64_t from, uint64_t want, int wait_ms) {
  const uint64_t raw = data_start_ + from;
  Window w;
  w.offset = from;
  if (kept_nothing_) {
    w.at_eof = true;
    return w;
  }
  if (fd_ >= 0) {
    const uint64_t end = std::min(file_size_, raw + want);
    Mapping ahead = mapped_ahead_;
    mapped_ahead_ = Mapping{};
    if (next_map_.valid()) ahead = next_map_.get();
    if (ahead.addr && (ahead.raw != raw || ahead.end != end)) unmap(ahead);  // not the bytes asked for
    if (current_.addr) {
      // Kept mapped until the next map_ahead, which unmaps it on its thread.
      if (ahead.addr && !retired_.addr) retired_ = current_;
      else unmap(current_);
      current_ = Mapping{};
    }
    if (raw >= file_size_) {
      w.at_eof = true;
      return w;
    }
    // A file truncated while it is read (logrotate's copytruncate): pages
    // past its new end would fault (SIGBUS). Caught here for each window;
    // one truncated during a window ends the run through the SIGBUS handler.
    struct stat now {};
    if (fstat(fd_, &now) == 0 && static_cast<uint64_t>(now.st_size) < end)
      throw InputError(name_ + ": the file shrank from " + std::to_string(file_size_) + " to " +
                       std::to_string(now.st_size) + " bytes while it was read (truncated by another process?); " +
                       "run again once nothing writes it, or read a copy");
    current_ = ahead.addr ? ahead : map_range(fd_, name_.c_str(), raw, end);
    if (!current_.addr) throw ResourceError("cannot map " + name_ + ": " + std::strerror(errno));
    return window_of(current_);
  }
  // Stream: drop what lies before `raw`, then read up to raw + want.
  WCSV_EXPECTS(!finished_, "a stream read again after done()");
  WCSV_EXPECTS(raw >= buf_offset_, "stream windows must move forward");
  const uint64_t drop = std::min<uint64_t>(raw - buf_offset_, buf_.size());
  if (drop) {
    buf_.drop_front(static_cast<size_t>(drop));
    buf_offset_ += drop;
  }
  // Waiting for all: a byte past the window too, so that at_eof is known when
  // the stream ends right there (a header read may have taken the rest).
  // Taking what is ready: waiting (for a first new byte) only when no byte
  // past `raw` is held.
  bool time_first_byte = buf_offset_ + buf_.size() > raw;  // bytes are held already
  if (wait_ms == kTakeReady && !time_first_byte) wait_ms = kWaitForNew;
  if (wait_ms == kWaitForNew) wait_ms = 0, time_first_byte = false;
  fill_stream(raw + want + (wait_ms == kWaitForAll ? 1 : 0), wait_ms, time_first_byte);
  if (raw >= buf_offset_ + buf_.size()) {  // at or past the end of the stream
    w.at_eof = stream_eof_;
    return w;
  }
  w.data = buf_.data() + (raw - buf_offset_);
  w.size = buf_offset_ + buf_.size() - raw;
  w.at_eof = stream_eof_;
  return w;
}

void InputSource::read_header(const DialectOptions& opts, const Dialect& dialect) {
  uint64_t want = 1 << 16;
  for (;;) {
    data_start_ = 0;
    // A header line that has come is enough: a slow stream's need not fill `want`.
    Window w = window(0, want, 0);
    const char* p = w.data;
    const uint64_t n = w.size;
    uint64_t pos = bom_bytes(p, n), lines = 0;
    bool need_more = false;
    if (n >= 2 && ((p[0] == '\xFF' && p[1] == '\xFE') || (p[0] == '\xFE' && p[1] == '\xFF')))
      throw InputError(name_ + ": the file looks like UTF-16 (it starts with a UTF-16 byte order mark); "
                       "convert it first: iconv -f UTF-16 -t UTF-8 " + name_ + " > converted.csv");
    for (int64_t k = 0; k < opts.skip_lines; ++k) {  // --skip: raw lines, quotes not honoured
      while (pos < n && p[pos] != '\n' && p[pos] != '\r') ++pos;
      if (pos >= n) {
        need_more = !w.at_eof;
        break;
      }
      pos += (p[pos] == '\r' && pos + 1 < n && p[pos + 1] == '\n') ? 2 : 1;
      ++lines;
    }
    std::vector<std::string> fields;
    bool found = false;
    while (!need_more && pos < n) {
      fields.clear();
      std::vector<std::pair<uint64_t, uint64_t>> spans;
      std::vector<uint8_t> flags;
      RowResult r = parse_row(dialect, p, pos, n, w.at_eof, [&](uint32_t, uint64_t b, uint64_t e, uint8_t f) {
        spans.emplace_back(b, e);
        flags.push_back(f);
      });
      if (r.incomplete) {
        need_more = true;
        break;
      }
      if (r.comment || r.empty) {
        lines += r.lines;
        pos = r.next;
        continue;
      }
      found = true;
      if (opts.header) check_row_bytes(p, pos, r.next, r);  // NUL or invalid UTF-8 in a column name
      if (opts.header && r.error != RowError::None) {  // a malformed header is a bad row, never a name
        RowIssue issue = make_row_issue(dialect, name_, p, pos, r.next, lines + 1, r,
                                        static_cast<uint32_t>(spans.size()), spans.size());
        const std::string skip_hint = ", or use --bad-rows skip";  // it cannot skip the header
        if (issue.message.size() >= skip_hint.size() &&
            issue.message.compare(issue.message.size() - skip_hint.size(), skip_hint.size(), skip_hint) == 0)
          issue.message.resize(issue.message.size() - skip_hint.size());
        throw InputError(describe_issue(issue) + "\n  (this is the header row)");
      }
      if (opts.header) {
        for (size_t i = 0; i < spans.size(); ++i) {
          std::string s(spans[i].second - spans[i].first, '\0');
          uint32_t len = static_cast<uint32_t>(s.size());
          if (flags[i] & kFieldEscaped)
            len = unescape_field(dialect, p + spans[i].first, len, s.data());
          else
            std::memcpy(s.data(), p + spans[i].first, len);
          s.resize(len);
          fields.push_back(s);
        }
        lines += r.lines;
        pos = r.next;
      } else if (opts.names.empty()) {  // --names gives the width itself
        const uint32_t width = common_field_count(dialect, p, pos, n, w.at_eof);
        for (uint32_t i = 0; i < width; ++i) fields.push_back("c" + std::to_string(i + 1));
      }
      break;
    }
    if (need_more) {
      if (w.at_eof) break;
      want *= 4;
      continue;
    }
    header_lines_ = lines;
    header_ = fields;
    data_start_ = pos;
    if (!found) header_.clear();  // empty input (or only comments): no columns
    return;
  }
  throw InputError(name_ + ": input ends inside the header row (an unterminated quote?)");
}

bool InputSet::rereadable() const {
  for (const auto& s : sources)
    if (!s->rereadable()) return false;
  return true;
}

InputSet InputSet::open(const Options& opts) {
  InputSet in;
  DialectOptions d = opts.dialect;
  in.dialect = make_dialect(d.delimiter, d.quote, d.escape, d.comment);
  std::vector<std::string> files = opts.files;
  if (files.empty()) files.push_back("-");
  // Standard input can be read once: a second '-' would take its header from
  // the first one's rows.
  if (std::count(files.begin(), files.end(), "-") > 1)
    throw UsageError("'-' (standard input) is given more than once; it can be read only once");
  const InputSource* first = nullptr;
  for (const auto& f : files) {
    in.sources.push_back(std::make_unique<InputSource>(f, d, in.dialect));
    const auto& src = *in.sources.back();
    if (src.sniffed()) {  // --delimiter auto: the first source decides for all of them
      d.delimiter = src.sniffed()->delimiter;
      d.delimiter_auto = false;
      in.dialect = make_dialect(d.delimiter, d.quote, d.escape, d.comment);
      if (opts.explain)
        std::fprintf(stderr, "warpcsv: %s: %s\n", src.name().c_str(),
                     describe_sniff(*src.sniffed()).c_str());
    }
    // The first source with a header (an empty file has none) names the columns.
    if (in.column_names.empty()) {
      in.column_names = src.header();
      first = &src;
    } else if (!src.header().empty() && src.header() != first->header()) {
      // Find the first differing column for the message.
      const auto& a = first->header();
      const auto& b = src.header();
      size_t i = 0;
      while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
      std::string what = i < a.size() && i < b.size()
                             ? "column " + std::to_string(i + 1) + " is '" + b[i] + "', expected '" + a[i] + "'"
                             : "it has " + std::to_string(b.size()) + " columns, expected " + std::to_string(a.size());
      throw InputError(src.name() + ":" + std::to_string(src.header_lines()) +
                       ": header does not match the first file's (" + first->name() + "): " +
                       what + "; give files with the same columns, or run them separately");
    }
  }
  if (!d.names.empty()) {
    if (d.header && !in.column_names.empty() && d.names.size() != in.column_names.size())
      throw UsageError("--names gives " + std::to_string(d.names.size()) + " names but the input has " +
                       std::to_string(in.column_names.size()) + " columns; give one name per column");
    in.column_names = d.names;
  }
  // Empty header names get their position, `c3`, which yields to a name
  // the header gives (`c3_2`); duplicates a numeric suffix that no other
  // column has.
  std::vector<bool> made_up(in.column_names.size(), false);
  for (size_t i = 0; i < in.column_names.size(); ++i)
    if (in.column_names[i].empty()) {
      in.column_names[i] = "c" + std::to_string(i + 1);
      made_up[i] = true;
    }
  make_names_unique(in.column_names, made_up);
  return in;
}

}  // namespace warpcsv
