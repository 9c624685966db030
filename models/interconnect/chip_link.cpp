#include "models/interconnect/chip_link.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void chip_link::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "link clock (for latencies given in cycles)");
    d(lanes, "lanes", "1", "lanes (or links) ganged together", bound::positive);
    d(lane_bandwidth, "lane_bandwidth", "64GB/s", "bandwidth of one lane in one direction");
    d(latency, "latency", "500ns", "one-way latency");
    packets.declare(d, "4KiB", "64B", "16");
    declare_energy(d, energy, serdes_link);
}

std::vector<stat_decl> chip_link::stat_table() {
    return {
        {"bytes_a_to_b", "B", "bytes sent from port 0 to port 1"},
        {"bytes_b_to_a", "B", "bytes sent from port 1 to port 0"},
    };
}

chip_link::chip_link(sc_core::sc_module_name n, const component_args& a) : interconnect(n, a) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_bps = m_p.lane_bandwidth.bytes_per_second(clock()) * static_cast<double>(m_p.lanes);
    m_latency = m_p.latency.to_ticks(clock());
    m_tracks[0] = trace_track("a_to_b");
    m_tracks[1] = trace_track("b_to_a");
    stats().formula("bytes_a_to_b", [this](double) { return m_bytes[0]; });
    stats().formula("bytes_b_to_a", [this](double) { return m_bytes[1]; });
}

void chip_link::transport(txn& t) {
    const int d = t.src_port == 0 ? 0 : 1;
    const std::uint64_t wire = t.bytes + header_bytes();
    cross(t, m_p.energy, m_dir[d], m_bytes[d], wire, transfer_ticks(static_cast<double>(wire), m_bps), 0, m_latency,
          t.head, t.tail);
    sim().trace.slice(m_tracks[d], t.head - m_latency, t.tail - m_latency, t.op, t.step);
    t.hop = txn::arrived;
}

void chip_link::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_bps);
    for (int d = 0; d < 2; ++d) add_link(u, m_bytes[d], m_dir[d].busy);
    charge_links(u, m_p.energy);
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<chip_link>("chip_link", "interconnect",
                                          "chip-to-chip link: lanes x lane bandwidth per direction, one-way latency"));

}  // namespace tessel
