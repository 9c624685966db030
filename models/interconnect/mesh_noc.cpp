#include "models/interconnect/mesh_noc.h"
#include "models/core/limits.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void mesh_noc::routing_params::declare(param_decl& d) {
    declare_policy(d, impl, policy, "xy", "which way a head turns at each router (`tessel describe NAME`)");
}

void mesh_noc::flow_control_params::declare(param_decl& d) {
    declare_policy(d, impl, policy, "ideal", "how links and buffers hold packets (`tessel describe NAME`)");
    d(buffer_flits, "buffer_flits", "4", "credit: flits of buffer per virtual channel of each input port",
      bound::positive);
    d(vcs, "vcs", "2", "credit: virtual channels per input port (1 to 8)", bound::positive);
    d.choice(switching, "switching", "wormhole", {"wormhole", "virtual_cut_through"},
             "credit: wormhole (a head goes with one free slot downstream) or virtual_cut_through (only when the "
             "whole packet fits)");
}

void mesh_noc::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "router clock (default: the platform clock)");
    d(width, "width", required, "routers along x", bound::positive);
    d(height, "height", required, "routers along y", bound::positive);
    if (!d.describing())
        require_units(static_cast<double>(width) * static_cast<double>(height),
                      "a mesh_noc of " + std::to_string(width) + " x " + std::to_string(height) + " routers");
    d(link_bandwidth, "link_bandwidth", "32B/cycle", "bandwidth of one link in one direction");
    d(router_latency, "router_latency", "2cycles", "router pipeline latency per hop");
    d(link_latency, "link_latency", "1cycle", "wire latency per hop");
    packets.declare(d, "256B", "16B", "8");
    declare_energy(d, energy, energy_45nm::noc);
    d.group(routing, "routing", "routing policy");
    d.group(flow_control, "flow_control", "flow control: ideal or credit-based with finite buffers");
    d.choice(representation, "representation", "arrays", {"arrays", "modules"},
             "arrays: link state in flat arrays (any size); modules: one router sc_module per node (small meshes)");
}

std::vector<stat_decl> mesh_noc::stat_table() {
    return {
        {"packets", "packet", "packets delivered"},
        {"payload_bytes", "B", "payload bytes delivered"},
        {"link_bandwidth", "B/s", "bandwidth of one link"},
        {"max_link_utilisation", "1", "busiest link's bytes over what it could carry"},
        {"mean_link_utilisation", "1", "average over all links of bytes over capacity"},
        {"link_bytes", "B", "bytes per link (node-major: east, west, north, south, eject)", stat_shape::per_unit},
    };
}

mesh_noc::mesh_noc(sc_core::sc_module_name n, const component_args& a)
    : interconnect(n, a), m_packets(stats().scalar("packets")), m_bytes(stats().scalar("payload_bytes")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_header = header_bytes();
    m_bps = m_p.link_bandwidth.bytes_per_second(clock());
    m_router = m_p.router_latency.to_ticks(clock());
    m_wire = m_p.link_latency.to_ticks(clock());
    const size_t nodes = static_cast<size_t>(m_p.width * m_p.height);
    if (nodes > 100000000) throw input_error("component '" + a.config_path + "' (mesh_noc): mesh too large", a.where);
    m_nodes = nodes;
    if (m_p.representation == "modules") {
        m_inject.resize(nodes);
        m_inject_tracks.assign(nodes, -2);
        if (nodes > 16384)
            throw input_error("component '" + a.config_path +
                                  "' (mesh_noc): representation 'modules' builds one "
                                  "module per router; use 'arrays' for meshes over 16384 routers",
                              a.where);
        for (int y = 0; y < m_p.height; ++y)
            for (int x = 0; x < m_p.width; ++x) {
                const std::string rn = "router[" + std::to_string(x) + "," + std::to_string(y) + "]";
                m_routers.push_back(std::make_unique<mesh_router>(rn.c_str(), *this, x, y));
            }
        for (size_t i = 0; i < nodes; ++i) {
            const std::string sn = "to_router[" + std::to_string(i % static_cast<size_t>(m_p.width)) + "," +
                                   std::to_string(i / static_cast<size_t>(m_p.width)) + "]";
            m_to_router.push_back(std::make_unique<tlm_utils::simple_initiator_socket<mesh_noc>>(sn.c_str()));
            m_to_router.back()->bind(m_routers[i]->in);
        }
    }
    m_flow = m_p.flow_control.policy->make_engine(*this, a);
    // An engine works on the link arrays from the start; otherwise they are made by the first packet: a wafer
    // that a system's representative chip stands for never carries one (4.5 M links, 120 MB on a WSE-2).
    if (m_flow && m_routers.empty()) allocate_links();
    stats().formula("link_bandwidth", [this](double) { return m_bps; });
    stats().formula("max_link_utilisation", [this](double s) {
        const auto b = link_bytes();
        const double worst = b.empty() ? 0.0 : *std::max_element(b.begin(), b.end());
        return s > 0 ? worst / (m_bps * s) : 0.0;
    });
    stats().formula("mean_link_utilisation", [this](double s) {
        const auto b = link_bytes();
        double sum = 0;
        for (double x : b) sum += x;
        return s > 0 && !b.empty() ? sum / static_cast<double>(b.size()) / (m_bps * s) : 0.0;
    });
    stats().per_unit("link_bytes", [this](double) { return link_bytes(); });
}

