#include "io/stream_ahead.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "runtime/trace.hpp"
#include "warpcsv/errors.hpp"
#include "warpcsv/signals.hpp"

namespace warpcsv {

namespace {
std::atomic<uint64_t> g_started{0};
std::atomic<int> g_running{0};
}  // namespace

uint64_t StreamAhead::started() { return g_started; }
int StreamAhead::running() { return g_running; }

StreamAhead::StreamAhead(std::shared_ptr<ByteSource> src, size_t block, size_t ahead)
    : shared_(std::make_shared<Shared>()) {
  // Detached: the thread owns what it uses (see ~StreamAhead).
  ++g_running;
  ++g_started;
  try {
    std::thread(run, shared_, std::move(src), std::max<size_t>(1, block), ahead).detach();
  } catch (...) {
    --g_running;
    throw;
  }
}

StreamAhead::~StreamAhead() {
  {
    std::lock_guard<std::mutex> l(shared_->m);
    shared_->stop = true;
  }
  shared_->cv.notify_all();
}

void StreamAhead::run(std::shared_ptr<Shared> s, std::shared_ptr<ByteSource> src, size_t block, size_t ahead) {
  struct Ended {
    ~Ended() { --g_running; }
  } ended;
  // --trace: each block's read (the run's tracer, held: this thread may outlive the run).
  const std::shared_ptr<trace::Tracer> tracer = trace::current();
  if (tracer) tracer->name_this_thread("stream read-ahead");
  for (;;) {
    {
      std::unique_lock<std::mutex> l(s->m);
      s->cv.wait(l, [&] { return s->stop || s->queued < ahead || s->blocks.empty(); });  // room for a block
      if (s->stop) return;
    }
    Block b;
    bool eof = false;
    std::exception_ptr error;
    const auto t_read = trace::now_if(tracer.get());
    try {
      b.bytes.reset(new char[block]);  // not zeroed: read() fills it
      while (b.size < block) {
        const size_t want = block - b.size;
        const size_t k = src->read(b.bytes.get() + b.size, want);
        if (k == 0) {
          eof = true;
          break;
        }
        b.size += k;
        // A short read: the source has no more for now (a pipe, a slow
        // writer). What came goes out at once rather than after the block
        // fills, which for `tail -f` may be never; a small part is copied
        // out so that the queue holds no mostly empty blocks.
        if (k < want) {
          if (b.size < block / 4) {
            std::unique_ptr<char[]> fit(new char[b.size]);
            std::memcpy(fit.get(), b.bytes.get(), b.size);
            b.bytes = std::move(fit);
          }
          break;
        }
      }
    } catch (...) {
      error = std::current_exception();
      eof = true;
    }
    if (tracer) tracer->host("read stream block", "read", t_read, {{"bytes", int64_t(b.size)}});
    {
      std::lock_guard<std::mutex> l(s->m);
      if (b.size) {
        s->queued += b.size;
        s->blocks.push_back(std::move(b));
      }
      s->eof = eof;
      s->error = error;
    }
    s->cv.notify_all();
    if (eof) return;
  }
}

size_t StreamAhead::read(char* dst, size_t n) { return take(dst, n, -1, true); }
size_t StreamAhead::read_some(char* dst, size_t n, int wait_ms, bool wait_for_first) {
  return take(dst, n, std::max(0, wait_ms), wait_for_first);
}
size_t StreamAhead::read_ready(char* dst, size_t n) { return take(dst, n, -2, false); }

size_t StreamAhead::take(char* dst, size_t n, int wait_ms, bool wait_for_first) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, wait_ms));
  size_t done = 0;
  while (done < n) {
    if (cur_at_ == cur_.size) {
      Shared& s = *shared_;
      std::unique_lock<std::mutex> l(s.m);
      auto ready = [&] { return !s.blocks.empty() || s.eof; };
      if (wait_ms == -2 && s.blocks.empty()) return done;  // nothing more read ahead yet
      if (wait_ms >= 0 && (done || !wait_for_first)) {
        while (!ready()) {  // until the deadline, looking at the signal flag meanwhile
          if (interrupted()) throw Interrupted();
          const auto now = std::chrono::steady_clock::now();
          if (now >= deadline) return done;  // out of time
          s.cv.wait_until(l, std::min(deadline, now + std::chrono::milliseconds(20)));
        }
      }
      // A signal while the stream is idle or trickles (a writer that never
      // ends): the reader thread's poll wakes on it, and this wait looks at
      // the flag whether or not blocks keep coming.
      if (interrupted()) throw Interrupted();
      while (!s.cv.wait_for(l, std::chrono::milliseconds(20), ready))
        if (interrupted()) throw Interrupted();
      if (s.blocks.empty()) {
        // The end: what was read is all taken. An error surfaces once no
        // byte is left to hand out with it.
        if (done == 0 && s.error) std::rethrow_exception(s.error);
        return done;
      }
      cur_ = std::move(s.blocks.front());
      s.blocks.pop_front();
      s.queued -= cur_.size;
      cur_at_ = 0;
      l.unlock();
      s.cv.notify_all();  // room for the reader
    }
    const size_t k = std::min(n - done, cur_.size - cur_at_);
    std::memcpy(dst + done, cur_.bytes.get() + cur_at_, k);
    cur_at_ += k;
    done += k;
  }
  return done;
}

}  // namespace warpcsv
