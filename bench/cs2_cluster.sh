#!/usr/bin/env bash
# Cost of building a Cerebras cluster (docs/performance.md, "Systems"): the tour's MLP trained data parallel on
# `systems` full-size CS-2s (745,500 PEs each) of platforms/systems/cs2_cluster.yaml, one representative CS-2
# simulated. The simulation is the same at every size, so what grows with N is the netlist.
#   bench/cs2_cluster.sh 64      # 64 CS-2s (Condor Galaxy 1's size); prints wall seconds and peak memory
# Repeats: REPS=3 bench/cs2_cluster.sh 16 prints each run and the median wall time.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"
here="$(cd "$(dirname "$0")/.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
n="${1:-16}"
case "$n" in ''|*[!0-9]*) echo "usage: $0 SYSTEMS (a whole number)" >&2; exit 2 ;; esac
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
walls=()
for ((r = 0; r < ${REPS:-1}; ++r)); do
  /usr/bin/time -f "%e %M" -o "$out/time" "$tessel" run -p "$here/platforms/systems/cs2_cluster.yaml" \
    --set systems="$n" -w mlp --set workload.training=adam --set workload.batch=$((n * 64)) \
    --set parallel.dp="$n" --set parallel.microbatch=64 > "$out/log"
  read -r wall rss < "$out/time"
  echo "systems=$n: $(grep '^simulated' "$out/log" | cut -c12-) in ${wall} s wall, peak ${rss} KB"
  walls+=("$wall")
done
print_median_wall "${walls[@]}"
