// A group's keys as a host table stores them: a null byte per key, then
// each key's payload in 8 or 16 bytes, instead of a 32-byte Value per key.
// With millions of groups the keys are most of a table's memory and of the
// cache lines a lookup touches (six keys: 80 bytes instead of 192). A string
// of up to 15 bytes is held in its payload (its length in the last byte), so
// comparing it reads no other memory; a longer one is a pointer and length.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "warpcsv/core/hash.hpp"
#include "warpcsv/core/types.hpp"

namespace warpcsv {

class PackedKeys {
 public:
  static constexpr uint32_t kInlineString = 15;  // longer strings live elsewhere (needs_copy)

  PackedKeys() = default;
  // `narrow[k]`: key k is an int, date or timestamp known to fit 64 bits
  // (a column as read); other such keys keep all 128 bits.
  PackedKeys(const std::vector<Type>& types, const std::vector<bool>& narrow) : types_(types) {
    uint32_t at = (static_cast<uint32_t>(types.size()) + 7) / 8 * 8;
    null_padding_ = static_cast<uint8_t>(at - types.size());
    for (size_t k = 0; k < types.size(); ++k) {
      const bool int_like = types[k] == Type::Int || types[k] == Type::Date || types[k] == Type::Timestamp;
      const bool wide = types[k] == Type::String || types[k] == Type::Decimal ||
                        (int_like && !(k < narrow.size() && narrow[k]));
      offset_.push_back(at);
      wide_.push_back(wide);
      has_float_ |= types[k] == Type::Float;
      if (types[k] == Type::String) string_keys_.push_back(static_cast<uint32_t>(k));
      at += wide ? 16 : 8;
    }
    bytes_ = types.empty() ? 0 : at;
  }

  uint32_t bytes() const { return bytes_; }  // a multiple of 8
  bool one_string_key() const { return types_.size() == 1 && types_[0] == Type::String; }

  // pack() of one string key of n <= kInlineString bytes (one_string_key),
  // given as load_short_bytes (core/hash.hpp) gives them: its null byte and
  // padding, the bytes, and the length in the last byte.
  void pack_short_string(uint64_t lo, uint64_t hi, uint32_t n, char* to) const {
    const uint64_t head = 0;
    hi |= static_cast<uint64_t>(n) << 56;
    std::memcpy(to, &head, 8);
    std::memcpy(to + 8, &lo, 8);
    std::memcpy(to + 16, &hi, 8);
  }

  // Writes the keys into `to` (bytes() long); a string of over kInlineString
  // bytes keeps its pointer (needs_copy).
  void pack(const Value* keys, char* to) const {
    for (size_t k = 0; k < types_.size(); ++k) {
      const Value& v = keys[k];
      to[k] = v.null ? 1 : 0;
      char* p = to + offset_[k];
      if (v.null) {
        std::memset(p, 0, wide_[k] ? 16 : 8);
        continue;
      }
      switch (types_[k]) {
        case Type::String:
          std::memset(p, 0, 16);
          if (v.s.len <= kInlineString) {
            if (v.s.len) std::memcpy(p, v.s.ptr, v.s.len);
            p[15] = static_cast<char>(v.s.len);
          } else {
            std::memcpy(p, &v.s.ptr, 8);
            std::memcpy(p + 8, &v.s.len, 4);
            p[15] = kOutOfLine;
          }
          break;
        case Type::Float: std::memcpy(p, &v.f, 8); break;
        default:
          if (wide_[k]) {
            std::memcpy(p, &v.i, 16);
          } else {
            const int64_t x = static_cast<int64_t>(v.i);
            std::memcpy(p, &x, 8);
          }
      }
    }
    if (null_padding_) std::memset(to + types_.size(), 0, null_padding_);  // no keys: `to` may be null
  }

