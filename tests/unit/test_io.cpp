// Input sources (io.hpp): regular files, gzip (single and multi-member), zstd (frames, skippable
// frames; or the message of a build without libzstd), errors, odd-sized reads.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#ifdef WARPCSV_HAVE_ZSTD
#include <zstd.h>
#endif

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "catch.hpp"
#include "io/input.hpp"
#include "io/stream_ahead.hpp"
#include "test_files.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"
#include "warpcsv/signals.hpp"

using namespace warpcsv;

namespace {

// A fresh temporary directory removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/warpcsv_test_io_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string file(const std::string& name, const std::string& bytes) const {
    std::string p = path + "/" + name;
    FILE* f = std::fopen(p.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
    return p;
  }
};

using warpcsv::testing::gzip;

#ifdef WARPCSV_HAVE_ZSTD
// One zstd frame holding `text`, made with libzstd; with a content checksum, as the zstd command
// line writes by default.
std::string zstd_frame(const std::string& text, bool checksum = true) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  REQUIRE(c != nullptr);
  REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3)));
  REQUIRE(!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0)));
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress2(c, &out[0], out.size(), text.data(), text.size());
  ZSTD_freeCCtx(c);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}

// The same with the one-shot ZSTD_compress (no checksum, content size in the header).
std::string zstd_simple(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  size_t n = ZSTD_compress(&out[0], out.size(), text.data(), text.size(), 1);
  REQUIRE(!ZSTD_isError(n));
  out.resize(n);
  return out;
}
#endif

// A zstd skippable frame (magic 0x184D2A50 + variant, little-endian) carrying `payload`.
std::string zstd_skippable(const std::string& payload, unsigned variant = 0) {
  std::string f;
  const uint32_t magic = 0x184D2A50u + (variant & 0xF);
  const auto size = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) f += static_cast<char>((magic >> (8 * i)) & 0xFF);
  for (int i = 0; i < 4; ++i) f += static_cast<char>((size >> (8 * i)) & 0xFF);
  return f + payload;
}

// Reads the whole source in chunks of the given sizes (cycled).
std::string read_all(ByteSource& s, std::vector<size_t> chunks) {
  std::string out, buf;
  for (size_t i = 0;; ++i) {
    size_t n = chunks[i % chunks.size()];
    buf.resize(n);
    size_t k = s.read(&buf[0], n);
    REQUIRE(k <= n);
    if (k == 0) break;
    out.append(buf, 0, k);
  }
  return out;
}

std::string sample_csv(size_t rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s = "id,name,amount\n";
  for (size_t i = 0; i < rows; ++i)
    s += std::to_string(i) + ",n" + std::to_string(rng() % 1000) + "," +
         std::to_string(rng() % 100000) + "." + std::to_string(rng() % 100) + "\n";
  return s;
}

// Writes `bytes` into the FIFO `path` from a child process, `piece` bytes per
// write (a slow producer); returns the child's pid (-1 when fork failed).
pid_t write_fifo_in_child(const std::string& path, const std::string& bytes, size_t piece) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = ::open(path.c_str(), O_WRONLY);
  for (size_t i = 0; i < bytes.size(); i += piece) {
    const size_t n = std::min(piece, bytes.size() - i);
    if (::write(fd, bytes.data() + i, n) != static_cast<ssize_t>(n)) _exit(1);
  }
  ::close(fd);
  _exit(0);
}

