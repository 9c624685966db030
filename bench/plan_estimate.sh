#!/usr/bin/env bash
# Cost of a plan search that estimates every plan from a window of its microbatches and simulates the best ten
# whole (`tessel plan --simulate-top 10`; docs/performance.md, "Plan search: estimate first"), against simulating
# every plan whole (WHOLE=1). Prints the plans, wall seconds, peak memory and the report's line on how far the
# estimates were from the whole simulations.
#   bench/plan_estimate.sh gpt13b    # a 13B GPT (hidden 5120, 40 layers, seq 2048, batch 256, Adam) on 32 H100s
#   bench/plan_estimate.sh gpt175b   # GPT-3 175B (batch 512) on 512 A100s, every plan: the issue's 5-minute search
#   bench/plan_estimate.sh smoke     # a 4-layer GPT-2 on 8 H100s (CTest runs it to keep the benchmark working)
# Repeats: REPS=3 bench/plan_estimate.sh gpt13b prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
case "${1:-gpt13b}" in
  gpt13b)  args="-p $here/platforms/systems/dgx_h100.yaml --set nodes=4 -w gpt2 --set workload.training=adam
                 --set workload.hidden=5120 --set workload.heads=40 --set workload.layers=40 --set workload.seq=2048
                 --set workload.context=2048 --set workload.batch=256" ;;
  gpt175b) args="-p $here/platforms/systems/dgx_a100.yaml --set nodes=64 -w gpt2 --set workload.training=adam
                 --set workload.precision=fp16 --set workload.hidden=12288 --set workload.heads=96
                 --set workload.layers=96 --set workload.seq=2048 --set workload.context=2048
                 --set workload.vocab=51200 --set workload.batch=512" ;;
  smoke)   args="-p $here/platforms/systems/dgx_h100.yaml --set nodes=1 -w gpt2 --set workload.training=adam
                 --set workload.layers=4 --set workload.batch=16" ;;
  *) echo "usage: $0 gpt13b|gpt175b|smoke" >&2; exit 2 ;;
esac
mode="--simulate-top 10"
[ "${WHOLE:-0}" = 1 ] && mode=""
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  rm -rf "$out/plan"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" plan $args $mode --no-progress -o "$out/plan" > "$out/log" 2> "$out/err"
  read -r wall rss < "$out/time"
  counts=$(grep -m1 ' chips, ' "$out/log" | sed 's/^[^;]*; //')
  [ -n "$counts" ] || { echo "bench/plan_estimate.sh: tessel plan printed no plans:" >&2; cat "$out/log" "$out/err" >&2; exit 1; }
  echo "${1:-gpt13b}: $counts in ${wall} s wall, peak ${rss} KB"
  grep '  estimates: ' "$out/log" || true
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
