#!/usr/bin/env bash
# Cost of sizing a plan search before anything is simulated (docs/performance.md, "Plan search: sizing every
# plan"): `tessel plan -n` enumerates every dp x tp x pp x microbatch x interleave x recompute x ZeRO plan and
# computes each plan's memory per chip. Prints the plans listed, wall seconds and peak memory.
#   bench/plan_dry.sh gpt13b   # a 13B GPT (hidden 5120, 40 layers, seq 2048, batch 256, Adam) on 32 H100s
#   bench/plan_dry.sh smoke    # a 4-layer GPT-2 on 8 H100s (CTest runs it to keep the benchmark working)
# Repeats: REPS=3 bench/plan_dry.sh gpt13b prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
args="$(plan_search_args "${1:-gpt13b}" "$here")"
case "${1:-gpt13b}" in
  gpt13b|smoke) ;;
  *) echo "usage: $0 gpt13b|smoke" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  rm -rf "$out/plan"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" plan $args -n --no-progress -o "$out/plan" > "$out/log"
  read -r wall rss < "$out/time"
  plans=$(grep -c ' per chip$\| does not fit: ' "$out/log" || true)
  [ "$plans" -gt 0 ] || { echo "bench/plan_dry.sh: tessel plan -n listed no plan:" >&2; cat "$out/log" >&2; exit 1; }
  echo "${1:-gpt13b}: $plans plans sized in ${wall} s wall, peak ${rss} KB"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
