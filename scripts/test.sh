#!/usr/bin/env bash
# tessel test suite: checks style first (scripts/lint.sh: clang-format on every C++ file, clang-tidy on the files
# the change touched), builds and runs every test, then builds the tests with AddressSanitizer + UBSan (clang) and
# runs them again, then fuzzes each input reader briefly. Exit status is non-zero if anything fails.
#   scripts/test.sh           every test but the long ones (label `long`: docs/accelerator-war.md's comparisons and
#                             docs/systems.md's CS-2 cluster run, about 240 CPU-minutes on a 2-core machine; CI
#                             runs this)
#   scripts/test.sh --long    the long ones too: before changing those docs or a model they quote
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
skip=(-LE long)
for arg in "$@"; do
  case "$arg" in
    --long) skip=() ;;
    *) echo "test.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

# The tools only the tests need (scripts/setup.sh installs the rest): clang and its runtime for the sanitizer
# build and libFuzzer, the style checkers, valgrind for bench/'s instruction counts, and a single-node Slurm.
scripts/install_packages.sh clang libclang-rt-dev clang-format clang-tidy valgrind slurm-wlm munge

scripts/lint.sh
scripts/configure.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs" "${skip[@]}"

# Sanitizer pass: the same C++ tests but the docs' quick re-runs (label docs: tests/docs, tests/labs and every *_doc_test, the
# same commands the normal pass checks; 694 s of one core under the sanitizers on the CI machine for tests/docs,
# 2026-12-02, and 508 s for the others here, 2026-12-03; the sanitizer build does not compile them either:
# TESSEL_DOC_TESTS=OFF) and the script tests, built once
# with clang for both them and the fuzzing below: AddressSanitizer + UBSan, plus libFuzzer's coverage
# instrumentation (-DTESSEL_FUZZ=ON). A separate g++ sanitizer build and a clang fuzzing build took 18 minutes on
# two cores; this one takes 7, and its tests 9 instead of 6. -O1 keeps the sanitized tests fast enough to run in
# full; line tables (-g1) keep reports readable. Warnings are the g++ build's job (clang's differ).
san=build-asan
if [ -f "$san/CMakeCache.txt" ] && ! grep -q '^TESSEL_FUZZ:BOOL=ON' "$san/CMakeCache.txt"; then
  rm -rf "$san"  # an older g++ sanitizer build: the compiler of a build folder cannot change
fi
scripts/configure.sh "$san" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" -DCMAKE_CXX_COMPILER=clang++ \
  -DTESSEL_FUZZ=ON -DTESSEL_WERROR=OFF -DTESSEL_SLOW_TESTS=OFF -DTESSEL_DOC_TESTS=OFF
cmake --build "$san" -j"$jobs"
# The points of the searches these tests start (tessel plan, compare, serve and sweep run each point as a `tessel
# run` of its own) run the normal build (TESSEL_POINT_BIN), whose output the normal pass has checked: the searches
# themselves, and every run a test starts directly, run under the sanitizers. Under them a point costs 10-20x its
# normal time (the HBM model's per-block loop at -O1), and the points were most of this pass: serve_cli_test took
# 391 s with sanitized points and 139 s without, plan_cli_test 159 s and 36 s (2026-12-06, this machine).
# The pass took 820 s here (1,631 CPU-seconds, 2026-12-07); its two largest comparisons of whole runs (the IPU's
# coarse form against its fine one, 147 s; serve's layer sample against whole steps, 70 s) are slow tests now.
ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=0:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 TESSEL_POINT_BIN="$PWD/build/bin/tessel" \
  ctest --test-dir "$san" --output-on-failure -j"$jobs" -LE 'scripts|slow|docs'

# Fuzzing, bounded (docs/reliability.md): each libFuzzer harness, from the sanitizer build above, replays the
# repository's inputs and every past finding (fuzz/regressions/), then fuzzes for 15 s. The long run is
# scripts/fuzz.sh --seconds 600 (its own optimised build).
scripts/fuzz.sh --build "$san" --seconds 15
if [ ${#skip[@]} -gt 0 ]; then
  echo "test.sh: all tests passed (normal and sanitizer builds, bounded fuzzing); the long ones were left out (--long runs them)"
else
  echo "test.sh: all tests passed (normal and sanitizer builds, bounded fuzzing, the long tests)"
fi
