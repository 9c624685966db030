// `rdu_agcu`: the address generation and coalescing units of a reconfigurable dataflow unit, its portals to
// off-chip memory. Its units (one per AGCU) sit on the edge of the switch mesh; each is a DMA engine that turns
// a stream of on-chip reads or writes into DRAM requests. The memories behind it are named in `memory`, in
// address order: the first spans addresses [0, its capacity), the next follows (SN40L: HBM, then DDR), so one
// address space covers every tier. A transfer from (or to) an AGCU unit with a DRAM address is an off-chip
// load (or store): the unit's coalescer takes the bytes at its bandwidth while the memory serves them (the
// slower decides), plus the unit's latency. It reaches the memories through TLM sockets bound at construction,
// so the memories must be declared before it in the platform file.
// Leaves out: host and peer-to-peer traffic, address translation, request reordering across units.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <memory>

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class rdu_agcu : public component {
public:
    struct params {
        frequency clock;
        std::int64_t count = 0;
        std::string memory;
        bandwidth unit_bandwidth;
        duration latency;
        link_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    /// One memory tier behind the AGCUs.
    using tier = memory_tier;

    rdu_agcu(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::memory; }
    std::vector<int> unit_shape() const override { return {static_cast<int>(m_p.count)}; }
    std::uint64_t capacity_bytes() const override;
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    const std::vector<tier>& tiers() const { return m_tiers; }
    const std::vector<memory_tier>& memory_tiers() const override { return m_tiers; }
    /// The coalescer issues row-aligned requests, whatever the packet size of the mesh.
    bool aligns_bursts() const override { return true; }
    /// Bytes per second one AGCU unit moves.
    double unit_bytes_per_second() const override { return m_bps; }

private:
    params m_p;
    std::vector<tier> m_tiers;
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<rdu_agcu>>> m_to_memory;
    std::vector<reservation> m_units;
    std::vector<double> m_unit_bytes;
    std::vector<int> m_tracks;
    double m_bps = 0;
    double m_fs_per_byte = 0;
    tick m_latency = 0;
    txn_payload m_forward;
    double& m_read_bytes;
    double& m_write_bytes;
};

}  // namespace tessel
