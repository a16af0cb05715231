// --trace FILE: a Chrome/Perfetto trace of a run (JSON "traceEvents"), which
// chrome://tracing and ui.perfetto.dev open. One complete event ("ph": "X") per
// partition, batch and stage; pid is the device (0: the host, 1 + g: GPU g),
// tid a host thread or a GPU stream. Events are few (one per partition or
// batch and stage), so one mutex-guarded vector holds them; code that traces
// checks for a null Tracer before it reads any clock, so a run without
// --trace pays a branch.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "output/atomic_file.hpp"

namespace warpcsv::trace {

using Clock = std::chrono::steady_clock;

constexpr int kHostPid = 0;
inline int gpu_pid(int gpu) { return 1 + gpu; }

// A numeric argument of an event; `key` is a string literal.
struct Arg {
  const char* key;
  int64_t value;
};
constexpr int kMaxArgs = 4;

class Tracer {
 public:
  // Opens `path` (a temporary file beside it that write() renames over it:
  // the old trace stays until the new one is whole), so that a file that
  // cannot be written fails the run before it starts: InputError (exit 3),
  // as -o and --rejects do.
  // Times are from `start`, the run's start.
  explicit Tracer(std::string path, Clock::time_point start = Clock::now());
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  const std::string& path() const { return path_; }
  Clock::time_point start() const { return start_; }
  // Microseconds from the run's start to `t`.
  double us(Clock::time_point t) const { return std::chrono::duration<double, std::micro>(t - start_).count(); }

  // A complete event from `begin` to `end` (host clock).
  void complete(std::string name, const char* cat, int pid, int tid, Clock::time_point begin,
                Clock::time_point end, std::initializer_list<Arg> args = {});
  // A complete event already on the run's timeline: `ts` and `dur` in
  // microseconds (a GPU's events, converted).
  void complete_us(std::string name, const char* cat, int pid, int tid, double ts, double dur,
                   std::initializer_list<Arg> args = {});
  // A complete event on this host thread from `begin` to now.
  void host(std::string name, const char* cat, Clock::time_point begin, std::initializer_list<Arg> args = {}) {
    complete(std::move(name), cat, kHostPid, this_thread(), begin, Clock::now(), args);
  }

  // This host thread's tid (pid 0): threads are numbered from 1 as they
  // first record, and named "thread N" unless named otherwise.
  int this_thread();
  void name_this_thread(const std::string& name);
  void name_thread(int pid, int tid, const std::string& name);
  void name_process(int pid, const std::string& name);

  // Complete events recorded so far.
  size_t events() const;
  // Writes the trace and closes the file; throws InputError when it cannot
  // be written. Events recorded later are dropped. Once only.
  void write();
  bool written() const;

 private:
  struct Event {
    std::string name;
    const char* cat;
    int pid, tid;
    double ts, dur;
    int nargs;
    Arg args[kMaxArgs];
  };
  void add(Event e, std::initializer_list<Arg> args);
  std::string json() const;  // under m_

  const std::string path_;
  const Clock::time_point start_;
  const uint64_t id_;  // tells this tracer's thread numbers from an earlier run's in this process
  AtomicFile file_;
  std::FILE* f_ = nullptr;  // file_'s stream until write()
  mutable std::mutex m_;
  std::vector<Event> events_;
  std::map<std::pair<int, int>, std::string> thread_names_;
  std::map<int, std::string> process_names_;
  int next_tid_ = 1;
  bool written_ = false;
};

// Now when `t` traces, else a zero time point (no clock is read).
inline Clock::time_point now_if(const Tracer* t) { return t ? Clock::now() : Clock::time_point{}; }

// The run's tracer for code that is not handed one (a stream's read-ahead
// thread, which may outlive the run: it holds the tracer, whose events after
// write() are dropped); null when tracing is off.
std::shared_ptr<Tracer> current();
class SetCurrent {
 public:
  explicit SetCurrent(std::shared_ptr<Tracer> t);
  ~SetCurrent();
  SetCurrent(const SetCurrent&) = delete;
  SetCurrent& operator=(const SetCurrent&) = delete;
};

// Writes the trace when the run ends without having written it (an error,
// Ctrl-C, --explain): what was recorded, best effort; a failure is a note on
// stderr, the run's own error goes out as it would.
class WriteOnExit {
 public:
  explicit WriteOnExit(Tracer* t) : t_(t) {}
  ~WriteOnExit();
  WriteOnExit(const WriteOnExit&) = delete;
  WriteOnExit& operator=(const WriteOnExit&) = delete;

 private:
  Tracer* t_;
};

}  // namespace warpcsv::trace
