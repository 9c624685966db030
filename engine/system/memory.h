// Memory per chip of a partitioned training iteration: what one rank of each pipeline stage holds at its peak.
//
// - weights, gradients and optimizer state of every chunk on the stage, from the graphs: weights in the compute
//   precision, one gradient per weight in that precision (accumulated over the microbatches), and the optimizer
//   state the training pass added (Adam: fp32 m and v, plus the fp32 master copy in mixed precision, so 2 + 2 + 12
//   bytes per parameter as in the ZeRO paper). ZeRO shards over the dp replicas: zero >= 1 the optimizer state,
//   zero >= 2 the gradients, zero 3 the weights (each divided by dp).
// - activations: each chunk's tensors kept for its backward pass per microbatch (chunk_partition::activation_bytes:
//   produced in forward and read by backward, views counted once, under the recompute policy), times the
//   microbatches in flight found by walking the stage's schedule: a forward item adds its chunk's kept bytes, a
//   backward item frees them; the peak includes the activations re-created while a chunk's backward runs with
//   recomputation. So 1F1B stage s holds pp - s microbatches, GPipe all m, and the interleaved schedule what
//   Megatron-LM's warm-up leaves in flight.
// - state: what the forward passes read and keep between steps (an inference step's KV cache), for every
//   microbatch of the step.
// Left out: activation gradients alive during a backward pass, communication buffers, workspace and allocator
// fragmentation, and the memory of the graph inputs beyond the token ids.
#pragma once

#include <string>
#include <vector>

#include "engine/system/partition.h"

namespace tessel {

struct memory_item {
    std::string what;
    double bytes = 0;
};

/// Peak memory of one rank of a pipeline stage.
struct stage_memory {
    int stage = 0;
    double weights = 0, gradients = 0, optimizer_state = 0;  // after ZeRO sharding
    double activations = 0;  // peak of the kept activations (and recomputation) over the schedule
    double state = 0;        // state every microbatch keeps (an inference step's KV cache)
    int max_in_flight = 0;   // most (microbatch, chunk) forward passes whose activations are held at once
    double total = 0;
    /// The largest items, largest first: the categories and the biggest kept tensors (times their copies).
    std::vector<memory_item> largest;
};

struct memory_report {
    double capacity = 0;    // bytes per chip
    bool training = false;  // else inference: no gradients or optimizer state, and nothing to recompute
    std::vector<stage_memory> stages;
    bool fits() const;
    /// The stage needing the most memory.
    const stage_memory& worst() const;
};

/// Memory of each stage of `p` against `capacity_bytes` of memory per chip.
memory_report memory_per_chip(const partition_result& p, double capacity_bytes);

/// Throws an input_error when a stage does not fit: "does not fit: stage 3 (32 chips: ...) needs 93.1 GiB but a chip
/// has 80 GiB; largest: optimizer state 45 GiB, ...".
void require_fit(const memory_report& r, const parallel_plan& plan);

/// The replica that holds a model's weights with the fewest chips: a valid plan of tp x pp (tp a power of two,
/// pp dividing the layers; dp = 1) whose every stage's weights fit in `budget` bytes per chip, fewer pipeline
/// stages first among equal chip counts. Where no plan holds them, `plan` is the most split one the model allows
/// (the most chips) and `stage_weights` what its heaviest stage still needs: what a "does not fit" can name.
struct holding_plan {
    bool found = false;
    parallel_plan plan;
    double stage_weights = 0;  // the heaviest stage's weights on one chip under `plan`
};
holding_plan smallest_holding_plan(const workload_source& source, const workload_overrides& overrides, double budget);

}  // namespace tessel
