// SIGINT, SIGTERM and SIGHUP handling shared by the command line, the
// executors and the files a run writes.
#pragma once
#include <cstddef>

namespace warpcsv {

// True once SIGINT, SIGTERM or SIGHUP arrived; long loops poll it and stop,
// and main exits with interrupt_exit_code().
bool interrupted();
// The first of those signals to arrive (0: none yet).
int interrupt_signal();
// 128 + that signal: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP); 130 when none.
int interrupt_exit_code();

// Installs the process signal handling: SIGPIPE ignored (writes then fail with
// EPIPE, which writers turn into OutputClosed); the first SIGINT, SIGTERM or
// SIGHUP sets interrupted(), wakes waits on interrupt_fd() and interrupts the
// main thread's blocking system calls (EINTR) until the process ends; a
// second one exits at once (the line on stderr, temporary files removed). A
// signal the process was started with ignored (nohup) stays ignored.
void install_signal_handlers();

// The point of no return of a run that succeeded: its files are about to
// replace the old ones (-o, --rejects). False when a signal came first (then
// nothing may be published: the run stops with the signal's code). From here
// on a signal no longer stops the run nor changes its exit code: the result
// is out (exit 130 always means the old files are as they were).
// new_run() ends that state for a next run in the same process.
bool begin_publish();
void new_run();

// A descriptor that turns readable once interrupted() (for poll); -1 before
// install_signal_handlers().
int interrupt_fd();
// Waits until `fd` is ready for `events` (POLLIN, POLLOUT); throws Interrupted
// once a signal came, even while the wait would go on for ever (an idle pipe).
void wait_fd_ready(int fd, short events);

// Prints the signal's line ("warpcsv: interrupted", "warpcsv: terminated
// (SIGTERM)", ...), removes the temporary files and ends the process with
// interrupt_exit_code(), at once (no buffered output is flushed: no result is
// written after a signal).
[[noreturn]] void exit_on_signal();

// Temporary files to remove when the process ends at once (a second signal,
// SIGBUS), where no destructor runs: returns a slot for forget_temp_file, or
// -1 when all are taken (the file is then only removed by its owner).
int note_temp_file(const char* path);
void forget_temp_file(int slot);

// Mapped input bytes [addr, addr + len) of the file `path`, so that a fault
// in them (the file truncated under the run: SIGBUS) names the file. Slots
// taken past the table's size are not noted (the message then names none).
void note_mapped_file(const void* addr, size_t len, const char* path);
void forget_mapped_file(const void* addr);

}  // namespace warpcsv
