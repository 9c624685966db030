#include "models/interconnect/mesh_noc.h"

#include <algorithm>
#include <cstdlib>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void mesh_noc::routing_params::declare(param_decl& d) {
    d.choice(impl, "impl", "xy", {"xy", "yx"}, "dimension-order routing: xy (x first) or yx (y first)");
}

void mesh_noc::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "router clock (default: the platform clock)");
    d(width, "width", required, "routers along x", bound::positive);
    d(height, "height", required, "routers along y", bound::positive);
    d(link_bandwidth, "link_bandwidth", "32B/cycle", "bandwidth of one link in one direction");
    d(router_latency, "router_latency", "2cycles", "router pipeline latency per hop");
    d(link_latency, "link_latency", "1cycle", "wire latency per hop");
    packets.declare(d, "256B", "16B", "8");
    d.group(routing, "routing", "routing policy");
    d.choice(representation, "representation", "arrays", {"arrays", "modules"},
             "arrays: link state in flat arrays (any size); modules: one router sc_module per node (small meshes)");
}

mesh_noc::mesh_noc(sc_core::sc_module_name n, const component_args& a)
    : interconnect(n, a),
      m_packets(stats().scalar("packets", "packet", "packets delivered")),
      m_bytes(stats().scalar("payload_bytes", "B", "payload bytes delivered")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_bps = m_p.link_bandwidth.bytes_per_second(clock());
    m_router = m_p.router_latency.to_ticks(clock());
    m_wire = m_p.link_latency.to_ticks(clock());
    m_x_first = m_p.routing.impl == "xy";
    const size_t nodes = static_cast<size_t>(m_p.width * m_p.height);
    if (nodes > 100000000) throw input_error("component '" + a.config_path + "' (mesh_noc): mesh too large", a.where);
    m_inject.resize(nodes);
    m_inject_bytes.assign(nodes, 0.0);
    m_inject_tracks.assign(nodes, -2);
    if (m_p.representation == "modules") {
        if (nodes > 16384)
            throw input_error("component '" + a.config_path + "' (mesh_noc): representation 'modules' builds one "
                              "module per router; use 'arrays' for meshes over 16384 routers",
                              a.where);
        for (int y = 0; y < m_p.height; ++y)
            for (int x = 0; x < m_p.width; ++x) {
                const std::string rn = "router[" + std::to_string(x) + "," + std::to_string(y) + "]";
                m_routers.push_back(std::make_unique<mesh_router>(rn.c_str(), *this, x, y));
            }
        auto at = [&](int x, int y) { return m_routers[static_cast<size_t>(y * m_p.width + x)].get(); };
        for (int y = 0; y < m_p.height; ++y)
            for (int x = 0; x < m_p.width; ++x) {
                mesh_router* r = at(x, y);
                // Unused edge sockets are bound to the router itself so SystemC elaboration stays complete.
                r->out[mesh_router::east]->bind(x + 1 < m_p.width ? at(x + 1, y)->in : r->in);
                r->out[mesh_router::west]->bind(x > 0 ? at(x - 1, y)->in : r->in);
                r->out[mesh_router::north]->bind(y + 1 < m_p.height ? at(x, y + 1)->in : r->in);
                r->out[mesh_router::south]->bind(y > 0 ? at(x, y - 1)->in : r->in);
                const std::string sn = "to_router[" + std::to_string(x) + "," + std::to_string(y) + "]";
                m_to_router.push_back(std::make_unique<tlm_utils::simple_initiator_socket<mesh_noc>>(sn.c_str()));
                m_to_router.back()->bind(r->in);
            }
    } else {
        m_links.resize(nodes * 5);
        m_link_bytes.assign(nodes * 5, 0.0);
        m_link_tracks.assign(nodes * 5, -2);
    }
    stats().formula("link_bandwidth", "B/s", "bandwidth of one link", [this](double) { return m_bps; });
    stats().formula("max_link_utilisation", "1", "busiest link's bytes over what it could carry", [this](double s) {
        const auto b = link_bytes();
        const double worst = b.empty() ? 0.0 : *std::max_element(b.begin(), b.end());
        return s > 0 ? worst / (m_bps * s) : 0.0;
    });
    stats().formula("mean_link_utilisation", "1", "average over all links of bytes over capacity", [this](double s) {
        const auto b = link_bytes();
        double sum = 0;
        for (double x : b) sum += x;
        return s > 0 && !b.empty() ? sum / static_cast<double>(b.size()) / (m_bps * s) : 0.0;
    });
    stats().vector("link_bytes", "B", "bytes per link (node-major: east, west, north, south, eject)",
                   [this](double) { return link_bytes(); });
}

mesh_noc::~mesh_noc() = default;

