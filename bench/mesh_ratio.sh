#!/usr/bin/env bash
# The mesh benchmark's speed against another build, measured the way docs/performance.md reports it on a shared,
# noisy machine: the two binaries alternate run by run, and each one's median, range and the ratio of the
# medians are printed. Both must simulate the same program: their event counts and simulated times are compared
# and printed side by side (a difference is reported, not hidden).
#   bench/mesh_ratio.sh OLD_BINARY                    # against build/bin/tessel_bench_mesh, 9 runs each
#   RUNS=5 bench/mesh_ratio.sh OLD NEW -- --rounds 16  # arguments after -- go to both binaries
# OLD is a tessel_bench_mesh built at another commit, e.g. in a worktree:
#   git worktree add /tmp/old COMMIT && cmake -S /tmp/old -B /tmp/old/build -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
#   cmake --build /tmp/old/build --target tessel_bench_mesh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
usage() { echo "usage: $0 OLD_BINARY [NEW_BINARY] [-- BENCH_ARGS...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
old="$1"; shift
new="$here/build/bin/tessel_bench_mesh"
if [ $# -ge 1 ] && [ "$1" != "--" ]; then new="$1"; shift; fi
if [ $# -ge 1 ]; then [ "$1" = "--" ] || usage; shift; fi
for b in "$old" "$new"; do [ -x "$b" ] || { echo "$0: '$b' is not an executable" >&2; exit 2; }; done
runs="${RUNS:-9}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "$0: RUNS must be a positive whole number, not '$runs'" >&2; exit 2; }

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for ((i = 0; i < runs; ++i)); do
  for who in old new; do
    bin="$old"; [ "$who" = new ] && bin="$new"
    "$bin" "$@" > "$out/log"
    sed -n 's/^steps\/s *//p' "$out/log" >> "$out/$who.rates"
    grep -E '^(steps|events|simulated) ' "$out/log" > "$out/$who.counts"
  done
done
summary() {  # median and range of a file of rates, in millions of steps/s
  sort -g "$1" | awk '{v[NR] = $1} END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%.2f M (%.2f-%.2f M)", m / 1e6, v[1] / 1e6, v[NR] / 1e6 }'
}
median() { sort -g "$1" | awk '{v[NR] = $1} END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "runs           $runs of each, alternating"
echo "old            $(summary "$out/old.rates")  $old"
echo "new            $(summary "$out/new.rates")  $new"
awk -v o="$(median "$out/old.rates")" -v n="$(median "$out/new.rates")" 'BEGIN { printf "ratio          %.2fx (new / old medians)\n", n / o }'
if cmp -s "$out/old.counts" "$out/new.counts"; then
  echo "same program   $(tr -s ' ' < "$out/new.counts" | paste -sd ',' | sed 's/,/, /g')"
else
  echo "simulated differently, old: $(tr -s ' ' < "$out/old.counts" | paste -sd ',' | sed 's/,/, /g')"
  echo "                      new: $(tr -s ' ' < "$out/new.counts" | paste -sd ',' | sed 's/,/, /g')"
fi
