// Signal handling: SIGINT, SIGTERM and SIGHUP set a flag that executors poll,
// wake the waits on a self-pipe and interrupt the main thread's blocking
// calls; a second one ends the process at once. SIGPIPE ignored.
#include "warpcsv/signals.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <thread>

#include "warpcsv/errors.hpp"

namespace warpcsv {
namespace {

// Lock-free atomics: safe to use from a signal handler.
constexpr int kPublished = -1;    // g_signal past begin_publish(): signals come too late
std::atomic<int> g_signal{0};     // the first stop signal (or kPublished)
std::atomic<int> g_reported{0};   // its line was written (once, by whoever exits)
int g_wake[2] = {-1, -1};         // self-pipe: written by the first signal, never read
pid_t g_main_tid = 0;             // the thread whose blocking calls are interrupted
int g_kick_signal = 0;            // sent to that thread to interrupt them

// Temporary files to remove on an exit at once: 0 free, 1 being set, 2 set.
constexpr int kTempSlots = 32;
struct TempSlot {
  std::atomic<int> state{0};
  char path[4096];
};
TempSlot g_temps[kTempSlots];

// Mapped windows of input files, for the SIGBUS message: 0 free, 1 being set, 2 set.
constexpr int kMappedSlots = 64;
struct MappedSlot {
  std::atomic<int> state{0};
  std::atomic<uintptr_t> begin{0};
  uintptr_t end = 0;
  char path[4096];
};
MappedSlot g_mapped[kMappedSlots];

void write_all(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t k = ::write(fd, s, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    s += k;
    n -= static_cast<size_t>(k);
  }
}

// Everything below is async-signal-safe: called from handlers.
void remove_temp_files() {
  for (auto& t : g_temps)
    if (t.state.load() == 2) ::unlink(t.path);
}

const char* signal_line(int sig) {
  switch (sig) {
    case SIGTERM: return "warpcsv: terminated (SIGTERM)\n";
    case SIGHUP: return "warpcsv: hung up (SIGHUP)\n";
    default: return "warpcsv: interrupted\n";
  }
}

[[noreturn]] void exit_now(int sig) {
  if (g_reported.exchange(1) == 0) {
    const char* line = signal_line(sig);
    write_all(2, line, std::strlen(line));
  }
  remove_temp_files();
  _exit(128 + (sig > 0 ? sig : SIGINT));
}

extern "C" void on_stop_signal(int sig) {
  const int saved = errno;
  int first = 0;
  if (!g_signal.compare_exchange_strong(first, sig)) {
    // The run's result is already being published: it ends by itself.
    if (first == kPublished) return;
    // A second signal means "now": the run did not stop in time (or the
    // sender, like `timeout`, signals the process and then its group).
    exit_now(first);
  }
  if (g_wake[1] >= 0) {
    const ssize_t ignored = ::write(g_wake[1], "x", 1);
    (void)ignored;
  }
  errno = saved;
}

// Does nothing: being called interrupts the main thread's blocking call.
extern "C" void on_kick(int) {}

// An input file truncated while it was mapped: its pages past the new end
// fault. Nothing can be read on from there; say so instead of a crash.
extern "C" void on_sigbus(int, siginfo_t* info, void*) {
  const uintptr_t at = info ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  const char* path = nullptr;
  for (auto& m : g_mapped)
    if (m.state.load() == 2 && at >= m.begin.load() && at < m.end) path = m.path;
  static const char head[] = "warpcsv: ";
  static const char which[] = "an input file";
  static const char tail[] =
      " shrank while it was read (truncated by another process?); run again once nothing writes it, or read a "
      "copy\n";
  write_all(2, head, sizeof head - 1);
  if (path) write_all(2, path, std::strlen(path));
  else write_all(2, which, sizeof which - 1);
  write_all(2, tail, sizeof tail - 1);
  remove_temp_files();
  _exit(3);
}

// Sleeps until the first signal; then interrupts the main thread's blocking
// system call (a write to a pipe nobody reads, an open of a FIFO with no
// writer) every 10 ms until the process ends, so that none is entered just
// after the flag was looked at and waits for ever.
void kicker() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the stop signals go to other threads
  pollfd p{g_wake[0], POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
  for (;;) {
    ::syscall(SYS_tgkill, ::getpid(), g_main_tid, g_kick_signal);
    ::usleep(10000);
  }
}

void install(int sig, void (*handler)(int), bool keep_ignored) {
  struct sigaction old {};
  if (keep_ignored && sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) return;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  // One stop signal at a time: a second one runs after the first's handler.
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  // No SA_RESTART: a blocking call returns EINTR so the run stops promptly.
  sa.sa_flags = 0;
  sigaction(sig, &sa, nullptr);
}

}  // namespace

bool interrupted() { return g_signal.load(std::memory_order_relaxed) > 0; }
int interrupt_signal() { return std::max(0, g_signal.load()); }
int interrupt_exit_code() {
  const int sig = g_signal.load();
  return 128 + (sig > 0 ? sig : SIGINT);
}

bool begin_publish() {
  int none = 0;
  return g_signal.compare_exchange_strong(none, kPublished) || none == kPublished;
}

void new_run() {
  int published = kPublished;
  g_signal.compare_exchange_strong(published, 0);
}

int interrupt_fd() { return g_wake[0]; }

void wait_fd_ready(int fd, short events) {
  for (;;) {
    if (interrupted()) throw Interrupted();
    pollfd p[2] = {{fd, events, 0}, {g_wake[0], POLLIN, 0}};
    const int n = ::poll(p, g_wake[0] >= 0 ? 2 : 1, -1);
    if (n < 0 && errno != EINTR && errno != EAGAIN) return;  // the read or write reports it
    if (interrupted()) throw Interrupted();
    if (n > 0 && p[0].revents) return;  // ready, or an error / hang-up the call itself reports
  }
}

[[noreturn]] void exit_on_signal() { exit_now(interrupt_signal()); }

int note_temp_file(const char* path) {
  if (!path || std::strlen(path) >= sizeof g_temps[0].path) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int free_slot = 0;
    if (!g_temps[i].state.compare_exchange_strong(free_slot, 1)) continue;
    std::strcpy(g_temps[i].path, path);
    g_temps[i].state.store(2);
    return i;
  }
  return -1;
}

