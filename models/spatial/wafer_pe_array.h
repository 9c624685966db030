// `wafer_pe_array`: the processing elements of a wafer-scale engine (Cerebras WSE-1/2/3), held as data. Every PE
// has a SIMD datapath (MACs and element operations per cycle by data type), a private SRAM (48 KB on the WSE,
// in 8 banks with two 64-bit read ports and one 64-bit write port per cycle) and a ramp to its router, which
// carries one 32-bit wavelet per cycle each way. The routers and links are a separate `mesh_noc` (the fabric);
// each PE attaches to the router at its (x, y). There is no off-chip memory: what a PE holds is what fits in
// its SRAM, and the array checks every placement against that capacity.
//
// Timing of a compute step on a PE (dataflow: operands stream in through the ramp while the datapath works):
//   cycles = task_overhead + max(ceil(macs / macs_per_cycle) + ceil(vector_ops / vector_ops_per_cycle),
//                               ceil(bytes_in / ramp_bandwidth),        // operands arriving from the fabric
//                               ceil(bytes_weight / read_bandwidth),    // operands read from SRAM
//                               ceil(bytes_out / write_bandwidth))      // results written to SRAM
// so a step is bound by whichever of datapath, ramp, SRAM reads or SRAM writes is slowest. Transfers into and
// out of a PE are limited by its ramp (the fabric's injection and ejection links), which is slower than its
// SRAM ports, so the SRAM adds no time to them.
//
// Scale (docs/architecture.md, "Data-oriented arrays"): 850k PEs cannot be 850k modules. Per-PE state is a compute
// reservation (16 bytes), the work done, for the physical bound (32 bytes), and the bytes placed (4 bytes): about 40 MB
// for a WSE-2. A compute step may carry a span (grid_span.h: a rectangle of PEs) as its payload: it then runs the same
// work on every PE of the span in lockstep, starting when the last of them is free, so a row of 750 PEs doing the same
// thing is one event. What a program keeps in the PEs' SRAM comes with the program (its placements, given at
// begin_program): the array checks them against each PE's SRAM and reports them (sram_used).
// Leaves out: SRAM bank conflicts, instruction fetch, task scheduling between colours, the 256-byte cache.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "models/core/component.h"
#include "models/core/compute_model.h"
#include "models/core/energy.h"
#include "models/core/grid_placement.h"
#include "models/core/pe_grid.h"

namespace tessel {

class wafer_pe_array : public component, public pe_grid {
public:
    struct params {
        frequency clock;
        std::int64_t width = 0, height = 0;
        byte_size sram;
        bandwidth read_bandwidth, write_bandwidth, ramp_bandwidth;
        rate_table macs_per_cycle, vector_ops_per_cycle;
        duration task_overhead;
        compute_energy energy;      // of one PE's datapath
        memory_energy sram_energy;  // of one PE's SRAM
        link_energy ramp_energy;    // of one PE's ramp (each way)
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// The timing rules of one PE, usable without the module (mappers size their plans with them).
    struct timing final : compute_model {
        clock_domain clk;
        double read_bpc = 0, write_bpc = 0, ramp_bpc = 0;  // bytes per cycle
        double overhead_cycles = 0;
        std::array<double, dtype_count> macs{}, vec{};  // per cycle by data type, 0 = unsupported
        explicit timing(const params& p);
        /// Cycles a step of `w` occupies a PE (see the file comment).
        double cycles(const work& w) const override;
        /// Datapath cycles alone (MACs and element operations at peak).
        double compute_cycles(const work& w) const;
        /// MACs per cycle at `t` (fp16 and bf16 stand in for each other when only one is listed).
        double mac_rate(dtype t) const { return macs[static_cast<size_t>(t)]; }
        double vec_rate(dtype t) const { return vec[static_cast<size_t>(t)]; }
        double peak_macs_per_cycle(dtype t) const override { return mac_rate(t); }
        double peak_vector_ops_per_cycle(dtype t) const override { return vec_rate(t); }
        const clock_domain& clock() const override { return clk; }
        /// The datapath cycles at the PE's clock.
        double ideal_seconds(const work& w) const override { return compute_cycles(w) / clk.hz; }
        /// Throws input_error naming `who` when the PE has no rate for the data type of `w`.
        void check(const work& w, const std::string& who) const override;
    };

    wafer_pe_array(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::compute || r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.width), static_cast<int>(m_p.height)}; }
    /// SRAM of one PE.
    std::uint64_t capacity_bytes() const override { return m_p.sram.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    std::vector<double> unit_busy() const override;

    const compute_model* unit_model() const override { return &m_timing; }
    const pe_grid* grid() const override { return this; }
    /// Holds exactly the program's placements from now on; throws input_error for one that leaves the array or
    /// does not fit (see sram_tally::add).
    void begin_program(tick origin, const std::vector<grid_placement>& placements) override;

    int width() const override { return static_cast<int>(m_p.width); }
    int height() const override { return static_cast<int>(m_p.height); }
    std::int64_t pe_count() const { return m_p.width * m_p.height; }
    const timing& pe_timing() const { return m_timing; }
    paths pe_paths() const override {
        return paths{m_timing.read_bpc, m_timing.write_bpc, m_timing.ramp_bpc, m_timing.overhead_cycles};
    }
    /// Bytes placed on a PE by the running program, and the most on any PE.
    std::uint64_t used_bytes(std::int32_t pe) const { return m_sram.used(pe); }
    std::uint64_t max_used_bytes() const { return m_sram.max_used(); }

private:
    void compute(txn& t, const grid_rect& s);
    /// The trace track of a span's steps, one per distinct rectangle, made on first use.
    int span_track(const grid_rect& s);
    params m_p;
    timing m_timing;
    std::size_t m_pes = 0;
    std::vector<reservation> m_pipe;
    struct pe_work {
        double compute_s = 0;  // seconds of datapath work at peak
        double read_b = 0, write_b = 0, ramp_b = 0;
    };
    std::vector<pe_work> m_work;
    sram_tally m_sram;
    std::map<std::array<int, 4>, int> m_span_tracks;
    std::vector<int> m_pe_tracks;
    double& m_macs;
    double& m_vector_ops;
    double& m_read_bytes;
    double& m_write_bytes;
    double& m_ramp_bytes;
    double& m_fabric_bytes;
    double& m_steps;
    std::array<double, dtype_count> m_macs_by_type{};
};

}  // namespace tessel
