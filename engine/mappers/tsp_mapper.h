// `tsp` mapper: lowers a workload to a cycle-exact static schedule for a Groq TSP (the `tsp` kind). Every
// instruction is fixed to a cycle, a slice and its stream registers before the run; the simulator executes the
// schedule and must finish at exactly the cycle the schedule predicts (its explainer reports both).
//
// Matrix products (linear layers, convolutions as implicit GEMMs, attention's products) run on the MXM planes
// in passes: a plane installs a weight block (double buffered, on weight streams), then activation rows stream
// in from a MEM slice, one vector per cycle; after the last K block the result rows flow to a VXM ALU for the
// epilogue (bias, batchnorm, activation, requantisation: elementwise ops whose only input is the product are
// fused into it) and on to a MEM slice. Work items (batch item x N block x row chunk) go to the earliest free
// plane. Other ops stream through the VXM (arithmetic) or the SXM (data movement): MEM read(s) -> unit -> MEM
// write, in up to four parallel chains. Each kind of flow owns a fixed band of stream registers, so flows never
// collide by construction; the simulator checks it anyway. Tensors live spread over MEM slices; weights stay
// resident. A model whose weights and live tensors exceed the chip's SRAM is an input_error that says by how
// much and which tensors (the TSP has no off-chip memory).
// Left out: pipelining one op into the next before its last write (ops start when their inputs are complete),
// chip-to-chip links, the SXM's im2col shuffles for convolutions (MEM slices deliver the rows).
#pragma once

#include "engine/mappers/mapper.h"

namespace tessel {

/// What the tsp mapper planned, for its explainer (engine/report/explain/tsp.cpp) and tests: the schedule's
/// predicted length and each op's span of cycles. Why a record: the simulated length is checked against it.
struct tsp_record : mapping_record {
    std::int64_t predicted_cycles = 0;  // the schedule's length in cycles (all superlanes)
    double hz = 1;                      // the chip's clock
    struct op_span {
        std::string name;
        std::int64_t first = 0, last = 0;
        std::string unit;  // "MXM", "VXM", "SXM"
    };
    std::vector<op_span> spans;
};

class tsp_mapper : public mapper {
public:
    struct options {
        std::string chip;
        bool fuse_epilogues = true;
        void declare(param_decl& d);
    };

    explicit tsp_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;

private:
    options m_opt;
};

}  // namespace tessel
