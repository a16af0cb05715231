#include "cuda/batch_feed.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "warpcsv/errors.hpp"

namespace warpcsv {

// ---- PiecePool --------------------------------------------------------------

struct PiecePool::Job {
  std::function<void(uint64_t)> fn;
  uint64_t pieces;
  uint64_t next = 0;
  uint64_t done = 0;
  std::exception_ptr error;
};

PiecePool::PiecePool(int helpers)
    : helpers_(std::max(0, helpers)), team_(WorkerPool::shared().start(helpers_, [this](int) { loop(); })) {}

PiecePool::~PiecePool() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  WorkerPool::shared().finish(team_);
}

void PiecePool::run_piece(Job& j, uint64_t i) {
  std::exception_ptr e;
  try {
    j.fn(i);
  } catch (...) {
    e = std::current_exception();
  }
  std::lock_guard<std::mutex> l(m_);
  if (e && !j.error) j.error = e;
  if (++j.done == j.pieces) done_cv_.notify_all();
}

PiecePool::Ticket PiecePool::post(uint64_t pieces, std::function<void(uint64_t)> fn) {
  auto j = std::make_shared<Job>();
  j->fn = std::move(fn);
  j->pieces = pieces;
  if (pieces <= 1 || helpers_ == 0) {  // not worth a hand-over: done here
    for (uint64_t i = 0; i < pieces; ++i) run_piece(*j, i);
    j->next = pieces;
    return j;
  }
  {
    std::lock_guard<std::mutex> l(m_);
    jobs_.push_back(j);
  }
  cv_.notify_all();
  return j;
}

void PiecePool::wait(const Ticket& job) {
  Job& j = *job;
  for (;;) {
    uint64_t i;
    {
      std::lock_guard<std::mutex> l(m_);
      i = j.next < j.pieces ? j.next++ : j.pieces;
    }
    if (i >= j.pieces) break;
    run_piece(j, i);
  }
  std::unique_lock<std::mutex> l(m_);
  done_cv_.wait(l, [&] { return j.done == j.pieces; });
  auto it = std::find(jobs_.begin(), jobs_.end(), job);
  if (it != jobs_.end()) jobs_.erase(it);
  if (j.error) std::rethrow_exception(j.error);
}

