#!/usr/bin/env bash
# tessel test suite: builds and runs every test, then builds the tests with AddressSanitizer + UBSan and runs
# them again. Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

# Sanitizer pass: the same C++ tests (script tests and benchmarks-as-tests are labelled and left out).
# -O1 keeps the sanitized tests fast enough to run in full; -g keeps reports readable.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DTESSEL_SANITIZE=ON
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'scripts|slow'

# Fuzzing, bounded (docs/reliability.md): each libFuzzer harness replays the repository's inputs and every past
# finding (fuzz/regressions/), then fuzzes for 15 s under AddressSanitizer + UBSan. The long run is
# scripts/fuzz.sh --seconds 600.
scripts/fuzz.sh --seconds 15
echo "test.sh: all tests passed (normal and sanitizer builds, bounded fuzzing)"
