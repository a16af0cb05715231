// Host threads kept for the whole process, lent to fork-join loops
// (parallel_for) and to the readers of a scan (PiecePool).
//
// Threads created and joined per run (inference, the read pool, the GPU
// threads, the copy-back, the sort) made thread start-up most of a short
// stage's time; threads kept asleep here start work in a few microseconds
// (docs/performance.md, "Kept host threads").
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace warpcsv {

class WorkerPool {
 public:
  // The process's pool (its threads are made on first need and live until
  // the process ends).
  static WorkerPool& shared();

  // A team: body(id) runs once on each helper that joins, ids 1, 2, ... up
  // to the helpers asked for. Helpers join as threads of the pool come free;
  // the pool makes more threads when all are busy, up to kMaxThreads (past
  // that a team gets fewer helpers: the caller's own work must not need
  // them). body must not throw.
  struct Team;
  using TeamHandle = std::shared_ptr<Team>;
  TeamHandle start(int helpers, std::function<void(int)> body);
  // No more helpers join `team`; returns when those that joined are done.
  void finish(const TeamHandle& team);

  // Threads the pool has made (for tests).
  int threads() const;

  static constexpr int kMaxThreads = 512;

 private:
  WorkerPool() = default;
  void loop();
  mutable std::mutex m_;
  std::condition_variable work_;
  std::deque<TeamHandle> open_;  // teams that still take helpers, oldest first
  int threads_ = 0, idle_ = 0;
  int wanted_ = 0;  // helper places left in the open teams
};

}  // namespace warpcsv
