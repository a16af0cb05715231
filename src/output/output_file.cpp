#include "output/output_file.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

namespace warpcsv {

// -o and --rejects must not name an input (it would be emptied while it is
// read: a crash, and the file lost) nor each other (one overwrites the other).
void check_output_paths(const Options& opts) {
  struct Input {
    dev_t dev;
    ino_t ino;
    std::string name;
  };
  std::vector<Input> inputs;
  const std::vector<std::string> files = opts.files.empty() ? std::vector<std::string>{"-"} : opts.files;
  for (const auto& f : files) {
    struct stat st {};
    if ((f == "-" ? ::fstat(0, &st) : ::stat(f.c_str(), &st)) == 0 && S_ISREG(st.st_mode))
      inputs.push_back(Input{st.st_dev, st.st_ino, f == "-" ? "standard input" : "file " + f});
  }
  auto same_file = [](const std::string& a, const std::string& b) {
    struct stat sa {}, sb {};
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
      return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    std::error_code ea, eb;
    return std::filesystem::weakly_canonical(a, ea) == std::filesystem::weakly_canonical(b, eb) && !ea && !eb;
  };
  for (const auto& [path, option] : {std::pair{opts.output_path, "-o"}, std::pair{opts.rejects_path, "--rejects"},
                                     std::pair{opts.trace_path, "--trace"}}) {
    struct stat st {};
    if (path.empty() || path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    for (const auto& i : inputs)
      if (i.dev == st.st_dev && i.ino == st.st_ino)
        throw UsageError(fmt::format("{} {} is the input ({}): writing it would empty it before it is read; "
                                     "write to another file",
                                     option, path, i.name));
  }
  if (!opts.output_path.empty() && opts.output_path != "-" && !opts.rejects_path.empty() &&
      same_file(opts.output_path, opts.rejects_path))
    throw UsageError(fmt::format("-o and --rejects name the same file ({}); give them different files",
                                 opts.output_path));
  for (const auto& [path, option] : {std::pair{opts.output_path, "-o"}, std::pair{opts.rejects_path, "--rejects"}})
    if (!opts.trace_path.empty() && !path.empty() && path != "-" && same_file(path, opts.trace_path))
      throw UsageError(fmt::format("{} and --trace name the same file ({}); give them different files", option, path));
}

}  // namespace warpcsv
