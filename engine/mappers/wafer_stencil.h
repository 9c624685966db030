// `wafer_stencil` mapper: 3D stencil codes and Krylov solvers on a wafer-scale engine, the mapping of Rocki et
// al., "Fast stencil-code computation on a wafer-scale processor" (SC20): grid point (i, j, k) lives on PE (i, j),
// so each PE holds one column of nz points (a block of columns when the grid is wider than the wafer) for every
// vector of the solver, and the operator's coefficients when it stores them.
//
//   - A 7-point stencil (SpMV) exchanges halos with the 4 neighbours: every PE's column goes east, west,
//     north and south one hop. Each direction along each row or column is carried by transfers over segments of
//     `segment` hops (every link carries one neighbour column, as on the real fabric), cut into `chunks` pieces
//     along z so computing on one piece overlaps the arrival of the next. The PE consumes the 4 incoming
//     columns through its ramp while it reads its own column and the coefficients from SRAM.
//   - A dot product is a local multiply-add per PE, then an all-reduce of the scalar: each row reduces to its
//     middle from both ends, the middle column reduces to the centre, and the result is broadcast back the same
//     way (4 transfers per row). Scalars between them are computed redundantly on every PE.
//   - Vector updates (axpy) are local.
// Every PE does the same work, so each op is one lockstep step on the span of PEs the grid occupies.
// Leaves out: boundary PEs doing less, the fp32 residual check of a convergence test, host I/O.
#pragma once

#include "engine/mappers/wafer_common.h"

namespace tessel {

/// What the wafer_stencil mapper planned, for its explainer: the steps of each phase of the solver and the
/// iterations the program runs, so the report splits one iteration's time by phase.
struct wafer_stencil_record : mapping_record {
    struct phase_record {
        std::string phase;          // "halo exchange and SpMV", "all-reduce", "local vector work"
        std::uint32_t first, last;  // its steps are [first, last)
    };
    std::vector<phase_record> phases;
    std::int64_t iterations = 1;
};

class wafer_stencil_mapper : public mapper {
public:
    struct options {
        wafer::common_options common;
        std::int64_t segment = 32;
        std::string matrix;
        std::string dot_precision;
        void declare(param_decl& d);
    };
    explicit wafer_stencil_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;

private:
    options m_opt;
};

}  // namespace tessel
