#include "models/bsp/ipu_exchange.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void ipu_exchange::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "exchange clock (default: the platform clock)");
    d(tiles, "tiles", required, "tile ports: port t belongs to tile t", bound::positive);
    d(external_ports, "external_ports", "0",
      "ports after the tile ports, for IPU-Links and the gateway to streaming memory");
    d(tile_bandwidth, "tile_bandwidth", "4B/cycle", "bandwidth of one tile's send side, and of its receive side");
    d(external_bandwidth, "external_bandwidth", "64B/cycle", "bandwidth of one external port in each direction");
    d(latency, "latency", "30cycles", "from a word leaving the sender to it reaching the receiver");
    packets.declare(d, "1KiB", "0B", "4");
    declare_energy(d, energy, energy_45nm::noc, "energy",
                   "energy of the tile ports: a byte pays its send and its receive side");
    declare_energy(d, external_energy, serdes_link, "external_energy",
                   "energy of the external ports (IPU-Links, gateway)");
}

std::vector<stat_decl> ipu_exchange::stat_table() {
    return {
        {"packets", "packet", "messages (packets) delivered"},
        {"bytes", "B", "payload bytes exchanged"},
        {"multicast_packets", "packet", "packets that reused a send already on the exchange"},
        {"bandwidth", "B/s", "payload bytes exchanged per simulated second"},
        {"received", "B", "bytes received per port", stat_shape::per_unit},
    };
}

ipu_exchange::ipu_exchange(sc_core::sc_module_name n, const component_args& a)
    : interconnect(n, a),
      m_packets(stats().scalar("packets")),
      m_bytes(stats().scalar("bytes")),
      m_multicast(stats().scalar("multicast_packets")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    set_packets(m_p.packets);
    m_tile_bps = m_p.tile_bandwidth.bytes_per_second(clock());
    m_ext_bps = m_p.external_bandwidth.bytes_per_second(clock());
    if (m_tile_bps <= 0 || (m_p.external_ports > 0 && m_ext_bps <= 0))
        throw input_error("component '" + a.config_path + "' (ipu_exchange): bandwidths must be positive", a.where);
    m_latency = m_p.latency.to_ticks(clock());
    const size_t ports = static_cast<size_t>(m_p.tiles + m_p.external_ports);
    m_send.resize(ports);
    m_recv.resize(ports);
    m_send_bytes.assign(ports, 0.0);
    m_recv_bytes.assign(ports, 0.0);
    m_tracks.assign(ports, -2);
    m_last.resize(ports);
    stats().formula("bandwidth", [this](double s) { return s > 0 ? m_bytes / s : 0.0; });
    stats().per_unit("received", [this](double) { return m_recv_bytes; });
}

void ipu_exchange::transport(txn& t) {
    const std::uint32_t ports = static_cast<std::uint32_t>(m_send.size());
    if (t.src_port >= ports || t.dst_port >= ports) throw std::logic_error(path() + ": port out of range");
    const std::uint64_t wire = t.bytes + header_bytes();
    const tick ser_out = transfer_ticks(static_cast<double>(wire), port_bps(t.src_port));
    const tick ser_in = transfer_ticks(static_cast<double>(wire), port_bps(t.dst_port));
    if (t.hop == 0) {
        send_side(t, wire, ser_out);
        t.hop = 1;
        return;
    }
    cross(t, energy_of(t.dst_port), m_recv[t.dst_port], m_recv_bytes[t.dst_port], wire, ser_in, m_latency, 0, t.head,
          t.tail);
    if (sim().trace.enabled()) {
        int& tr = m_tracks[t.dst_port];
        if (tr == -2) tr = trace_track("rx[" + std::to_string(t.dst_port) + "]");
        sim().trace.slice(tr, t.head, t.tail, t.op, t.step);
    }
    m_packets += 1;
    m_bytes += static_cast<double>(t.bytes);
    t.hop = txn::arrived;
}

