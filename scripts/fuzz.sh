#!/usr/bin/env bash
# tessel fuzzing (docs/reliability.md): builds the libFuzzer harnesses in fuzz/ with clang, gathers seeds from the
# repository's own files, and fuzzes each harness for a bounded time. A finding (crash, hang, sanitizer report,
# an exception other than input_error, memory beyond the limits below) fails the run and leaves the input in
# build-fuzz/findings/HARNESS/. The corpus each harness grows is kept in build-fuzz/corpus/HARNESS/, so repeated
# runs go deeper. Every run appends one line per harness to build-fuzz/fuzz-log.tsv (CPU seconds, executions).
#   scripts/fuzz.sh                    60 s per harness (10 harnesses, $(nproc) at a time)
#   scripts/fuzz.sh --seconds 600      the documented long run (10 CPU-minutes per harness)
#   scripts/fuzz.sh --seconds 15 expr  one harness
#   scripts/fuzz.sh --replay DIR...    run every harness once over the given inputs (no fuzzing)
#   scripts/fuzz.sh --build DIR        use a build already configured with -DTESSEL_FUZZ=ON (scripts/test.sh's
#                                      sanitizer build, which also runs the tests): no second instrumented build
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
replay=()
targets=()
build=build-fuzz
configure=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build) [ $# -ge 2 ] || { echo "fuzz.sh: --build needs a build folder" >&2; exit 2; }
             build="${2%/}"; configure=0; shift 2 ;;
    --replay) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do replay+=("$1"); shift; done ;;
    platform|workload|program|sweep|expr|onnx|scalesim|results|slurm|plan_args) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1' (harnesses: platform workload program sweep expr onnx scalesim results slurm plan_args)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(platform workload program sweep expr onnx scalesim results slurm plan_args)
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang++ (scripts/setup.sh installs it)" >&2; exit 2; }

# The harnesses link the model and engine libraries only; warnings are the g++ build's job (clang's differ).
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ "$configure" = 1 ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DTESSEL_FUZZ=ON \
    -DTESSEL_TESTS=OFF -DTESSEL_WERROR=OFF "${launcher[@]}" >/dev/null
elif ! grep -q '^TESSEL_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "fuzz.sh: $build is not a build configured with -DTESSEL_FUZZ=ON" >&2; exit 2
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/%/_fuzz}"

# Seeds: the repository's valid inputs and the bad-input corpus (tests/corpus), one folder per harness.
seeds=$build/seeds
rm -rf "$seeds"
for t in "${targets[@]}"; do
  rm -rf "$build/findings/$t"  # keep a finding by copying it to fuzz/regressions/HARNESS/ once fixed
  mkdir -p "$seeds/$t" "$build/corpus/$t" "$build/findings/$t"
done
copy_seeds() {  # HARNESS FILE...
  local t="$1"; shift
  [ -d "$seeds/$t" ] || return 0
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$seeds/$t/$(echo "$f" | tr / _)"; done
  return 0
}
shopt -s nullglob globstar
for t in "${targets[@]}"; do copy_seeds "$t" fuzz/regressions/"$t"/*; done  # every past finding, fixed
copy_seeds platform platforms/**/*.yaml tests/corpus/platform/*.yaml tests/corpus/yaml_ok/*.yaml
# The wafers' 600-762 x 595-1176 fabrics take 1.4 s to build (14 s under the sanitizers): their seeds get 16 x 16
# fabrics, the same code paths at a rate the fuzzer can explore.
[ -d "$seeds/platform" ] && sed -E -i 's/^(  (width|height):) *[0-9]{3,}/\1 16/' "$seeds"/platform/platforms_wafer_*.yaml
# The CS-2 cluster's chips are the real wafer file: give them 16 x 16 PEs through the chips' params.
[ -f "$seeds/platform/platforms_systems_cs2_cluster.yaml" ] &&
  sed -E -i 's/^(      mapper\.impl: wafer_streaming.*)$/\1\n      width: 16\n      height: 16/' \
    "$seeds/platform/platforms_systems_cs2_cluster.yaml"
copy_seeds workload workloads/*.yaml tests/corpus/workload/*.yaml
copy_seeds program workloads/programs/*.yaml tests/corpus/program/*.yaml
copy_seeds sweep sweeps/*.yaml tests/corpus/sweep/*.yaml
copy_seeds onnx workloads/onnx/*.onnx tests/corpus/onnx/*.onnx tests/corpus/onnx_ok/*.onnx
# Readers with few files of their own in the repository take theirs from fuzz/seeds/HARNESS/ (real outputs of
# tessel, SCALE-Sim's formats, what sbatch, sacct and squeue print).
copy_seeds scalesim workloads/scalesim/* fuzz/seeds/scalesim/*
copy_seeds results fuzz/seeds/results/*
copy_seeds slurm fuzz/seeds/slurm/*
copy_seeds plan_args fuzz/seeds/plan_args/*
if [ -d "$seeds/expr" ]; then  # every ${...} expression the repository's YAML files use, one per seed
  grep -ohE '\$\{[^}]+\}' platforms/**/*.yaml workloads/**/*.yaml sweeps/*.yaml tests/corpus/**/*.yaml 2>/dev/null |
    sed -E 's/^\$\{(.*)\}$/\1/' | sort -u | awk -v d="$seeds/expr" '{ f = d "/e" NR; print > f; close(f) }'
fi

# Limits: an input may not take 10 s, allocate more than 1 GiB at once or grow the process past 2 GiB
# (AddressSanitizer's shadow memory included).
opts=(-timeout=10 -malloc_limit_mb=1024 -rss_limit_mb=2048 -print_final_stats=1)
log=$build/fuzz-log.tsv
[ -f "$log" ] || printf 'date\tharness\tseconds\tcpu_s\texecs\tcorpus\tfindings\n' > "$log"

run_one() {  # HARNESS
  local t="$1" out="$build/findings/$1/run.log" status=0
  if [ ${#replay[@]} -gt 0 ]; then
    "$build/fuzz/${t}_fuzz" "${opts[@]}" -runs=0 "${replay[@]}" > "$out" 2>&1 || status=$?
  else
    /usr/bin/time -f '%U %S' -o "$build/findings/$t/time" \
      "$build/fuzz/${t}_fuzz" "${opts[@]}" -max_total_time="$seconds" \
      -artifact_prefix="$build/findings/$t/" "$build/corpus/$t" "$seeds/$t" > "$out" 2>&1 || status=$?
    local cpu execs findings
    cpu=$(tail -1 "$build/findings/$t/time" | awk '{ printf "%.0f", $1 + $2 }')
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$out" | tail -1)
    findings=$(find "$build/findings/$t" -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%F)" "$t" "$seconds" "$cpu" "${execs:-0}" \
      "$(ls "$build/corpus/$t" | wc -l)" "$findings" >> "$log"
  fi
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $t: FINDING (exit $status); its input is in $build/findings/$t/, the report in $out:" >&2
    grep -m3 -E 'ERROR|SUMMARY|terminate|what\(\)' "$out" >&2 || tail -5 "$out" >&2
    return 1
  fi
  echo "fuzz.sh: $t: clean ($(grep -c . "$out") log lines)"
}
failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" & pids+=($!)
  # at most nproc harnesses at once
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do sleep 1; done
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || exit 1
echo "fuzz.sh: no findings (${targets[*]}; log: $log)"
