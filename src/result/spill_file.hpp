// Temporary files for what does not fit in memory: the groups spilled past
// a memory limit, their sorted parts, ranks' results. Bytes are appended in
// frames of kSpillFrameBytes and read back by their offset among the bytes
// appended, from any thread. While the spill files together are small
// enough to stay in the page cache (a quarter of the host's memory) and to
// leave room on their disk (an eighth of its free space), frames are written
// as they are; past that, each is compressed on its own (zstd level 1,
// where the build has it): group records shrink about four times, for some
// 400 MB/s of a core.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace warpcsv {

constexpr size_t kSpillFrameBytes = 32 << 10;

// An unnamed file in `dir` ($TMPDIR, else /tmp): nothing is left behind
// however the process ends.
class SpillFile {
 public:
  explicit SpillFile(const std::string& dir);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  void append(const char* p, size_t n);
  // Reads up to n bytes at `offset` (of the bytes appended); returns how
  // many (fewer at the end). Safe on several threads at once, not with append.
  size_t read(uint64_t offset, char* to, size_t n) const;
  // Bytes appended.
  uint64_t size() const { return size_; }
  // Bytes the file holds (compressed), and those still waiting for a frame.
  uint64_t stored_bytes() const { return frames_bytes() + pending_.size(); }

 private:
  // Bytes of the frames written, and where frame i begins among them.
  uint64_t frames_bytes() const { return frame_ends_.empty() ? 0 : frame_ends_.back(); }
  uint64_t frame_begin(size_t i) const { return i ? frame_ends_[i - 1] : 0; }
  void write_frame(const char* p, size_t n);
  // Compressed frame i's bytes into `to` (kSpillFrameBytes of room).
  void decompress_frame(size_t i, char* to) const;

  int fd_ = -1;
  uint64_t id_;         // tells this file's frames apart in a thread's cache
  uint64_t size_ = 0;   // bytes appended
  std::vector<uint64_t> frame_ends_;  // where each written frame ends in the file
  std::string pending_;  // the last frame's bytes, until it is full
  std::string dir_;
};

// A spill file's bytes read in order through a buffer, which grows to the
// longest stretch asked for at once.
class SpillCursor {
 public:
  SpillCursor(const SpillFile& file, size_t buffer_bytes) : file_(&file), buf_(buffer_bytes) {}
  // Makes n bytes available at data(); false if the file ends first.
  bool fill(size_t n);
  const char* data() const { return buf_.data() + at_; }
  void skip(size_t n) { at_ += n; }
  // Where data() is among the file's bytes.
  uint64_t offset() const { return offset_ + at_; }

 private:
  const SpillFile* file_;
  std::vector<char> buf_;
  size_t at_ = 0, end_ = 0;
  uint64_t offset_ = 0;  // of buf_[0] in the file
};

// The directory spill files go to: $TMPDIR, else /tmp.
std::string spill_directory();

// Whether frames are compressed: past the limits above (Auto), always or
// never. Process-wide; tests set it to cover both ways.
enum class SpillCompression { Auto, Always, Never };
void set_spill_compression(SpillCompression c);

}  // namespace warpcsv
