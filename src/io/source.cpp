// Input sources: regular files (pread), standard input and FIFOs (read), gzip over either (zlib),
// zstd over either (libzstd, when built with WARPCSV_HAVE_ZSTD).
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef WARPCSV_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#include <algorithm>
#include <cstring>
#include <string>

#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {
namespace {

constexpr size_t kSniffBytes = 1024;        // looked at for gzip / zstd magic and UTF-16
constexpr size_t kGzipInChunk = 256 << 10;  // compressed bytes per inflate round
#ifdef WARPCSV_HAVE_ZSTD
constexpr size_t kZstdInChunk = 256 << 10;  // compressed bytes per refill of the zstd decoder
// Largest zstd window accepted (2^27 = 128 MiB, zstd's own default limit): memory stays bounded.
// A frame that needs more (`zstd --long=28` or more on a large input) is refused with the fix.
constexpr int kZstdWindowLogMax = 27;
#endif

std::string quoted(const std::string& name) { return "'" + name + "'"; }

enum class Codec { None, Gzip, Zstd };

// The command that undoes one layer of `c`, reading stdin.
const char* undo_cmd(Codec c) { return c == Codec::Gzip ? "gunzip" : "zstd -dc"; }

// The start of a shell pipe that undoes one layer of `c` on the input `name`: "zstd -dc FILE", or
// "... | zstd -dc" for standard input.
std::string undo_first(Codec c, const std::string& name, const char* extra = "") {
  if (name == "<stdin>") return std::string("... | ") + undo_cmd(c) + extra;
  return std::string(c == Codec::Gzip ? "gunzip -c" : "zstd -dc") + extra + " " + name;
}

[[noreturn]] void throw_read_error(const std::string& name, int err) {
  throw InputError("cannot read " + quoted(name) + ": " + std::strerror(err) +
                   "; check that the file is readable and not being modified");
}

// A source whose first bytes can be looked at before they are consumed: read() serves the
// looked-at bytes first, then the underlying stream.
class PeekableSource : public ByteSource {
 public:
  size_t read(char* dst, size_t n) final {
    if (n == 0) return 0;
    if (pending_pos_ < pending_.size()) {
      size_t k = std::min(n, pending_.size() - pending_pos_);
      std::memcpy(dst, pending_.data() + pending_pos_, k);
      pending_pos_ += k;
      if (pending_pos_ == pending_.size()) {
        pending_.clear();
        pending_pos_ = 0;
      }
      return k;
    }
    return raw_read(dst, n);
  }
  // Up to n first unread bytes (fewer at the end of input, or when a short
  // read finds no more for now), left in place for read().
  const std::string& peek(size_t n) {
    if (pending_pos_ > 0) {
      pending_.erase(0, pending_pos_);
      pending_pos_ = 0;
    }
    while (pending_.size() < n) {
      size_t have = pending_.size();
      pending_.resize(n);
      size_t k = raw_read(&pending_[have], n - have);
      pending_.resize(have + k);
      if (k == 0) break;
      // A short read: the stream has no more for now. The magic numbers need
      // 4 bytes; waiting for all n would stall a slow stream (`tail -f`).
      if (k < n - have && pending_.size() >= 4) break;
    }
    return pending_;
  }

 protected:
  // Reads up to n bytes from the underlying stream; 0 only at its end.
  virtual size_t raw_read(char* dst, size_t n) = 0;

 private:
  std::string pending_;
  size_t pending_pos_ = 0;
};

// A decompressing stream over another source: sequential only, size unknown,
// named after the source it reads.
class DecoderSource : public PeekableSource {
 public:
  explicit DecoderSource(std::unique_ptr<ByteSource> in) : in_(std::move(in)) {}
  bool can_pread() const final { return false; }
  size_t pread(char*, size_t, uint64_t) final {
    WCSV_EXPECTS(false, "pread on a compressed source");
    return 0;
  }
  uint64_t size_hint() const final { return 0; }
  const std::string& name() const final { return in_->name(); }

