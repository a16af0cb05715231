// Command-line parsing: argv -> warpcsv::Options (include/warpcsv/options.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "warpcsv/options.hpp"

namespace warpcsv {

// Thrown by parse_options for --help and --version: `text` goes to stdout and
// the process exits 0. Private to the command line; nothing else catches it.
struct EarlyExit {
  std::string text;
};

// Parses the command line (argv[0] is the program name). Throws UsageError
// (exit 2) naming the bad option with a hint, or EarlyExit for --help/--version.
Options parse_options(int argc, char** argv);

// The full --help text: usage, options, examples.
std::string help_text();

// The --version text (no final newline): "warpcsv VERSION", then "zstd: yes" or "zstd: no"
// (whether .zst input was built in; tests/cli cases look at it to skip).
std::string version_text();

// Parses a --chunk-size value such as "64M", "1G", "512K", "100" (bytes;
// binary units, optional trailing "B"/"iB"). Throws UsageError on junk or a
// size below `least` (written `least_text` in the message).
uint64_t parse_byte_size(const std::string& text, const std::string& option, uint64_t least = 1,
                         const char* least_text = "1 byte");

// Parses a one-character option value; accepts "\t" and "tab" for a tab.
char parse_char_option(const std::string& text, const std::string& option);

}  // namespace warpcsv
