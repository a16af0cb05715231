// Host threads kept for the whole process, lent to fork-join loops
// (parallel_for) and to the readers of a scan (PiecePool).
//
// A run used to create its threads and join them at the end: three
// parallel_for calls of type inference, the read pool, the GPU threads, the
// copy-back and the sort. On 2 x H200 a warm in-process q1 run took 68-74 ms
// of which inference (1 MiB on 16 threads) took 2.4-3.4 ms, mostly thread
// start-up. Threads kept asleep here start work in a few microseconds.
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
  class Team;
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
