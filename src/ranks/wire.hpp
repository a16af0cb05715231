// Values as bytes in messages between ranks (all ranks run the same build on
// the same kind of host, so values travel in their own representation).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "warpcsv/errors.hpp"

namespace warpcsv::wire {

template <class T>
void put(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}
inline void put_text(std::string& s, const std::string& t) {
  put(s, static_cast<uint64_t>(t.size()));
  s += t;
}
template <class T>
T get(const std::string& s, size_t* at) {
  if (*at + sizeof(T) > s.size()) throw InternalError("internal error: a message between ranks cut short");
  T v;
  std::memcpy(&v, s.data() + *at, sizeof v);
  *at += sizeof v;
  return v;
}
inline std::string get_text(const std::string& s, size_t* at) {
  const uint64_t n = get<uint64_t>(s, at);
  if (*at + n > s.size()) throw InternalError("internal error: a message between ranks cut short");
  std::string t = s.substr(*at, n);
  *at += n;
  return t;
}

}  // namespace warpcsv::wire
