// `rdu_pmu`: a Pattern Memory Unit of a reconfigurable dataflow unit: a programmer-managed banked scratchpad
// (Plasticine: 16 banks of 16 KiB; SN10/SN40L: 0.5 MB) with an address-generation pipeline. An access occupies,
// in each bank it touches, one port for its bytes there at the bank bandwidth (the rules of `sram_bank`, whose
// timing it reuses), and the address pipeline for one address per `access_bytes` at `addresses_per_cycle`
// (SN40L: 4 addresses per cycle). It ends when both are done, plus the access latency.
// Capacity is enforced by the mapper (it never places more on a PMU than `capacity`), not per access.
// Leaves out: the scalar address datapath's instruction timing, the data-alignment crossbars (transposes are
// counted as streams through the PMU), read/write turnaround, ECC.
#pragma once

#include <memory>

#include "models/memory/sram_bank.h"

namespace tessel {

class rdu_pmu : public component {
public:
    struct params {
        sram_bank::params scratchpad;  // the bank parameters, at the top level of `params:`
        std::int64_t addresses_per_cycle = 0;
        byte_size access_bytes;
        byte_size config_bytes;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    rdu_pmu(const sc_core::sc_module_name& name, const component_args& args);

    bool has_role(role r) const override { return r == role::memory; }
    std::uint64_t capacity_bytes() const override { return m_p.scratchpad.capacity.bytes(); }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    /// Mean time the bank ports were reserved (per port), for floorplans of the PMU grid.
    std::vector<double> unit_busy() const override;
    std::uint64_t config_bytes() const override { return m_p.config_bytes.bytes(); }
    /// Peak bytes per second through the banks (all banks and ports).
    double peak_bytes_per_second() const override;

private:
    params m_p;
    std::shared_ptr<const sram_bank::timing> m_banks;
    sram_bank::state m_state;
    reservation m_agen;
    double m_agen_addresses = 0;
    tick m_addr_ticks = 0;  // one address pipeline slot
    int m_track = -1;
    double& m_read_bytes;
    double& m_write_bytes;
    double& m_accesses;
};

}  // namespace tessel