 protected:
  std::unique_ptr<ByteSource> in_;
};

// A file descriptor: a regular file (pread, size known) or a stream (stdin, FIFO, device).
class FdSource final : public PeekableSource {
 public:
  FdSource(int fd, bool owned, std::string name, bool regular, uint64_t size)
      : fd_(fd), owned_(owned), name_(std::move(name)), regular_(regular), size_(size) {
    // A pipe's 64 KiB buffer makes its writer and this reader take turns
    // every 64 KiB; 1 MiB (Linux's default limit for it) moves a `cat FILE |`
    // more than twice as fast (docs/performance.md, "Standard input and
    // pipes"). Refused or not a pipe: as is.
    struct stat st{};
#ifdef F_SETPIPE_SZ
    if (!regular_ && fstat(fd_, &st) == 0 && S_ISFIFO(st.st_mode)) (void)fcntl(fd_, F_SETPIPE_SZ, 1 << 20);
#endif
  }
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  bool can_pread() const override { return regular_; }
  size_t pread(char* dst, size_t n, uint64_t offset) override {
    WCSV_EXPECTS(regular_, "pread on a stream source");
    size_t got = 0;
    while (got < n) {
      ssize_t k = ::pread(fd_, dst + got, n - got, static_cast<off_t>(offset + got));
      if (k < 0) {
        if (errno == EINTR) continue;
        throw_read_error(name_, errno);
      }
      if (k == 0) break;
      got += static_cast<size_t>(k);
    }
    return got;
  }
  uint64_t size_hint() const override { return regular_ ? size_ : 0; }
  const std::string& name() const override { return name_; }

 protected:
  size_t raw_read(char* dst, size_t n) override {
    for (;;) {
      // A stream may stay idle for ever (a writer that keeps it open): its
      // read waits in poll, which a signal's self-pipe ends (the run stops).
      if (!regular_) wait_fd_ready(fd_, POLLIN);
      ssize_t k = regular_ ? ::pread(fd_, dst, n, static_cast<off_t>(pos_)) : ::read(fd_, dst, n);
      if (k < 0) {
        if (errno == EINTR || errno == EAGAIN) {
          if (interrupted()) throw Interrupted();
          continue;
        }
        throw_read_error(name_, errno);
      }
      pos_ += static_cast<uint64_t>(k);
      return static_cast<size_t>(k);
    }
  }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  bool regular_;
  uint64_t size_;
  uint64_t pos_ = 0;  // next offset for sequential reads of a regular file
};

// Decompresses a gzip stream (one or more concatenated members) read from another source.
class GzipSource final : public DecoderSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> in)
      : DecoderSource(std::move(in)), buf_(kGzipInChunk, '\0') {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 16) != Z_OK)  // 15-bit window, gzip header only
      throw ResourceError("cannot start gzip decompression of " + quoted(in_->name()) +
                          ": out of memory");
  }
  ~GzipSource() override { inflateEnd(&z_); }

 protected:
  size_t raw_read(char* dst, size_t n) override {
    if (done_ || n == 0) return 0;
    z_.next_out = reinterpret_cast<Bytef*>(dst);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0 && !in_eof_) refill();
      if (z_.avail_in == 0 && in_eof_) {
        if (member_started_) corrupt("the file ends in the middle of the compressed data");
        done_ = true;  // clean end after a complete member
        break;
      }
      if (!member_started_) {
        // A new member must start with the gzip magic; zero padding after the last one is
        // ignored, as gzip itself does.
        if (!at_next_member()) {
          done_ = true;
          break;
        }
        member_started_ = true;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        if (inflateReset(&z_) != Z_OK) corrupt("cannot reset the decompressor");
        continue;
      }
      if (rc == Z_BUF_ERROR) continue;  // needs more input: refilled above
      if (rc != Z_OK) corrupt(z_.msg ? z_.msg : "invalid compressed data");
    }
    return n - z_.avail_out;
  }

 private:
  void refill() {
    size_t k = in_->read(&buf_[0], buf_.size());
    if (k == 0) in_eof_ = true;
    z_.next_in = reinterpret_cast<Bytef*>(&buf_[0]);
    z_.avail_in = static_cast<uInt>(k);
  }
  // Whether the unread input starts another member (skips trailing zero padding).
  bool at_next_member() {
    for (;;) {
      while (z_.avail_in > 0 && *z_.next_in == 0) {
        ++z_.next_in;
        --z_.avail_in;
        zero_padding_ = true;
      }
      if (z_.avail_in == 0) {
        if (in_eof_) return false;
        refill();
        continue;
      }
      if (zero_padding_)
        corrupt("data follows the zero padding after the last gzip member");
      if (*z_.next_in != 0x1f) corrupt("data after the end of the gzip stream is not gzip");
      return true;
    }
  }
  [[noreturn]] void corrupt(const std::string& why) {
    throw InputError(quoted(in_->name()) + " is a corrupt gzip stream (" + why + "); check it with `gzip -t " +
                     name_in_command(in_->name()) + "` and re-create or re-download it");
  }

  std::string buf_;
  z_stream z_;
  bool in_eof_ = false;
  bool member_started_ = false;
  bool zero_padding_ = false;
  bool done_ = false;
};

