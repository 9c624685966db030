#!/usr/bin/env bash
# Configures a build folder the way setup.sh and test.sh build: Ninja where it is installed (a new folder only: a
# folder keeps the generator it was made with), and ccache as the compiler launcher where it is installed, so a
# rebuild after a checkout, a clean or a change of CMake files recompiles only what changed.
#   scripts/configure.sh DIR [CMAKE ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "configure.sh: needs a build folder" >&2; exit 2; }
dir="$1"; shift
args=()
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
if command -v ccache >/dev/null; then
  # The precompiled headers are cacheable only with these two sloppinesses (ccache's manual, "Precompiled
  # headers"); they are safe here because no header of ours uses __DATE__ or __TIME__.
  args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/env;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache")
fi
cmake -S . -B "$dir" "${args[@]}" "$@"
