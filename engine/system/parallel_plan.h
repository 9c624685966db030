// A parallel plan: how one training iteration of a model is spread over the chips of a system, Megatron-LM style
// (Shoeybi et al. 2019; Narayanan et al., SC21; Korthikanti et al. 2022). dp x tp x pp chips: tp ranks split every
// layer (heads, feed-forward width, vocabulary), pp stages each hold a contiguous range of layers (interleave chunks
// of them per stage with the interleaved schedule), dp replicas each take batch/dp sequences and all-reduce their
// gradients. The plan is read from a run's `parallel:` map or `--set parallel.KEY=V`, declared once (describe-able).
//
// Validation names every constraint that fails and suggests the nearest valid plans. The rules are Megatron-LM's:
// layers must be divisible by pp * interleave (Megatron's rule; an uneven split is not accepted), tp must divide the
// attention heads, the key/value heads and the feed-forward width, microbatch must divide batch / dp, the number of
// microbatches must be a multiple of pp with the interleaved schedule, interleave > 1 needs the interleaved schedule
// and pp > 1, sequence parallelism needs tp > 1 and seq divisible by tp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/workload/source.h"
#include "models/core/param.h"

namespace tessel {

struct parallel_plan {
    int dp = 1;                      // data-parallel replicas
    int tp = 1;                      // tensor-parallel ranks per layer
    int pp = 1;                      // pipeline stages
    int microbatch = 1;              // sequences per microbatch (workload.batch is the global batch per iteration)
    int interleave = 1;              // model chunks (virtual stages) per pipeline stage
    std::string schedule = "1f1b";   // gpipe, 1f1b, interleaved_1f1b
    std::string recompute = "none";  // none, selective, full
    int recompute_layers = 1;        // recomputation blocks: N blocks of N layers, 0 the whole chunk
    bool sequence_parallel = false;
    int zero = 0;  // 0: none; 1: optimizer state sharded over dp; 2: + gradients; 3: + weights
    bool overlap_grad_reduce = false;

    void declare(param_decl& d);
    std::int64_t chips() const { return std::int64_t{dp} * tp * pp; }
    /// Pipeline chunks of the model: pp * interleave.
    int chunks() const { return pp * interleave; }
    /// "dp=8 tp=8 pp=8" (and the other keys where they differ from their defaults).
    std::string str() const;
};

/// The parameter declarations of the plan, for `tessel describe parallel` and docs.
std::vector<param_spec> describe_parallel_plan();

/// Reads a plan from a `parallel:` map (may be undefined) and `--set parallel.KEY=V` overrides in `ctx`; unknown
/// keys, wrong types and out-of-range values are input_errors naming the key.
parallel_plan read_parallel_plan(const yaml_node& node, param_context& ctx);

/// What a plan is checked against: the system's chips and the model's sizes. A size of 0 means the workload does
/// not have it (an ONNX model has no layers to cut, so it needs pp = 1; no heads means no tensor-parallel shards).
struct plan_target {
    std::string workload;  // for messages
    std::int64_t chips = 1;
    std::int64_t batch = 1;  // global batch per iteration
    std::int64_t seq = 0;
    std::int64_t layers = 0;
    std::int64_t heads = 0, kv_heads = 0, ffn = 0;
    bool splittable = false;  // the workload is a generator with a `tp` parameter
};

/// The target of workload `spec` with --set workload overrides on `chips` chips (loads the forward graph once for
/// its resolved parameters: batch, seq, layers, heads, kv_heads, ffn).
plan_target plan_target_of(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           std::int64_t chips);
/// The same from a source already made (builds its forward graph; nothing is read again).
plan_target plan_target_of(const workload_source& source, const workload_overrides& overrides, std::int64_t chips);

/// Microbatches per iteration on each pipeline: batch / (dp * microbatch).
std::int64_t microbatches(const parallel_plan& p, std::int64_t batch);

/// Each constraint the plan breaks, in words with the numbers ("dp x tp x pp = 4 x 8 x 8 = 256, but the system has
/// 512 chips"); empty when the plan is valid.
std::vector<std::string> plan_violations(const parallel_plan& p, const plan_target& t);

/// Up to `count` valid plans nearest to `p` (same schedule, recompute and other keys; dp, tp, pp, microbatch and
/// interleave varied): distance is the sum of |log2(new/old)| over those five, ties broken by keeping tp, then pp.
std::vector<parallel_plan> nearest_valid_plans(const parallel_plan& p, const plan_target& t, size_t count = 3);

/// Throws an input_error listing plan_violations and the nearest valid plans when the plan is not valid.
void validate_plan(const parallel_plan& p, const plan_target& t);

}  // namespace tessel
