// AtomicFile (-o, --rejects, --trace): a file is replaced whole by commit()
// or left as it was, with its permissions, and no temporary stays beside it;
// the publish point of signals.hpp.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.hpp"
#include "output/atomic_file.hpp"
#include "test_files.hpp"
#include "warpcsv/signals.hpp"

using namespace warpcsv;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("atomic file: the file changes only on commit, whole", "[output]") {
  TempDir dir;
  const std::string path = dir.file("out.csv");
  write_file(path, "yesterday\n");
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  {
    AtomicFile f;
    REQUIRE(f.open(path, false));
    CHECK_FALSE(f.direct());
    std::fputs("today\n", f.file());
    std::fflush(f.file());
    CHECK(read_file(path) == "yesterday\n");  // the temporary holds it
    CHECK(names_in(dir.path) == std::vector<std::string>{"out.csv"});  // and has no name until commit
    REQUIRE(f.close());
    CHECK(read_file(path) == "yesterday\n");
    REQUIRE(f.commit());
    CHECK(read_file(path) == "today\n");
  }
  CHECK(mode_of(path) == 0640);
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.csv"});
}

// SIGKILL (the OOM killer) runs no handler: only a temporary without a name
// leaves nothing behind.
TEST_CASE("atomic file: a process killed while writing leaves the file as it was and nothing beside it",
          "[output]") {
  TempDir dir;
  const std::string path = dir.file("out.csv");
  write_file(path, "yesterday\n");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    AtomicFile f;
    if (!f.open(path, false)) ::_exit(3);
    std::fputs("half a report", f.file());
    std::fflush(f.file());
    ::raise(SIGKILL);
    ::_exit(4);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(read_file(path) == "yesterday\n");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.csv"});
}

TEST_CASE("atomic file: without commit the file stays as it was and the temporary goes", "[output]") {
  TempDir dir;
  const std::string old_file = dir.file("old.csv"), new_file = dir.file("new.csv");
  write_file(old_file, "yesterday\n");
  {
    AtomicFile a, b;
    REQUIRE(a.open(old_file, true));
    REQUIRE(b.open(new_file, true));
    std::fputs("half a report", a.file());
    std::fputs("half a report", b.file());
    REQUIRE(a.close());  // closed but not committed (a failed assert)
    b.discard();
  }
  CHECK(read_file(old_file) == "yesterday\n");
  CHECK(names_in(dir.path) == std::vector<std::string>{"old.csv"});
}

TEST_CASE("atomic file: a new file gets 0666 less the umask", "[output]") {
  TempDir dir;
  const mode_t old_mask = ::umask(027);
  AtomicFile f;
  const bool opened = f.open(dir.file("new.csv"), false);
  ::umask(old_mask);
  REQUIRE(opened);
  REQUIRE(f.commit());
  CHECK(mode_of(dir.file("new.csv")) == 0640);
}

TEST_CASE("atomic file: through a symbolic link the target is replaced", "[output]") {
  TempDir dir;
  std::filesystem::create_directory(dir.file("d"));
  write_file(dir.file("d/target.csv"), "old\n");
  std::filesystem::create_symlink("d/target.csv", dir.file("link.csv"));
  AtomicFile f;
  REQUIRE(f.open(dir.file("link.csv"), false));
  std::fputs("new\n", f.file());
  REQUIRE(f.commit());
  CHECK(std::filesystem::is_symlink(dir.file("link.csv")));
  CHECK(read_file(dir.file("d/target.csv")) == "new\n");
  CHECK(names_in(dir.file("d")) == std::vector<std::string>{"target.csv"});
}

TEST_CASE("atomic file: a device is written directly; a missing folder fails", "[output]") {
  AtomicFile f;
  REQUIRE(f.open("/dev/null", false));
  CHECK(f.direct());
  std::fputs("gone\n", f.file());
  CHECK(f.commit());
  TempDir dir;
  AtomicFile g;
  errno = 0;
  CHECK_FALSE(g.open(dir.file("no/such/dir/out.csv"), false));
  CHECK(errno == ENOENT);
  CHECK(g.file() == nullptr);
}

TEST_CASE("signals: publishing a run's files leaves no signal state behind", "[output]") {
  new_run();
  CHECK_FALSE(interrupted());
  CHECK(begin_publish());  // no signal came: the files may replace the old ones
  CHECK(begin_publish());
  CHECK_FALSE(interrupted());
  CHECK(interrupt_signal() == 0);
  CHECK(interrupt_exit_code() == 130);
  new_run();  // a next run in this process is stopped by signals again
  CHECK_FALSE(interrupted());
}