#ifdef WARPCSV_HAVE_ZSTD
// Decompresses a zstd stream read from another source: one or more concatenated frames, with
// skippable frames (as pzstd and the seekable format write) passed over, through libzstd's
// streaming API. Memory is the decoder's window (at most 2^kZstdWindowLogMax bytes) plus one
// input buffer, whatever the file size.
class ZstdSource final : public DecoderSource {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> in)
      : DecoderSource(std::move(in)), buf_(kZstdInChunk, '\0'), dctx_(ZSTD_createDCtx()) {
    if (dctx_ == nullptr)
      throw ResourceError("cannot start zstd decompression of " + quoted(in_->name()) +
                          ": out of memory");
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kZstdWindowLogMax);
  }
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }

 protected:
  size_t raw_read(char* dst, size_t n) override {
    if (done_ || n == 0) return 0;
    ZSTD_outBuffer out{dst, n, 0};
    while (out.pos < out.size) {
      if (zin_.pos == zin_.size && !in_eof_) refill();
      const bool no_input = zin_.pos == zin_.size;  // and in_eof_
      if (no_input && !in_frame_) {
        done_ = true;  // clean end: every frame was complete
        break;
      }
      const size_t out_before = out.pos;
      const size_t rc = ZSTD_decompressStream(dctx_, &out, &zin_);
      if (ZSTD_isError(rc)) fail(rc, out_total_ + out.pos);
      // rc == 0: the frame just ended and all of its output has been handed out.
      in_frame_ = rc != 0;
      if (no_input && in_frame_ && out.pos == out_before)
        corrupt(std::string(in_->name() == "<stdin>" ? "the input" : "the file") +
                " ends in the middle of a zstd frame, after " + std::to_string(consumed()) +
                " compressed bytes");
      if (!in_frame_) {
        ++frames_;
        frame_start_ = consumed();
      }
    }
    out_total_ += out.pos;
    return out.pos;
  }

 private:
  void refill() {
    consumed_before_ += zin_.size;
    size_t k = in_->read(&buf_[0], buf_.size());
    if (k == 0) in_eof_ = true;
    zin_ = ZSTD_inBuffer{buf_.data(), k, 0};
  }
  // Compressed bytes taken by the decoder so far (the offset of the next unread byte). Exact
  // after a call that succeeded; the decoder buffers up to a block, so it says little about
  // where inside a frame an error lies: messages name the frame and the decompressed offset.
  uint64_t consumed() const { return consumed_before_ + zin_.pos; }
  // `out_done`: decompressed bytes produced before the error.
  [[noreturn]] void fail(size_t rc, uint64_t out_done) {
    switch (ZSTD_getErrorCode(rc)) {
      case ZSTD_error_frameParameter_windowTooLarge:
        throw InputError(
            quoted(in_->name()) + " needs a zstd window larger than " +
            std::to_string((1u << kZstdWindowLogMax) >> 20) +
            " MiB (made with zstd --long?), more memory than warpcsv gives a stream; "
            "decompress it first: " + undo_first(Codec::Zstd, in_->name(), " --long=31") +
            " | warpcsv ... -");
      case ZSTD_error_prefix_unknown:
        if (frames_ > 0 && !in_frame_)
          corrupt("the data after the last zstd frame, from compressed byte " +
                  std::to_string(frame_start_) + ", is not zstd");
        break;
      default:
        break;
    }
    corrupt(std::string(ZSTD_getErrorName(rc)) + " in the zstd frame at compressed byte " +
            std::to_string(frame_start_) + ", after " + std::to_string(out_done) +
            " decompressed bytes");
  }
  [[noreturn]] void corrupt(const std::string& why) {
    throw InputError(quoted(in_->name()) + " is a corrupt zstd stream (" + why +
                     "); check it with `zstd -t " + name_in_command(in_->name()) +
                     "` and re-create or re-download it");
  }

  std::string buf_;
  ZSTD_DCtx* dctx_;
  ZSTD_inBuffer zin_{nullptr, 0, 0};
  uint64_t consumed_before_ = 0;  // compressed bytes in the buffers before the current one
  uint64_t frames_ = 0;           // frames (skippable ones included) completed
  uint64_t frame_start_ = 0;      // compressed offset where the current (or next) frame starts
  uint64_t out_total_ = 0;        // decompressed bytes handed out by earlier raw_read calls
  bool in_eof_ = false;
  bool in_frame_ = false;  // the decoder is inside a frame (or holds output not handed out yet)
  bool done_ = false;
};
#endif  // WARPCSV_HAVE_ZSTD

