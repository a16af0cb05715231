// Reading a stream ahead of its consumer: a thread of its own reads the
// source (a pipe, a decompressor) into blocks that the consumer takes in
// order, so that reading overlaps the scan of what came before.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>

#include "warpcsv/io.hpp"

namespace warpcsv {

class StreamAhead {
 public:
  // Starts reading `src` in blocks of `block` bytes, keeping at most `ahead`
  // bytes (rounded up to a block) waiting to be taken.
  StreamAhead(std::shared_ptr<ByteSource> src, size_t block, size_t ahead);
  // Stops the reader. One waiting in read() (standard input that does not
  // end, after a limit was reached) ends when that read returns; it holds
  // the source and the blocks until then.
  ~StreamAhead();
  StreamAhead(const StreamAhead&) = delete;
  StreamAhead& operator=(const StreamAhead&) = delete;

  // Like ByteSource::read: up to n bytes, 0 only at the end of the input;
  // rethrows the reader's error once the bytes read before it are taken.
  size_t read(char* dst, size_t n);
  // Like read, but once at least one byte is taken it returns when `wait_ms`
  // have passed since the call (0: when no more has come): a slow stream
  // (`tail -f`) hands out what has come. With `wait_for_first` false the
  // time limit holds for the first byte too (0 then is not the end).
  size_t read_some(char* dst, size_t n, int wait_ms, bool wait_for_first = true);
  // The bytes read ahead so far, up to n, without waiting: 0 when none are
  // (not the end; read() tells that, or the error).
  size_t read_ready(char* dst, size_t n);

  // Reader threads of the process started so far, and not yet ended (the
  // tests' view).
  static uint64_t started();
  static int running();

 private:
  struct Block {
    std::unique_ptr<char[]> bytes;
    size_t size = 0;
  };
  // What the reader thread and the consumer share.
  struct Shared {
    std::mutex m;
    std::condition_variable cv;
    std::deque<Block> blocks;
    size_t queued = 0;  // bytes in blocks
    bool eof = false, stop = false;
    std::exception_ptr error;
  };
  static void run(std::shared_ptr<Shared> s, std::shared_ptr<ByteSource> src, size_t block, size_t ahead);

  size_t take(char* dst, size_t n, int wait_ms, bool wait_for_first);  // wait_ms -1: read, -2: read_ready

  std::shared_ptr<Shared> shared_;
  Block cur_;          // the block being taken (the consumer's own)
  size_t cur_at_ = 0;  // bytes of cur_ taken
};

}  // namespace warpcsv