mesh_noc::~mesh_noc() = default;

void mesh_noc::wake(tick now) {
    if (m_flow) m_flow->wake(now);
}

int mesh_noc::hops(std::uint32_t from, std::uint32_t to) const {
    const int w = static_cast<int>(m_p.width);
    const int fx = static_cast<int>(from) % w, fy = static_cast<int>(from) / w;
    const int tx = static_cast<int>(to) % w, ty = static_cast<int>(to) / w;
    return std::abs(fx - tx) + std::abs(fy - ty);
}

int mesh_noc::link_track(int node, int dir) {
    static const char* names[5] = {"east", "west", "north", "south", "eject"};
    const int w = static_cast<int>(m_p.width);
    return trace_track("link[" + std::to_string(node % w) + "," + std::to_string(node / w) + "]." + names[dir]);
}

void mesh_noc::trace_link(std::size_t l, int node, int dir, tick head, tick tail, const txn& t) {
    if (m_link_tracks[l] == -2) m_link_tracks[l] = link_track(node, dir);
    sim().trace.slice(m_link_tracks[l], head - m_wire, tail - m_wire, t.op, t.step);
}

void mesh_noc::trace_inject(std::uint32_t src, tick head, tick tail, const txn& t) {
    if (m_inject_tracks[src] == -2) {
        const std::uint32_t w = static_cast<std::uint32_t>(m_p.width);
        m_inject_tracks[src] =
            trace_track("link[" + std::to_string(src % w) + "," + std::to_string(src / w) + "].inject");
    }
    sim().trace.slice(m_inject_tracks[src], head - m_wire, tail - m_wire, t.op, t.step);
}

std::uint32_t mesh_noc::neighbour_hop(int x, int y, int dir) const {
    switch (dir) {
        case mesh_dir::east:
            ++x;
            break;
        case mesh_dir::west:
            --x;
            break;
        case mesh_dir::north:
            ++y;
            break;
        case mesh_dir::south:
            --y;
            break;
        default:
            return txn::arrived;
    }
    return static_cast<std::uint32_t>(y * static_cast<int>(m_p.width) + x) + 1;
}

