// `ring`: nodes on a ring, each joined to the next by a link in each direction (or one direction only).
// A packet takes the shorter way round (clockwise on a tie); each hop is a router latency, a busy-until link
// reservation and a wire latency, as on the mesh. Leaves out: bubble flow control, ring slotting.
#pragma once

#include "models/interconnect/interconnect.h"

namespace tessel {

class ring : public interconnect {
public:
    struct params {
        frequency clock;
        std::int64_t nodes = 0;
        bool bidirectional = true;
        bandwidth link_bandwidth;
        duration router_latency, link_latency;
        packet_params packets;
        link_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    ring(sc_core::sc_module_name name, const component_args& args);

    std::vector<int> port_shape() const override { return {static_cast<int>(m_p.nodes)}; }
    int hops(std::uint32_t from, std::uint32_t to) const override;
    double link_bytes_per_second() const override { return m_bps; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

private:
    params m_p;
    double m_bps = 0;
    tick m_router = 0, m_wire = 0;
    // Per node: [0] clockwise out, [1] counter-clockwise out, [2] inject, [3] eject.
    std::vector<reservation> m_links;
    std::vector<double> m_bytes;
    std::vector<int> m_tracks;
    double& m_packets;
};

}  // namespace tessel
