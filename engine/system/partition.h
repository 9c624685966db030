// Partitioning a training iteration by a parallel plan into what ONE rank runs: the workload is built at
// batch = microbatch with the generator's `tp` and `sequence_parallel` set (so its graph is already one
// tensor-parallel shard, with the tp collectives in it), expanded for training, and cut by the ops' "layer"
// attribute into pp * interleave chunks of equal numbers of layers (Megatron-LM's rule). Chunk c holds layers
// [c * L/C, (c+1) * L/C); the embedding (layer -1) goes with chunk 0 and the final norm, LM head and loss (layer L)
// with the last chunk; chunk c runs on stage c % pp (Megatron's interleaved assignment; with interleave 1 chunk c
// is stage c).
//
// Per chunk, for one microbatch: the forward graph, the backward graph (with recompute = full the chunk's forward
// ops are re-run first, tagged int_attrs["recompute"] = 1; with selective only the attention core ops, those the
// generator tagged "attention_core") and, once per iteration, the optimizer graph (the updates of every weight the
// chunk reads; with zero >= 1 each update and its state is 1/dp of the tensor, flattened). Tensors that cross chunk
// boundaries are what the pipeline sends: activations forward, their gradients backward. The data-parallel
// gradient reduction of each chunk is listed with its bytes (all_reduce, or with zero reduce_scatter of the
// gradients and all_gather of the updated weights), as are the all-reduce of a tied embedding's gradient between
// the first and last stage and, with sequence parallelism, the tp all-reduce of gradients of weights the tp ranks
// hold replicated but apply to their own share of the sequence (norms, row-parallel biases, position embeddings;
// recognised as weights read by an op whose output has seq/tp tokens on axis 1).
//
// Bytes of a collective follow the NCCL-tests convention: the size of the whole tensor, i.e. the input of an
// all_reduce or reduce_scatter and the output of an all_gather, per rank.
//
// Left out: ZeRO-3's per-layer weight all-gathers appear as one per-microbatch entry per chunk and direction, not as
// ops inside the graphs; the SC21 scatter/gather optimisation of pipeline sends (each tp rank sends 1/tp, the
// receiver all-gathers) is the system mapper's choice, sends here are whole tensors per rank.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/system/parallel_plan.h"
#include "engine/workload/graph.h"

namespace tessel {

/// A tensor crossing a chunk boundary, per microbatch and rank.
struct boundary_tensor {
    std::string name;
    std::vector<std::int64_t> shape;
    dtype type = dtype::fp16;
    double bytes = 0;
    int from_chunk = 0, to_chunk = 0;
};

/// A collective one rank takes part in.
struct collective_use {
    std::string name;   // the op's name, or what it is for ("dp.grad_all_reduce")
    std::string kind;   // all_reduce, reduce_scatter, all_gather, all_to_all
    std::string group;  // tp, dp, or embedding (the first and last stage sharing a tied embedding)
    double bytes = 0;   // the whole tensor: input of all_reduce / reduce_scatter, output of all_gather
    std::string when;   // forward, backward, recompute (inside those graphs, per microbatch), microbatch, iteration
};

/// A tensor kept for the backward pass, with its storage bytes per microbatch.
struct kept_tensor {
    std::string name;
    double bytes = 0;
};

/// What one rank runs for one model chunk.
struct chunk_partition {
    int index = 0;                        // global chunk index, 0 .. pp*interleave-1
    int stage = 0;                        // pipeline stage: index % pp
    int virtual_index = 0;                // chunk number on its stage: index / pp
    int first_layer = 0, last_layer = 0;  // layers held, inclusive; -1 = embedding, layers = the head
    workload_graph forward, backward, optimizer;
    std::vector<boundary_tensor> sends_forward;   // activations to later chunks, per microbatch
    std::vector<boundary_tensor> sends_backward;  // gradients to earlier chunks, per microbatch
    double send_forward_bytes = 0, send_backward_bytes = 0;
    std::vector<collective_use> collectives;  // the collective ops inside forward, backward and optimizer
    std::vector<collective_use> grad_sync;    // per iteration (dp, embedding, tp with sequence parallelism)
    double dp_grad_bytes = 0;                 // gradient bytes the data-parallel reduction moves
    // Memory inputs, per rank, before ZeRO sharding (memory_per_chip applies it).
    double params = 0;                 // parameters held (every weight the chunk reads)
    double weight_bytes = 0;           // in the compute precision
    double grad_bytes = 0;             // one gradient per weight, accumulated over the microbatches
    double optimizer_bytes = 0;        // optimizer state: moments and fp32 master weights
    double activation_bytes = 0;       // kept for the backward pass per microbatch, under the recompute policy
    double recompute_bytes = 0;        // activations re-created during the chunk's backward (freed after it)
    double state_bytes = 0;            // state the forward pass reads (a KV cache), per microbatch
    std::vector<kept_tensor> kept;     // the kept tensors, largest first
    std::vector<std::string> weights;  // names of the weights the chunk reads
};

/// How much of a partition to make: every chunk's graphs (to simulate), or only what the memory model reads
/// (memory.h: weights, gradients, optimizer state, activations, state and kept tensors), for a plan search that
/// sizes every plan before it simulates any. The chunk graphs are most of a partition's time and memory.
enum class partition_detail { graphs, memory };

struct partition_result {
    parallel_plan plan;
    partition_detail detail = partition_detail::graphs;  // memory: the chunks' graphs and collectives are empty
    std::string workload;
    std::int64_t layers = 0;        // layers cut into chunks (0: the workload has no layer tags)
    std::int64_t batch = 0;         // global batch per iteration
    std::int64_t microbatches = 0;  // per pipeline per iteration: batch / (dp * microbatch)
    bool training = false;
    std::vector<chunk_partition> chunks;
    std::vector<std::string> notes;
};

/// Partitions workload `spec` (--set workload overrides in `overrides`; workload.batch is the global batch) by
/// `plan`. The plan is validated first (with dp * tp * pp taken as the chip count): input_error with the failed
/// constraints and the nearest valid plans.
partition_result partition(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           const parallel_plan& plan);
/// The same from a source already made: the per-microbatch graph is built from it, with no reload.
partition_result partition(const workload_source& source, const workload_overrides& overrides,
                           const parallel_plan& plan, partition_detail detail = partition_detail::graphs);
/// What one rank of `plan` builds of the workload: the overrides with one microbatch's batch and, for a
/// splittable generator, the tp split.
workload_overrides rank_overrides(const plan_target& target, const workload_overrides& overrides,
                                  const parallel_plan& plan);
/// The same cut of a rank's graph already built (`g`: the source built with rank_overrides), for a search that
/// cuts one graph by many plans. `plan` must be valid for `target` (validate_plan).
partition_result partition(const workload_graph& g, const std::string& workload, const plan_target& target,
                           const parallel_plan& plan, partition_detail detail);

/// The ops `ops` of `g` (with their costs) and the tensors they touch, as a graph of their own: a tensor produced
/// outside becomes an input (weights, state and constants keep their role), one produced inside and read outside
/// (or a graph output) becomes an output. The ops come in the graph's order, or with `keep_order` in the order
/// given (one their dependencies allow: recomputed layers placed before their backward pass).
workload_graph subgraph(const workload_graph& g, const std::vector<int>& ops, const std::string& name,
                        bool keep_order = false);

/// The pipeline chunk of layer `layer` (-1 = embedding, `layers` = head) with `chunks` equal chunks.
int chunk_of_layer(std::int64_t layer, std::int64_t layers, int chunks);

}  // namespace tessel
