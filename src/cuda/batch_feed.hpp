// Feeding an accelerator with fixed-size byte batches, read piece by piece into
// its staging, with no host pass over the bytes to find rows.
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
#include <memory>
#include <mutex>
#include <vector>

#include "io/input.hpp"
#include "runtime/workers.hpp"
#include "warpcsv/core/dialect.hpp"

namespace warpcsv {

// Bytes kept before a batch in its buffer: 16 keeps byte 0 aligned for
// 16-byte loads.
constexpr uint64_t kBatchLead = 16;

// Bytes per read (pread or memcpy) work unit, and the size of a GPU's pinned
// staging slot: each piece goes to its GPU as soon as it is read, while it is
// still in the host's cache (see cuda/pinned.hpp).
constexpr uint64_t kReadPiece = 2ull << 20;

// Threads that share work split into pieces (reading or copying a batch):
// helpers lent by WorkerPool::shared() while the pool lives. Jobs are posted
// and waited for separately, so a caller can keep several batches being read;
// helpers take pieces from the oldest job first, and a caller waiting for its
// job works on it too. An exception thrown by a piece is rethrown to the
// waiter.
class PiecePool {
 public:
  struct Job;
  using Ticket = std::shared_ptr<Job>;
  explicit PiecePool(int helpers);
  ~PiecePool();
  PiecePool(const PiecePool&) = delete;
  PiecePool& operator=(const PiecePool&) = delete;
  // Starts fn(i) for i in [0, pieces) on the helpers (with no helpers, runs
  // them here before returning).
  Ticket post(uint64_t pieces, std::function<void(uint64_t)> fn);
  // Returns when all of the job's pieces are done; rethrows a piece's error.
  void wait(const Ticket& job);

 private:
  void loop();
  void run_piece(Job& j, uint64_t i);
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::deque<Ticket> jobs_;
  bool stop_ = false;
  const int helpers_;
  WorkerPool::TeamHandle team_;
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
  bool splits_crlf = false;  // the byte before is CR and byte 0 is LF (see note_batch_edge)
};

// Where a batch's buffer goes, piece by piece: put() is called from several
// reader threads at once, for disjoint byte ranges of the buffer.
class BatchDestination {
 public:
  virtual ~BatchDestination() = default;
  // Buffer bytes [at, at + len): fill(p) writes them at p, host memory the
  // destination chooses, and the destination moves them on from there.
  virtual void put(uint64_t at, uint64_t len, const std::function<void(char*)>& fill) = 0;
};

// A buffer in host memory (the tests' destination).
class HostBuffer : public BatchDestination {
 public:
  explicit HostBuffer(char* buf) : buf_(buf) {}
  void put(uint64_t at, uint64_t, const std::function<void(char*)>& fill) override { fill(buf_ + at); }

 private:
  char* buf_;
};

// A batch being read: BatchFeed::start fills span and starts the reads,
// BatchFeed::wait finishes them.
struct BatchRead {
  BatchSpan span;
  PiecePool::Ticket job;  // null once done (or when read in start)
};

// Hands out a source's batches in order, reading each into the caller's
// destination: regular files with parallel pread (any thread, any order,
// several batches at once), streams (stdin, gzip) through the source's window
// under a lock, in order, each batch read before start() returns.
class BatchFeed {
 public:
  BatchFeed(InputSource& src, uint64_t batch, uint64_t tail, PiecePool& pool);
  // Bytes a buffer needs: kBatchLead + batch + tail.
  uint64_t buffer_bytes() const { return kBatchLead + batch_ + tail_; }
  // Claims the next batch and starts reading it into `dst` (which must stay
  // alive until wait(r) returns); false when the data is exhausted (or stop()
  // was called).
  bool start(BatchRead& r, BatchDestination& dst);
  // Returns when r's bytes are all put; rethrows a read error.
  void wait(BatchRead& r);
  // start + wait into a host buffer of buffer_bytes().
  bool next(char* buf, BatchSpan& out);
  void stop();
  // Whether every batch has been claimed (or stop() was called): a device
  // that becomes ready later has nothing left to do.
  bool exhausted();

 private:
  // Under m_: whether no batch is left to claim.
  bool none_left() const;
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
  // Batch i's start state in *state when it is known already (no wait);
  // throws Aborted when it is not known and abort() was called.
  bool known_state(uint64_t i, uint8_t* state);
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

// Records whether byte 0 of batch `b` (`first`) is the LF of a CRLF split
// across batches (`before`: the data byte before it, when there is one).
void note_batch_edge(BatchSpan& b, char before, char first);

// Whether byte 0 of a batch starts a row, given its start state: a row starts
// after a terminator, but the LF of a CRLF split across batches belongs to
// the row before.
bool batch_starts_row(const BatchSpan& b, uint8_t start_state);

}  // namespace warpcsv
