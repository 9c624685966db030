// `tile_array`: a grid of tiles (pe + scratchpad + network port) held as data, not as modules: one set of
// timing rules and flat arrays of per-tile state (compute-pipe and bank reservations). This is how hundreds of
// thousands of PEs fit in one process (a SystemC module costs ~1.3 KB and a thread two memory
// mappings). Timing is identical to a grid of `tile` modules with the same parameters; a test proves it.
#pragma once

#include "models/compute/pe.h"
#include "models/memory/sram_bank.h"

namespace tessel {

class tile_array : public component {
public:
    struct params {
        std::int64_t width = 0, height = 0;
        pe::params compute;            // YAML: pe
        sram_bank::params scratchpad;  // YAML: sram
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    tile_array(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::composite || r == role::compute || r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.width), static_cast<int>(m_p.height)}; }
    std::uint64_t capacity_bytes() const override { return m_p.scratchpad.capacity.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    const pe::timing& pe_model() const { return m_pe; }
    const compute_model* unit_model() const override { return &m_pe; }
    /// Compute-pipe busy seconds per tile, for floorplans.
    std::vector<double> busy_per_unit() const;
    std::vector<double> unit_busy() const override { return busy_per_unit(); }

private:
    params m_p;
    pe::timing m_pe;
    std::unique_ptr<sram_bank::timing> m_sram;
    std::vector<reservation> m_pipe;
    std::vector<double> m_ideal;
    std::vector<sram_bank::state> m_banks;
    std::vector<int> m_tracks;
    double& m_macs;
    double& m_vector_ops;
    double& m_bytes;
    double m_written = 0;  // of m_bytes, the bytes written (the rest were read)
    std::array<double, dtype_count> m_macs_by_type{};
    work m_last;  // the last compute step's work (what its timing depends on) and its timing
    bool m_last_valid = false;
    tick m_last_ticks = 0;
    double m_last_ideal = 0;
};

}  // namespace tessel
