// Input sources: regular files (pread), standard input and FIFOs (read), gzip over either (zlib).
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"

namespace warpcsv {
namespace {

constexpr size_t kSniffBytes = 1024;        // looked at for gzip magic and UTF-16
constexpr size_t kGzipInChunk = 256 << 10;  // compressed bytes per inflate round

std::string quoted(const std::string& name) { return "'" + name + "'"; }

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
  // Up to n first unread bytes (fewer only at end of input), left in place for read().
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

// A file descriptor: a regular file (pread, size known) or a stream (stdin, FIFO, device).
class FdSource final : public PeekableSource {
 public:
  FdSource(int fd, bool owned, std::string name, bool regular, uint64_t size)
      : fd_(fd), owned_(owned), name_(std::move(name)), regular_(regular), size_(size) {}
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
      ssize_t k = regular_ ? ::pread(fd_, dst, n, static_cast<off_t>(pos_)) : ::read(fd_, dst, n);
      if (k < 0) {
        if (errno == EINTR) continue;
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
class GzipSource final : public PeekableSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> in)
      : in_(std::move(in)), buf_(kGzipInChunk, '\0') {
    std::memset(&z_, 0, sizeof z_);
    if (inflateInit2(&z_, 15 + 16) != Z_OK)  // 15-bit window, gzip header only
      throw ResourceError("cannot start gzip decompression of " + quoted(in_->name()) +
                          ": out of memory");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  bool can_pread() const override { return false; }
  size_t pread(char*, size_t, uint64_t) override {
    WCSV_EXPECTS(false, "pread on a gzip source");
    return 0;
  }
  uint64_t size_hint() const override { return 0; }
  const std::string& name() const override { return in_->name(); }

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
    throw InputError(quoted(in_->name()) + " is a corrupt gzip stream (" + why +
                     "); check it with `gzip -t " + in_->name() +
                     "` and re-create or re-download it");
  }

  std::unique_ptr<ByteSource> in_;
  std::string buf_;
  z_stream z_;
  bool in_eof_ = false;
  bool member_started_ = false;
  bool zero_padding_ = false;
  bool done_ = false;
};

bool is_gzip(const std::string& head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

// UTF-16 text: a UTF-16 byte order mark, or NUL bytes in many of the first bytes, nearly all
// at even or nearly all at odd offsets (ASCII text in UTF-16 has one in every other byte).
// Other NULs mean binary data; gzip magic after decompressing means compressed twice.
void reject_utf16(const std::string& head, const std::string& name) {
  bool bom = head.size() >= 2 && ((static_cast<unsigned char>(head[0]) == 0xFF &&
                                   static_cast<unsigned char>(head[1]) == 0xFE) ||
                                  (static_cast<unsigned char>(head[0]) == 0xFE &&
                                   static_cast<unsigned char>(head[1]) == 0xFF));
  size_t nuls = static_cast<size_t>(std::count(head.begin(), head.end(), '\0'));
  size_t even = 0;
  for (size_t i = 0; i < head.size(); i += 2) even += head[i] == '\0';
  const bool alternating = nuls >= 2 && (even * 10 >= nuls * 9 || (nuls - even) * 10 >= nuls * 9);
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    throw InputError(quoted(name) + ": the data is still gzip-compressed after decompressing once (was it "
                     "compressed twice?); run gunzip on it first");
  if (!bom && !alternating && head.size() >= 4 && nuls * 4 >= head.size())
    throw InputError(quoted(name) + ": file looks like binary data, not CSV text (" + std::to_string(nuls) +
                     " of its first " + std::to_string(head.size()) + " bytes are NUL); check the file name");
  if (bom || (head.size() >= 4 && nuls * 4 >= head.size())) {
    std::string shown = name == "<stdin>" ? "FILE" : name;
    throw InputError(quoted(name) + ": file looks like UTF-16; convert with iconv -f UTF-16 -t UTF-8 " +
                     shown + " > " +
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
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
    bool regular = S_ISREG(st.st_mode);
    raw = std::make_unique<FdSource>(fd, true, path, regular,
                                     regular ? static_cast<uint64_t>(st.st_size) : 0);
  }
  const std::string& head = raw->peek(kSniffBytes);
  if (is_gzip(head)) {
    auto gz = std::make_unique<GzipSource>(std::move(raw));
    reject_utf16(gz->peek(kSniffBytes), gz->name());
    return gz;
  }
  reject_utf16(head, raw->name());
  return raw;
}

}  // namespace warpcsv
