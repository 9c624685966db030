# Shared by the bench/ scripts that repeat a command REPS times: source it, then call print_median_wall.
# print_median_wall WALL...: the median of the wall times given (the middle one; the lower middle of an even count).
print_median_wall() {
  printf '%s\n' "$@" | sort -g |
    awk '{ a[NR] = $1 } END { printf "median wall %s s over %d runs\n", a[int((NR + 1) / 2)], NR }'
}
