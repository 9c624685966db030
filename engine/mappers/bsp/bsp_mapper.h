// `bsp` mapper: runs a workload on a Graphcore IPU as bulk-synchronous supersteps. Every op is one superstep (two
// when its matrix product splits K): an exchange phase that brings each tile the operands it lacks (from the
// tiles that hold them, or from streaming memory), a compute phase on every tile that owns a piece of the op,
// and a global sync. Tensors live spread over tiles in rectangular pieces of their 2D view (rows = all axes but
// the last, columns = the last); tiles only compute on their own memory.
//
// Matrix products (linear layers, convolutions as implicit GEMMs, attention's products) are split over tiles in
// batch x M x N x K, the split chosen, as the vendor's planner does, to minimise the estimated compute +
// exchange (+ partial-sum reduction) time among the splits whose working set fits each tile's memory. A K split
// leaves fp32 partial sums that a second superstep reduce-scatters. Weights stay resident, spread over the tiles
// of their product's split, when all of them fit next to the activations; otherwise (or with weights:
// streaming) every weight and state tensor comes from streaming memory in the exchange phase of the op that uses
// it, which the notes report. A working set that does not fit runs as serial slices of N; an op that does not fit
// even so, or a model whose weights do not fit a platform without streaming memory, is an input_error that says
// by how much and which tensors. Elementwise ops run where their input lies; row-wise ops (softmax, norms) on
// whole rows; other ops on an even spread. Broadcast sends (one piece to many tiles) go out once (multicast).
// An optimizer step rewrites its weight and state in place as soon as its gradient is complete; streamed state
// comes in and goes back in serial slices of rows that fit the tiles. The program is fine (a step per message and
// per tile's compute) or coarse (one step per superstep, models/bsp/bsp_superstep.h), `representation`.
// Activations the backward pass reads stay on the tiles unless the run does not fit there (or with activations:
// streaming): then each goes to streaming memory once its last forward reader has run and the backward ops read it
// back from there, as Poplar's off-chip tensor locations do.
// Left out: host I/O (inputs start on the tiles, outputs stay there), halo exchange of convolutions, pipelining
// over several IPUs, recomputation.
#pragma once

#include "engine/mappers/mapper.h"

namespace tessel {

class bsp_mapper : public mapper {
public:
    struct options {
        std::string tiles;
        std::string sync;
        std::string streaming_memory;
        double code_reserve = 0.25;
        std::string weights;
        std::string activations;
        std::string partials;
        byte_size min_piece;
        std::string matmul_split;
        std::string representation;
        double coarse_above = 0;
        byte_size coarse_packet;
        void declare(param_decl& d);
    };

    /// One superstep of the mapped program: its exchange steps are [first, compute), its compute steps
    /// [compute, sync), then the sync step.
    struct superstep {
        std::string name;
        std::uint32_t first = 0, compute = 0, sync = 0;
        double exchange_bytes = 0;     // tile to tile
        double streamed_bytes = 0;     // from streaming memory
        std::uint32_t tiles = 0;       // tiles computing
        double predicted_compute = 0;  // planner's estimate of the busiest tile, seconds
        bool coarse = false;           // one step (at `compute`) carries the exchange and compute of every tile
        bool update = false;           // an optimizer step's (weights and state rewritten in place)
    };

    explicit bsp_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;
    /// The coarse form where the form is auto (the user did not fix it).
    std::unique_ptr<mapper> coarser() const override;

private:
    /// In the representation `opt` asks for, with activations on the tiles or (auto: when they do not fit there)
    /// in streaming memory.
    mapping map_as(const workload_graph& g, const platform& plat, const options& opt) const;
    /// With activations where `opt.activations` says (tiles or streaming): weights on the tiles, or the fewest in
    /// streaming memory that make the rest fit.
    mapping map_placed(const workload_graph& g, const platform& plat, const options& opt) const;
    options m_opt;
};

/// What the bsp mapper planned, its mapping record: the supersteps' step ranges, bytes and predicted compute, from
/// which its explainer (engine/report/explain/bsp.cpp) splits the run into exchange, compute and sync.
struct bsp_record : mapping_record {
    std::vector<bsp_mapper::superstep> steps;
};

}  // namespace tessel
