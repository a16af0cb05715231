// Files, standard streams and runs for tests of whole pipelines: a temporary
// folder, reading and writing files, stderr or stdout sent to a file while a
// run lasts, and a run's exit code as the command would give it.
#pragma once
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/options.hpp"
#include "warpcsv/run.hpp"

namespace warpcsv::testing {

// A fresh folder under $TMPDIR (or /tmp), removed with everything in it.
struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/warpcsv-test-XXXXXX";
    REQUIRE(mkdtemp(&templ[0]) != nullptr);
    path = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path + "/" + name; }
};

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

// One gzip member holding `text`, made with zlib.
inline std::string gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Sends one of this process's standard streams (`stream`, descriptor `fd`)
// to a file (e.g. /dev/null) while alive.
class CaptureStream {
 public:
  CaptureStream(std::FILE* stream, int fd, const std::string& path) : stream_(stream), fd_(fd) {
    std::fflush(stream_);
    saved_ = dup(fd_);
    const int to = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (to >= 0) {
      dup2(to, fd_);
      close(to);
    }
  }
  ~CaptureStream() {
    std::fflush(stream_);
    if (saved_ >= 0) {
      dup2(saved_, fd_);
      close(saved_);
    }
  }
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;

 private:
  std::FILE* stream_;
  int fd_;
  int saved_ = -1;
};

struct CaptureStderr : CaptureStream {
  explicit CaptureStderr(const std::string& path) : CaptureStream(stderr, 2, path) {}
};
struct CaptureStdout : CaptureStream {
  explicit CaptureStdout(const std::string& path) : CaptureStream(stdout, 1, path) {}
};

// Runs a pipeline through the library entry as the command would: its exit
// code, or an error's code with its message in `error`.
inline int run_to_exit(const Options& opts, std::string& error) {
  try {
    return run_pipeline(opts);
  } catch (const Error& e) {
    error = e.what();
    return e.exit_code();
  }
}

}  // namespace warpcsv::testing
