#include "result/spill_file.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#ifdef WARPCSV_HAVE_ZSTD
#include <zstd.h>
#endif

#include "exec/device.hpp"
#include "warpcsv/errors.hpp"

namespace warpcsv {

namespace {

[[noreturn]] void spill_failed(const std::string& what, const std::string& dir) {
  throw ResourceError(fmt::format("{} what spills past a memory limit (groups, listed values) in {}: {}; set TMPDIR "
                                  "to a directory with room, or raise --memory-limit (--gpu-memory-limit for the "
                                  "GPUs' groups)",
                                  what, dir, std::strerror(errno)));
}

void write_all(int fd, const char* p, size_t n, uint64_t at, const std::string& dir) {
  while (n) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) spill_failed("cannot write", dir);
    p += w;
    n -= static_cast<size_t>(w);
    at += static_cast<uint64_t>(w);
  }
}

void read_all(int fd, char* to, size_t n, uint64_t at, const std::string& dir) {
  while (n) {
    const ssize_t r = ::pread(fd, to, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) spill_failed("cannot read back", dir);
    to += r;
    n -= static_cast<size_t>(r);
    at += static_cast<uint64_t>(r);
  }
}

#ifdef WARPCSV_HAVE_ZSTD
// Level 1: some 400 MB/s a core, where records shrink four times or more.
constexpr int kZstdLevel = 1;

struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
#endif

// The compressed frame a thread read last, kept: reads in order decompress each frame once.
struct FrameCache {
  uint64_t file = 0;  // SpillFile ids start at 1
  size_t frame = 0;
  std::unique_ptr<char[]> bytes{new char[kSpillFrameBytes]};
};

// What a thread reads and writes spill files with, made on its first use
// and kept until the process ends. A global list holds them besides the
// thread's own pointer: the leak checker did not always scan the
// thread-local storage of a pool thread asleep at exit (after many threads
// had come and gone), and reported them as leaks.
struct SpillScratch {
#ifdef WARPCSV_HAVE_ZSTD
  ZstdContexts zstd;
  std::vector<char> packed;  // a frame compressed, or read before it is decompressed
#endif
  FrameCache cache;
};
SpillScratch& spill_scratch() {
  thread_local SpillScratch* mine = nullptr;
  if (!mine) {
    static std::mutex m;
    static auto* all = new std::vector<std::unique_ptr<SpillScratch>>();  // never destroyed: threads use theirs to the end
    std::lock_guard<std::mutex> l(m);
    all->push_back(std::make_unique<SpillScratch>());
    mine = all->back().get();
  }
  return *mine;
}

std::atomic<uint64_t> g_next_file_id{1};
std::atomic<SpillCompression> g_compression{SpillCompression::Auto};

// The bytes all spill files hold.
std::atomic<uint64_t> g_stored{0};

#ifdef WARPCSV_HAVE_ZSTD
// Past how many stored bytes new frames are compressed (0: not yet known).
std::atomic<uint64_t> g_stored_limit{0};

uint64_t stored_limit(const std::string& dir) {
  uint64_t limit = g_stored_limit.load();
  if (limit) return limit;
  limit = host_memory_bytes() / 4;
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) == 0) limit = std::min<uint64_t>(limit, uint64_t{fs.f_bavail} * fs.f_frsize / 8);
  limit = std::max<uint64_t>(limit, 1);
  g_stored_limit.store(limit);
  return limit;
}

bool compress_next_frame(const std::string& dir) {
  switch (g_compression.load()) {
    case SpillCompression::Always: return true;
    case SpillCompression::Never: return false;
    case SpillCompression::Auto: break;
  }
  return g_stored.load() >= stored_limit(dir);
}
#endif

}  // namespace

void set_spill_compression(SpillCompression c) { g_compression.store(c); }

bool SpillCursor::fill(size_t n) {
  if (end_ - at_ >= n) return true;
  std::memmove(buf_.data(), buf_.data() + at_, end_ - at_);
  offset_ += at_;
  end_ -= at_;
  at_ = 0;
  if (buf_.size() < n) buf_.resize(std::max(n, 2 * buf_.size()));
  end_ += file_->read(offset_ + end_, buf_.data() + end_, buf_.size() - end_);
  return end_ >= n;
}

