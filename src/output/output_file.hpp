// The run's output files: the output stream (stdout or -o) behind the hold
// that lets a run start over, the --rejects file, and the checks that keep
// -o, --rejects and --trace away from the inputs and from each other.
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "io/row_issue.hpp"
#include "output/atomic_file.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

// Output is held in memory until it passes this many bytes or the run ends:
// a value that widens a column's type can then still be read again (what was
// held is dropped), and whether it can depends only on the rows before it,
// not on partitions, threads or --chunk-size.
constexpr size_t kHeldOutputBytes = 64ull << 20;

// Owns the output stream: stdout, or the -o file, behind the hold.
class OutputFile {
 public:
  explicit OutputFile(const std::string& p) : path_(p) {
    struct stat out_st {}, fd1_st {};
    const bool is_stdout = !p.empty() && p != "-" && ::stat(p.c_str(), &out_st) == 0 &&
                           ::fstat(1, &fd1_st) == 0 && out_st.st_dev == fd1_st.st_dev &&
                           out_st.st_ino == fd1_st.st_ino;
    if (is_stdout) path_.clear();  // -o /dev/stdout: written as stdout (reopening it lost `>> log`'s content)
    if (!p.empty() && p != "-" && !is_stdout) {
      // Written to a temporary file beside it that replaces it only when the
      // run succeeds (commit): a failed run, a failed assert or a signal
      // leaves the file as it was (a cron job's report survives a bad
      // night), and no reader sees half of it. A FIFO or device is written
      // directly, emptied (if it can be) when the first bytes go out.
      if (!file_.open(p, false)) {
        const int err = errno;
        if (err == EISDIR)
          throw InputError(fmt::format("cannot write {}: it is a directory; give a file's name, such as {}/out.csv",
                                       p, p.back() == '/' ? p.substr(0, p.size() - 1) : p));
        throw InputError(fmt::format("cannot write {}: {}; check the directory exists and is writable", p,
                                     std::strerror(err)));
      }
      dest_ = file_.file();
    }
    static char buf[1 << 16];
    if (dest_ == stdout) std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
    cookie_io_functions_t io{};
    io.write = &OutputFile::hold_write;
    f_ = fopencookie(this, "w", io);
    if (!f_) throw ResourceError("cannot set up the output stream");
    std::setvbuf(f_, nullptr, _IONBF, 0);  // writers buffer 1 MiB themselves
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // What writers write to.
  std::FILE* file() const { return f_; }
  // Whether any output reached stdout or the file (it cannot be taken back).
  bool released() const { return released_; }
  // Drops what is held, messages too (the run starts over).
  void discard() {
    held_.clear();
    held_.shrink_to_fit();
    held_notes_.clear();
  }
  // A message about the output (a failed assert) goes to stderr with it:
  // held while the output is, dropped if it is.
  void note(const std::string& text) {
    if (released_) std::fputs(text.c_str(), stderr);
    else held_notes_ += text;
  }
  void close() {
    errno = 0;
    if (std::fflush(f_) != 0 || std::ferror(f_) || !release() || std::fflush(dest_) != 0 || std::ferror(dest_)) {
      if (errno == EPIPE) throw OutputClosed{};
      throw InputError(fmt::format("cannot write the output{}: {}", path_.empty() ? "" : " to " + path_,
                                   std::strerror(errno)));
    }
    if (dest_ != stdout) {
      dest_ = stdout;
      if (!file_.close()) throw InputError(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
    }
  }
  // After close(), once the run succeeded: the -o file is replaced.
  void commit() {
    if (!file_.commit()) throw InputError(fmt::format("cannot write {}: {}", path_, std::strerror(errno)));
  }
  // On an error the output so far still goes out (unless discarded) to
  // stdout or a FIFO; the -o file is left as it was (its temporary removed,
  // also when the run succeeded but was not committed: a failed assert).
  ~OutputFile() {
    if (interrupted()) discard();  // a signal: what was held is not the answer
    if (dest_ != stdout && (!released_ || !file_.direct())) {
      discard();
      std::fclose(f_);
      file_.discard();
      return;
    }
    std::fclose(f_);
    (void)release();
    file_.discard();  // closes a FIFO; removes a temporary not committed
  }

 private:
  // A cookie write returns the bytes taken, 0 on an error (errno set): glibc
  // takes a negative value for a huge count.
  static ssize_t hold_write(void* cookie, const char* buf, size_t n) {
    auto* o = static_cast<OutputFile*>(cookie);
    if (interrupted()) {  // a signal while writing: stop at the next buffer (main exits 130, 143 or 129)
      errno = EINTR;
      return 0;
    }
    if (!o->released_ && o->held_.size() + n <= kHeldOutputBytes) {
      try {
        o->held_.append(buf, n);
        return static_cast<ssize_t>(n);
      } catch (const std::bad_alloc&) {  // no memory to hold it: it goes out now
      }
    }
    o->released_ = true;  // before the bytes go out: a re-read would repeat them
    if (!o->release() || !o->empty_file()) return 0;
    return std::fwrite(buf, 1, n, o->dest_) == n ? static_cast<ssize_t>(n) : 0;
  }
  // The -o file's old content goes when the first bytes go out.
  bool empty_file() {
    if (emptied_ || dest_ == stdout) return true;
    emptied_ = true;
    struct stat st {};
    return ::fstat(fileno(dest_), &st) != 0 || !S_ISREG(st.st_mode) || ::ftruncate(fileno(dest_), 0) == 0;
  }
  bool release() {
    released_ = released_ || !held_.empty();
    if (!empty_file()) return false;
    if (!held_notes_.empty()) std::fputs(held_notes_.c_str(), stderr);
    const bool ok = held_.empty() || std::fwrite(held_.data(), 1, held_.size(), dest_) == held_.size();
    discard();
    return ok;
  }

  std::string path_;
  std::FILE* dest_ = stdout;
  std::FILE* f_ = nullptr;
  std::string held_, held_notes_;
  bool released_ = false;
  bool emptied_ = false;  // the -o file's old content is gone (written directly)
  AtomicFile file_;       // the -o file (dest_), written to a temporary beside it
};

// Writes skipped rows for --rejects as CSV: source,line,column,error,row, to a
// temporary file that replaces the file when the run succeeds, as -o does.
struct Rejects {
  std::FILE* f = nullptr;
  std::string path;
  AtomicFile file;
  explicit Rejects(const std::string& p) : path(p) {
    if (path.empty()) return;
    if (!file.open(path, true))
      throw InputError(fmt::format("cannot write --rejects file {}: {}", path, std::strerror(errno)));
    f = file.file();
    std::fputs("source,line,column,error,row\n", f);
  }
  // A rejects file that could not be written fails the run (exit 3), as -o does.
  void close() {
    if (!f) return;
    f = nullptr;
    if (!file.close()) throw InputError(fmt::format("cannot write --rejects file {}: {}", path, std::strerror(errno)));
  }
  void commit() {
    if (!path.empty() && !file.commit())
      throw InputError(fmt::format("cannot write --rejects file {}: {}", path, std::strerror(errno)));
  }
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  void add(const RowIssue& i) {
    if (!f) return;
    const std::string line =
        fmt::format("{},{},{},{},{}\n", quote(i.source), i.line, i.column, quote(i.message), quote(i.row));
    std::fwrite(line.data(), 1, line.size(), f);  // an error shows in close()
  }
};

// Throws UsageError when -o, --rejects or --trace names an input or two of
// them name the same file.
void check_output_paths(const Options& opts);

}  // namespace warpcsv
