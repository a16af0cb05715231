// Floats printed without the host's formatter (core/float_text.hpp), as a
// GPU prints them, must be the host's bytes (format_float_text, fmt's
// shortest round-trip text): random bit patterns over every exponent,
// subnormals, integers, short decimals, powers of ten and two and their
// neighbours, the notation's edges.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "warpcsv/core/float_text.hpp"
#include "warpcsv/core/value_text.hpp"

using namespace warpcsv;

namespace {

std::string host_text(double d) {
  char buf[kMaxValueText];
  return std::string(buf, format_float_text(d, buf));
}

std::string core_text(double d) {
  char buf[kMaxValueText];
  const uint32_t n = write_float_text(d, buf);
  REQUIRE(n <= 25);
  return std::string(buf, n);
}

double of_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// Counts the values whose texts differ, showing the first few.
size_t differences(const std::vector<double>& values) {
  size_t differ = 0;
  for (const double v : values) {
    for (const double x : {v, -v}) {
      const std::string want = host_text(x), got = core_text(x);
      if (want == got) continue;
      if (++differ <= 5) {
        uint64_t b;
        std::memcpy(&b, &x, 8);
        UNSCOPED_INFO("bits " << std::hex << b << std::dec << ": host " << want << ", core " << got);
      }
    }
  }
  return differ;
}

}  // namespace

TEST_CASE("float text: the core's shortest text is the host formatter's") {
  std::vector<double> v = {0.0,
                           1.0,
                           0.1,
                           0.5,
                           1e-4,
                           1e-5,
                           9.999e-5,
                           1e15,
                           1e16,
                           9999999999999998.0,
                           1234567890123456.0,
                           12345678901234567.0,
                           5e-324,
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::epsilon(),
                           std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           2.2250738585072009e-308,
                           1.7976931348623157e308,
                           9007199254740993.0,
                           0.3,
                           2.0 / 3.0,
                           100.0,
                           123.456};
  for (int e = -325; e <= 309; ++e) {
    const double p = std::pow(10.0, e);
    v.push_back(p);
    v.push_back(std::nextafter(p, 0.0));
    v.push_back(std::nextafter(p, 1e308));
  }
  for (int e = -1074; e <= 1023; ++e) {
    const double p = std::ldexp(1.0, e);
    v.push_back(p);
    v.push_back(std::nextafter(p, 0.0));
    v.push_back(std::nextafter(p, 1e308));
  }
  for (int i = 0; i < 20000; ++i) {
    v.push_back(static_cast<double>(i));
    v.push_back(i / 100.0);
    v.push_back(i / 1000.0 + 0.5);
  }
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    v.push_back(of_bits(rng()));                                  // any exponent, NaNs among them
    v.push_back(of_bits(rng() & ((1ull << 52) - 1)));             // subnormals
    v.push_back(static_cast<double>(static_cast<int64_t>(rng() >> (rng() % 64))) / 1e6);  // sums and means of data
  }
  CHECK(differences(v) == 0);
}
