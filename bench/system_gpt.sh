#!/usr/bin/env bash
# Simulation cost of a system training iteration (docs/performance.md, "Systems"): runs a Megatron-shaped GPT on
# DGX A100 nodes with tessel and reports wall seconds, peak memory and steps and packets per wall second.
#   bench/system_gpt.sh 1t       # 1T parameters on 512 A100 (tp 8, pp 64, batch 512): the issue's budget is 60 s, 4 GB
#   bench/system_gpt.sh 175b     # 175B on 512 A100 (tp 8, pp 8, dp 8, batch 512)
#   bench/system_gpt.sh smoke    # a small instance (CTest runs it to keep the benchmark working)
# Repeats: REPS=3 bench/system_gpt.sh 175b prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
case "${1:-175b}" in
  1t)    shape="--set nodes=64 --set workload.hidden=25600 --set workload.heads=160 --set workload.layers=128 --set workload.batch=512 --set parallel.tp=8 --set parallel.pp=64 --set parallel.dp=1" ;;
  175b)  shape="--set nodes=64 --set workload.hidden=12288 --set workload.heads=96 --set workload.layers=96 --set workload.batch=512 --set parallel.tp=8 --set parallel.pp=8 --set parallel.dp=8" ;;
  smoke) shape="--set nodes=2 --set workload.hidden=2048 --set workload.heads=16 --set workload.layers=4 --set workload.batch=8 --set parallel.tp=8 --set parallel.pp=2 --set parallel.dp=1" ;;
  *) echo "usage: $0 1t|175b|smoke" >&2; exit 2 ;;
esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  # shellcheck disable=SC2086
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" run -p "$here/platforms/systems/dgx_a100.yaml" -w gpt2 \
    --set workload.training=adam --set workload.precision=fp16 --set workload.seq=2048 --set workload.context=2048 \
    --set workload.vocab=51200 --set parallel.microbatch=1 --set parallel.recompute=full $shape -o "$out/run" > "$out/log"
  read -r wall rss < "$out/time"
  steps=$(sed -n 's/^simulated .*(\([0-9]*\) steps, \([0-9]*\) packets).*/\1/p' "$out/log")
  packets=$(sed -n 's/^simulated .*(\([0-9]*\) steps, \([0-9]*\) packets).*/\2/p' "$out/log")
  echo "${1:-175b}: $(grep '^simulated' "$out/log" | cut -c12-) in ${wall} s wall, peak ${rss} KB;" \
       "$(awk -v s="$steps" -v p="$packets" -v w="$wall" 'BEGIN { printf "%.0f steps/s, %.0f packets/s", s / w, p / w }')"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
