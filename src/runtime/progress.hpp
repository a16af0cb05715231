// A progress bar on stderr for long runs: bytes scanned of the total, rate.
// Executors call add() from any thread; drawing is rate-limited.
#pragma once
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>

namespace warpcsv {

class Progress {
 public:
  // mode: 1 on, 0 off, -1 only when stderr is a terminal. total 0: unknown.
  Progress(int mode, uint64_t total)
      : enabled_(mode == 1 || (mode == -1 && isatty(STDERR_FILENO))), total_(total),
        start_(std::chrono::steady_clock::now()) {}
  ~Progress() { finish(); }

  void add(uint64_t bytes) {
    if (!enabled_) return;
    const uint64_t done = done_.fetch_add(bytes) + bytes;
    std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
    if (!lock) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    draw(done, now);
  }
  // The scan starts over from byte 0 (no add() may run meanwhile).
  void restart() {
    done_ = 0;
    start_ = std::chrono::steady_clock::now();
  }
  void finish() {
    if (!enabled_ || finished_) return;
    finished_ = true;
    std::fputs("\r\033[K", stderr);
  }

 private:
  void draw(uint64_t done, std::chrono::steady_clock::time_point now) {
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double gbs = secs > 0 ? done / secs / 1e9 : 0;
    if (total_) {
      const int width = 30, filled = static_cast<int>(width * std::min(1.0, double(done) / total_));
      std::fprintf(stderr, "\r[%.*s%*s] %3.0f%%  %.2f GB/s", filled, "##############################", width - filled,
                   "", 100.0 * std::min(1.0, double(done) / total_), gbs);
    } else {
      std::fprintf(stderr, "\r%.2f GB read  %.2f GB/s", done / 1e9, gbs);
    }
    std::fflush(stderr);
  }

  bool enabled_;
  uint64_t total_;
  std::atomic<uint64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_, last_{};
  bool finished_ = false;
};

}  // namespace warpcsv
