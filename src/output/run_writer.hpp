// Runs of formatted text written on a thread of their own while the next run
// is made: two runs' text at most, written in order.
#pragma once
#include <functional>
#include <future>
#include <string>
#include <utility>
#include <vector>

namespace warpcsv {

class BackgroundRunWriter {
 public:
  using Write = std::function<void(const std::vector<std::string>&)>;
  explicit BackgroundRunWriter(Write write) : write_(std::move(write)) {}

  // The run to fill next (its parts, written one after another).
  std::vector<std::string>& run() { return text_[which_]; }

  // Returns once the run handed over before is out, or throws its error.
  void wait() {
    if (writing_.valid()) writing_.get();
  }

  // Waits for the run before, then writes run() in the background; the next
  // run() is the other buffer.
  void hand_over() {
    wait();
    writing_ = std::async(std::launch::async, [this, &parts = text_[which_]] { write_(parts); });
    which_ = 1 - which_;
  }

 private:
  Write write_;
  std::vector<std::string> text_[2];
  int which_ = 0;
  std::future<void> writing_;  // after text_: destroyed (waited for) first
};

}  // namespace warpcsv