// Waits for a write_fifo_in_child child: whether it wrote everything.
bool child_succeeded(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The message of the InputError that `f` throws ("" when it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The InputError message of reading all of a file `name` holding `bytes` ("" when none).
std::string read_error(const TempDir& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir.file(name, bytes);
  return input_error([&] {
    auto src = open_source(path);
    read_all(*src, {65536});
  });
}

// A compressed file named data.csv (no .gz / .zst) holding `compressed`:
// found by its magic bytes, a stream (no pread, no size), read whole in odd
// chunks to `text`, and still at its end after that.
void check_found_by_magic(const TempDir& dir, const std::string& compressed, const std::string& text) {
  auto src = open_source(dir.file("data.csv", compressed));
  CHECK_FALSE(src->can_pread());
  CHECK(src->size_hint() == 0);
  CHECK(src->name() == dir.path + "/data.csv");
  CHECK(read_all(*src, {1, 5, 8191, 2, 1 << 20}) == text);
  char buf[8];
  CHECK(src->read(buf, sizeof buf) == 0);  // stays at end
}

}  // namespace

TEST_CASE("regular file: sequential reads in odd chunks, pread, size") {
  TempDir dir;
  const std::string text = sample_csv(5000, 1);
  const std::string path = dir.file("a.csv", text);
  auto src = open_source(path);
  CHECK(src->name() == path);
  CHECK(src->can_pread());
  CHECK(src->size_hint() == text.size());
  CHECK(read_all(*src, {1, 7, 4096, 3, 65537}) == text);
  char buf[10];
  CHECK(src->read(buf, sizeof buf) == 0);  // stays at end
  // pread at any offset, independent of the stream position, short only at the end.
  std::string got(100, '\0');
  CHECK(src->pread(&got[0], 100, 1234) == 100);
  CHECK(got == text.substr(1234, 100));
  CHECK(src->pread(&got[0], 100, text.size() - 30) == 30);
  CHECK(got.substr(0, 30) == text.substr(text.size() - 30));
  CHECK(src->pread(&got[0], 100, text.size() + 5) == 0);
}

TEST_CASE("empty file reads nothing") {
  TempDir dir;
  auto src = open_source(dir.file("empty.csv", ""));
  CHECK(src->size_hint() == 0);
  CHECK_FALSE(src->can_pread());  // a size of 0 is read as a stream: /proc files say 0 and have content
  char buf[4];
  CHECK(src->read(buf, 4) == 0);
}

TEST_CASE("a file that reports size 0 but has content (/proc) is read whole") {
  auto src = open_source("/proc/self/status");
  std::string all;
  char buf[4096];
  for (size_t k; (k = src->read(buf, sizeof buf)) > 0;) all.append(buf, k);
  CHECK(all.find("Name:") != std::string::npos);
}

TEST_CASE("a small file shorter than the sniffed prefix") {
  TempDir dir;
  auto src = open_source(dir.file("x.csv", "a\n1\n"));
  CHECK(read_all(*src, {3}) == "a\n1\n");
}

TEST_CASE("gzip: detected by magic, single and multi-member, odd chunks") {
  TempDir dir;
  const std::string a = sample_csv(20000, 2), b = "more,rows\n1,2\n";
  SECTION("single member, name without .gz") { check_found_by_magic(dir, gzip(a), a); }
  SECTION("two members concatenated, as `cat a.gz b.gz` makes") {
    auto src = open_source(dir.file("two.csv.gz", gzip(a) + gzip(b)));
    CHECK(read_all(*src, {4096}) == a + b);
  }
  SECTION("members of an empty text") {
    auto src = open_source(dir.file("e.gz", gzip("") + gzip(b) + gzip("")));
    CHECK(read_all(*src, {3}) == b);
  }
  SECTION("zero padding after the last member is ignored") {
    auto src = open_source(dir.file("pad.gz", gzip(b) + std::string(512, '\0')));
    CHECK(read_all(*src, {100}) == b);
  }
  SECTION("truncated stream") {
    std::string z = gzip(a);
    std::string msg = read_error(dir, "cut.gz", z.substr(0, z.size() / 2));
    CHECK(msg.find("cut.gz") != std::string::npos);
    CHECK(msg.find("corrupt gzip") != std::string::npos);
    CHECK(msg.find("gzip -t") != std::string::npos);
  }
  SECTION("corrupt data") {
    std::string z = gzip(a);
    for (size_t i = 20; i < 60; ++i) z[i] = static_cast<char>(z[i] ^ 0x5A);
    std::string msg = read_error(dir, "bad.gz", z);
    CHECK(msg.find("corrupt gzip") != std::string::npos);
  }
  SECTION("garbage after the last member") {
    std::string msg = read_error(dir, "junk.gz", gzip(b) + "not gzip");
    CHECK(msg.find("not gzip") != std::string::npos);
  }
}

#ifdef WARPCSV_HAVE_ZSTD
TEST_CASE("zstd: detected by magic, frames, skippable frames, odd chunks") {
  TempDir dir;
  // ~2.5 MB of text: several zstd blocks and several 256 KiB input refills.
  const std::string a = sample_csv(100000, 4), b = "more,rows\n1,2\n";
  SECTION("one frame, name without .zst") { check_found_by_magic(dir, zstd_frame(a), a); }
  SECTION("one-shot ZSTD_compress frame, no checksum") {
    auto src = open_source(dir.file("s.zst", zstd_simple(a)));
    CHECK(read_all(*src, {65536}) == a);
  }
  SECTION("several frames concatenated, as `cat a.zst b.zst` makes, empty ones included") {
    const std::string z = zstd_frame(a.substr(0, 1000)) + zstd_frame("") +
                          zstd_frame(a.substr(1000, 699000), false) +
                          zstd_simple(a.substr(700000)) + zstd_frame(b) + zstd_frame("");
    auto src = open_source(dir.file("multi.csv.zst", z));
    CHECK(read_all(*src, {4096, 3}) == a + b);
  }
  SECTION("skippable frames first (pzstd, seekable format), between and last are passed over") {
    const std::string z = zstd_skippable(std::string("\x10\0\0\0", 4), 0xE) +
                          zstd_frame(a.substr(0, 5000)) +
                          zstd_skippable(std::string(100000, 'S')) + zstd_skippable("") +
                          zstd_frame(a.substr(5000)) + zstd_skippable("tail", 0xF);
    auto src = open_source(dir.file("skip.zst", z));
    CHECK(read_all(*src, {7, 100000}) == a);
  }
  SECTION("only skippable frames: empty input") {
    auto src = open_source(dir.file("none.zst", zstd_skippable("abc") + zstd_skippable("")));
    CHECK(read_all(*src, {10}).empty());
  }
  SECTION("a CSV that is not zstd is read as it is") {
    auto src = open_source(dir.file("plain.csv", "P*M,x\n1,2\n"));
    CHECK(src->can_pread());
  }
}

TEST_CASE("zstd: corrupt, truncated and oversized streams are input errors with the fix") {
  TempDir dir;
  const std::string a = sample_csv(50000, 5), b = "more,rows\n1,2\n";
  auto has = [](const std::string& msg, const std::string& part) {
    INFO(msg);
    CHECK(msg.find(part) != std::string::npos);
  };
  SECTION("truncated in the middle of a frame") {
    const std::string z = zstd_frame(a);
    const size_t cut = z.size() / 2;
    std::string msg = read_error(dir, "cut.csv.zst", z.substr(0, cut));
    has(msg, "'" + dir.path + "/cut.csv.zst' is a corrupt zstd stream (");
    has(msg, "ends in the middle of a zstd frame");
    has(msg, "after " + std::to_string(cut) + " compressed bytes");
    has(msg, "`zstd -t " + dir.path + "/cut.csv.zst`");
  }
  SECTION("truncated right after the frame header, and in the checksum") {
    const std::string z = zstd_frame(b);
    for (size_t cut : {size_t{5}, z.size() - 1}) {
      std::string msg = read_error(dir, "short.zst", z.substr(0, cut));
      has(msg, "ends in the middle of a zstd frame");
    }
  }
  SECTION("truncated second frame, and a truncated skippable frame") {
    const std::string f2 = zstd_frame(a);
    has(read_error(dir, "two.zst", zstd_frame(b) + f2.substr(0, 100)),
        "ends in the middle of a zstd frame");
    const std::string skip_cut = zstd_skippable(std::string(50, 'x')).substr(0, 30);
    has(read_error(dir, "skipcut.zst", zstd_frame(b) + skip_cut),
        "ends in the middle of a zstd frame");
  }
  SECTION("a corrupted byte: the block or the checksum does not match") {
    std::string z = zstd_frame(a);
    for (size_t i : {z.size() / 3, z.size() / 2, z.size() - 20}) {
      std::string bad = z;
      bad[i] = static_cast<char>(bad[i] ^ 0x5A);
      std::string msg = read_error(dir, "bad.zst", bad);
      has(msg, "bad.zst' is a corrupt zstd stream (");
      has(msg, " in the zstd frame at compressed byte 0, after ");
      has(msg, "zstd -t ");
    }
    std::string tail = z;
    tail[z.size() - 2] = static_cast<char>(tail[z.size() - 2] ^ 1);  // inside the checksum
    has(read_error(dir, "sum.zst", tail), "checksum in the zstd frame at compressed byte 0, after ");
    // In the second frame: the message names where that frame starts.
    const std::string first = zstd_frame(b);
    std::string msg = read_error(dir, "second.zst", first + tail);
    has(msg, "in the zstd frame at compressed byte " + std::to_string(first.size()) + ", after ");
  }
  SECTION("garbage after the last frame") {
    const std::string z = zstd_frame(b);
    std::string msg = read_error(dir, "junk.zst", z + "not zstd\n");
    has(msg, "the data after the last zstd frame, from compressed byte " +
                 std::to_string(z.size()) + ", is not zstd");
  }
  SECTION("a window larger than 128 MiB (zstd --long=30) is refused, not allocated") {
    // Frame header: no single segment, window descriptor 0xA0 = 2^30; then an empty raw last block.
    const std::string z("\x28\xb5\x2f\xfd\x00\xa0\x01\x00\x00", 9);
    std::string msg = read_error(dir, "long.zst", z);
    has(msg, "long.zst' needs a zstd window larger than 128 MiB");
    has(msg, "zstd -dc --long=31 ");
  }
}

TEST_CASE("zstd: compressed twice, or mixed with gzip, is named") {
  TempDir dir;
  const std::string text = "x,y\n1,2\n";
  auto msg_of = [&](const std::string& name, const std::string& bytes) {
    std::string path = dir.file(name, bytes);
    return input_error([&] { open_source(path); });
  };
  std::string m = msg_of("zz.zst", zstd_frame(zstd_frame(text)));
  CHECK(m.find("still zstd-compressed after zstd decompression") != std::string::npos);
  CHECK(m.find("zstd -dc " + dir.path + "/zz.zst | zstd -dc | warpcsv ... -") != std::string::npos);
  m = msg_of("gz.zst", zstd_frame(gzip(text)));
  CHECK(m.find("still gzip-compressed after zstd decompression") != std::string::npos);
  CHECK(m.find("| gunzip | warpcsv ... -") != std::string::npos);
  m = msg_of("zst.gz", gzip(zstd_frame(text)));
  CHECK(m.find("still zstd-compressed after gzip decompression") != std::string::npos);
  CHECK(m.find("gunzip -c " + dir.path + "/zst.gz | zstd -dc | warpcsv ... -") !=
        std::string::npos);
  CHECK(m.find("UTF-16") == std::string::npos);
  // UTF-16 inside zstd is still UTF-16.
  std::string le = std::string("\xFF\xFE", 2) + std::string("a\0,\0b\0\n\0", 8);
  CHECK(msg_of("u16.zst", zstd_frame(le)).find("UTF-16") != std::string::npos);
}

TEST_CASE("zstd through a FIFO, in small writes") {
  TempDir dir;
  std::string fifo = dir.path + "/zpipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string text = sample_csv(30000, 6);
  const std::string z =
      zstd_skippable("x") + zstd_frame(text.substr(0, 1234)) + zstd_frame(text.substr(1234));
  const pid_t pid = write_fifo_in_child(fifo, z, 333);
  REQUIRE(pid >= 0);
  auto src = open_source(fifo);
  CHECK_FALSE(src->can_pread());
  CHECK(read_all(*src, {13, 4000}) == text);
  CHECK(child_succeeded(pid));
}
#else
TEST_CASE("zstd: a build without libzstd refuses .zst input with the command to decompress it") {
  TempDir dir;
  // A zstd frame's magic, and a skippable frame first (pzstd): either is recognised.
  for (const std::string& bytes : {std::string("\x28\xb5\x2f\xfd\x00\xa0\x01\x00\x00", 9),
                                   zstd_skippable("abcd") + "\x28\xb5\x2f\xfd"}) {
    std::string path = dir.file("data.csv.zst", bytes);
    std::string msg = input_error([&] { open_source(path); });
    CHECK(msg == "'" + path + "' is zstd-compressed but this warpcsv was built without zstd; "
                 "decompress it first: zstd -dc " + path + " | warpcsv ... -");
  }
}
#endif

TEST_CASE("open errors name the path and the fix") {
  TempDir dir;
  SECTION("missing file") {
    std::string msg = input_error([&] { open_source(dir.path + "/nope.csv"); });
    CHECK(msg.find("nope.csv") != std::string::npos);
    CHECK(msg.find("no such file") != std::string::npos);
  }
  SECTION("directory") {
    std::string msg = input_error([&] { open_source(dir.path); });
    CHECK(msg.find(dir.path) != std::string::npos);
    CHECK(msg.find("is a directory") != std::string::npos);
  }
  SECTION("permission denied") {
    if (geteuid() == 0) return;  // root reads anything
    std::string path = dir.file("secret.csv", "a\n1\n");
    REQUIRE(chmod(path.c_str(), 0) == 0);
    std::string msg = input_error([&] { open_source(path); });
    CHECK(msg.find("permission denied") != std::string::npos);
    CHECK(msg.find("secret.csv") != std::string::npos);
  }
}

TEST_CASE("UTF-16 input is refused with the iconv fix") {
  TempDir dir;
  std::string le = std::string("\xFF\xFE", 2) + std::string("a\0,\0b\0\n\0", 8);
  std::string no_bom = std::string("i\0d\0,\0x\0\n\0001\0,\0002\0\n\0", 18);
  for (const std::string& bytes : {le, std::string("\xFE\xFF\0a", 4), no_bom}) {
    std::string path = dir.file("u16.csv", bytes);
    std::string msg = input_error([&] { open_source(path); });
    CHECK(msg.find("u16.csv': file looks like UTF-16; convert with iconv -f UTF-16 -t UTF-8") !=
          std::string::npos);
  }
  // Also inside gzip.
  std::string path = dir.file("u16.gz", gzip(le));
  CHECK(input_error([&] { open_source(path); }).find("UTF-16") != std::string::npos);
  // UTF-8 with a BOM is fine here (the header reader strips the BOM).
  auto src = open_source(dir.file("bom.csv", "\xEF\xBB\xBF" "a\n1\n"));
  CHECK(read_all(*src, {2}) == "\xEF\xBB\xBF" "a\n1\n");
}

TEST_CASE("FIFO is a stream, and gzip through it works") {
  TempDir dir;
  std::string fifo = dir.path + "/pipe";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::string text = sample_csv(3000, 3);
  const std::string z = gzip(text);
  const pid_t pid = write_fifo_in_child(fifo, z, 777);  // the gzip bytes in small pieces
  REQUIRE(pid >= 0);
  auto src = open_source(fifo);
  CHECK_FALSE(src->can_pread());
  CHECK(src->size_hint() == 0);
  CHECK(read_all(*src, {13, 4000}) == text);
  CHECK(child_succeeded(pid));
}

TEST_CASE("standard input is named <stdin> and read as a stream") {
  TempDir dir;
  const std::string text = "x,y\n1,2\n";
  std::string path = dir.file("in.csv.gz", gzip(text));
  // Redirect fd 0 to the file for the duration of the test.
  int saved = dup(STDIN_FILENO);
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(dup2(fd, STDIN_FILENO) == STDIN_FILENO);
  ::close(fd);
  std::string got;
  {
    auto src = open_source("-");
    CHECK(src->name() == "<stdin>");
    CHECK_FALSE(src->can_pread());
    got = read_all(*src, {3});
  }
  dup2(saved, STDIN_FILENO);
  ::close(saved);
  CHECK(got == text);
}

// ---- StreamAhead (io/stream_ahead.hpp) --------------------------------------------------

namespace {
// A stream that hands out `text` in pieces of random size, then throws at
// the end instead of returning 0 when `fail` is set.
class PieceSource : public ByteSource {
 public:
  PieceSource(std::string text, uint64_t seed, bool fail) : text_(std::move(text)), rng_(seed), fail_(fail) {}
  size_t read(char* dst, size_t n) override {
    if (at_ == text_.size()) {
      if (fail_) throw InputError("the stream broke after its bytes");
      return 0;
    }
    const size_t k = std::min({n, text_.size() - at_, static_cast<size_t>(1 + rng_() % 13)});
    std::memcpy(dst, text_.data() + at_, k);
    at_ += k;
    return k;
  }
  bool can_pread() const override { return false; }
  size_t pread(char*, size_t, uint64_t) override { return 0; }
  uint64_t size_hint() const override { return 0; }
  const std::string& name() const override { return name_; }

 private:
  std::string text_, name_ = "pieces";
  std::mt19937_64 rng_;
  size_t at_ = 0;
  bool fail_;
};

// A stream whose read() waits until released, then ends.
class HeldSource : public ByteSource {
 public:
  struct Gate {
    std::mutex m;
    std::condition_variable cv;
    bool reading = false, released = false;
  };
  explicit HeldSource(std::shared_ptr<Gate> g) : g_(std::move(g)) {}
  size_t read(char*, size_t) override {
    std::unique_lock<std::mutex> l(g_->m);
    g_->reading = true;
    g_->cv.notify_all();
    g_->cv.wait(l, [&] { return g_->released; });
    return 0;
  }
  bool can_pread() const override { return false; }
  size_t pread(char*, size_t, uint64_t) override { return 0; }
  uint64_t size_hint() const override { return 0; }
  const std::string& name() const override { return name_; }

 private:
  std::shared_ptr<Gate> g_;
  std::string name_ = "held";
};
}  // namespace

TEST_CASE("StreamAhead: the bytes in order, in any request sizes, then the end or the error") {
  std::mt19937_64 rng(5);
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(rng()) + (i % 7 ? "," : "\n");
  for (const bool fail : {false, true})
    for (const size_t block : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20})
      for (const size_t ahead : {size_t{0}, size_t{20}, size_t{1} << 16}) {
        INFO("fail " << fail << ", block " << block << ", ahead " << ahead);
        StreamAhead s(std::make_shared<PieceSource>(text, block + ahead, fail), block, ahead);
        std::string got;
        bool threw = false;
        try {
          for (;;) {
            char buf[300];
            const size_t want = 1 + rng() % sizeof buf;
            const size_t k = rng() % 2 ? s.read(buf, want) : s.read_some(buf, want, static_cast<int>(rng() % 2));
            if (k == 0) break;
            got.append(buf, k);
          }
        } catch (const InputError& e) {
          threw = true;
          CHECK(std::string(e.what()).find("broke") != std::string::npos);
        }
        CHECK(got == text);  // every byte before the error was handed out first
        CHECK(threw == fail);
      }
}