void forget_temp_file(int slot) {
  if (slot >= 0 && slot < kTempSlots) g_temps[slot].state.store(0);
}

void note_mapped_file(const void* addr, size_t len, const char* path) {
  if (!addr || !path || std::strlen(path) >= sizeof g_mapped[0].path) return;
  for (auto& m : g_mapped) {
    int free_slot = 0;
    if (!m.state.compare_exchange_strong(free_slot, 1)) continue;
    std::strcpy(m.path, path);
    m.begin.store(reinterpret_cast<uintptr_t>(addr));
    m.end = reinterpret_cast<uintptr_t>(addr) + len;
    m.state.store(2);
    return;
  }
}

void forget_mapped_file(const void* addr) {
  for (auto& m : g_mapped) {
    if (m.state.load() != 2 || m.begin.load() != reinterpret_cast<uintptr_t>(addr)) continue;
    int set = 2;
    if (m.state.compare_exchange_strong(set, 1)) {
      m.begin.store(0);
      m.state.store(0);
    }
    return;
  }
}

void install_signal_handlers() {
  std::signal(SIGPIPE, SIG_IGN);
  g_main_tid = static_cast<pid_t>(::syscall(SYS_gettid));
  if (g_wake[0] < 0 && ::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  g_kick_signal = SIGRTMIN;
  struct sigaction kick {};
  kick.sa_handler = on_kick;
  sigemptyset(&kick.sa_mask);
  sigaction(g_kick_signal, &kick, nullptr);
  if (g_wake[0] >= 0) {
    try {
      std::thread(kicker).detach();
    } catch (...) {  // no thread: signals still stop the run, only a call blocked on the main thread waits
    }
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) install(sig, on_stop_signal, true);
  struct sigaction bus {};
  bus.sa_sigaction = on_sigbus;
  bus.sa_flags = SA_SIGINFO;
  sigemptyset(&bus.sa_mask);
  sigaction(SIGBUS, &bus, nullptr);
}

}  // namespace warpcsv
