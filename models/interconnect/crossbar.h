// `crossbar`: every input port reaches every output port in one hop. A packet holds its input port and then
// its output port for (wire bytes / port bandwidth); two packets to one output serialise (output contention),
// packets between disjoint port pairs do not interact. Leaves out: head-of-line blocking, arbitration fairness.
#pragma once

#include "models/interconnect/interconnect.h"

namespace tessel {

class crossbar : public interconnect {
public:
    struct params {
        frequency clock;
        std::int64_t ports = 0;
        bandwidth port_bandwidth;
        duration latency;
        packet_params packets;
        link_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    crossbar(sc_core::sc_module_name name, const component_args& args);

    std::vector<int> port_shape() const override { return {static_cast<int>(m_p.ports)}; }
    int hops(std::uint32_t from, std::uint32_t to) const override { return from == to ? 0 : 1; }
    double link_bytes_per_second() const override { return m_bps; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

private:
    params m_p;
    double m_bps = 0;
    tick m_latency = 0;
    std::vector<reservation> m_in, m_out;
    std::vector<double> m_in_bytes, m_out_bytes;
    std::vector<int> m_tracks;
    double& m_packets;
};

}  // namespace tessel
