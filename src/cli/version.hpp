// The version warpcsv prints: the project's (CMakeLists.txt, project(VERSION)) and, in a build
// from a git checkout, what `git describe --tags --always --dirty` said at build time:
// "0.1.0 (g5860b6d-dirty)". Defined in the build folder's version.cpp (cmake/version.cmake).
#pragma once

namespace warpcsv {

const char* version_string();

}  // namespace warpcsv