int mesh_noc::hops(std::uint32_t from, std::uint32_t to) const {
    const int w = static_cast<int>(m_p.width);
    const int fx = static_cast<int>(from) % w, fy = static_cast<int>(from) / w;
    const int tx = static_cast<int>(to) % w, ty = static_cast<int>(to) / w;
    return std::abs(fx - tx) + std::abs(fy - ty);
}

int mesh_noc::next_direction(int x, int y, int dx, int dy) const {
    if (m_x_first) {
        if (dx > x) return mesh_router::east;
        if (dx < x) return mesh_router::west;
    }
    if (dy > y) return mesh_router::north;
    if (dy < y) return mesh_router::south;
    if (dx > x) return mesh_router::east;
    if (dx < x) return mesh_router::west;
    return mesh_router::local;
}

int mesh_noc::link_track(int node, int dir) {
    static const char* names[5] = {"east", "west", "north", "south", "eject"};
    const int w = static_cast<int>(m_p.width);
    return trace_track("link[" + std::to_string(node % w) + "," + std::to_string(node / w) + "]." + names[dir]);
}

void mesh_noc::route_arrays(txn& t, std::uint64_t wire) {
    const int w = static_cast<int>(m_p.width);
    int x = static_cast<int>(t.src_port) % w, y = static_cast<int>(t.src_port) / w;
    const int dx = static_cast<int>(t.dst_port) % w, dy = static_cast<int>(t.dst_port) / w;
    const tick ser = ser_ticks(wire);
    for (;;) {
        const int dir = next_direction(x, y, dx, dy);
        const size_t l = static_cast<size_t>((y * w + x) * 5 + dir);
        link_hop::pass(m_links[l], m_link_bytes[l], wire, ser, m_router, m_wire, t.head, t.tail);
        if (sim().trace.enabled()) {
            if (m_link_tracks[l] == -2) m_link_tracks[l] = link_track(y * w + x, dir);
            sim().trace.slice(m_link_tracks[l], t.head - m_wire, t.tail - m_wire, t.op, t.step);
        }
        if (dir == mesh_router::local) return;
        if (dir == mesh_router::east) ++x;
        else if (dir == mesh_router::west) --x;
        else if (dir == mesh_router::north) ++y;
        else --y;
    }
}

void mesh_noc::transport(txn& t) {
    const std::uint64_t wire = t.bytes + header_bytes();
    const size_t src = t.src_port;
    // Network interface to router: the injection link.
    link_hop::pass(m_inject[src], m_inject_bytes[src], wire, ser_ticks(wire), 0, m_wire, t.head, t.tail);
    if (sim().trace.enabled()) {
        if (m_inject_tracks[src] == -2) {
            const int w = static_cast<int>(m_p.width);
            m_inject_tracks[src] = trace_track("link[" + std::to_string(static_cast<int>(src) % w) + "," +
                                               std::to_string(static_cast<int>(src) / w) + "].inject");
        }
        sim().trace.slice(m_inject_tracks[src], t.head - m_wire, t.tail - m_wire, t.op, t.step);
    }
    if (m_routers.empty()) {
        route_arrays(t, wire);
    } else {
        borrowed_payload p(t);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        (*m_to_router[src])->b_transport(p.gp(), delay);
    }
    m_packets += 1;
    m_bytes += static_cast<double>(t.bytes);
}

std::vector<double> mesh_noc::link_bytes() const {
    if (m_routers.empty()) return m_link_bytes;
    std::vector<double> out;
    out.reserve(m_routers.size() * 5);
    for (const auto& r : m_routers) out.insert(out.end(), r->link_bytes.begin(), r->link_bytes.end());
    return out;
}

void mesh_noc::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_bps);
    for (size_t i = 0; i < m_inject.size(); ++i) add_link(u, m_inject_bytes[i], m_inject[i].busy);
    if (m_routers.empty()) {
        for (size_t i = 0; i < m_links.size(); ++i) add_link(u, m_link_bytes[i], m_links[i].busy);
    } else {
        for (const auto& r : m_routers)
            for (size_t d = 0; d < 5; ++d) add_link(u, r->link_bytes[d], r->links[d].busy);
    }
    out.push_back(u);
}

TESSEL_REGISTER_KIND([] {
    auto k = make_kind<mesh_noc>("mesh_noc", "interconnect",
                                 "2D mesh NoC: dimension-order routing, per-hop router and wire latency, link "
                                 "bandwidth, packetisation; data-oriented arrays or one router module per node");
    k.stats = {{"packets", "packet", "packets delivered"}, {"payload_bytes", "B", "payload bytes delivered"},
               {"max_link_utilisation", "1", "busiest link's bytes / capacity"},
               {"mean_link_utilisation", "1", "mean over links of bytes / capacity"},
               {"link_bytes", "B", "per-link bytes (with --stats-per-unit)"}};
    return k;
}());

}  // namespace tessel
