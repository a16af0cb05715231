// A file the run writes (-o, --rejects, --trace) that readers see whole or not
// at all: written to a temporary file beside it, renamed over it by commit().
#pragma once
#include <cstdio>
#include <string>

namespace warpcsv {

class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // Removes the temporary file unless committed.
  ~AtomicFile() { discard(); }

  // Opens `path` for writing. A regular file, or a new one, is written to an
  // unnamed file in its directory (O_TMPFILE; where there is none, a
  // temporary `.NAME.warpcsv-XXXXXX`), made with the file's
  // permissions (a new one: 0666 less the umask); a symbolic link's target is
  // the file replaced. Written directly: what cannot be renamed over (a FIFO,
  // a terminal, /dev/null), a file that is the process's standard output
  // or error (`--rejects /dev/stderr`: through that descriptor, keeping
  // `2>>log`'s append), and a file whose directory takes no new file while
  // the file itself is writable (then `truncate` empties it now: without it
  // the caller empties it when it writes). False with errno set when nothing
  // could be opened (a file that may not be written gives EACCES, as before).
  bool open(const std::string& path, bool truncate);
  std::FILE* file() const { return f_; }
  // Written in place: no rename at the end (nothing to take back on failure).
  bool direct() const { return temp_.empty() && unnamed_fd_ < 0; }
  // Flushes and closes the stream; false with errno set on a write error.
  bool close();
  // After close(): the temporary replaces the file (an unnamed one is named
  // `.NAME.warpcsv-XXXXXX` first). False with errno set when it cannot (the
  // temporary is then removed).
  bool commit();
  // Closes the stream and removes the temporary file (the file is left as it
  // was); a direct file is only closed.
  void discard();

 private:
  std::string target_;  // the file replaced
  std::string temp_;    // the named temporary beside it; empty: unnamed, or writing target_ directly
  std::string temp_prefix_;  // ".NAME.warpcsv-" in target_'s directory
  int unnamed_fd_ = -1;      // the unnamed temporary (O_TMPFILE), kept open until it is named or dropped
  std::FILE* f_ = nullptr;
  int slot_ = -1;  // note_temp_file's slot
};

}  // namespace warpcsv