  // Key k's value; a string held inline points into `from`, which must
  // stay where it is while the value is used.
  Value unpack(const char* from, size_t k) const {
    Value v = Value::make_null();
    if (from[k]) return v;
    v.null = false;
    const char* p = from + offset_[k];
    switch (types_[k]) {
      case Type::String:
        if (p[15] == kOutOfLine) {
          std::memcpy(&v.s.ptr, p, 8);
          std::memcpy(&v.s.len, p + 8, 4);
        } else {
          v.s.ptr = p;
          v.s.len = static_cast<uint8_t>(p[15]);
        }
        break;
      case Type::Float: std::memcpy(&v.f, p, 8); break;
      default:
        if (wide_[k]) {
          std::memcpy(&v.i, p, 16);
        } else {
          int64_t x;
          std::memcpy(&x, p, 8);
          v.i = x;
        }
    }
    return v;
  }
  void unpack_all(const char* from, Value* to) const {
    for (size_t k = 0; k < types_.size(); ++k) to[k] = unpack(from, k);
  }

  // Whether the packed keys at `from` are `keys` (as key_equal compares).
  bool equal(const char* from, const Value* keys) const {
    for (size_t k = 0; k < types_.size(); ++k) {
      const Value& v = keys[k];
      if ((from[k] != 0) != v.null) return false;
      if (v.null) continue;
      const char* p = from + offset_[k];
      switch (types_[k]) {
        case Type::String: {
          uint32_t len;
          const char* ptr = p;
          if (p[15] == kOutOfLine) {
            std::memcpy(&len, p + 8, 4);
            std::memcpy(&ptr, p, 8);
          } else {
            len = static_cast<uint8_t>(p[15]);
          }
          if (len != v.s.len) return false;
          for (uint32_t i = 0; i < len; ++i)  // short keys: a call to memcmp costs more
            if (ptr[i] != v.s.ptr[i]) return false;
          break;
        }
        case Type::Float: {
          double f;
          std::memcpy(&f, p, 8);
          if (!(f == v.f || (f != f && v.f != v.f))) return false;
          break;
        }
        default:
          if (wide_[k]) {
            int128 x;
            std::memcpy(&x, p, 16);
            if (x != v.i) return false;
          } else {
            int64_t x;
            std::memcpy(&x, p, 8);
            if (x != v.i) return false;
          }
      }
    }
    return true;
  }

  // Whether equal keys pack into equal bytes here, so that bytes_equal can
  // compare them: no float key (-0.0 and 0.0, NaNs, are equal keys) and no
  // string held by pointer.
  bool packs_exactly(const Value* keys) const {
    if (has_float_) return false;
    for (uint32_t k : string_keys_)
      if (!keys[k].null && keys[k].s.len > kInlineString) return false;
    return true;
  }
  // packs_exactly for keys already packed at `from`.
  bool packing_is_value(const char* from) const {
    if (has_float_) return false;
    for (uint32_t k : string_keys_)
      if (!from[k] && from[offset_[k] + 15] == kOutOfLine) return false;
    return true;
  }
  // Whether two packings (bytes() long, 8-byte aligned sizes) are the same bytes.
  bool bytes_equal(const char* a, const char* b) const {
    uint64_t diff = 0;
    for (uint32_t i = 0; i < bytes_; i += 8) {
      uint64_t x, y;
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      diff |= x ^ y;
    }
    return diff == 0;
  }

  // Whether key k (a string, not null), as packed, points at bytes that
  // must be copied to outlive the row: then set_string points it at the copy.
  static bool needs_copy(const Value& v) { return v.s.len > kInlineString; }
  void set_string(char* to, size_t k, const char* ptr) const { std::memcpy(to + offset_[k], &ptr, 8); }

 private:
  static constexpr char kOutOfLine = static_cast<char>(0xff);  // last payload byte of a long string

  std::vector<Type> types_;
  std::vector<uint32_t> offset_;
  std::vector<bool> wide_;
  std::vector<uint32_t> string_keys_;
  uint8_t null_padding_ = 0;  // bytes after the null bytes, up to the first key's payload
  bool has_float_ = false;
  uint32_t bytes_ = 0;
};

}  // namespace warpcsv
