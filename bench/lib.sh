# Shared by the bench/ scripts that repeat a command REPS times: source it, then call print_median_wall.
# print_median_wall WALL...: the median of the wall times given (the middle one; the lower middle of an even count).
print_median_wall() {
  printf '%s\n' "$@" | sort -g |
    awk '{ a[NR] = $1 } END { printf "median wall %s s over %d runs\n", a[int((NR + 1) / 2)], NR }'
}

# plan_search_args NAME ROOT: the `tessel plan` arguments of the plan-search benchmarks' cases (plan_dry.sh,
# plan_estimate.sh), platform paths under ROOT; an unknown NAME prints nothing.
#   gpt13b   a 13B GPT (hidden 5120, 40 layers, seq 2048, batch 256, Adam) on 32 H100s
#   gpt175b  GPT-3 175B (batch 512) on 512 A100s
#   smoke    a 4-layer GPT-2 on 8 H100s (CTest runs it to keep the benchmarks working)
plan_search_args() {
  case "$1" in
    gpt13b) echo "-p $2/platforms/systems/dgx_h100.yaml --set nodes=4 -w gpt2 --set workload.training=adam
                  --set workload.hidden=5120 --set workload.heads=40 --set workload.layers=40 --set workload.seq=2048
                  --set workload.context=2048 --set workload.batch=256" ;;
    gpt175b) echo "-p $2/platforms/systems/dgx_a100.yaml --set nodes=64 -w gpt2 --set workload.training=adam
                  --set workload.precision=fp16 --set workload.hidden=12288 --set workload.heads=96
                  --set workload.layers=96 --set workload.seq=2048 --set workload.context=2048
                  --set workload.vocab=51200 --set workload.batch=512" ;;
    smoke) echo "-p $2/platforms/systems/dgx_h100.yaml --set nodes=1 -w gpt2 --set workload.training=adam
                  --set workload.layers=4 --set workload.batch=16" ;;
  esac
}
