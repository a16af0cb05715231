// A prefetch the optimizer keeps. GCC 12 at -O1 and above deleted
// __builtin_prefetch from some inlined callers (the group table's slot, the
// result's group blocks), and the cache misses it hid came back.
#pragma once

namespace warpcsv {

inline void prefetch_read(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace warpcsv
