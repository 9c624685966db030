#include "models/interconnect/ring.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void ring::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "router clock (default: the platform clock)");
    d(nodes, "nodes", required, "nodes on the ring", bound::positive);
    d(bidirectional, "bidirectional", "true", "links in both directions (else clockwise only)");
    d(link_bandwidth, "link_bandwidth", "32B/cycle", "bandwidth of one link in one direction");
    d(router_latency, "router_latency", "1cycle", "router latency per hop");
    d(link_latency, "link_latency", "1cycle", "wire latency per hop");
    packets.declare(d, "256B", "16B", "8");
    declare_energy(d, energy, energy_45nm::noc);
}

std::vector<stat_decl> ring::stat_table() {
    return {
        {"packets", "packet", "packets delivered"},
    };
}

ring::ring(sc_core::sc_module_name n, const component_args& a)
    : interconnect(n, a), m_packets(stats().scalar("packets")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_bps = m_p.link_bandwidth.bytes_per_second(clock());
    m_router = m_p.router_latency.to_ticks(clock());
    m_wire = m_p.link_latency.to_ticks(clock());
    m_links.resize(static_cast<size_t>(m_p.nodes) * 4);
    m_bytes.assign(m_links.size(), 0.0);
    m_tracks.assign(m_links.size(), -2);
}

int ring::hops(std::uint32_t from, std::uint32_t to) const {
    const int n = static_cast<int>(m_p.nodes);
    const int cw = (static_cast<int>(to) - static_cast<int>(from) + n) % n;
    return m_p.bidirectional ? std::min(cw, n - cw) : cw;
}

void ring::transport(txn& t) {
    static const char* names[4] = {"cw", "ccw", "inject", "eject"};
    const int n = static_cast<int>(m_p.nodes);
    const std::uint64_t wire = t.bytes + header_bytes();
    const tick ser = transfer_ticks(static_cast<double>(wire), m_bps);
    auto hop = [&](int node, int which, tick pipeline) {
        const size_t l = static_cast<size_t>(node * 4 + which);
        cross(t, m_p.energy, m_links[l], m_bytes[l], wire, ser, pipeline, m_wire, t.head, t.tail);
        if (sim().trace.enabled()) {
            if (m_tracks[l] == -2) m_tracks[l] = trace_track("link[" + std::to_string(node) + "]." + names[which]);
            sim().trace.slice(m_tracks[l], t.head - m_wire, t.tail - m_wire, t.op, t.step);
        }
    };
    // Positions: 0 at the source's interface (injection link), node + 1 at that node's router (the link
    // towards the destination, or the ejection link once there).
    const int to = static_cast<int>(t.dst_port);
    if (t.hop == 0) {
        hop(static_cast<int>(t.src_port), 2, 0);
        t.hop = t.src_port + 1;
        return;
    }
    const int at = static_cast<int>(t.hop) - 1;
    if (at == to) {
        hop(at, 3, m_router);
        t.hop = txn::arrived;
        m_packets += 1;
        return;
    }
    const int from = static_cast<int>(t.src_port);
    const int cw = (to - from + n) % n;
    const bool clockwise = !m_p.bidirectional || cw <= n - cw;
    hop(at, clockwise ? 0 : 1, m_router);
    t.hop = static_cast<std::uint32_t>(clockwise ? (at + 1) % n : (at - 1 + n) % n) + 1;
}

void ring::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_bps);
    for (size_t i = 0; i < m_links.size(); ++i) add_link(u, m_bytes[i], m_links[i].busy);
    charge_links(u, m_p.energy);
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<ring>("ring", "interconnect",
                                     "ring network: shortest-direction routing, per-hop latency, busy-until links"));

}  // namespace tessel
