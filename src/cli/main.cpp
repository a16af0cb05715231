// warpcsv entry point: parse options, run the pipeline, and map every outcome
// to an exit code in this one place (the table is in README.md, "Exit codes").
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "cli/options.hpp"
#include "ranks/ranks.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/run.hpp"
#include "warpcsv/signals.hpp"

namespace {

void print_error(const std::string& msg) {
  const bool prefixed = msg.rfind("warpcsv:", 0) == 0;
  std::fprintf(stderr, "%s%s\n", prefixed ? "" : "warpcsv: ", msg.c_str());
}

// Flushes stdout; a reader that went away is success, a full disk is not.
int finish_stdout(int code) {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    if (errno == EPIPE) return code;
    print_error(std::string("cannot write output: ") + std::strerror(errno) +
                "; check free space and permissions of the output");
    return code == warpcsv::kExitOk ? warpcsv::kExitInput : code;
  }
  return code;
}

// How the run ended: its exit code, and what to print on stderr.
struct Ending {
  int code = warpcsv::kExitOk;
  std::string message;
  std::string detail;
  bool own = true;      // the rank's own failure, not a reaction to another rank's
  bool agreed = false;  // every rank knows it already
};

Ending run(int argc, char** argv) {
  const char* debug = std::getenv("WARPCSV_DEBUG");
  bool show_detail = debug && *debug && std::strcmp(debug, "0") != 0;
  Ending end;
  auto failed = [&](int code, const std::string& message, const std::string& detail = "") {
    end.code = code;
    end.message = message;
    if (show_detail) end.detail = detail;
  };
  try {
    warpcsv::Options opts = warpcsv::parse_options(argc, argv);
    show_detail = show_detail || opts.profile;
    int code = warpcsv::run_process_pipeline(opts);
    end.code = warpcsv::interrupted() ? warpcsv::interrupt_exit_code() : finish_stdout(code);
  } catch (const warpcsv::EarlyExit& e) {
    if (warpcsv::Ranks::rank() == 0) std::fputs(e.text.c_str(), stdout);
    end.code = finish_stdout(warpcsv::kExitOk);
  } catch (const warpcsv::OutputClosed&) {
    end.code = warpcsv::interrupted() ? warpcsv::interrupt_exit_code() : warpcsv::kExitOk;
  } catch (const warpcsv::AgreedFailure& e) {
    failed(e.exit_code(), e.what());
    end.agreed = true;
  } catch (const warpcsv::OtherRankFailed& e) {
    failed(e.exit_code(), e.what());
    end.own = false;
  } catch (const warpcsv::Error& e) {
    failed(e.exit_code(), e.what(), e.detail);
  } catch (const std::bad_alloc&) {
    failed(warpcsv::kExitResource, "out of memory; try a smaller --chunk-size or fewer --threads");
  } catch (const std::exception& e) {
    failed(warpcsv::kExitResource, std::string("internal error: ") + e.what() +
                                       "; this is a bug in warpcsv, please report it with the command line");
  }
  // An executor that noticed a signal may throw anything; the signal wins.
  if (warpcsv::interrupted()) {
    end.code = warpcsv::interrupt_exit_code();
    end.message.clear();
  }
  return end;
}

// Ranks end together: the first failure in rank order is every rank's, and
// rank 0 alone prints it; a run that worked ends with rank 0's code.
Ending agree_on_ending(Ending end) {
  if (!warpcsv::Ranks::many() || end.agreed || warpcsv::interrupted()) return end;
  warpcsv::RankOutcome mine;
  mine.kind = end.message.empty() ? warpcsv::RankOutcome::Ok : warpcsv::RankOutcome::Failed;
  mine.code = end.code;
  mine.primary = end.own;
  mine.message = end.message;
  const warpcsv::RankOutcome agreed = warpcsv::Ranks::agree(mine);
  if (agreed.rank != warpcsv::Ranks::rank()) end.detail.clear();
  end.code = agreed.code;
  end.message = agreed.message;
  return end;
}

}  // namespace

// A closed stdin, stdout or stderr gets /dev/null, opened the other way
// round: files warpcsv opens then never take those numbers (a --rejects file
// took fd 1 and got the result), and writing to a closed stdout still fails.
void guard_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int n = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
    if (n >= 0 && n != fd) {
      dup2(n, fd);
      close(n);
    }
  }
}

// Each input file holds a descriptor until the run ends: the soft limit
// (often 1024) goes up to the hard one, so that part-*.csv over a thousand
// files opens.
void raise_open_file_limit() {
  struct rlimit rl {};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

int main(int argc, char** argv) {
  guard_standard_fds();
  raise_open_file_limit();
  warpcsv::install_signal_handlers();
  warpcsv::Ranks::init(&argc, &argv);
  const Ending end = agree_on_ending(run(argc, argv));
  if (!end.message.empty() && warpcsv::Ranks::rank() == 0) {
    print_error(end.message);
    if (!end.detail.empty()) print_error("detail: " + end.detail);
  }
  const int code = end.code;
  // SIGINT, SIGTERM or SIGHUP: one line, exit 130, 143 or 129 now (no
  // buffered output goes out after it; files the run made are removed).
  if (warpcsv::interrupted()) warpcsv::exit_on_signal();
  warpcsv::Ranks::finalize();
  if (warpcsv::run_started_gpu()) {
    std::fflush(nullptr);  // output files were closed by the run; this is stdout and stderr
    std::_Exit(code);
  }
  return code;
}