bool is_gzip(const std::string& head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

// A zstd frame (magic 28 b5 2f fd), or a skippable frame (magic 50..5f 2a 4d 18), which pzstd
// and the seekable format put first.
bool is_zstd(const std::string& head) {
  if (head.size() < 4) return false;
  const auto b = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (b(0) == 0x28 && b(1) == 0xb5 && b(2) == 0x2f && b(3) == 0xfd) return true;
  return (b(0) & 0xf0) == 0x50 && b(1) == 0x2a && b(2) == 0x4d && b(3) == 0x18;
}

// UTF-16 text: a UTF-16 byte order mark, or NUL bytes in many of the first bytes, nearly all
// at even or nearly all at odd offsets (ASCII text in UTF-16 has one in every other byte).
// Other NULs mean binary data; gzip or zstd magic after decompressing (`outer` is the layer
// undone, None for uncompressed input) means compressed twice.
void reject_utf16(const std::string& head, const std::string& name, Codec outer = Codec::None) {
  bool bom = head.size() >= 2 && ((static_cast<unsigned char>(head[0]) == 0xFF &&
                                   static_cast<unsigned char>(head[1]) == 0xFE) ||
                                  (static_cast<unsigned char>(head[0]) == 0xFE &&
                                   static_cast<unsigned char>(head[1]) == 0xFF));
  size_t nuls = static_cast<size_t>(std::count(head.begin(), head.end(), '\0'));
  size_t even = 0;
  for (size_t i = 0; i < head.size(); i += 2) even += head[i] == '\0';
  const bool alternating = nuls >= 2 && (even * 10 >= nuls * 9 || (nuls - even) * 10 >= nuls * 9);
  if (outer != Codec::None && (is_gzip(head) || is_zstd(head))) {
    const Codec inner = is_gzip(head) ? Codec::Gzip : Codec::Zstd;
    if (outer == Codec::Gzip && inner == Codec::Gzip)
      throw InputError(quoted(name) +
                       ": the data is still gzip-compressed after decompressing once (was it "
                       "compressed twice?); run gunzip on it first");
    throw InputError(quoted(name) + ": the data is still " +
                     (inner == Codec::Gzip ? "gzip" : "zstd") + "-compressed after " +
                     (outer == Codec::Gzip ? "gzip" : "zstd") +
                     " decompression (was it compressed twice?); decompress both layers first: " +
                     undo_first(outer, name) + " | " + undo_cmd(inner) + " | warpcsv ... -");
  }
  if (!bom && !alternating && head.size() >= 4 && nuls * 4 >= head.size())
    throw InputError(quoted(name) + ": file looks like binary data, not CSV text (" + std::to_string(nuls) +
                     " of its first " + std::to_string(head.size()) + " bytes are NUL); check the file name");
  if (bom || (head.size() >= 4 && nuls * 4 >= head.size())) {
    throw InputError(quoted(name) + ": file looks like UTF-16; convert with iconv -f UTF-16 -t UTF-8 " +
                     name_in_command(name) + " > " +
                     (name == "<stdin>" ? std::string("converted.csv") : name + ".utf8.csv") +
                     " (" +
                     (bom ? std::string("it starts with a UTF-16 byte order mark")
                          : std::to_string(nuls) + " of its first " +
                                std::to_string(head.size()) + " bytes are NUL") +
                     ")");
  }
}

[[noreturn]] void throw_open_error(const std::string& path, int err) {
  std::string what = quoted(path);
  switch (err) {
    case ENOENT:
      throw InputError("cannot open " + what +
                       ": no such file or directory; check the path and the current directory");
    case EACCES:
    case EPERM:
      throw InputError("cannot open " + what +
                       ": permission denied; check its permissions (ls -l " + path +
                       ") or run as a user who may read it");
    case EISDIR:
      throw InputError(what + " is a directory, not a CSV file; name the files inside it (e.g. " +
                       path + "/*.csv)");
    case EMFILE:
    case ENFILE: {
      struct rlimit rl {};
      getrlimit(RLIMIT_NOFILE, &rl);
      throw ResourceError("cannot open " + what + ": too many open files (the limit, ulimit -n, is " +
                          std::to_string(rl.rlim_cur) + "); raise it, or pass fewer files");
    }
    default:
      throw InputError("cannot open " + what + ": " + std::strerror(err) +
                       "; check that the path names a readable file");
  }
}

}  // namespace

