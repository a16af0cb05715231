// A byte string that equals another exactly when two rows of one schema hold
// equal values: the key of `distinct` and of `top`'s groups. Equal as the
// group keys are: -0.0 equals 0.0, a NaN equals a NaN, nulls equal nulls.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/grow_array.hpp"
#include "runtime/prefetch.hpp"
#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

inline void append_row_key(std::string& key, const Value* row, const std::vector<Type>& types) {
  for (size_t c = 0; c < types.size(); ++c) {
    const Value& v = row[c];
    key.push_back(v.null ? 0 : 1);
    if (v.null) continue;
    if (types[c] == Type::String) {
      const uint32_t n = v.s.len;
      key.append(reinterpret_cast<const char*>(&n), sizeof n);
      key.append(v.s.ptr, n);
    } else if (types[c] == Type::Float) {
      const double f = std::isnan(v.f) ? NAN : v.f == 0 ? 0.0 : v.f;
      key.append(reinterpret_cast<const char*>(&f), sizeof f);
    } else {
      key.append(reinterpret_cast<const char*>(&v.i), sizeof v.i);
    }
  }
}

// A set of row keys: their bytes one after another (each after its length),
// and open addressing over slots of (hash, where its bytes are). Flat: a
// node per key, as std::unordered_set makes, cost a distinct of two million
// keys most of its run. Both arrays are GrowArrays: large ones get 2 MiB
// pages, so a lookup's random reads do not each walk the page tables.
class RowKeySet {
 public:
  static uint64_t hash_of(const char* key, size_t n) { return hash_bytes(key, static_cast<uint32_t>(n)); }
  // Adds `key`; whether it was new.
  bool insert(const std::string& key) { return insert(key.data(), key.size(), hash_of(key.data(), key.size())); }
  // Adds key[0, n) of hash h (hash_of); whether it was new.
  bool insert(const char* key, size_t n, uint64_t h) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (size_t s = h & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.at_plus_one == 0) {
        slot = Slot{h, bytes_.size() + 1};
        const uint32_t len = static_cast<uint32_t>(n);
        bytes_.append(reinterpret_cast<const char*>(&len), sizeof len);
        bytes_.append(key, n);
        ++size_;
        return true;
      }
      if (slot.hash == h && same(slot.at_plus_one - 1, key, n)) return false;
    }
  }
  // Hints that a key of hash h comes soon: its first slot, then (once that
  // is in) the bytes of the key the slot holds.
  void prefetch_slot(uint64_t h) const {
    if (slots_.size()) prefetch_read(&slots_[h & mask_]);
  }
  void prefetch_key(uint64_t h) const {
    if (!slots_.size()) return;
    const Slot& slot = slots_[h & mask_];
    if (slot.at_plus_one != 0 && slot.hash == h) prefetch_read(bytes_.data() + slot.at_plus_one - 1);
  }

 private:
  struct Slot {
    uint64_t hash;
    uint64_t at_plus_one;  // where the key's length and bytes are in bytes_, + 1; 0: empty
  };
  bool same(uint64_t at, const char* key, size_t n) const {
    uint32_t len;
    std::memcpy(&len, bytes_.data() + at, sizeof len);
    return len == n && std::memcmp(bytes_.data() + at + sizeof len, key, n) == 0;
  }
  void grow() {
    GrowArray<Slot> bigger;
    bigger.assign_zero(slots_.size() ? slots_.size() * 2 : 1024);
    mask_ = bigger.size() - 1;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& slot = slots_[i];
      if (slot.at_plus_one == 0) continue;
      size_t s = slot.hash & mask_;
      while (bigger[s].at_plus_one != 0) s = (s + 1) & mask_;
      bigger[s] = slot;
    }
    slots_ = std::move(bigger);
  }

  GrowArray<Slot> slots_;
  GrowArray<char> bytes_;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace warpcsv
