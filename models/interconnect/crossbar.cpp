#include "models/interconnect/crossbar.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void crossbar::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "crossbar clock (default: the platform clock)");
    d(ports, "ports", required, "ports (each both an input and an output)", bound::positive);
    d(port_bandwidth, "port_bandwidth", "64B/cycle", "bandwidth of one port in one direction");
    d(latency, "latency", "4cycles", "traversal latency, input to output");
    packets.declare(d, "256B", "16B", "8");
    declare_energy(d, energy, energy_45nm::noc);
}

std::vector<stat_decl> crossbar::stat_table() {
    return {
        {"packets", "packet", "packets delivered"},
    };
}

crossbar::crossbar(sc_core::sc_module_name n, const component_args& a)
    : interconnect(n, a), m_packets(stats().scalar("packets")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_bps = m_p.port_bandwidth.bytes_per_second(clock());
    m_latency = m_p.latency.to_ticks(clock());
    const size_t n_ports = static_cast<size_t>(m_p.ports);
    m_in.resize(n_ports);
    m_out.resize(n_ports);
    m_in_bytes.assign(n_ports, 0.0);
    m_out_bytes.assign(n_ports, 0.0);
    m_tracks.assign(n_ports, -2);
}

void crossbar::transport(txn& t) {
    const std::uint64_t wire = t.bytes + header_bytes();
    const tick ser = transfer_ticks(static_cast<double>(wire), m_bps);
    // Two links: the input port (hop 0), then the output port after the traversal latency (hop 1).
    if (t.hop == 0) {
        cross(t, m_p.energy, m_in[t.src_port], m_in_bytes[t.src_port], wire, ser, 0, 0, t.head, t.tail);
        t.hop = 1;
        return;
    }
    cross(t, m_p.energy, m_out[t.dst_port], m_out_bytes[t.dst_port], wire, ser, m_latency, 0, t.head, t.tail);
    if (sim().trace.enabled()) {
        if (m_tracks[t.dst_port] == -2) m_tracks[t.dst_port] = trace_track("out[" + std::to_string(t.dst_port) + "]");
        sim().trace.slice(m_tracks[t.dst_port], t.head, t.tail, t.op, t.step);
    }
    m_packets += 1;
    t.hop = txn::arrived;
}

void crossbar::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_bps);
    for (size_t i = 0; i < m_in.size(); ++i) {
        add_link(u, m_in_bytes[i], m_in[i].busy);
        add_link(u, m_out_bytes[i], m_out[i].busy);
    }
    charge_links(u, m_p.energy);
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<crossbar>("crossbar", "interconnect",
                                         "single-hop crossbar: input and output ports as busy-until reservations"));

}  // namespace tessel
