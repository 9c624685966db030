// `gaudi`: an Intel Gaudi (Gaudi 2, Gaudi 3) running a workload operation after operation as its graph compiler
// schedules it (engine_chip: engines of one operation pipelined over its slices, SRAM kept between operations).
// Two engines:
//  - matrix engines (MMEs): large output-stationary arrays. A product is cut into output tiles of rows x cols
//    (M x N, padded to the array), spread over the MMEs; a tile accumulates over K, one K step per cycle (two for a
//    type the array runs at twice the rate), while the tile before leaves the array a row per cycle, so a tile
//    takes max(K / rate, rows) cycles, and the array fills and drains once per operation (rows + cols - 2);
//  - tensor processor cores (TPCs): VLIW SIMD cores running every other op (and a product's fused epilogue
//    beside the MMEs), element operations at their SIMD width for the data type, transcendentals at their own rate.
// Fused attention is its two products on the MMEs (causal: the blocks above the diagonal skipped) with the softmax
// on the TPCs. Leaves out: MME geometries other than the square array (skinny products, decode, are timed on the
// full array), independent MME and TPC operations running side by side (one operation at a time), the TPCs'
// local memories, the integrated RoCE ports (systems model the links).
#pragma once

#include "models/baseline/engine_chip.h"

namespace tessel {

class gaudi : public engine_chip {
public:
    struct mme_params {
        std::int64_t count = 0;
        std::int64_t rows = 0, cols = 0;
        rate_table types;
        void declare(param_decl& d);
    };
    struct tpc_params {
        std::int64_t count = 0;
        rate_table lanes;
        std::int64_t special_per_cycle = 0;
        void declare(param_decl& d);
    };
    struct params {
        common_params common;
        mme_params mme;
        tpc_params tpc;
        void declare(param_decl& d);
    };
    static std::vector<stat_decl> stat_table() { return common_stats(); }

    gaudi(const sc_core::sc_module_name& name, const component_args& args);
    op_plan plan(const work& w, const kernel_desc* d) const override;
    std::string summary() const override;

    /// Cycles of the MMEs for a batch x (M x K).(K x N) product at `rate` K steps per cycle.
    double mme_cycles(double batch, double m, double n, double k, double rate) const;
    double mme_peak() const;         // bf16 MACs per second, whole chip
    double tpc_peak(dtype t) const;  // element operations per second, whole chip
    double special_peak() const;

private:
    params m_p;
};

}  // namespace tessel
