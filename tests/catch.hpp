// Catch2 v2 (Debian 12, single header) and v3 (the GPU machine) behind one include.
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#define WCSV_CATCH3 1
#else
#include <catch2/catch.hpp>
#endif
