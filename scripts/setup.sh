#!/usr/bin/env bash
# tessel setup: installs what tessel needs from the distribution's packages (Debian/Ubuntu), builds the tool, and
# runs a real example (an MLP on the 4x4 teaching mesh). Safe to run again. The tests are built by scripts/test.sh.
#   scripts/setup.sh                 install, build the tool, run the example
#   scripts/setup.sh --no-example    install and build the tool only (CI)
#   scripts/setup.sh --with-viewers  also install GTKWave (to open VCD traces)
#   scripts/setup.sh --with-torch    also install PyTorch (only to re-export the ONNX fixtures)
set -euo pipefail
cd "$(dirname "$0")/.."

example=1
extra=()
for arg in "$@"; do
  case "$arg" in
    --no-example) example=0 ;;
    --with-viewers) extra+=(gtkwave) ;;
    --with-torch) extra+=(python3-torch python3-torchvision python3-onnx) ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

# What building and running tessel needs; the tools only the tests use (clang for the sanitizers and fuzzing,
# clang-format and clang-tidy, valgrind, Slurm) are installed by scripts/test.sh, so the first result comes sooner.
packages=(
  build-essential cmake pkg-config
  ninja-build ccache        # faster builds and rebuilds (scripts/configure.sh uses them where installed)
  libsystemc-dev            # SystemC 2.3 + TLM-2.0 (found with pkg-config: systemc, tlm)
  libyaml-cpp-dev libboost-graph-dev nlohmann-json3-dev libcli11-dev
  libonnx-dev libprotobuf-dev zlib1g-dev
  libgtest-dev              # the build's test targets are configured (scripts/test.sh builds them)
  python3 python3-yaml python3-matplotlib python3-numpy   # sweep scripts and plots
  "${extra[@]}"
)
echo "setup: checking packages"
scripts/install_packages.sh "${packages[@]}"

scripts/configure.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target tessel

if [ "$example" = 1 ]; then
  echo
  echo "setup: running an example: a 4-layer MLP on the 4x4 teaching mesh"
  build/bin/tessel run --platform platforms/teaching/mesh4x4.yaml --workload workloads/mlp.yaml --out out/mlp \
    --trace out/mlp/trace.json --vcd out/mlp/trace.vcd
  echo
  echo "setup: done. Results in out/mlp (open trace.json in https://ui.perfetto.dev, trace.vcd in GTKWave)."
fi