TEST_CASE("StreamAhead: read_some hands out what has come while the source waits for more") {
  auto gate = std::make_shared<HeldSource::Gate>();
  // "a,1\n" at once, then nothing until released, then "b,2\n" and the end.
  class Trickle : public ByteSource {
   public:
    explicit Trickle(std::shared_ptr<HeldSource::Gate> g) : g_(std::move(g)) {}
    size_t read(char* dst, size_t n) override {
      REQUIRE(n >= 4);
      if (step_ == 1) {
        std::unique_lock<std::mutex> l(g_->m);
        g_->reading = true;
        g_->cv.notify_all();
        g_->cv.wait(l, [&] { return g_->released; });
      }
      if (step_ > 1) return 0;
      std::memcpy(dst, step_++ ? "b,2\n" : "a,1\n", 4);
      return 4;
    }
    bool can_pread() const override { return false; }
    size_t pread(char*, size_t, uint64_t) override { return 0; }
    uint64_t size_hint() const override { return 0; }
    const std::string& name() const override { return name_; }

   private:
    std::shared_ptr<HeldSource::Gate> g_;
    int step_ = 0;
    std::string name_ = "trickle";
  };
  StreamAhead s(std::make_shared<Trickle>(gate), 1 << 20, 1 << 22);
  char buf[64];
  CHECK(std::string(buf, s.read_some(buf, sizeof buf, 0)) == "a,1\n");  // not held back for a full block
  CHECK(s.read_ready(buf, sizeof buf) == 0);  // nothing more yet, and no waiting for it
  CHECK(s.read_some(buf, sizeof buf, 30, false) == 0);  // a time limit for the first byte too
  {
    std::unique_lock<std::mutex> l(gate->m);
    gate->cv.wait(l, [&] { return gate->reading; });  // the source is asked for more, and waits
    gate->released = true;
  }
  gate->cv.notify_all();
  CHECK(std::string(buf, s.read(buf, sizeof buf)) == "b,2\n");
  CHECK(s.read(buf, sizeof buf) == 0);
}

