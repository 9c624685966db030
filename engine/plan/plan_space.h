// The parallel plans `tessel plan` considers for one system and workload, and what each needs in memory per chip.
//
// Every split of the chips into dp x tp x pp that Megatron-LM's rules allow (parallel_plan.h: tp divides the
// heads and the feed-forward width, pp * interleave divides the layers, ...), with:
// - microbatch: every power of two dividing batch / dp (and batch / dp itself). With pp = 1 only the largest that
//   fits in memory is kept: a smaller one runs the same work in smaller kernels with the same communication, so it
//   can only add launches and gradient-accumulation steps. With pp > 1 every one is kept while each pipeline gets
//   at least pp microbatches (fewer leaves most of the iteration as pipeline fill and drain).
// - interleave: 1 (schedule 1f1b) and, with pp > 1, 2 (interleaved_1f1b) where the layers and microbatches allow.
// - memory: ZeRO 0 and, with dp > 1, ZeRO 1 (sharding the optimizer state also shards the optimizer's work, and a
//   ring reduce-scatter plus all-gather moves what the all-reduce moved); for each, the cheapest recomputation
//   (none, then selective, then full) that fits, and ZeRO 2 only where neither fits without it. Memory is the
//   system mapper's own estimate (engine/system/memory.h), so a plan kept here is one `tessel run` accepts.
// Plans that fit nowhere on the ladder are kept as rejected, with the memory their cheapest form needs, so the
// report can say why plain data parallelism (or any other) is not an option. Lists in plan_limits restrict each
// dimension to the user's choices; combinations the rules refuse are not plans and are skipped (the first one is
// kept, so "no valid plan" can say which rule stood in the way).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/system/parallel_plan.h"

namespace tessel {

/// The user's restrictions of the search; an empty list leaves a dimension to the rules above.
struct plan_limits {
    std::vector<int> dp, tp, pp, microbatch, interleave, zero;
    std::vector<std::string> recompute;
    parallel_plan base;  // sequence_parallel, overlap_grad_reduce and the gpipe schedule are taken from here
};

/// One plan and its memory per chip (the stage that needs the most).
struct plan_candidate {
    parallel_plan plan;
    double memory_bytes = 0;     // worst stage's total
    std::string memory_largest;  // its largest items, "optimizer state 4.0 GB, weights 670 MB"
    std::string rejected;        // empty: simulate it; otherwise why not (memory, or a rule)
    double held_bytes = 0;       // the most weights and state a chip holds (what the chip mapper keeps on chip)
};

struct plan_space {
    plan_target target;
    double capacity = 0;                     // bytes per chip
    std::vector<plan_candidate> candidates;  // to simulate, in enumeration order (tp, then pp, then microbatch)
    std::vector<plan_candidate> rejected;    // one per (dp, tp, pp, interleave) whose every microbatch fits nowhere
    bool training = true;                    // false: the workload is not a training step (no plan applies)
    std::string first_violation;             // the first combination the rules refused, and why (for "no plan")
};

/// The plans for workload `spec` (workload --set `overrides`; workload.batch is the global batch) on `chips` chips
/// of `capacity_bytes` memory each (0: memory does not bound the plan, as when weights stream from a store; every
/// plan is kept at its first rung, with no memory estimate).
plan_space enumerate_plans(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           std::int64_t chips, double capacity_bytes, const plan_limits& limits);

}  // namespace tessel
