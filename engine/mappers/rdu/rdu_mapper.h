// `rdu` mapper: the spatial pipeline of a reconfigurable dataflow unit (Plasticine, SambaNova SN10/SN40L).
//
// 1. Ops. Views (reshape, flatten) move nothing: their output is their input. Ops that compute become pipeline
//    stages on PCUs (with PMUs for their weights and input buffers); ops that only move data (transpose,
//    concat, split, slice, gather, embedding) are stages on PMUs alone (the PMU's address generators do them).
//    A matrix product whose weights and whole operands need more than `chunk_above` of all PMU capacity is
//    split into column chunks (each reads all of its input and computes a slice of the output columns). A batched
//    product without weights (attention's, per sequence and head) that would not fit the chip even so splits
//    its batch items instead: every operand, its input buffers and its output shrink with the chunk. An
//    element-wise op on more weights than it can hold (an embedding's update) streams them like any input.
// 2. Sections. Sections are contiguous runs of stages in topological order that fit the chip: every compute
//    stage needs a PCU and at least as many PMUs as PCUs (each PCU streams operands from its own PMU); every
//    stage needs PMUs for its resident bytes (weights, operands needed whole, and input buffers of
//    `buffer_depth` tiles, deeper on short paths that rejoin long ones, so the pipeline does not stall). The
//    cuts minimise the predicted time (a dynamic programme over every run that fits, each costed with steps
//    3 and 6 below), so more on-chip capacity never gives a slower plan.
// 3. Units. Within a section the PCUs go, one at a time, to the stage that is slowest with what it has (its
//    tiles x the time of one tile on its busiest PCU, from the PCU's own timing rules), until PCUs, PMUs or
//    useful parallelism run out: units in proportion to work, and the bottleneck as short as it can be.
// 4. Placement. PCUs and PMUs are taken in a snake order over their grids (column by column, alternating
//    direction), stage after stage in topological order, so producers sit next to consumers; PCU k and PMU k
//    are neighbours in the checkerboard.
// 5. Streaming. Each tensor streams in tiles of its rows (a power of two per op, at most `tiles`, at least
//    `min_tile_rows` rows each; finer where the input buffers would not fit, a reduction in its input's rows
//    then, an element-wise op on a flat tensor in rows of the PCU's lanes; a consumer is never finer than its
//    producer). A stage computes tile t once its
//    inputs' tile t is in its PMUs, then pushes its output tile into its consumers' PMUs over the switch mesh
//    (or stores it through the nearest AGCU when a later section or the graph output needs it); a push waits
//    for room in the consumer's buffers, a PCU for room in its output buffer. The coarse form merges a
//    tile's slices over adjacent units; in gangs (`gangs`) a run of adjacent PCUs computes it in one step.
// 6. Sections run one after another: configure every unit used (its configuration bytes loaded from off-chip
//    memory through the AGCUs), load the weights (and operands needed whole) into the PMUs, stream the tiles,
//    store what later sections need. With `steady_state` and a graph that fits in one section, the
//    configuration and weights stay on chip between runs and are not loaded (steady-state inference).
// explain() reports per section the units each op got, the bottleneck stage, and the time lost to
// reconfiguration, loads, pipeline fill and drain, and stores.
#pragma once

#include <memory>

#include "engine/mappers/mapper.h"
#include "models/core/transaction.h"

