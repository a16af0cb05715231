// Feeding an accelerator with fixed-size byte batches read straight into its
// staging buffers, with no host pass over the bytes to find rows.
//
// A source's data is cut into batches of `batch` bytes at fixed offsets, not
// at row starts. Each batch buffer also holds up to `tail` bytes after the
// batch (so the row that starts in it can be finished) and 16 bytes before it
// (the byte before the batch decides whether its byte 0 starts a row: the LF
// of a CRLF does not). The device computes each batch's transition vector;
// StateChain composes them in file order and hands every batch its exact
// start state. Nothing is guessed: a row longer than the tail is reported by
// the device as one it cannot finish.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "exec/input.hpp"
#include "warpcsv/core/dialect.hpp"

namespace warpcsv {

// Bytes kept before a batch in its buffer: 16 keeps byte 0 aligned for
// 16-byte loads.
constexpr uint64_t kBatchLead = 16;

// Threads that share work split into pieces (reading or copying a batch);
// several callers may run jobs at once, and each caller works on its own job
// too. An exception thrown by a piece is rethrown to the caller.
class PiecePool {
 public:
  explicit PiecePool(int helpers);
  ~PiecePool();
  PiecePool(const PiecePool&) = delete;
  PiecePool& operator=(const PiecePool&) = delete;
  // Runs fn(i) for i in [0, pieces); returns when all are done.
  void run(uint64_t pieces, const std::function<void(uint64_t)>& fn);

 private:
  struct Job;
  void loop();
  void run_piece(Job& j, uint64_t i);
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job*> jobs_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// One batch as read into a buffer: buffer + kBatchLead holds data bytes
// [from, from + n), of which [from, from + own) are the batch's own.
struct BatchSpan {
  uint64_t index = 0;  // batch number within the source
  uint64_t from = 0;   // data offset of the batch
  uint64_t own = 0;
  uint64_t n = 0;
  bool at_eof = false;  // the input ends at from + n
  bool has_prev = false;  // buffer[kBatchLead - 1] is the data byte before the batch
};

// Hands out a source's batches in order, reading each into the caller's
// buffer: regular files with parallel pread (any thread, any order), streams
// (stdin, gzip) through the source's window under a lock, in order.
class BatchFeed {
 public:
  BatchFeed(InputSource& src, uint64_t batch, uint64_t tail, PiecePool& pool);
  // Bytes a buffer needs: kBatchLead + batch + tail.
  uint64_t buffer_bytes() const { return kBatchLead + batch_ + tail_; }
  // Claims the next batch and reads it into buf; false when the data is
  // exhausted (or stop() was called).
  bool next(char* buf, BatchSpan& out);
  void stop();
  // Whether every batch has been claimed (or stop() was called): a device
  // that becomes ready later has nothing left to do.
  bool exhausted();

 private:
  // Under m_: whether no batch is left to claim.
  bool none_left() const;
  // Runs fn(at, len) over [0, n) in pieces on the pool.
  void in_pieces(uint64_t n, const std::function<void(uint64_t at, uint64_t len)>& fn);
  // Batch `index`'s span when `avail` data bytes are known from its start on
  // (`input_ends`: the input ends after them).
  void set_span(BatchSpan& out, uint64_t index, uint64_t avail, bool input_ends) const;
  InputSource& src_;
  const uint64_t batch_, tail_;
  PiecePool& pool_;
  std::mutex m_;
  uint64_t next_index_ = 0;
  bool done_ = false;
};

// Start states of a source's batches from their transition vectors, which
// arrive in any order (publish may be called from a CUDA host callback).
class StateChain {
 public:
  explicit StateChain(uint8_t first_state = kRowStart);
  // The vector of batch i's own bytes.
  void publish(uint64_t i, TransitionVector tv);
  // Waits until batch i's start state is known; throws Aborted after abort().
  // `poll` runs every 50 ms of waiting and may throw: a CUDA stream that
  // failed runs no more host callbacks, so a waiter checks its own device
  // rather than wait for a vector that will never come.
  uint8_t wait_state(uint64_t i, const std::function<void()>& poll = nullptr);
  void abort();
  struct Aborted {};

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<TransitionVector> tv_;
  std::vector<uint8_t> have_;
  std::vector<uint8_t> state_;  // state_[i] known for i < state_.size()
  bool aborted_ = false;
};

// Whether byte 0 of a batch starts a row, given its start state: a row starts
// after a terminator, but the LF of a CRLF split across batches belongs to
// the row before. `buf` is the batch's buffer as BatchFeed filled it.
bool batch_starts_row(const char* buf, const BatchSpan& b, uint8_t start_state);

}  // namespace warpcsv
