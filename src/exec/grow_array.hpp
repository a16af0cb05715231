// A growable array of trivially copyable elements in malloc'ed memory, for
// the group table's per-group arrays and a stream's window.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace warpcsv {

// It grows with realloc, which moves a large array by remapping its pages
// (mremap) rather than copying them. A group table's blocks double many times
// as groups arrive: std::vector's copy at each doubling, and the faults of its
// fresh pages, were a large share of a scan with millions of groups
// (docs/performance.md, "CPU executor"). Elements added by resize are not
// initialized.
template <class T>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>, "GrowArray moves its elements as bytes");

 public:
  GrowArray() = default;
  GrowArray(GrowArray&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr, o.n_ = o.cap_ = 0; }
  GrowArray& operator=(GrowArray&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_;
      o.p_ = nullptr, o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  ~GrowArray() { std::free(p_); }

  size_t size() const { return n_; }
  size_t capacity() const { return cap_; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }

  void reserve(size_t n) {
    if (n > cap_) reallocate(n);
  }
  void resize(size_t n) {
    if (n > cap_) reallocate(std::max(n, 2 * cap_));
    n_ = n;
  }
  void push_back(const T& v) {
    if (n_ == cap_) reallocate(std::max<size_t>(16, 2 * cap_));
    p_[n_++] = v;
  }
  // Removes the first n elements (moving the rest to the front).
  void drop_front(size_t n) {
    n = std::min(n, n_);
    if (n && n < n_) std::memmove(p_, p_ + n, (n_ - n) * sizeof(T));
    n_ -= n;
  }
  void append(const T* v, size_t n) {
    const size_t at = n_;
    resize(n_ + n);
    if (n) std::memcpy(p_ + at, v, n * sizeof(T));
  }

 private:
  void reallocate(size_t cap) {
    void* q = std::realloc(p_, cap * sizeof(T));
    if (!q) throw std::bad_alloc();
    p_ = static_cast<T*>(q);
    cap_ = cap;
  }

  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

}  // namespace warpcsv
