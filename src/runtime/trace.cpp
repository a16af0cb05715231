#include "runtime/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "warpcsv/errors.hpp"

namespace warpcsv::trace {

namespace {

std::atomic<uint64_t> g_next_id{1};

std::mutex g_current_m;
std::shared_ptr<Tracer> g_current;

void append_escaped(std::string& out, const std::string& s) {
  out += '"';
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;  // UTF-8 as it is (file names)
    }
  }
  out += '"';
}

}  // namespace

Tracer::Tracer(std::string path, Clock::time_point start) : path_(std::move(path)), start_(start), id_(g_next_id++) {
  if (!file_.open(path_, true))
    throw InputError(fmt::format("cannot write --trace file {}: {}; check the directory exists and is writable",
                                 path_, std::strerror(errno)));
  f_ = file_.file();
  events_.reserve(4096);
  process_names_[kHostPid] = "cpu";
}

Tracer::~Tracer() = default;  // file_ removes a temporary never written

void Tracer::add(Event e, std::initializer_list<Arg> args) {
  e.nargs = 0;
  for (const Arg& a : args)
    if (e.nargs < kMaxArgs) e.args[e.nargs++] = a;
  e.ts = std::max(0.0, e.ts);
  e.dur = std::max(0.0, e.dur);
  std::lock_guard<std::mutex> l(m_);
  if (!written_) events_.push_back(std::move(e));
}

void Tracer::complete(std::string name, const char* cat, int pid, int tid, Clock::time_point begin,
                      Clock::time_point end, std::initializer_list<Arg> args) {
  add(Event{std::move(name), cat, pid, tid, us(begin), us(end) - us(begin), 0, {}}, args);
}

void Tracer::complete_us(std::string name, const char* cat, int pid, int tid, double ts, double dur,
                         std::initializer_list<Arg> args) {
  add(Event{std::move(name), cat, pid, tid, ts, dur, 0, {}}, args);
}

int Tracer::this_thread() {
  thread_local uint64_t owner = 0;  // the tracer that numbered this thread
  thread_local int tid = 0;
  if (owner != id_) {
    std::lock_guard<std::mutex> l(m_);
    tid = next_tid_++;
    owner = id_;
    thread_names_.emplace(std::pair{kHostPid, tid}, fmt::format("thread {}", tid));
  }
  return tid;
}

void Tracer::name_this_thread(const std::string& name) { name_thread(kHostPid, this_thread(), name); }

void Tracer::name_thread(int pid, int tid, const std::string& name) {
  std::lock_guard<std::mutex> l(m_);
  thread_names_[{pid, tid}] = name;
}

void Tracer::name_process(int pid, const std::string& name) {
  std::lock_guard<std::mutex> l(m_);
  process_names_[pid] = name;
}

size_t Tracer::events() const {
  std::lock_guard<std::mutex> l(m_);
  return events_.size();
}

bool Tracer::written() const {
  std::lock_guard<std::mutex> l(m_);
  return written_;
}

std::string Tracer::json() const {
  std::string out;
  out.reserve(256 + events_.size() * 160);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const auto& [pid, name] : process_names_) {
    sep();
    out += fmt::format("{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":", pid);
    append_escaped(out, name);
    out += "}}";
    sep();
    out += fmt::format(
        "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"sort_index\":{}}}}}", pid,
        pid);
  }
  for (const auto& [key, name] : thread_names_) {
    sep();
    out += fmt::format("{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":", key.first,
                       key.second);
    append_escaped(out, name);
    out += "}}";
  }
  // In time order: readers of the file need not sort it.
  std::vector<const Event*> order;
  order.reserve(events_.size());
  for (const Event& e : events_) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
  for (const Event* e : order) {
    sep();
    out += "{\"name\":";
    append_escaped(out, e->name);
    out += fmt::format(",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{:.3f},\"dur\":{:.3f},\"pid\":{},\"tid\":{}", e->cat, e->ts,
                       e->dur, e->pid, e->tid);
    if (e->nargs) {
      out += ",\"args\":{";
      for (int i = 0; i < e->nargs; ++i)
        out += fmt::format("{}\"{}\":{}", i ? "," : "", e->args[i].key, e->args[i].value);
      out += '}';
    }
    out += '}';
  }
  out += "\n],\n\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

void Tracer::write() {
  std::string text;
  std::FILE* f;
  {
    std::lock_guard<std::mutex> l(m_);
    if (written_) return;
    written_ = true;
    text = json();
    f = f_;
    f_ = nullptr;
  }
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  // Written whole, then it replaces the file (also when the run failed: the
  // trace shows where).
  if (!ok || !file_.commit()) {
    const int e = ok ? errno : err;
    file_.discard();
    throw InputError(fmt::format("cannot write --trace file {}: {}", path_, std::strerror(e)));
  }
}

std::shared_ptr<Tracer> current() {
  std::lock_guard<std::mutex> l(g_current_m);
  return g_current;
}

SetCurrent::SetCurrent(std::shared_ptr<Tracer> t) {
  std::lock_guard<std::mutex> l(g_current_m);
  g_current = std::move(t);
}

SetCurrent::~SetCurrent() {
  std::lock_guard<std::mutex> l(g_current_m);
  g_current.reset();
}

WriteOnExit::~WriteOnExit() {
  if (!t_ || t_->written()) return;
  try {
    t_->write();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warpcsv: note: %s\n", e.what());
  }
}

}  // namespace warpcsv::trace
