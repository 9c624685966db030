// `rdu_pcu`: a Pattern Compute Unit of a reconfigurable dataflow unit (Plasticine, SambaNova SN10 and SN40L): a
// pipeline of `stages` stages, each a row of `lanes` SIMD functional units, configured for one op of the graph
// section that is loaded. Data streams in through its vector input, through the stages, and out.
//
// Timing of one compute step (one tile of one op's share) in cycles of its clock:
//   SIMD matrix product: the stages hold a (stages x lanes) block of weights (K along the stages, N along the
//   lanes); the rows of A stream through, partial sums flowing from stage to stage. Per block: m cycles, plus
//   one pipeline fill (`stages` cycles) per step. Partial sums of a K longer than `stages` go back to the PMU
//   and return for the next block, so the vector ports carry A once per N block, the weights once, and the
//   partial sums 2 x (K blocks - 1) times.
//   Systolic matrix product (the SN40L's second configuration): the same functional units as a weight-
//   stationary array of R = lanes rows (K) by C = stages columns (N), timed per fold as 2R + C + m - 2 cycles
//   (fill, stream, drain; SCALE-Sim, Samajdar et al., ISPASS 2020). Partial sums leave every R = lanes MACs,
//   not every `stages`, so the ports carry far fewer of them; fills cost more.
//   Element-wise work: `lanes x stages` operations per cycle (a chain of operations down the stages).
//   A step takes max(compute, input bytes / input bandwidth, output bytes / output bandwidth) plus the fill.
// With `matmul_mode: best` each matrix-product step uses whichever configuration is faster (the compiler
// configures each PCU for its op). A step may name a gang of PCUs (unit_gang.h): it then runs on all of them in
// lockstep, each an equal share of its work, from when the last is free. Configuration writes (reconfiguration) occupy
// the unit for their bytes at the input bandwidth; reads of its results cost nothing here (their time is in the step
// that produced them). Leaves out: control (counters, tokens), scalar network, register-file pressure, transcendental
// tail stage.
#pragma once

#include <array>

#include "models/core/component.h"
#include "models/core/compute_model.h"
#include "models/core/energy.h"

namespace tessel {

class rdu_pcu : public component {
public:
    struct params {
        frequency clock;
        std::int64_t lanes = 0, stages = 0;
        rate_table fu_macs;
        std::string matmul_mode;
        bandwidth input_bandwidth, output_bandwidth;
        byte_size accumulator;
        byte_size config_bytes;
        compute_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// The timing rules, usable without a module (the rdu mapper estimates stage times with them).
    class timing final : public compute_model {
    public:
        explicit timing(const params& p);
        /// Cycles one step of `w` occupies the unit, and whether the systolic configuration ran it.
        struct estimate {
            double cycles = 0;
            bool systolic = false;
            double compute = 0, in_bytes = 0, out_bytes = 0;  // the parts of the winning configuration
        };
        estimate evaluate(const work& w) const;
        double cycles(const work& w) const override { return evaluate(w).cycles; }
        tick ticks(const work& w) const { return clk.cycles(cycles(w)); }
        /// MACs per cycle at peak for a data type (0: not supported).
        double peak_macs_per_cycle(dtype t) const override { return m_peak[static_cast<size_t>(t)]; }
        /// Element operations per cycle at peak.
        double vector_ops_per_cycle() const { return static_cast<double>(m_p.lanes * m_p.stages); }
        double peak_vector_ops_per_cycle(dtype) const override { return vector_ops_per_cycle(); }
        std::int64_t lanes() const override { return m_p.lanes; }
        const clock_domain& clock() const override { return clk; }
        /// Seconds at peak rate (the physical bound of the work).
        double ideal_seconds(const work& w) const override;
        /// Throws input_error when the unit cannot compute in the work's data type.
        void check(const work& w, const std::string& who) const override;
        double peak_flops(const std::array<double, dtype_count>& macs_by_type) const;
        const params& p() const { return m_p; }
        clock_domain clk;

    private:
        struct shape {
            double cycles, in, out;
        };
        shape matmul(const work& w, double rows_k, double cols_n, double per_fold_overhead, double fill) const;
        params m_p;
        bool m_simd = true, m_systolic = false;
        std::array<double, dtype_count> m_rate{};  // MACs per functional unit per cycle
        std::array<double, dtype_count> m_peak{};
        double m_in_bpc = 0, m_out_bpc = 0;  // port bytes per cycle
    };

    rdu_pcu(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    std::vector<double> unit_busy() const override { return {ticks_to_seconds(m_pipe.busy)}; }
    const timing& model() const { return m_timing; }
    const compute_model* unit_model() const override { return &m_timing; }
    std::uint64_t config_bytes() const override { return m_p.config_bytes.bytes(); }

private:
    /// The gang member `offset` component ids from this one (input_error when it is not a PCU).
    rdu_pcu& gang_member(std::int32_t offset) const;
    /// Runs `w` (this unit's share) from `start` for `dur`, counting it in the statistics, energy and trace.
    void compute(const txn& t, const work& w, bool systolic, tick start, tick dur);

    params m_p;
    timing m_timing;
    reservation m_pipe;
    int m_track = -1;
    double& m_macs;
    double& m_vector_ops;
    double& m_steps;
    double& m_systolic_steps;
    double& m_config_bytes;
    double m_ideal = 0;
    std::array<double, dtype_count> m_macs_by_type{};
};

}  // namespace tessel
