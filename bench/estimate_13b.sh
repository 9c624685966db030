#!/usr/bin/env bash
# Simulation cost of a 13B GPT's training iteration on 32 chips of each system, estimated from a sample of its
# layers (tessel run --estimate-layers 1: runs of 1 and 2 layers per pipeline chunk, at once) and a window of one
# microbatch per pipeline (mapper.window=1) (docs/performance.md, "A 13B iteration from a sample of its layers").
# Prints each system's estimated iteration, wall seconds and peak memory (the largest of the two samples' runs).
#   bench/estimate_13b.sh              # every system below
#   bench/estimate_13b.sh sn40l ipu    # those named
#   bench/estimate_13b.sh smoke        # a 4-layer GPT on 8 H100s (CTest runs it to keep the benchmark working)
# Repeats: REPS=3 bench/estimate_13b.sh sn40l prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
sys="$here/platforms/systems"
gpt13b="-w gpt2 --set workload.training=adam --set workload.hidden=5120 --set workload.heads=40 --set workload.layers=40
        --set workload.seq=2048 --set workload.context=2048 --set workload.batch=256"
# Each system's plan: the 13B comparison's best (docs/accelerator-war.md) for its four systems, else the first of
# dp=32 ZeRO 2, dp=16 x tp=2 ZeRO 2 and tp=8 with full recomputation that fits the chip's memory.
args_of() {
  case "$1" in
    h100)  echo "-p $sys/dgx_h100.yaml --set nodes=4 $gpt13b --set parallel.dp=32 --set parallel.zero=2" ;;
    a100)  echo "-p $sys/dgx_a100.yaml --set nodes=4 $gpt13b --set parallel.dp=32 --set parallel.zero=2" ;;
    tpu_v4) echo "-p $sys/tpu_v4_pod.yaml --set chips=32 --set torus_y=2 $gpt13b --set parallel.dp=16
                  --set parallel.tp=2 --set parallel.zero=2" ;;
    tpu_v5p) echo "-p $sys/tpu_v5p_pod.yaml --set chips=32 --set torus_y=2 $gpt13b --set parallel.dp=32
                   --set parallel.zero=2" ;;
    tpu_v5e) echo "-p $sys/tpu_v5e_pod.yaml --set chips=32 $gpt13b --set parallel.dp=4 --set parallel.tp=8
                   --set parallel.microbatch=1 --set parallel.recompute=full --set parallel.zero=1" ;;
    tpu_v6e) echo "-p $sys/tpu_v6e_pod.yaml --set chips=32 $gpt13b --set parallel.dp=8 --set parallel.tp=4
                   --set parallel.microbatch=1 --set parallel.recompute=full --set parallel.zero=1" ;;
    ipu)   echo "-p $sys/ipu_pod64.yaml --set machines=8 $gpt13b --set parallel.dp=8 --set parallel.tp=4
                 --set parallel.microbatch=1 --set parallel.recompute=full --set parallel.zero=1" ;;
    sn40l) echo "-p $sys/sn40l_node.yaml --set sockets=32 $gpt13b --set parallel.dp=16 --set parallel.tp=2
                 --set parallel.microbatch=16 --set parallel.recompute=full --set parallel.zero=1" ;;
    gaudi2) echo "-p $sys/hls_gaudi2.yaml --set nodes=4 $gpt13b --set parallel.dp=32 --set parallel.zero=2" ;;
    gaudi3) echo "-p $sys/hls_gaudi3.yaml --set nodes=4 $gpt13b --set parallel.dp=32 --set parallel.zero=2" ;;
    trn1)  echo "-p $sys/trn1_32xl.yaml --set nodes=2 $gpt13b --set parallel.dp=16 --set parallel.tp=2
                 --set parallel.zero=2" ;;
    trn2)  echo "-p $sys/trn2_48xl.yaml --set nodes=2 $gpt13b --set parallel.dp=32 --set parallel.zero=2" ;;
    smoke) echo "-p $sys/dgx_h100.yaml --set nodes=1 -w gpt2 --set workload.training=adam --set workload.layers=4
                 --set workload.batch=16 --set parallel.dp=8" ;;
  esac
}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(h100 a100 tpu_v4 tpu_v5p tpu_v5e tpu_v6e ipu sn40l gaudi2 gaudi3 trn1 trn2)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for name in "${names[@]}"; do
  args="$(args_of "$name")"
  [ -n "$args" ] || { echo "usage: $0 [h100|a100|tpu_v4|tpu_v5p|tpu_v5e|tpu_v6e|ipu|sn40l|gaudi2|gaudi3|trn1|trn2|smoke]..." >&2; exit 2; }
  walls=()
  for ((r = 0; r < ${REPS:-1}; ++r)); do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" run $args --set mapper.window=1 --estimate-layers 1 --json \
      > "$out/estimate.json"
    read -r wall rss < "$out/time"
    iteration=$(sed -n 's/^  "sim_time_s": \([0-9.e+-]*\),*$/\1/p' "$out/estimate.json")
    echo "$name: ${iteration} s per iteration, estimated in ${wall} s wall, peak ${rss} KB"
    walls+=("$wall")
  done
  if [ "${REPS:-1}" -gt 1 ]; then print_median_wall "${walls[@]}"; fi
done
