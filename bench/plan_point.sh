#!/usr/bin/env bash
# Simulation cost of single plan-search points (docs/performance.md, "Plan search points"): the kinds of point
# that made the accelerator-war comparisons slow. Prints the simulated iteration, wall seconds, peak memory and
# steps per wall second.
#   bench/plan_point.sh tpu7b    # a 7B GPT on a 64-chip TPU v4 pod, dp 2 x pp 32, microbatch 1 (CMEM residency)
#   bench/plan_point.sh a100_70b # a 70B GPT on 8 DGX A100, dp 2 x tp 4 x pp 8, interleaved (L2 residency)
#   bench/plan_point.sh groq     # GPT-2 on a GroqRack of 8 nodes, dp 4 x tp 4 x pp 4 (a static schedule per chip)
#   bench/plan_point.sh smoke    # a small TPU point (CTest runs it to keep the benchmark working)
# Repeats: REPS=3 bench/plan_point.sh tpu7b prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
gpt7b="-w gpt2 --set workload.training=adam --set workload.hidden=4096 --set workload.heads=32 --set workload.layers=32
       --set workload.seq=2048 --set workload.context=2048 --set workload.batch=256"
case "${1:-tpu7b}" in
  tpu7b)    args="-p $here/platforms/systems/tpu_v4_pod.yaml --set chips=64 --set torus_x=4 --set torus_y=4 $gpt7b
                  --set parallel.dp=2 --set parallel.tp=1 --set parallel.pp=32 --set parallel.microbatch=1
                  --set parallel.recompute=selective" ;;
  a100_70b) args="-p $here/platforms/systems/dgx_a100.yaml --set nodes=8 -w gpt2 --set workload.training=adam
                  --set workload.hidden=8192 --set workload.heads=64 --set workload.layers=80 --set workload.seq=2048
                  --set workload.context=2048 --set workload.vocab=51200 --set workload.batch=256 --set parallel.dp=2
                  --set parallel.tp=4 --set parallel.pp=8 --set parallel.microbatch=1 --set parallel.interleave=2
                  --set parallel.schedule=interleaved_1f1b --set parallel.recompute=selective --set parallel.zero=1" ;;
  groq)     args="-p $here/platforms/systems/groqrack.yaml --set nodes=8 -w gpt2 --set workload.training=adam
                  --set workload.batch=192 --set parallel.dp=4 --set parallel.tp=4 --set parallel.pp=4
                  --set parallel.microbatch=2 --set parallel.recompute=full --set parallel.zero=1" ;;
  smoke)    args="-p $here/platforms/systems/tpu_v4_pod.yaml --set chips=8 --set torus_x=2 --set torus_y=2 -w gpt2
                  --set workload.training=adam --set workload.layers=4 --set workload.batch=16 --set parallel.dp=2
                  --set parallel.pp=4 --set parallel.microbatch=1" ;;
  *) echo "usage: $0 tpu7b|a100_70b|groq|smoke" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" run $args -o "$out/run" > "$out/log"
  read -r wall rss < "$out/time"
  steps=$(sed -n 's/^simulated .*(\([0-9]*\) steps.*/\1/p' "$out/log")
  echo "${1:-tpu7b}: $(grep '^simulated' "$out/log" | cut -c12-) in ${wall} s wall, peak ${rss} KB;" \
       "$(awk -v s="$steps" -v w="$wall" 'BEGIN { printf "%.0f steps/s", s / (w > 0 ? w : 0.01) }')"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
