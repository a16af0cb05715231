#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan, UBSan) and runs each for
# FUZZ_SECONDS (default 60). Crashes land in build-fuzz/crashes/: keep each
# as a regression case under tests/fuzz/corpus/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
if ! command -v clang++ >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null
fi
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DWARPCSV_FUZZ=ON \
  -DWARPCSV_CUDA=OFF -DWARPCSV_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_csv fuzz_spec
mkdir -p build-fuzz/crashes
for target in csv spec; do
  mkdir -p "build-fuzz/corpus-$target"
  echo "== fuzz_$target for ${seconds}s"
  build-fuzz/fuzz_$target -max_total_time="$seconds" -artifact_prefix=build-fuzz/crashes/ \
    -print_final_stats=1 "build-fuzz/corpus-$target" "tests/fuzz/corpus/$target" 2>&1 |
    grep -E 'stat::number_of_executed_units|Done|ERROR|SUMMARY' || true
done
ls build-fuzz/crashes