TEST_CASE("StreamAhead: dropped while its reader waits in read(), which then ends on its own") {
  auto gate = std::make_shared<HeldSource::Gate>();
  auto src = std::make_shared<HeldSource>(gate);
  std::weak_ptr<HeldSource> alive = src;
  {
    StreamAhead s(std::move(src), 1024, 4096);
    std::unique_lock<std::mutex> l(gate->m);
    gate->cv.wait(l, [&] { return gate->reading; });
  }  // dropped (a limit was reached) while the reader waits for more input
  CHECK_FALSE(alive.expired());  // the reader still holds its source
  {
    std::lock_guard<std::mutex> l(gate->m);
    gate->released = true;  // the input ends
  }
  gate->cv.notify_all();
  for (int i = 0; i < 2000 && !alive.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(alive.expired());  // the reader ended and let go of the source
}

// Opening every input reads only its header: a run over many compressed
// files reads one ahead at a time, and lets it go once scanned.
TEST_CASE("streams: only the input being scanned is read ahead, and let go once scanned") {
  TempDir dir;
  Options opts;
  for (int f = 0; f < 4; ++f) {
    std::string text = "k,v\n";
    for (int r = 0; r < 20000; ++r) text += "k" + std::to_string(r % 9) + "," + std::to_string(r) + "\n";
    opts.files.push_back(dir.file("f" + std::to_string(f) + ".csv.gz", gzip(text)));
  }
  auto settles_at = [](int n) {
    for (int i = 0; i < 2000 && StreamAhead::running() != n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return StreamAhead::running() == n;
  };
  const int before = StreamAhead::running();
  const uint64_t started = StreamAhead::started();
  InputSet in = InputSet::open(opts);
  CHECK(StreamAhead::started() == started);  // headers only: no reader yet
  for (size_t i = 0; i < in.sources.size(); ++i) {
    const Window w = in.sources[i]->window(0, 64 << 10);  // the scan starts on this input
    CHECK(w.size > 0);
    CHECK(StreamAhead::started() == started + i + 1);  // its reader alone
    in.sources[i]->done();
    CHECK(settles_at(before));  // let go
  }
}

// A file truncated under its mapped window faults (SIGBUS) where the window is
// read: the process ends with exit 3 and a line that names the file. Run in a
// child process whose stderr is a pipe.
TEST_CASE("a file truncated under its mapped window: exit 3, the file named") {
  TempDir dir;
  const std::string text = sample_csv(60000, 3);
  const std::string path = dir.file("shrinks.csv", text);
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::dup2(err[1], 2);
    install_signal_handlers();
    Options opts;
    opts.files = {path};
    InputSet in = InputSet::open(opts);
    const Window w = in.sources[0]->window(0, text.size());
    if (w.size < text.size() / 2 || ::truncate(path.c_str(), 0) != 0) _exit(10);
    unsigned sum = 0;
    for (uint64_t i = 0; i < w.size; i += 4096) sum += static_cast<unsigned char>(*static_cast<volatile const char*>(w.data + i));
    _exit(sum == 0 ? 11 : 0);  // not reached: the first page past the new end faults
  }
  ::close(err[1]);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  ::close(err[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  INFO(said);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  CHECK(said.find("warpcsv: " + path + " shrank while it was read") != std::string::npos);
}