std::string spill_directory() {
  const char* d = std::getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

SpillFile::SpillFile(const std::string& dir) : id_(g_next_file_id++), dir_(dir) {
#ifdef O_TMPFILE
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd_ < 0) {  // a file system without O_TMPFILE: a named file, unlinked at once
    std::string path = dir + "/warpcsv-spill-XXXXXX";
    fd_ = ::mkstemp(path.data());
    if (fd_ >= 0) ::unlink(path.c_str());
  }
  if (fd_ < 0) spill_failed("cannot make a file for", dir);
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
  g_stored -= frames_bytes();
}

void SpillFile::append(const char* p, size_t n) {
  size_ += n;
  if (!pending_.empty()) {  // fill the frame begun
    const size_t take = std::min(n, kSpillFrameBytes - pending_.size());
    pending_.append(p, take);
    p += take;
    n -= take;
    if (pending_.size() < kSpillFrameBytes) return;
    write_frame(pending_.data(), pending_.size());
    pending_.clear();
  }
  for (; n >= kSpillFrameBytes; p += kSpillFrameBytes, n -= kSpillFrameBytes) write_frame(p, kSpillFrameBytes);
  pending_.assign(p, n);
}

// A frame is stored as it is (kSpillFrameBytes long) or compressed (shorter:
// a frame that would not shrink is stored as it is).
void SpillFile::write_frame(const char* p, size_t n) {
  const uint64_t at = frames_bytes();
  size_t stored = n;
#ifdef WARPCSV_HAVE_ZSTD
  if (compress_next_frame(dir_)) {
    SpillScratch& scratch = spill_scratch();
    std::vector<char>& packed = scratch.packed;
    packed.resize(ZSTD_compressBound(n));
    const size_t m = ZSTD_compressCCtx(scratch.zstd.c, packed.data(), packed.size(), p, n, kZstdLevel);
    if (ZSTD_isError(m))
      throw InternalError(fmt::format("internal error: compressing a spill frame: {}", ZSTD_getErrorName(m)));
    if (m < n) {
      write_all(fd_, packed.data(), m, at, dir_);
      stored = m;
    }
  }
#endif
  if (stored == n) write_all(fd_, p, n, at, dir_);
  frame_ends_.push_back(at + stored);
  g_stored += stored;
}

void SpillFile::decompress_frame(size_t i, char* to) const {
#ifdef WARPCSV_HAVE_ZSTD
  const uint64_t begin = frame_begin(i), n = frame_ends_[i] - begin;
  SpillScratch& scratch = spill_scratch();
  std::vector<char>& packed = scratch.packed;
  packed.resize(n);
  read_all(fd_, packed.data(), n, begin, dir_);
  const size_t m = ZSTD_decompressDCtx(scratch.zstd.d, to, kSpillFrameBytes, packed.data(), n);
  if (ZSTD_isError(m) || m != kSpillFrameBytes)
    throw InternalError(fmt::format("internal error: a spill frame does not decompress ({})",
                                    ZSTD_isError(m) ? ZSTD_getErrorName(m) : "short"));
#else
  (void)i;
  (void)to;
  throw InternalError("internal error: a compressed spill frame in a build without zstd");
#endif
}

size_t SpillFile::read(uint64_t offset, char* to, size_t n) const {
  n = offset >= size_ ? 0 : static_cast<size_t>(std::min<uint64_t>(n, size_ - offset));
  const uint64_t written = frame_ends_.size() * uint64_t{kSpillFrameBytes};
  FrameCache& cache = spill_scratch().cache;
  for (size_t got = 0; got < n;) {
    const uint64_t at = offset + got;
    if (at >= written) {  // in the frame not yet written
      std::memcpy(to + got, pending_.data() + (at - written), n - got);
      break;
    }
    const size_t frame = static_cast<size_t>(at / kSpillFrameBytes), in = static_cast<size_t>(at % kSpillFrameBytes);
    const size_t take = std::min(n - got, kSpillFrameBytes - in);
    const uint64_t begin = frame_begin(frame);
    if (frame_ends_[frame] - begin == kSpillFrameBytes) {  // stored as it is: the bytes wanted alone
      read_all(fd_, to + got, take, begin + in, dir_);
    } else if (take == kSpillFrameBytes) {  // a whole frame: straight to the caller
      decompress_frame(frame, to + got);
    } else {
      if (cache.file != id_ || cache.frame != frame) {
        decompress_frame(frame, cache.bytes.get());
        cache.file = id_;
        cache.frame = frame;
      }
      std::memcpy(to + got, cache.bytes.get() + in, take);
    }
    got += take;
  }
  return n;
}

}  // namespace warpcsv
