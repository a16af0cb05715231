// The core's aggregate state structs from a GPU group's state words (the
// layouts of agg_words.hpp), for the groups that come back to the host.
// Plain host code, built with or without CUDA (the unit tests use it).
#pragma once
#include <cstdint>

#include "warpcsv/core/agg.hpp"

namespace warpcsv {
namespace cuda {

// Writes aggregate `a`'s state into `block` (at a.offset) from its GPU
// words `w`; the state was agg_init'ed or is overwritten whole.
void state_from_words(const AggDesc& a, const uint64_t* w, char* block);

}  // namespace cuda
}  // namespace warpcsv
