// Signal handling: a flag for SIGINT that executors poll, SIGPIPE ignored.
#include "warpcsv/signals.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace warpcsv {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
char g_made_file[4096];  // set_made_file; read by on_sigbus

extern "C" void on_sigint(int) {
  // A second Ctrl-C means "now": the run did not stop in time.
  if (g_interrupted) _exit(130);
  g_interrupted = 1;
}

// An input file truncated while it was mapped: its pages past the new end
// fault. Nothing can be read on from there; say so instead of a crash.
extern "C" void on_sigbus(int) {
  static const char msg[] =
      "warpcsv: an input file shrank while it was read (truncated by another process?); run again once nothing "
      "writes it, or read a copy\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
  if (g_made_file[0]) unlink(g_made_file);
  _exit(3);
}

}  // namespace

bool interrupted() { return g_interrupted != 0; }

void set_made_file(const char* path) {
  g_made_file[0] = 0;
  if (path && std::strlen(path) < sizeof g_made_file) std::strcpy(g_made_file, path);
}

void install_signal_handlers() {
  std::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocking read of stdin returns EINTR so the run stops promptly.
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  struct sigaction bus {};
  bus.sa_handler = on_sigbus;
  sigemptyset(&bus.sa_mask);
  sigaction(SIGBUS, &bus, nullptr);
}

}  // namespace warpcsv
