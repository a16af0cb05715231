// The usage error a pipeline meets when it is bound to a schema ("" when it binds).
#pragma once
#include <string>
#include <vector>

#include "warpcsv/errors.hpp"
#include "warpcsv/spec.hpp"

namespace warpcsv::testing {

inline std::string plan_error(const std::string& pipeline, const std::vector<OutputColumn>& schema) {
  try {
    build_plan(pipeline, schema);
  } catch (const UsageError& e) {
    return e.what();
  }
  return {};
}

}  // namespace warpcsv::testing