std::unique_ptr<ByteSource> open_source(const std::string& path) {
  std::unique_ptr<FdSource> raw;
  if (path == "-") {
    // Standard input is always read as a stream, even when redirected from a file.
    raw = std::make_unique<FdSource>(STDIN_FILENO, false, "<stdin>", false, 0);
  } else {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // a FIFO: waits for a writer (a signal ends it)
    if (fd < 0 && errno == EINTR && interrupted()) throw Interrupted();
    if (fd < 0) throw_open_error(path, errno);
    struct stat st{};
    if (fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw_open_error(path, err);
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      throw_open_error(path, EISDIR);
    }
    // A regular file of size 0 may still have content (/proc, /sys, some
    // FUSE file systems): it is read as a stream, like a pipe.
    bool regular = S_ISREG(st.st_mode) && st.st_size > 0;
    raw = std::make_unique<FdSource>(fd, true, path, regular,
                                     regular ? static_cast<uint64_t>(st.st_size) : 0);
  }
  const std::string& head = raw->peek(kSniffBytes);
  if (is_gzip(head)) {
    auto gz = std::make_unique<GzipSource>(std::move(raw));
    reject_utf16(gz->peek(kSniffBytes), gz->name(), Codec::Gzip);
    return gz;
  }
  if (is_zstd(head)) {
#ifdef WARPCSV_HAVE_ZSTD
    auto zs = std::make_unique<ZstdSource>(std::move(raw));
    reject_utf16(zs->peek(kSniffBytes), zs->name(), Codec::Zstd);
    return zs;
#else
    throw InputError(quoted(raw->name()) +
                     " is zstd-compressed but this warpcsv was built without zstd; decompress it "
                     "first: " + undo_first(Codec::Zstd, raw->name()) + " | warpcsv ... -");
#endif
  }
  reject_utf16(head, raw->name());
  return raw;
}

}  // namespace warpcsv
