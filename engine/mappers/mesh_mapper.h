// `mesh` mapper: runs a workload op after op on a grid of tiles with off-chip memory (the teaching mesh, or
// any platform with compute tiles, a network and a memory). For a matrix product (and a convolution, as its
// implicit GEMM) the output is tiled over pm x pn tiles, chosen to minimise the larger of compute time and
// off-chip traffic time; each tile streams its A rows and B columns in K chunks into its scratchpad, double
// buffered (the load of chunk c+2 waits for the compute of chunk c), and accumulates in place. Outputs stay in
// the tiles' scratchpads when they fit (a share of each scratchpad is set aside for them) and the next op
// fetches its inputs from the producing tiles over the network; otherwise they are stored to memory. Other ops
// are split evenly over the tiles. Ops on one tile run in order (their buffers are reused). A platform with
// several groups of tiles (matrix tiles beside vector tiles) uses them all: each op runs on the group whose tiles,
// sharing it evenly, finish it first at peak rate; `mapper.tiles` names one group to use alone.
#pragma once

#include "engine/mappers/mapper.h"

namespace tessel {

class mesh_mapper : public mapper {
public:
    struct options {
        std::string tiles;
        std::string memory;
        double resident_fraction = 0.5;
        bool double_buffer = true;
        void declare(param_decl& d);
    };
    explicit mesh_mapper(options o) : m_opt(std::move(o)) {}
    mapping map(const workload_graph& g, const platform& plat) const override;

private:
    options m_opt;
};

}  // namespace tessel
