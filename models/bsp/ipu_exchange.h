// `ipu_exchange`: the IPU's on-chip exchange fabric. Every tile has a port with a send and a receive side of
// `tile_bandwidth` each; any tile reaches any other in one hop after `latency` (all-to-all), so the exchange
// phase of a superstep lasts as long as the busiest sender or receiver needs. Extra `external_ports` (of
// `external_bandwidth`) join the exchange to IPU-Links and to the gateway in front of streaming memory.
// The exchange is compiled: in hardware no two senders collide at a receiver because the compiler staggers them;
// here a receive side serves one packet at a time, which gives the same time for a well-staggered schedule.
// Multicast: a packet with the same source address and size as the previous packet of its sender, arriving at
// the same time, is the same message heard by another receiver: the send side is taken once (the IPU exchange
// lets many tiles listen to one sender). Leaves out: the distance dependence of latency across the die, the ~24%
// latency rise under load that Jia et al. measure.
#pragma once

#include "models/bsp/bsp_superstep.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

class ipu_exchange : public interconnect {
public:
    struct params {
        frequency clock;
        std::int64_t tiles = 0;
        std::int64_t external_ports = 0;
        bandwidth tile_bandwidth;
        bandwidth external_bandwidth;
        duration latency;
        packet_params packets;
        link_energy energy, external_energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    ipu_exchange(sc_core::sc_module_name name, const component_args& args);

    std::vector<int> port_shape() const override { return {static_cast<int>(m_p.tiles + m_p.external_ports)}; }
    int hops(std::uint32_t from, std::uint32_t to) const override { return from == to ? 0 : 1; }
    double link_bytes_per_second() const override { return m_tile_bps; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    double tile_bytes_per_second() const { return m_tile_bps; }
    double external_bytes_per_second() const { return m_ext_bps; }
    tick latency_ticks() const { return m_latency; }
    double port_bytes_per_second(std::uint32_t port) const override { return port_bps(port); }
    tick transfer_latency_ticks() const override { return m_latency; }
    std::uint32_t tile_ports() const { return static_cast<std::uint32_t>(m_p.tiles); }

    /// One tile's exchange phase in a coarse superstep (bsp_superstep.h) that begins at `start` (called by the
    /// tiles running it): its send side takes its bytes from `start`, its receive side its bytes from `start` +
    /// latency, and its last byte is in no sooner than its busiest sender can send all of its own. Returns when the
    /// tile's last byte is in (`start` when it receives nothing). Charged as the fine form charges its messages.
    tick coarse_phase(const txn& t, const bsp_superstep::tile_share& s, tick start);

private:
    /// The sending tile's side of a message (hop 0); a multicast's later receivers reuse the first one's slot.
    void send_side(txn& t, std::uint64_t wire, tick ser_out);
    double port_bps(std::uint32_t port) const { return port < m_p.tiles ? m_tile_bps : m_ext_bps; }
    const link_energy& energy_of(std::uint32_t port) const {
        return port < m_p.tiles ? m_p.energy : m_p.external_energy;
    }
    params m_p;
    double m_tile_bps = 0, m_ext_bps = 0;
    tick m_latency = 0;
    std::vector<reservation> m_send, m_recv;
    std::vector<double> m_send_bytes, m_recv_bytes;
    std::vector<int> m_tracks;
    struct last_send {
        std::uint64_t address = ~std::uint64_t{0}, bytes = 0;
        tick head_in = 0, tail_in = 0, head = 0, tail = 0;
    };
    std::vector<last_send> m_last;
    double& m_packets;
    double& m_bytes;
    double& m_multicast;
};

}  // namespace tessel