void mesh_noc::transport(txn& t) {
    if (m_flow) {
        m_flow->accept(t);
        return;
    }
    if (!m_routers.empty()) {
        transport_modules(t);
        return;
    }
    if (m_inject.empty()) allocate_links();
    // Arrays: the injection link at hop 0, then router after router (the output link towards the destination,
    // or the ejection link there), one link or several while the executor's horizon says nothing else can
    // reach them first. Head and tail in locals: the reservations are ticks too, so stores to them would
    // reload t's.
    const std::uint64_t wire = t.bytes + m_header;
    const tick ser = ser_ticks(wire);
    const bool tracing = sim().trace.enabled();
    tick head = t.head, tail = t.tail;
    const tick entry = head;
    // Energy: every link this call takes the packet over, spent when it leaves the call.
    const double link_joules = static_cast<double>(wire) * m_p.energy.transfer.joules();
    double crossed = 0;
    std::uint32_t node;
    if (t.hop == 0) {
        node = t.src_port;
        link_hop::pass(m_inject[node].r, m_inject[node].bytes, wire, ser, 0, m_wire, head, tail);
        crossed = 1;
        if (tracing) trace_inject(node, head, tail, t);
        if (head >= t.horizon) {
            t.hop = node + 1;
            t.head = head;
            t.tail = tail;
            spend(t, energy_part::network, link_joules, entry, tail);
            return;
        }
    } else {
        node = t.hop - 1;
    }
    const std::uint32_t w = static_cast<std::uint32_t>(m_p.width);
    const int dx = static_cast<int>(t.dst_port % w), dy = static_cast<int>(t.dst_port / w);
    int x = static_cast<int>(node % w), y = static_cast<int>(node / w);
    for (;;) {
        const int dir = next_direction(x, y, dx, dy);
        const std::size_t l = link_index(node, x, y, dir);
        link_hop::pass(m_links[l].r, m_links[l].bytes, wire, ser, m_router, m_wire, head, tail);
        crossed += 1;
        if (tracing) trace_link(l, static_cast<int>(node), dir, head, tail, t);
        switch (dir) {
            case mesh_dir::east:
                ++x, ++node;
                break;
            case mesh_dir::west:
                --x, --node;
                break;
            case mesh_dir::north:
                ++y, node += w;
                break;
            case mesh_dir::south:
                --y, node -= w;
                break;
            default:
                t.hop = txn::arrived;
                t.head = head;
                t.tail = tail;
                m_packets += 1;
                m_bytes += static_cast<double>(t.bytes);
                spend(t, energy_part::network, crossed * link_joules, entry, tail);
                return;
        }
        if (head >= t.horizon) break;
    }
    t.hop = node + 1;
    t.head = head;
    t.tail = tail;
    spend(t, energy_part::network, crossed * link_joules, entry, tail);
}

void mesh_noc::transport_modules(txn& t) {
    const std::uint64_t wire = t.bytes + m_header;
    if (t.hop == 0) {
        // Network interface to router: the injection link; the router modules take it from there, one per call.
        const std::uint32_t src = t.src_port;
        cross(t, m_p.energy, m_inject[src].r, m_inject[src].bytes, wire, ser_ticks(wire), 0, m_wire, t.head, t.tail);
        if (sim().trace.enabled()) trace_inject(src, t.head, t.tail, t);
        t.hop = src + 1;
        return;
    }
    // The head is at router (hop - 1): its output link towards the destination (or the ejection link).
    borrowed_payload p(t);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    (*m_to_router[static_cast<size_t>(t.hop - 1)])->b_transport(p.gp(), delay);
    if (t.hop == txn::arrived) {
        m_packets += 1;
        m_bytes += static_cast<double>(t.bytes);
    }
}

void mesh_noc::allocate_links() {
    m_inject.resize(m_nodes);
    m_inject_tracks.assign(m_nodes, -2);
    m_links.resize(m_nodes * 5);
    m_link_tracks.assign(m_nodes * 5, -2);
}

std::vector<double> mesh_noc::link_bytes() const {
    if (m_routers.empty()) {
        std::vector<double> out(m_nodes * 5);
        if (!m_links.empty())
            for (std::uint32_t node = 0; node < m_nodes; ++node)
                for (int dir = 0; dir < 5; ++dir)
                    out[static_cast<size_t>(node) * 5 + static_cast<size_t>(dir)] =
                        m_links[link_index(node, dir)].bytes;
        return out;
    }
    std::vector<double> out;
    out.reserve(m_routers.size() * 5);
    for (const auto& r : m_routers) out.insert(out.end(), r->link_bytes.begin(), r->link_bytes.end());
    return out;
}

void mesh_noc::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_bps);
    if (m_inject.empty()) {  // no packet crossed it: every link idle
        u.units += static_cast<double>(6 * m_nodes);
        charge_links(u, m_p.energy);
        out.push_back(u);
        return;
    }
    for (const auto& l : m_inject) add_link(u, l.bytes, l.r.busy);
    if (m_routers.empty()) {
        for (const auto& l : m_links) add_link(u, l.bytes, l.r.busy);
    } else {
        for (const auto& r : m_routers)
            for (size_t d = 0; d < 5; ++d) add_link(u, r->link_bytes[d], r->links[d].busy);
    }
    charge_links(u, m_p.energy);
    out.push_back(u);
}

TESSEL_REGISTER_KIND(
    make_kind<mesh_noc>("mesh_noc", "interconnect",
                        "2D mesh NoC: a routing policy (dimension order by default), per-hop router and wire "
                        "latency, link bandwidth, packetisation; ideal busy-until links or credit flow control with "
                        "finite buffers and virtual channels; data-oriented arrays or one router module per node"));

}  // namespace tessel
