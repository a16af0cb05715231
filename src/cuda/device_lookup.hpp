// A lookup join's table copied to one GPU, once per run, for the row kernel's probes.
#pragma once
#include "exec/lookup_table.hpp"
#include "warpcsv/core/lookup.hpp"

namespace warpcsv {
namespace cuda {

class DeviceLookup {
 public:
  // Copies `t` to the current device: cells (their strings gathered into one
  // block, as-written texts dropped), hashes, chains and buckets.
  explicit DeviceLookup(const LookupTable& t);
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
