// Materialized rows after the scan (aggregate results, sorted output) and the
// string storage they point into.
#pragma once
#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "warpcsv/core/types.hpp"
#include "warpcsv/plan.hpp"

namespace warpcsv {

// An allocator whose resize() leaves trivial elements uninitialized (default-
// initialized), so the threads that fill a large array are also the ones that
// first touch (page-fault) its memory, instead of one thread zeroing it first.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using UninitVector = std::vector<T, UninitAllocator<T>>;

// Append-only storage with stable addresses for the bytes of string values.
class StringArena {
 public:
  StrRef add(const char* p, size_t n) {
    if (n > kBlock / 4) {  // large strings get a block of their own
      big_.push_back(std::make_unique<char[]>(n ? n : 1));
      bytes_ += n;
      std::memcpy(big_.back().get(), p, n);
      return StrRef{big_.back().get(), static_cast<uint32_t>(n)};
    }
    if (blocks_.empty() || used_ + n > kBlock) {
      // Not zeroed: a block's pages are touched only as strings fill it.
      blocks_.push_back(std::unique_ptr<char[]>(new char[kBlock]));
      bytes_ += kBlock;
      used_ = 0;
    }
    char* dst = blocks_.back().get() + used_;
    std::memcpy(dst, p, n);
    used_ += n;
    return StrRef{dst, static_cast<uint32_t>(n)};
  }
  StrRef add(StrRef s) { return add(s.ptr, s.len); }
  // Takes over a buffer that StrRefs already point into.
  void adopt(std::unique_ptr<char[]> bytes) {
    if (bytes) big_.push_back(std::move(bytes));
  }
  // Takes over another arena's storage (its StrRefs stay valid).
  void absorb(StringArena&& other) {
    for (auto& b : other.blocks_) retired_.push_back(std::move(b));
    for (auto& b : other.big_) big_.push_back(std::move(b));
    for (auto& b : other.retired_) retired_.push_back(std::move(b));
    other.blocks_.clear();
    other.big_.clear();
    other.retired_.clear();
    bytes_ += other.bytes_;
    other.bytes_ = 0;
  }
  // Bytes this arena allocated or absorbed (buffers taken over by adopt are
  // not counted: their size is not known here).
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kBlock = 1 << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::vector<std::unique_ptr<char[]>> big_;
  std::vector<std::unique_ptr<char[]>> retired_;  // absorbed blocks: kept alive, not appended to
  size_t used_ = 0;
  size_t bytes_ = 0;
};

// Row-major table of Values whose strings live in `strings` (or in another
// arena that outlives the table).
struct Table {
  std::vector<OutputColumn> columns;
  UninitVector<Value> cells;
  StringArena strings;

  size_t width() const { return columns.size(); }
  size_t rows() const { return columns.empty() ? 0 : cells.size() / columns.size(); }
  Value* row(size_t r) { return cells.data() + r * width(); }
  const Value* row(size_t r) const { return cells.data() + r * width(); }
  // Appends a row, copying its strings into this table's arena.
  void append_owned(const Value* v) {
    const size_t at = cells.size();
    cells.resize(at + width());
    copy_owned(cells.data() + at, v, strings);
  }
  // Writes a row to `dst`, copying its strings (and the texts of columns
  // printed as written) into `arena` (this table's, or one it absorbs later):
  // threads can fill rows of one table at once.
  void copy_owned(Value* dst, const Value* v, StringArena& arena) const {
    for (size_t c = 0; c < width(); ++c) {
      dst[c] = v[c];
      if (v[c].null) continue;
      if (columns[c].type.type == Type::String) {
        dst[c].s = arena.add(v[c].s);
      } else if (columns[c].as_written) {
        const StrRef t = arena.add(v[c].text, v[c].text_len);
        dst[c].text = t.ptr;
      }
    }
  }
};

}  // namespace warpcsv
