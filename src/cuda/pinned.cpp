#include "cuda/pinned.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>

#include "cuda/gpu_plan.hpp"

namespace warpcsv {
namespace cuda {

// Sizes are whole huge pages (2 MiB), which madvise asks for.
constexpr uint64_t kHuge = 2ull << 20;

PinnedBlock::PinnedBlock(uint64_t bytes, uint64_t fault_bytes) {
  bytes_ = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // pin() allocates with CUDA instead
  (void)::madvise(p, bytes_, MADV_HUGEPAGE);
  // A write per 4 KiB page faults it in (the kernel zeroes it) before it is
  // pinned; writing every byte again would double the time.
  for (uint64_t at = 0; at < std::min(fault_bytes, bytes_); at += 4096) static_cast<char*>(p)[at] = 0;
  data_ = static_cast<char*>(p);
}

void PinnedBlock::pin(uint64_t bytes) {
  bytes = std::min(bytes_, (bytes + kHuge - 1) / kHuge * kHuge);
  // All of it (cudaHostAlloc), or at least these bytes: a run that uses fewer
  // slots does not pay for registering again.
  if (pinned_bytes_ >= bytes) return;
  const bool first = pinned_bytes_ == 0;
  if (pinned_bytes_) {  // registered, but too few bytes: 11 ms to grow 40 to 80 MiB there
    WCSV_CUDA_TRY(cudaHostUnregister(data_));
    pinned_bytes_ = 0;
  }
  if (data_ && cudaHostRegister(data_, bytes, cudaHostRegisterPortable) == cudaSuccess) {
    mapped_ = true;
    pinned_bytes_ = bytes;
    // The rest goes back (a later, larger pin faults it in again).
    if (first && bytes < bytes_) (void)::madvise(data_ + bytes, bytes_ - bytes, MADV_DONTNEED);
    return;
  }
  (void)cudaGetLastError();
  if (data_) ::munmap(data_, bytes_);
  data_ = nullptr;
  mapped_ = false;
  WCSV_CUDA_TRY(cudaHostAlloc(&data_, bytes_, cudaHostAllocPortable));
  pinned_bytes_ = bytes_;
}

PinnedBlock::~PinnedBlock() {
  if (!data_) return;
  if (!pinned_bytes_ || mapped_) {
    if (pinned_bytes_) cudaHostUnregister(data_);
    ::munmap(data_, bytes_);
  } else {
    cudaFreeHost(data_);
  }
}

PinnedSlots::PinnedSlots(int capacity, uint64_t slot_bytes, int likely)
    : block_(static_cast<uint64_t>(capacity) * slot_bytes,
             static_cast<uint64_t>(std::min(likely, capacity)) * slot_bytes),
      capacity_(capacity),
      slot_bytes_(slot_bytes) {}

void PinnedSlots::pin(int count) {
  count = std::max(1, std::min(count, capacity_));
  block_.pin(static_cast<uint64_t>(count) * slot_bytes_);
  std::lock_guard<std::mutex> l(m_);
  count_ = count;
  free_.clear();
  for (int i = 0; i < count; ++i) free_.push_back(i);
  copied_.assign(static_cast<size_t>(count), nullptr);
}

PinnedSlots::Slot PinnedSlots::take() {
  int i;
  cudaEvent_t copied;
  {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !free_.empty(); });
    // A slot whose copy is done already, among the oldest few: copies to
    // different GPUs and on different streams finish out of order. Else the
    // oldest, waited for below.
    auto pick = free_.begin();
    const auto last = free_.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(free_.size(), kLookAhead));
    for (auto it = free_.begin(); it != last; ++it) {
      const cudaEvent_t e = copied_[static_cast<size_t>(*it)];
      if (!e || cudaEventQuery(e) == cudaSuccess) {
        pick = it;
        break;
      }
    }
    (void)cudaGetLastError();  // a failed query: the wait below reports it
    i = *pick;
    free_.erase(pick);
    copied = copied_[static_cast<size_t>(i)];
  }
  if (copied) {
    const cudaError_t e = cudaEventSynchronize(copied);
    if (e != cudaSuccess) {
      give(i, copied);  // not known to be done: the next taker waits for it too
      WCSV_CUDA_TRY(e);
    }
  }
  return Slot{i, block_.data() + static_cast<uint64_t>(i) * slot_bytes_};
}

void PinnedSlots::give(int index, cudaEvent_t copied) {
  {
    std::lock_guard<std::mutex> l(m_);
    copied_[static_cast<size_t>(index)] = copied;
    free_.push_back(index);
  }
  cv_.notify_one();
}

void PinnedSlots::forget_copies() {
  std::lock_guard<std::mutex> l(m_);
  for (auto& e : copied_) e = nullptr;
}

}  // namespace cuda
}  // namespace warpcsv
