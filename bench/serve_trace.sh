#!/usr/bin/env bash
# Cost of a serving run (docs/performance.md, "Serving"): simulating the batch-step shapes and scheduling every
# request over them. Prints the requests served, simulated shapes, wall seconds and peak memory.
#   bench/serve_trace.sh dgx70b   # Llama-2-70B on a DGX H100 (tp 8): 10 minutes of Poisson arrivals at 5/s
#                                 # (3,000 requests); issue 47 asks for under 60 s and 2 GB on two cores
#   bench/serve_trace.sh smoke    # 2 layers, 200 requests (CTest runs it to keep the benchmark working)
# Each run starts from an empty folder (the shapes are simulated again). Repeats: REPS=3 prints the median wall.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
case "${1:-dgx70b}" in
  dgx70b) args="-p $here/platforms/systems/dgx_h100.yaml -w llama2-70b --set parallel.tp=8
                --set serve.requests=3000 --set serve.rate=5" ;;
  smoke)  args="-p $here/platforms/systems/dgx_h100.yaml -w llama2-70b --set workload.layers=2
                --set parallel.tp=8 --set serve.requests=200 --set serve.rate=5" ;;
  *) echo "usage: $0 dgx70b|smoke" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  rm -rf "$out/serve"
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" serve $args --no-progress -o "$out/serve" > "$out/log" 2>&1
  read -r wall rss < "$out/time"
  served=$(sed -n 's/^  requests: *\([0-9]*\) .*/\1/p' "$out/log")
  shapes=$(sed -n 's/.*from \([0-9]*\) simulated shapes.*/\1/p' "$out/log")
  echo "${1:-dgx70b}: ${served} requests over ${shapes} simulated step shapes in ${wall} s wall, peak ${rss} KB"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
