// The system mapper: one training iteration of a workload on a system of chips, by a parallel plan
// (engine/system/parallel_plan.h). It partitions the model into what one rank runs per pipeline chunk
// (partition.h), checks memory per chip, hands each chunk's forward, backward and optimizer graphs to the
// chip's own mapper (the chip platform's `mapper:`: kernels on a GPU, BSP on an IPU, ...), cut at every
// collective op, and joins the pieces into one program: per chip, the stage's pipeline schedule in order
// (pipeline_schedule.h); between stages, the activations and their gradients as transfers; inside a stage, the
// tensor-parallel collectives lowered to transfers on the real links (collectives.h); after the last backward
// pass, the data-parallel gradient reduction and the optimizer step. The executor then simulates the iteration
// like any other program, so concurrent collectives and pipeline traffic contend on the links.
//
// Symmetry (`symmetric: true`, the default): the dp replicas and the tp ranks of a stage run the same program
// on interchangeable chips, so only one representative chip per pipeline stage is simulated and every
// collective is lowered for that rank alone (its transfers on its links; what it receives from a peer stands
// for its own matching transfer). `symmetric: false` simulates every chip with full collectives;
// tests/system/system_mapper_test.cpp shows both give the same iteration time on a small system. An algorithm
// with a root (tree) gives ranks different roles, so with it every chip is simulated and the mapping says why.
//
// Ranks follow Megatron-LM's order: tensor-parallel ranks fastest (inside a node), then data-parallel replicas,
// then pipeline stages: chip = (stage * dp + replica) * tp + tp_rank.
//
// `weights: streamed` trains as a Cerebras cluster does instead: weights in a store, streamed through each chip,
// data parallel only (engine/system/weight_streaming.h).
//
// A window (`window: N`): only the first max(N, pp) microbatches of each pipeline are simulated (rounded up to a
// multiple of pp, at most the iteration's); the rest repeat the same passes, so the iteration is extrapolated by a
// stated rule: each microbatch beyond the window adds the busiest stage's time per microbatch (its pipeline items'
// mean, or a pipeline send's, whichever is longer), after the window's own fill, drain, gradient reduction and
// optimizer step, which are simulated for real. The run's own times and statistics are the window's; the
// explainer reports the extrapolated iteration as `parallel.estimate` (what `tessel plan --simulate-top` ranks
// by). tests/system/window_test.cpp compares it with the whole iteration on every chip style.
//
// A layer sample (`layers_of: L`, with `holds`): the workload has fewer layers than the model of L layers it stands
// for (tessel plan's --estimate-layers and tessel serve's serve.simulated_layers run it with k and k + 1 layers a
// chunk and take the difference as a layer's time). The chip programs' form is chosen as for the model: each
// pass's fine-form cost and steps scaled by L over the workload's layers, so both samples map as the model would.
// `sample_layers: K` asks the run for such a sample itself: the session builds K layers per pipeline chunk of the
// workload's model and tells the mapper the model's layers (sample_of); tessel run --estimate-layers runs K and K + 1.
//
// Left out: overlapping the gradient reduction with the backward pass (overlap_grad_reduce = true is refused;
// every reduction starts after its stage's last backward pass), SC21's scatter/gather of pipeline sends, the
// optimizer's own collectives beyond ZeRO's gradient reduce-scatter and weight all-gather, ZeRO-3 (refused), and
// host-side launch gaps between pipeline items.
#pragma once

#include <memory>
#include <vector>

#include "engine/mappers/mapper.h"
#include "engine/system/collectives.h"
#include "engine/system/parallel_plan.h"