namespace tessel {

/// One pipeline stage: an op of the graph, or one column chunk of it.
struct rdu_stage {
    int op = -1;  // graph op index
    int chunk = 0, chunks = 1;
    bool by_batch = false;  // the chunks split the batch items (leading rows), not the columns
    bool computes = true;   // false: a PMU-only stage (data movement)
    work whole;             // the stage's work over all tiles (GEMM view with its chunk of the columns)
    std::int64_t rows = 1;  // streamed rows
    int own_tiles = 1;      // tiles from its own rows (power of two)
    std::string name;       // op name, with "#c" for a chunk
    struct input {
        int tensor = -1;      // root tensor (views resolved)
        bool whole = false;   // needed complete before the first tile (B operands, broadcast operands)
        bool gather = false;  // rows gathered from off-chip memory (an embedding table)
        double bytes = 0;     // bytes this stage reads of it
    };
    std::vector<input> inputs;
    std::vector<int> outputs;  // root tensors it writes (its chunk of their columns)
    double weight_bytes = 0;   // resident weights of this stage
    std::vector<int> weight_tensors;
};

/// A stage placed in a section.
struct rdu_placed {
    int stage = -1;
    int tiles = 1;                     // tiles in this section (power of two)
    int level = 0;                     // stages needing a whole operand from this section run at a later level
    int depth = 0;                     // longest chain of same-level stages before it
    double resident_bytes = 0;         // weights + whole operands + input buffers
    std::vector<double> buffer_tiles;  // per input: buffered tiles (0: whole or none)
    std::vector<int> pcus, pmus;       // unit indices in snake order over the PCU and PMU grids
    double tile_seconds = 0;           // predicted time of one tile on its busiest PCU
};

struct rdu_section {
    std::vector<rdu_placed> stages;
    int tiles = 1;                       // the most tiles of any stage
    int pcus = 0, pmus = 0;              // units used
    double predicted_seconds = 0;        // streaming estimate (bottleneck x tiles + one tile per stage)
    double predicted_total_seconds = 0;  // with configuration, loads and off-chip streaming (what the cuts minimise)
    double load_bytes = 0;               // configuration, weights and whole operands loaded
    std::vector<int> load_agcu;          // per PMU (snake order): the AGCU its loads come through (-1: loads nothing)
};

/// The whole plan: stages, sections, memory layout. `tessel` tests check it never oversubscribes a unit.
struct rdu_plan {
    std::vector<rdu_stage> stages;
    std::vector<rdu_section> sections;
    std::vector<int> section_of;  // per stage
    std::uint64_t pmu_capacity = 0;
    int pcu_count = 0, pmu_count = 0;
    std::vector<std::uint32_t> pcu_ids, pmu_ids;  // component ids in snake order (what placed indices name)
    bool preloaded = false;                       // one section, configuration and weights assumed resident
    std::vector<std::string> notes;
};

/// How the planner's cut search went: candidate sections costed, and those whose cost was recalled from an
/// identical section elsewhere in the graph (`recall = false` costs every one; tests compare the two plans).
struct rdu_search {
    bool recall = true;
    std::int64_t costed = 0, recalled = 0;
};

struct rdu_record;

class rdu_mapper : public mapper {
public:
    struct options {
        std::string mode;
        std::string pcus, pmus, agcus;
        std::int64_t tiles = 16;
        std::int64_t min_tile_rows = 8;
        std::int64_t buffer_depth = 2;
        double chunk_above = 0.5;
        std::string weights_tier, activations_tier;
        bool steady_state = true;
        std::int64_t floorplan_section = -1;
        // The program's representation: fine (a transfer per pair of units, the mesh's own packets, exact order)
        // or coarse (transfers of at least transfer_grain, packets of at least coarse_packet, a quantum of
        // coarse_quantum); auto: coarse when the fine form would cost more than coarse_above steps and packets.
        std::string representation;
        double coarse_above = 3e6;
        byte_size transfer_grain;
        byte_size coarse_packet;
        duration coarse_quantum;
        std::int64_t gangs = 0;  // coarse form: most lanes per stage and tile, each a gang of PCUs (0: none)
        // Not a parameter: what the whole chip program keeps in memory beside a piece's own weights, state and
        // gradients (maps_pieces: its weights and state, gradients and optimizer state), for which each piece
        // leaves room in the memory that holds its weights.
        double program_resident_bytes = 0;
        void declare(param_decl& d);
    };
    explicit rdu_mapper(options o);
    ~rdu_mapper() override;

    mapping map(const workload_graph& g, const platform& plat) const override;
    /// The coarse form where the form is auto (the user did not fix it), in gangs of PCUs (mapper.gangs).
    std::unique_ptr<mapper> coarser() const override;
    double coarse_above() const override;

    /// Partitions and places `g` without building a program (what map() does first).
    rdu_plan plan(const workload_graph& g, const platform& plat, rdu_search* search = nullptr) const;

    using record = rdu_record;

private:
    /// The options as this mapping uses them: no steady state for a piece of a longer program (maps_pieces).
    options effective_options() const;
    options m_opt;
};

/// What the rdu mapper planned, its mapping record: the plan and, per section, the steps that start it, end its
/// reconfiguration, its loads and the section, and each stage's compute steps and units; from which its explainer
/// (engine/report/explain/rdu.cpp) splits each section's time into reconfiguration, loads, fill, steady, drain.
struct rdu_record : mapping_record {
    struct stage_rec {
        std::vector<std::uint32_t> computes;  // every compute step of the stage
        std::vector<std::uint32_t> widths;    // PCUs each of them runs on (a gang; empty: one each)
        int pcus = 0, pmus = 0;
        std::uint32_t width(size_t k) const { return widths.empty() ? 1 : widths[k]; }
    };
    struct section_rec {
        std::uint32_t start = 0, configured = 0, loaded = 0, end = 0;
        std::vector<stage_rec> stages;  // as plan.sections[i].stages
    };
    rdu_plan plan;
    std::vector<section_rec> sections;
    std::vector<std::vector<std::string>> units;  // per section, per stage: "pcu[..] pmu[..]"
};

}  // namespace tessel
