#include "output/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>

#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Standard output or error when it is this file and open for writing, or -1.
int standard_fd_of(const struct stat& st) {
  for (int fd = 1; fd <= 2; ++fd) {
    struct stat s {};
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl != -1 && (fl & O_ACCMODE) != O_RDONLY && ::fstat(fd, &s) == 0 && same_file(s, st)) return fd;
  }
  return -1;
}

std::string random_suffix() {
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(::getpid()) << 32)};
  std::string s(6, 'x');
  for (char& c : s) c = chars[rng() % (sizeof chars - 1)];
  return s;
}

// The name /proc gives an open descriptor, which linkat can name again.
std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

bool AtomicFile::open(const std::string& path, bool truncate) {
  discard();
  target_ = path;
  temp_.clear();
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return false;  // EACCES on the way, ENOTDIR, ...
  // A stream over `fd` (closed, errno kept, when that fails).
  auto stream_over = [&](int fd) {
    if (fd < 0) return false;
    f_ = ::fdopen(fd, "wb");
    if (f_) return true;
    const int err = errno;
    ::close(fd);
    errno = err;
    return false;
  };
  auto open_direct = [&](int flags) { return stream_over(::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags, 0666)); };
  if (exists) {
    const int std_fd = standard_fd_of(st);
    if (std_fd >= 0) {  // --rejects /dev/stderr, /proc/self/fd/1, ...: the descriptor itself
      return stream_over(::fcntl(std_fd, F_DUPFD_CLOEXEC, 3));
    }
    if (!S_ISREG(st.st_mode)) return open_direct(0);  // a FIFO, a device: nothing to rename over
    // A file this user may not write stays so (EACCES, as opening it did).
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) return false;
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {  // replace the link's target, keep the link
      char* real = ::realpath(path.c_str(), nullptr);
      if (real) {
        target_ = real;
        std::free(real);
      }
    }
  }
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target_.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  if (base.size() > NAME_MAX - 24) base.resize(NAME_MAX - 24);  // room for ".", ".warpcsv-XXXXXX"
  // The file's own permissions, or those a new file gets (0666 less the umask, by open).
  const mode_t mode = exists ? (st.st_mode & 07777) : 0666;
  temp_prefix_ = dir + "." + base + ".warpcsv-";
  // An unnamed file in the directory first, named only at commit: a process
  // killed by SIGKILL (the OOM killer) leaves nothing behind. Where the
  // file system has none, or /proc cannot name it, a named temporary.
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, exists ? 0600 : mode);
  if (fd >= 0) {
    unnamed_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (unnamed_fd_ < 0 || ::access(proc_fd_path(unnamed_fd_).c_str(), F_OK) != 0) {
      ::close(fd);
      if (unnamed_fd_ >= 0) ::close(unnamed_fd_);
      unnamed_fd_ = fd = -1;
    }
  }
  int err = 0;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp_ = temp_prefix_ + random_suffix();
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : mode);
    err = errno;
    if (fd < 0 && err != EEXIST) break;
  }
  if (fd < 0) {
    temp_.clear();
    // A directory that takes no new file (its owner's, read-only) while the
    // file itself may be written: written in place, as before.
    if (exists && (err == EACCES || err == EPERM || err == EROFS)) return open_direct(truncate ? O_TRUNC : 0);
    errno = err;
    return false;
  }
  if (!temp_.empty()) slot_ = note_temp_file(temp_.c_str());
  if (exists) {
    (void)::fchmod(fd, mode);
    if (st.st_uid != ::geteuid() || st.st_gid != ::getegid()) {
      const int ignored = ::fchown(fd, st.st_uid, st.st_gid);  // where allowed (root, or a group of ours)
      (void)ignored;
      (void)::fchmod(fd, mode);  // fchown may clear set-id bits
    }
  }
  f_ = ::fdopen(fd, "wb");
  if (!f_) {
    err = errno;
    ::close(fd);
    discard();
    errno = err;
    return false;
  }
  return true;
}

bool AtomicFile::close() {
  if (!f_) return true;
  errno = 0;
  const bool ok = std::fflush(f_) == 0 && !std::ferror(f_);
  const int err = errno;
  std::FILE* g = f_;
  f_ = nullptr;
  if (std::fclose(g) != 0 && ok) return false;
  if (!ok) errno = err ? err : EIO;
  return ok;
}

bool AtomicFile::commit() {
  if (f_ && !close()) {
    const int err = errno;
    discard();
    errno = err;
    return false;
  }
  if (unnamed_fd_ >= 0) {  // named beside the file now, then renamed over it
    int err = EEXIST;
    for (int attempt = 0; attempt < 100 && err == EEXIST; ++attempt) {
      temp_ = temp_prefix_ + random_suffix();
      err = ::linkat(AT_FDCWD, proc_fd_path(unnamed_fd_).c_str(), AT_FDCWD, temp_.c_str(), AT_SYMLINK_FOLLOW) == 0
                ? 0
                : errno;
    }
    ::close(unnamed_fd_);
    unnamed_fd_ = -1;
    if (err) {
      temp_.clear();
      errno = err;
      return false;
    }
    slot_ = note_temp_file(temp_.c_str());
  }
  if (temp_.empty()) return true;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    errno = err;
    return false;
  }
  temp_.clear();
  forget_temp_file(slot_);
  slot_ = -1;
  return true;
}

void AtomicFile::discard() {
  const int saved = errno;
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
  if (unnamed_fd_ >= 0) {  // the unnamed file goes with its last descriptor
    ::close(unnamed_fd_);
    unnamed_fd_ = -1;
  }
  forget_temp_file(slot_);
  slot_ = -1;
  errno = saved;
}

}  // namespace warpcsv
