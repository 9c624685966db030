#!/usr/bin/env bash
# Megatron-LM's weak-scaling table (Narayanan et al., SC21, Table 1; shared/reference) re-run on tessel's DGX A100
# system: per row, one training iteration with the row's model, t, p, d = GPUs / (t p) and global batch. The paper
# counts throughput with its own formula, F = 96 B s l h^2 (1 + s / 6h + V / 16 l h) FLOPs per iteration (the
# recomputed forward included); the table gives F / (simulated iteration x GPUs) beside the published TFLOP/s per
# GPU, and tessel's own hardware FLOP/s per GPU (every kernel's FLOPs, optimizer and elementwise included).
# Prints a markdown table (docs/validation.md quotes it).
# Assumptions the paper's table does not give: microbatch 1, plain 1F1B (the paper interleaves where p > 1),
# full recompute layer by layer (recompute_layers 1, the default). Usage: validation/systems/megatron_sc21.sh [ROWS...]   (rows by params: 1.7 3.6 ... 1008.0)
# Needs /usr/bin/python3 (Debian's, for json).
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
tessel="${TESSEL:-$here/build/bin/tessel}"
#      params  heads hidden layers t  p   GPUs batch published
rows="1.7     24    2304   24     1  1   32   512   137
3.6     32    3072   30     2  1   64   512   138
7.5     32    4096   36     4  1   128  512   142
18.4    48    6144   40     8  1   256  1024  135
39.1    64    8192   48     8  2   512  1536  138
76.1    80    10240  60     8  4   1024 1792  140
145.6   96    12288  80     8  8   1536 2304  148
310.1   128   16384  96     8  16  1920 2160  155
529.6   128   20480  105    8  35  2520 2520  163
1008.0  160   25600  128    8  64  3072 3072  163"
want=" $* "
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "| params (B) | t | p | d | GPUs | batch | simulated iteration | TFLOP/s per GPU (paper's formula) | published | gap | hardware TFLOP/s per GPU |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
while read -r params heads hidden layers t p gpus batch published; do
  [[ $# -gt 0 && "$want" != *" $params "* ]] && continue
  d=$((gpus / (t * p)))
  "$tessel" run -p "$here/platforms/systems/dgx_a100.yaml" --set nodes=$((gpus / 8)) -w gpt2 \
    --set workload.training=adam --set workload.precision=fp16 --set workload.hidden="$hidden" \
    --set workload.heads="$heads" --set workload.layers="$layers" --set workload.seq=2048 --set workload.context=2048 \
    --set workload.vocab=51200 --set workload.batch="$batch" --set parallel.tp="$t" --set parallel.pp="$p" \
    --set parallel.dp="$d" --set parallel.microbatch=1 --set parallel.recompute=full --set gpu.mapper.softmax=megatron -o "$out/run" > "$out/log" 2>&1 ||
    { echo "| $params | $t | $p | $d | $gpus | $batch | failed: $(grep -m1 error "$out/log" | cut -c1-200) | | $published | |"; continue; }
  /usr/bin/python3 - "$out/run/summary.json" "$params" "$t" "$p" "$d" "$gpus" "$batch" "$published" "$hidden" "$layers" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
params, t, p, d, gpus, batch, published, hidden, layers = sys.argv[2:]
B, L, h, seq, V = int(batch), int(layers), int(hidden), 2048, 51200
F = 96 * B * seq * L * h * h * (1 + seq / (6 * h) + V / (16 * L * h))
T = s["sim_time_s"]
tf = F / T / int(gpus) / 1e12
gap = (tf - float(published)) / float(published) * 100
hw = s["parallel"]["hardware_tflops_per_chip"]
print(f"| {params} | {t} | {p} | {d} | {gpus} | {batch} | {T:.3f} s | {tf:.1f} | {published} | {gap:+.1f}% | {hw:.1f} |")
PY
done <<< "$rows"
