// A lookup join's table copied to one GPU, once per run, for the row kernel's probes.
#pragma once
#include <cstdint>
#include <functional>

#include "exec/lookup_table.hpp"
#include "warpcsv/core/lookup.hpp"

namespace warpcsv {
namespace cuda {

// Puts `len` bytes (at most a piece) at device address `dev`: fill(p) writes
// them at p, pinned host memory, from which they are copied. Called from
// several threads at once; the copies are done once the caller's copy stream
// is.
using PutBytes = std::function<void(char* dev, uint64_t len, const std::function<void(char*)>& fill)>;

class DeviceLookup {
 public:
  // Copies `t` to the current device through `put`, in pieces of at most
  // `piece_bytes` filled on threads: cells (their strings gathered into one
  // block, as-written texts dropped), hashes, chains and buckets.
  DeviceLookup(const LookupTable& t, const PutBytes& put, uint64_t piece_bytes);
  ~DeviceLookup();
  DeviceLookup(const DeviceLookup&) = delete;
  DeviceLookup& operator=(const DeviceLookup&) = delete;
  const LookupView& view() const { return view_; }

 private:
  char* mem_ = nullptr;  // one allocation holding every array
  LookupView view_{};
};

}  // namespace cuda
}  // namespace warpcsv