namespace tessel {

/// What the system mapper planned, its mapping record, per chip: the pipeline items each simulated chip runs and
/// every collective lowered into the program, with their steps. Its explainer (engine/report/explain/system.cpp)
/// turns them into per-chip time splits, the per-collective table and the trace's pipeline tracks.
struct system_record : mapping_record {
    std::string chip_group;  // the chip group the plan ran on
    /// What each simulated chip's pipeline track shows: one item (a chunk's forward or backward pass of one
    /// microbatch) spans steps [first, last] of the program; its op is named "F chunk 0 mb 3".
    struct pipeline_item {
        int chip;
        std::uint32_t first, last, op;
    };
    std::vector<pipeline_item> items;
    /// Each collective lowered into the program: its steps [first, end), for the per-collective report.
    struct collective_record {
        std::uint32_t op;
        collective_kind kind;
        collective_algorithm algorithm;
        std::uint64_t bytes;
        int ranks;
        std::uint32_t first, end;
    };
    std::vector<collective_record> collectives;
};

class system_mapper : public mapper {
public:
    struct options {
        bool symmetric = true;
        std::string algorithm = "ring";  // tp and dp collectives: ring, tree, direct or torus
        std::string torus;               // the chips' torus extents, first fastest ("4x4x4"), for algorithm torus
        bool bidirectional = false;      // half of each ring's data each way (links with a channel per direction)
        std::string chip;                // the chip group the plan runs on (default: the system's first)
        std::string memory;              // the chip memory collectives and pipeline sends use (default: the largest)
        std::string in_network;          // switch_reducer group, one engine per chip: groups on one switch reduce there
        byte_size in_network_slice;      // an in-network collective streams through the switch in slices this big
        std::string weights;             // resident (on the chips) or streamed (weight_streaming.h)
        byte_size holds;                 // at least these bytes per chip for the chip mapper's on-chip decisions
        std::string store;               // streamed: the component holding weights and optimizer state
        std::string fabric;              // streamed: the network whose port c is chip c's I/O
        std::int64_t window = 0;         // microbatches per pipeline to simulate (at least pp), 0: every one
        std::int64_t layers_of = 0;      // a layer sample of a model of this many layers: forms chosen as for it
        std::int64_t sample_layers = 0;  // run this many layers per pipeline chunk of the workload's model
        void declare(param_decl& d);
    };
    explicit system_mapper(const options& o) : m_opt(o) {}
    void configure(const platform& plat, param_context& ctx) override;
    mapping map(const workload_graph& g, const platform& plat) const override;

    /// For `tessel plan` (after configure): the chips a plan runs on, the memory per chip that bounds it, and
    /// whether weights stream from a store (then only data parallelism applies and chip memory does not bound it).
    const platform::chip_group& chips(const platform& plat) const { return *plat.find_chip_group(m_chip_group); }
    std::uint64_t chip_capacity(const platform& plat) const { return chip_memory(plat, chips(plat)).second; }
    /// From the system's store (mapper.weights: streamed), or into each chip by its own mapper.
    bool streams_weights() const override {
        return m_opt.weights == "streamed" || (m_chip_mapper && m_chip_mapper->streams_weights());
    }
    /// Each chip's largest memory (what bounds a plan).
    std::uint64_t memory_capacity(const platform& plat) const override { return chip_capacity(plat); }
    /// The parallel plan read by configure().
    const parallel_plan& plan() const { return m_plan; }
    /// The layers per pipeline chunk a run simulates of its workload's model (sample_layers); 0: every layer.
    std::int64_t sample_layers() const { return m_opt.sample_layers; }
    /// Maps the workload as a sample of a model of `layers` layers (layers_of), for sample_layers.
    void sample_of(std::int64_t layers) { m_opt.layers_of = layers; }
    /// The chip (an index into chips()) that runs tensor-parallel rank `rank` of pipeline stage `stage` in
    /// data-parallel replica `replica` of `plan`.
    static int chip_of(const parallel_plan& plan, int stage, int replica, int rank) {
        return (stage * plan.dp + replica) * plan.tp + rank;
    }
    /// The name of a chip's memory that collectives and pipeline sends use (a program's endpoint for it).
    std::string chip_memory_name(const platform& plat, int chip) const;

private:
    options m_opt;
    parallel_plan m_plan;
    std::unique_ptr<mapper> m_chip_mapper;
    std::string m_chip_group;
    std::vector<int> m_torus;                     // parsed options.torus
    std::vector<std::uint32_t> m_engines;         // options.in_network: per chip, its engine's component id
    std::uint32_t m_store = ~0u, m_fabric = ~0u;  // options.store and options.fabric (weights streamed)
    /// Index inside a chip of the memory collectives and pipeline sends use (mapper.memory, or the largest),
    /// and the largest memory's capacity.
    std::pair<std::uint32_t, std::uint64_t> chip_memory(const platform& plat, const platform::chip_group& cg) const;
    /// Whether one representative chip per stage stands for the others: `symmetric`, unless the algorithm has a
    /// root.
    bool symmetric() const;
};

}  // namespace tessel