void PiecePool::loop() {
  for (;;) {
    Ticket j;
    uint64_t i = 0;
    {
      std::unique_lock<std::mutex> l(m_);
      cv_.wait(l, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      if (jobs_.front()->next >= jobs_.front()->pieces) {
        jobs_.pop_front();  // all handed out; its waiter finds it gone
        continue;
      }
      j = jobs_.front();
      i = j->next++;
    }
    run_piece(*j, i);
  }
}

// ---- BatchFeed --------------------------------------------------------------

BatchFeed::BatchFeed(InputSource& src, uint64_t batch, uint64_t tail, PiecePool& pool)
    : src_(src), batch_(std::max<uint64_t>(1, batch)), tail_(tail), pool_(pool) {}

void BatchFeed::stop() {
  std::lock_guard<std::mutex> l(m_);
  done_ = true;
}

bool BatchFeed::none_left() const {
  return done_ || (src_.can_pread() && next_index_ * batch_ >= src_.size_bytes());
}

bool BatchFeed::exhausted() {
  std::lock_guard<std::mutex> l(m_);
  return none_left();
}

void BatchFeed::set_span(BatchSpan& out, uint64_t index, uint64_t avail, bool input_ends) const {
  out.index = index;
  out.from = index * batch_;
  out.own = std::min(batch_, avail);
  out.n = std::min(avail, out.own + tail_);
  out.at_eof = input_ends && out.n == avail;
  out.has_prev = out.from > 0;
  out.splits_crlf = false;
}

namespace {
// Posts fn(at, len) for each kReadPiece piece of `bytes` bytes.
PiecePool::Ticket post_pieces(PiecePool& pool, uint64_t bytes, std::function<void(uint64_t at, uint64_t len)> fn) {
  return pool.post((bytes + kReadPiece - 1) / kReadPiece, [bytes, fn = std::move(fn)](uint64_t i) {
    const uint64_t at = i * kReadPiece;
    fn(at, std::min(kReadPiece, bytes - at));
  });
}
}  // namespace

bool BatchFeed::start(BatchRead& r, BatchDestination& dst) {
  WCSV_EXPECTS(!r.job, "a batch read started again before it was waited for");
  BatchSpan& out = r.span;
  // Buffer bytes from kBatchLead - lead on: the lead bytes before the batch,
  // then its n bytes. Piece 0 holds the byte before the batch and byte 0.
  auto put_piece = [&dst, &out](uint64_t lead, uint64_t at, uint64_t len, const std::function<void(char*)>& read) {
    dst.put(kBatchLead - lead + at, len, [&](char* p) {
      read(p);
      if (at == 0 && lead) note_batch_edge(out, p[lead - 1], p[lead]);
    });
  };
  if (src_.can_pread()) {
    const uint64_t size = src_.size_bytes();
    uint64_t index;
    {
      std::lock_guard<std::mutex> l(m_);
      if (none_left()) return false;
      index = next_index_++;
    }
    set_span(out, index, size - index * batch_, true);
    const uint64_t lead = std::min(kBatchLead, out.from);
    const uint64_t from = out.from - lead;
    InputSource* src = &src_;
    r.job = post_pieces(pool_, lead + out.n, [=](uint64_t at, uint64_t len) {
      put_piece(lead, at, len, [&](char* p) {
        if (src->pread(p, len, from + at) != len)
          throw InputError(src->name() + " became shorter while it was read; do not change input files during a run");
      });
    });
    return true;
  }
  // A stream: windows only move forward, so batches are read in order, here.
  std::lock_guard<std::mutex> l(m_);
  if (none_left()) return false;
  const uint64_t lead = std::min(kBatchLead, next_index_ * batch_);
  const Window w = src_.window(next_index_ * batch_ - lead, lead + batch_ + tail_);
  if (w.size <= lead) {
    done_ = true;
    return false;
  }
  set_span(out, next_index_++, w.size - lead, w.at_eof);
  pool_.wait(post_pieces(pool_, lead + out.n, [&](uint64_t at, uint64_t len) {
    put_piece(lead, at, len, [&](char* p) { std::memcpy(p, w.data + at, len); });
  }));
  return true;
}

void BatchFeed::wait(BatchRead& r) {
  if (!r.job) return;
  const PiecePool::Ticket job = std::move(r.job);
  pool_.wait(job);
}

bool BatchFeed::next(char* buf, BatchSpan& out) {
  HostBuffer dst(buf);
  BatchRead r;
  if (!start(r, dst)) return false;
  wait(r);
  out = r.span;
  return true;
}

// ---- StateChain -------------------------------------------------------------

StateChain::StateChain(uint8_t first_state) : state_{first_state} {}

void StateChain::publish(uint64_t i, TransitionVector tv) {
  {
    std::lock_guard<std::mutex> l(m_);
    if (tv_.size() <= i) {
      tv_.resize(i + 1);
      have_.resize(i + 1, 0);
    }
    tv_[i] = tv;
    have_[i] = 1;
    // state_[k + 1] follows from state_[k] once batch k's vector is in.
    for (size_t k = state_.size() - 1; k < have_.size() && have_[k]; ++k) state_.push_back(tv_get(tv_[k], state_[k]));
  }
  cv_.notify_all();
}

uint8_t StateChain::wait_state(uint64_t i, const std::function<void()>& poll) {
  std::unique_lock<std::mutex> l(m_);
  const auto known = [&] { return aborted_ || i < state_.size(); };
  while (!known()) {
    if (!poll) {
      cv_.wait(l, known);
      break;
    }
    if (cv_.wait_for(l, std::chrono::milliseconds(50), known)) break;
    l.unlock();
    poll();  // may throw: the caller's device failed
    l.lock();
  }
  if (i < state_.size()) return state_[i];
  throw Aborted{};
}

bool StateChain::known_state(uint64_t i, uint8_t* state) {
  std::lock_guard<std::mutex> l(m_);
  if (i < state_.size()) {
    *state = state_[i];
    return true;
  }
  if (aborted_) throw Aborted{};
  return false;
}

void StateChain::abort() {
  {
    std::lock_guard<std::mutex> l(m_);
    aborted_ = true;
  }
  cv_.notify_all();
}

void note_batch_edge(BatchSpan& b, char before, char first) {
  b.splits_crlf = b.has_prev && before == '\r' && first == '\n';
}

bool batch_starts_row(const BatchSpan& b, uint8_t start_state) {
  return start_state == kRowStart && !b.splits_crlf;
}

}  // namespace warpcsv
