// `chip_link`: a point-to-point link between two chips (NVLink, IPU-Link, a CS system's fabric port):
// two ports, a number of lanes of a given bandwidth in each direction, a latency. Connected port to port
// between two networks it is the bridge that multi-chip routes cross. Leaves out: link-layer retries, credits.
#pragma once

#include "models/interconnect/interconnect.h"

namespace tessel {

class chip_link : public interconnect {
public:
    struct params {
        frequency clock;
        std::int64_t lanes = 0;
        bandwidth lane_bandwidth;
        duration latency;
        packet_params packets;
        link_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    chip_link(sc_core::sc_module_name name, const component_args& args);

    std::vector<int> port_shape() const override { return {2}; }
    int hops(std::uint32_t from, std::uint32_t to) const override { return from == to ? 0 : 1; }
    double link_bytes_per_second() const override { return m_bps; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

private:
    params m_p;
    double m_bps = 0;
    tick m_latency = 0;
    reservation m_dir[2];
    double m_bytes[2] = {0, 0};
    int m_tracks[2] = {-1, -1};
};

}  // namespace tessel
