// One error vocabulary for the whole tool. Each type maps to an exit code in
// one place (src/cli/main.cpp); messages say where, what was expected, what
// was found and how to fix it.
#pragma once
#include <stdexcept>
#include <string>

namespace warpcsv {

enum ExitCode : int {
  kExitOk = 0,
  kExitAssert = 1,
  kExitUsage = 2,
  kExitInput = 3,
  kExitResource = 4,
  kExitInterrupted = 130,
};

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
  virtual int exit_code() const = 0;
  // Where in warpcsv it arose (a call and a source line): for bug reports,
  // printed under --profile or WARPCSV_DEBUG=1, never in the message itself.
  std::string detail;
};
// Bad option, pipeline syntax, unknown column, type error in the spec.
struct UsageError : Error {
  using Error::Error;
  int exit_code() const override { return kExitUsage; }
};
// Unreadable file, malformed CSV, header mismatch, value not fitting its type.
struct InputError : Error {
  using Error::Error;
  int exit_code() const override { return kExitInput; }
};
// Out of memory, device failure, no GPU when one was asked for.
struct ResourceError : Error {
  using Error::Error;
  int exit_code() const override { return kExitResource; }
};
// SIGINT, SIGTERM or SIGHUP arrived: stop, release devices; main exits 130,
// 143 or 129 (interrupt_exit_code in signals.hpp).
struct Interrupted : Error {
  Interrupted() : Error("interrupted") {}
  int exit_code() const override { return kExitInterrupted; }
};
// A broken invariant: a bug in warpcsv, never the user's fault.
struct InternalError : Error {
  using Error::Error;
  int exit_code() const override { return kExitResource; }
};

#define WCSV_EXPECTS(cond, msg)                                                      \
  do {                                                                               \
    if (!(cond))                                                                     \
      throw ::warpcsv::InternalError(std::string("internal error: ") + (msg) + " (" + \
                                     __FILE__ + ":" + std::to_string(__LINE__) + ")"); \
  } while (0)

}  // namespace warpcsv

namespace warpcsv {
// The reader of our output went away (EPIPE): not an error, exit 0 quietly.
struct OutputClosed {};
}  // namespace warpcsv
