// `pe`: a processing element. A MAC datapath with a rate per data type plus vector lanes for element-wise work,
// and a fixed issue overhead per step. In systolic mode the MACs are an R x C array with output-, weight- or
// input-stationary dataflow, timed per fold exactly as SCALE-Sim v2 counts it: R + C + T - 2 cycles output
// stationary, 2R + C + T - 2 weight or input stationary (fill, stream, drain; Samajdar et al., "A Systematic
// Methodology for Characterizing Scalability of DNN Accelerators using SCALE-Sim", ISPASS 2020), so tile
// quantisation and fill/drain show. Leaves out: register files, instruction fetch, data hazards.
#pragma once

#include <array>

#include "models/core/component.h"
#include "models/core/compute_model.h"
#include "models/core/energy.h"

namespace tessel {

class pe : public component {
public:
    struct params {
        frequency clock;
        rate_table macs_per_cycle;
        std::int64_t vector_lanes = 0;
        duration issue_overhead;
        std::string mode;
        std::int64_t rows = 0, cols = 0;
        std::string dataflow;
        bool scalesim = false;
        compute_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// The timing rules, usable without a module (tile_array and mappers use them directly).
    struct timing final : compute_model {
        params p;
        clock_domain clk;
        bool systolic;
        char dataflow;                           // 'o', 'w' or 'i'
        std::array<double, dtype_count> peak{};  // MACs per cycle by data type, 0 = unsupported
        explicit timing(const params& prm);
        /// MACs per cycle at peak for a data type (0 when the PE does not support it).
        double peak_macs_per_cycle(dtype t) const override;
        double lookup_peak(dtype t) const;
        /// Element operations per cycle on the vector lanes (any data type).
        double peak_vector_ops_per_cycle(dtype) const override { return static_cast<double>(p.vector_lanes); }
        std::int64_t lanes() const override { return p.vector_lanes; }
        const clock_domain& clock() const override { return clk; }
        /// Cycles a step of work occupies the PE (issue overhead included).
        double cycles(const work& w) const override;
        /// The same, in ticks.
        tick ticks(const work& w) const { return clk.cycles(cycles(w)); }
        /// Seconds the work would take at peak rate (the physical bound).
        double ideal_seconds(const work& w) const override;
        /// Throws input_error when the PE cannot run the data type of `w`.
        void check(const work& w, const std::string& who) const override;
        /// Peak FLOP/s at the data type that did most of `macs_by_type` (fp16 when nothing ran).
        double peak_flops(const std::array<double, dtype_count>& macs_by_type) const;
    };

    pe(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    std::vector<double> unit_busy() const override { return {ticks_to_seconds(m_pipe.busy)}; }

    const timing& model() const { return m_timing; }
    const compute_model* unit_model() const override { return &m_timing; }

private:
    void init();
    params m_p;
    timing m_timing;
    reservation m_pipe;
    int m_track = -1;
    double& m_macs;
    double& m_vector_ops;
    double& m_steps;
    double m_ideal = 0;
    std::array<double, dtype_count> m_macs_by_type{};
};

}  // namespace tessel