void ipu_exchange::send_side(txn& t, std::uint64_t wire, tick ser_out) {
    last_send& ls = m_last[t.src_port];
    if (ls.address == t.address && ls.bytes == t.bytes && ls.head_in == t.head && ls.tail_in == t.tail) {
        t.head = ls.head;  // another receiver of the same message: the send side is already taken
        t.tail = ls.tail;
        m_multicast += 1;
    } else {
        ls.address = t.address;
        ls.bytes = t.bytes;
        ls.head_in = t.head;
        ls.tail_in = t.tail;
        cross(t, energy_of(t.src_port), m_send[t.src_port], m_send_bytes[t.src_port], wire, ser_out, 0, 0, t.head,
              t.tail);
        ls.head = t.head;
        ls.tail = t.tail;
    }
}

tick ipu_exchange::coarse_phase(const txn& t, const bsp_superstep::tile_share& s, tick start) {
    const std::uint32_t p = s.tile;
    if (p >= m_p.tiles)
        throw input_error(path() + ": step " + std::to_string(t.step) + "'s superstep names tile " + std::to_string(p) +
                          "; the exchange has " + std::to_string(m_p.tiles) + " tile ports");
    const double header = static_cast<double>(header_bytes());
    if (s.send_packets > 0) {
        const double wire = s.send_bytes + header * s.send_packets;
        const tick ser = transfer_ticks(wire, m_tile_bps);
        const tick begin = m_send[p].reserve(start, ser);
        m_send_bytes[p] += wire;
        spend(t, energy_part::network, wire * m_p.energy.transfer.joules(), begin, begin + ser);
    }
    if (s.recv_packets == 0) return start;
    const double wire = s.recv_bytes + header * s.recv_packets;
    const tick ser = transfer_ticks(wire, m_tile_bps);
    const tick begin = m_recv[p].reserve(start + m_latency, ser);
    tick end = begin + ser;
    const tick sender_done = start + m_latency + transfer_ticks(s.sender_bytes + header * s.sender_packets, m_tile_bps);
    if (sender_done > end) {
        end = sender_done;
        m_recv[p].free_at = std::max(m_recv[p].free_at, end);
    }
    m_recv_bytes[p] += wire;
    spend(t, energy_part::network, wire * m_p.energy.transfer.joules(), begin, end);
    if (sim().trace.enabled()) {
        int& tr = m_tracks[p];
        if (tr == -2) tr = trace_track("rx[" + std::to_string(p) + "]");
        sim().trace.slice(tr, begin, end, t.op, t.step);
    }
    m_packets += s.recv_packets;
    m_bytes += s.recv_bytes;
    // Receptions beyond the sends are multicast copies (summed over the superstep's tiles: the fine form's count).
    m_multicast += static_cast<double>(s.recv_packets) - static_cast<double>(s.send_packets);
    return end;
}

void ipu_exchange::usage(std::vector<resource_usage>& out) const {
    resource_usage u = link_usage(m_tile_bps);
    u.name = path() + ".tiles";
    for (std::uint32_t p = 0; p < m_p.tiles; ++p) {
        add_link(u, m_send_bytes[p], m_send[p].busy);
        add_link(u, m_recv_bytes[p], m_recv[p].busy);
    }
    charge_links(u, m_p.energy);
    out.push_back(u);
    if (m_p.external_ports > 0) {
        resource_usage e = link_usage(m_ext_bps);
        e.name = path() + ".external";
        for (size_t p = static_cast<size_t>(m_p.tiles); p < m_send.size(); ++p) {
            add_link(e, m_send_bytes[p], m_send[p].busy);
            add_link(e, m_recv_bytes[p], m_recv[p].busy);
        }
        charge_links(e, m_p.external_energy);
        out.push_back(e);
    }
}

TESSEL_REGISTER_KIND(
    make_kind<ipu_exchange>("ipu_exchange", "interconnect",
                            "IPU exchange: all-to-all, one send and one receive side per tile, plus external "
                            "ports for IPU-Links and streaming memory"));

}  // namespace tessel
