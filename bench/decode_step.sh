#!/usr/bin/env bash
# Simulation cost of one decode step of a served model on a system (docs/performance.md, "Serving"): one token for
# one sequence over a 2,048-token KV cache, every chip simulated, with wall seconds, peak memory and steps per wall
# second.
#   bench/decode_step.sh groq640   # Llama-2-70B (8-bit) on 640 GroqChips, tp 8 x pp 80: issue 50 asks under 10 s
#   bench/decode_step.sh smoke     # a 2-layer Llama-2-7B on one GroqRack node (CTest runs it to keep it working)
# Repeats: REPS=3 bench/decode_step.sh groq640 prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
case "${1:-groq640}" in
  groq640) args=(-p "$here/platforms/systems/groqrack.yaml" -w llama2-70b --set nodes=80 --set parallel.tp=8
                 --set parallel.pp=80 --set workload.precision=int8) ;;
  smoke)   args=(-p "$here/platforms/systems/groqrack.yaml" -w llama2-7b --set nodes=1 --set parallel.tp=8
                 --set workload.layers=2 --set workload.precision=int8) ;;
  *) echo "usage: $0 groq640|smoke" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" run "${args[@]}" --set workload.mode=decode -o "$out/run" \
    > "$out/log"
  read -r wall rss < "$out/time"
  steps=$(sed -n 's/^simulated .*(\([0-9]*\) steps, .*/\1/p' "$out/log")
  echo "${1:-groq640}: $(grep '^simulated' "$out/log" | cut -c12-) in ${wall} s wall, peak ${rss} KB;" \
       "$(awk -v s="$steps" -v w="$wall" 'BEGIN { printf "%.0f steps/s", s / w }')"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
