// Input sources (io.hpp): regular files, gzip (single and multi-member), errors, odd-sized reads.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "catch.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/io.hpp"

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

// One gzip member holding `text`, made with zlib.
std::string gzip(const std::string& text) {
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
  CHECK(src->can_pread());
  char buf[4];
  CHECK(src->read(buf, 4) == 0);
}

TEST_CASE("a small file shorter than the sniffed prefix") {
  TempDir dir;
  auto src = open_source(dir.file("x.csv", "a\n1\n"));
  CHECK(read_all(*src, {3}) == "a\n1\n");
}

TEST_CASE("gzip: detected by magic, single and multi-member, odd chunks") {
  TempDir dir;
  const std::string a = sample_csv(20000, 2), b = "more,rows\n1,2\n";
  SECTION("single member, name without .gz") {
    auto src = open_source(dir.file("data.csv", gzip(a)));
    CHECK_FALSE(src->can_pread());
    CHECK(src->size_hint() == 0);
    CHECK(read_all(*src, {1, 5, 8191, 2}) == a);
  }
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
    std::string path = dir.file("cut.gz", z.substr(0, z.size() / 2));
    std::string msg = input_error([&] {
      auto src = open_source(path);
      read_all(*src, {65536});
    });
    CHECK(msg.find("cut.gz") != std::string::npos);
    CHECK(msg.find("corrupt gzip") != std::string::npos);
    CHECK(msg.find("gzip -t") != std::string::npos);
  }
  SECTION("corrupt data") {
    std::string z = gzip(a);
    for (size_t i = 20; i < 60; ++i) z[i] = static_cast<char>(z[i] ^ 0x5A);
    std::string path = dir.file("bad.gz", z);
    std::string msg = input_error([&] {
      auto src = open_source(path);
      read_all(*src, {65536});
    });
    CHECK(msg.find("corrupt gzip") != std::string::npos);
  }
  SECTION("garbage after the last member") {
    std::string path = dir.file("junk.gz", gzip(b) + "not gzip");
    std::string msg = input_error([&] {
      auto src = open_source(path);
      read_all(*src, {65536});
    });
    CHECK(msg.find("not gzip") != std::string::npos);
  }
}

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
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // writer: the gzip bytes in small pieces
    int fd = ::open(fifo.c_str(), O_WRONLY);
    for (size_t i = 0; i < z.size(); i += 777) {
      size_t n = std::min<size_t>(777, z.size() - i);
      if (::write(fd, z.data() + i, n) != static_cast<ssize_t>(n)) _exit(1);
    }
    ::close(fd);
    _exit(0);
  }
  auto src = open_source(fifo);
  CHECK_FALSE(src->can_pread());
  CHECK(src->size_hint() == 0);
  CHECK(read_all(*src, {13, 4000}) == text);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
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
