// `neuron`: an AWS Trainium or Inferentia2 chip (NeuronCores) running a workload operation after operation as the
// Neuron compiler schedules it (engine_chip: engines of one operation pipelined over its slices, SBUF kept between
// operations), each operation spread over every NeuronCore of the chip. A NeuronCore's engines, each on its own
// clock:
//  - the tensor engine, a weight-stationary systolic array: a product is folded onto it as ceil(K / rows) x
//    ceil(N / cols) stationary tiles; each fold streams the M moving rows into PSUM in chunks of at most one PSUM
//    bank (psum_free fp32 columns), a chunk taking max(its rows, the array's rows) cycles (the next fold's weights
//    load meanwhile), and the array fills and drains once per operation (rows + cols - 2). The fp32 partial sums
//    stay in PSUM over the K folds;
//  - the vector engine: every result of a product leaves PSUM through it once (the copy to SBUF, with the cast),
//    and it runs the element operations of other ops and of fused epilogues;
//  - the scalar engine: transcendentals and activation functions (exp, gelu, tanh, rsqrt);
//  - the GpSimd engine: gathers (embedding lookups).
// Leaves out: the DMA engines as separate queues (HBM traffic is paced at the memory's rate), the collective cores
// (systems model the links), SBUF partitions and tiling of operands larger than SBUF, the cost of splitting one
// operation over the NeuronCores (no core-to-core traffic is charged).
#pragma once

#include "models/baseline/engine_chip.h"

namespace tessel {

class neuron : public engine_chip {
public:
    struct tensor_params {
        frequency clock;
        std::int64_t rows = 0, cols = 0;
        rate_table types;
        std::int64_t psum_free = 0;
        void declare(param_decl& d);
    };
    /// The vector, scalar or GpSimd engine of one NeuronCore.
    struct engine_params {
        frequency clock;
        std::int64_t ops_per_cycle = 0;
        void declare(param_decl& d);
    };
    struct params {
        common_params common;
        std::int64_t cores = 0;
        tensor_params tensor;
        engine_params vector, scalar, gpsimd;
        void declare(param_decl& d);
    };
    static std::vector<stat_decl> stat_table() { return common_stats(); }

    neuron(const sc_core::sc_module_name& name, const component_args& args);
    op_plan plan(const work& w, const kernel_desc* d) const override;
    std::string summary() const override;

    /// Tensor-engine cycles for a batch x (M x K).(K x N) product at `rate` moving rows per cycle.
    double tensor_cycles(double batch, double m, double n, double k, double rate) const;
    double tensor_peak() const;  // bf16 MACs per second, whole chip
    double peak(const engine_params& e) const;

private:
    params m_p;
};

}  // namespace tessel
