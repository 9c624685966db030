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
args="$(plan_search_args "${1:-gpt13b}" "$here")"
case "${1:-gpt13b}" in
  gpt13b|gpt175b|smoke) ;;
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
