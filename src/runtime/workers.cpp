#include "runtime/workers.hpp"

#include <algorithm>
#include <system_error>
#include <thread>

namespace warpcsv {

struct WorkerPool::Team {
  std::function<void(int)> body;
  int places = 0;  // helpers that may still join
  int joined = 0, active = 0;
  bool closed = false;
  std::condition_variable done;
};

WorkerPool& WorkerPool::shared() {
  // Never destroyed: its threads sleep until the process ends, and no
  // destructor at exit has to stop them.
  static auto* pool = new WorkerPool();
  return *pool;
}

WorkerPool::TeamHandle WorkerPool::start(int helpers, std::function<void(int)> body) {
  auto team = std::make_shared<Team>();
  team->body = std::move(body);
  const int places = std::max(0, helpers);  // team->places is the workers' once it is open
  team->places = places;
  if (places == 0) return team;
  int spawn;
  {
    std::lock_guard<std::mutex> l(m_);
    open_.push_back(team);
    wanted_ += places;
    // Threads asleep take the places; more are made for the rest. A new
    // thread counts as idle from now on, so two starts do not both make it.
    spawn = std::max(0, std::min(wanted_ - idle_, kMaxThreads - threads_));
    threads_ += spawn;
    idle_ += spawn;
  }
  for (int i = 0; i < spawn; ++i) {
    try {
      std::thread([this] { loop(); }).detach();
    } catch (const std::system_error&) {  // no more threads: the team gets fewer helpers
      std::lock_guard<std::mutex> l(m_);
      threads_ -= spawn - i;
      idle_ -= spawn - i;
      break;
    }
  }
  if (places == 1) work_.notify_one();
  else work_.notify_all();
  return team;
}

void WorkerPool::finish(const TeamHandle& team) {
  std::unique_lock<std::mutex> l(m_);
  if (!team->closed) {
    team->closed = true;
    wanted_ -= team->places;
    team->places = 0;
    const auto it = std::find(open_.begin(), open_.end(), team);
    if (it != open_.end()) open_.erase(it);
  }
  team->done.wait(l, [&] { return team->active == 0; });
}

int WorkerPool::threads() const {
  std::lock_guard<std::mutex> l(m_);
  return threads_;
}

void WorkerPool::loop() {
  std::unique_lock<std::mutex> l(m_);
  for (;;) {
    work_.wait(l, [&] { return !open_.empty(); });
    const TeamHandle team = open_.front();  // open teams have places left
    const int id = ++team->joined;
    --wanted_;
    if (--team->places == 0) open_.pop_front();
    ++team->active;
    --idle_;
    l.unlock();
    team->body(id);
    l.lock();
    ++idle_;
    if (--team->active == 0 && team->closed) team->done.notify_all();
  }
}

}  // namespace warpcsv
