// A growable array of trivially copyable elements, for the group table's
// per-group arrays and a stream's window.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include <sys/mman.h>

namespace warpcsv {

// Small arrays live in malloc'ed memory and grow with realloc. Large ones
// (kMappedBytes and up) are mappings of their own, asked for 2 MiB pages
// (unless kHugePages is false: arrays filled and read in order, which gain
// nothing on the TLB and whose fresh 2 MiB pages cost more to fault in on a
// VM) and grown with mremap, which moves pages instead of copying them. A group
// table's blocks double many times as groups arrive: std::vector's copy at
// each doubling, and the faults of fresh 4 KiB pages (microseconds each in a
// VM), were a large share of a scan with millions of groups
// (docs/performance.md, "CPU executor"). realloc could not be kept for them:
// a range advised for huge pages is a mapping apart, which glibc's mremap
// refuses and replaces with a copy. Elements added by resize are not
// initialized.
template <class T, bool kHugePages = true>
class GrowArray {
  static_assert(std::is_trivially_copyable_v<T>, "GrowArray moves its elements as bytes");

 public:
  GrowArray() = default;
  GrowArray(GrowArray&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_), mapped_(o.mapped_) {
    o.p_ = nullptr, o.n_ = o.cap_ = 0, o.mapped_ = false;
  }
  GrowArray& operator=(GrowArray&& o) noexcept {
    if (this != &o) {
      release();
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_, mapped_ = o.mapped_;
      o.p_ = nullptr, o.n_ = o.cap_ = 0, o.mapped_ = false;
    }
    return *this;
  }
  GrowArray(const GrowArray&) = delete;
  GrowArray& operator=(const GrowArray&) = delete;
  ~GrowArray() { release(); }

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
  // n elements, all zero bytes: a large array is a fresh mapping, whose
  // pages the kernel zeroes as they are first touched.
  void assign_zero(size_t n) {
    release();
    if (n * sizeof(T) >= kMappedBytes) {
      map_fresh(n);
    } else {
      reallocate(n);
      std::memset(static_cast<void*>(p_), 0, n * sizeof(T));
    }
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
  static constexpr size_t kHugePage = size_t{2} << 20;
  // From a quarter of a huge page on: a group table's part of 1.5 MiB in
  // 4 KiB pages missed the TLB at every lookup; one page of 2 MiB holds it.
  static constexpr size_t kMappedBytes = kHugePage / 4;
  static size_t mapping_bytes(size_t cap) { return (cap * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage; }

  void reallocate(size_t cap) {
    if (cap * sizeof(T) >= kMappedBytes) {
      if (mapped_) {
        void* q = ::mremap(p_, mapping_bytes(cap_), mapping_bytes(cap), MREMAP_MAYMOVE);
        if (q == MAP_FAILED) throw std::bad_alloc();
        p_ = static_cast<T*>(q);
        cap_ = mapping_bytes(cap) / sizeof(T);
        return;
      }
      T* old = p_;
      const size_t n = n_;
      p_ = nullptr;
      map_fresh(cap);
      if (n) std::memcpy(static_cast<void*>(p_), old, n * sizeof(T));
      std::free(old);
      return;
    }
    void* q = std::realloc(p_, cap * sizeof(T));
    if (!q) throw std::bad_alloc();
    p_ = static_cast<T*>(q);
    cap_ = cap;
  }
  void map_fresh(size_t cap) {
    const size_t bytes = mapping_bytes(cap);
    void* q = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) throw std::bad_alloc();
    if (kHugePages) (void)::madvise(q, bytes, MADV_HUGEPAGE);
    p_ = static_cast<T*>(q);
    cap_ = bytes / sizeof(T);
    mapped_ = true;
  }
  void release() {
    if (mapped_)
      ::munmap(p_, mapping_bytes(cap_));
    else
      std::free(p_);
    p_ = nullptr, n_ = cap_ = 0, mapped_ = false;
  }

  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
  bool mapped_ = false;
};

}  // namespace warpcsv
