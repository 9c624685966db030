// The base of every network (mesh_noc, ring, crossbar, chip_link): a component whose units are its ports.
// Route transactions carry a packet from one port to another, one link per call (txn::hop says where the head
// is), so the executor can present every link its packets in the order they reach it; each link is a busy-until
// reservation, so two flows on one link share its bandwidth and disjoint flows do not slow each other.
// Packetisation: the executor splits a transfer into packets of packet_bytes payload (plus header_bytes on the
// wire) and keeps at most max_outstanding packets of one transfer in flight, the way a network interface
// with finite buffers would.
#pragma once

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

/// Packetisation: the same three parameters on every network (each kind has its own defaults).
struct packet_params {
    byte_size packet_bytes, header_bytes;
    std::int64_t max_outstanding = 0;
    void declare(param_decl& d, std::string_view packet, std::string_view header, std::string_view outstanding);
};

class interconnect : public component {
public:
    using component::component;

    bool has_role(role r) const override { return r == role::interconnect; }
    /// Ports of the network: {x, y} for a mesh, {n} for a ring or a crossbar.
    virtual std::vector<int> port_shape() const = 0;
    std::vector<int> unit_shape() const override { return port_shape(); }

    std::uint64_t packet_bytes() const { return m_packets->packet_bytes.bytes(); }
    std::uint64_t header_bytes() const { return m_packets->header_bytes.bytes(); }
    std::uint32_t max_outstanding() const { return static_cast<std::uint32_t>(m_packets->max_outstanding); }
    /// Router-to-router hops between two ports (placement distance for mappers).
    virtual int hops(std::uint32_t from, std::uint32_t to) const = 0;
    /// Bandwidth of one link in bytes per second (payload and header).
    virtual double link_bytes_per_second() const = 0;
    /// Bytes per second into or out of one port: its link, unless the kind's ports differ (the IPU exchange's
    /// external ports).
    virtual double port_bytes_per_second(std::uint32_t /*port*/) const { return link_bytes_per_second(); }
    /// A fixed latency every transfer pays beyond its serialisation, for networks that charge one per transfer
    /// (the IPU exchange); 0 for networks whose latency grows per hop (see hops()).
    virtual tick transfer_latency_ticks() const { return 0; }
    /// Dimension-order routing on a 2D mesh: the axis a route crosses first (0: x, as XY routing; 1: y); -1 for
    /// networks that do not route that way.
    virtual int first_route_axis() const { return -1; }
    /// For a 2D mesh: the bytes each link carried, at (y * width + x) * 5 + direction, directions in the order
    /// east, west, north, south and the ejection link (floorplans draw them); empty for other networks.
    virtual std::vector<double> link_bytes() const { return {}; }
    /// Takes a packet the whole way from `t.hop` to its destination port in one go, link after link (for
    /// component tests and single packets; the executor calls transport() once per link instead).
    void traverse(txn& t);

protected:
    /// The derived kind's packetisation parameters (called once its parameters are read).
    void set_packets(const packet_params& p) { m_packets = &p; }
    /// A network resource_usage with this component's identity and per-link peak, links added with add_link.
    resource_usage link_usage(double bytes_per_second) const;
    static void add_link(resource_usage& u, double bytes, tick busy);
    /// Charges the links added to `u`: every byte over every link, every link's leakage.
    static void charge_links(resource_usage& u, const link_energy& e);
    /// link_hop::pass for packet `t` over one link, spending the energy of its `wire` bytes there (`e`).
    void cross(const txn& t, const link_energy& e, reservation& link, double& link_bytes, std::uint64_t wire, tick ser,
               tick pipeline, tick wire_delay, tick& head, tick& tail) const;

private:
    const packet_params* m_packets = nullptr;
};

/// The shared per-link rule: a packet whose first byte reaches the link's router at `head` and last byte at
/// `tail` waits `pipeline` (router latency), takes the link for `ser`, and reaches the far end after `wire`.
/// Cut-through: the far end sees the head before the tail has left, but the tail never leaves before it came.
struct link_hop {
    static void pass(reservation& link, double& link_bytes, std::uint64_t wire_bytes, tick ser, tick pipeline,
                     tick wire, tick& head, tick& tail) {
        const tick start = link.reserve(head + pipeline, ser);
        tick end = start + ser;
        if (tail + pipeline > end) {
            end = tail + pipeline;
            link.free_at = end;
        }
        link_bytes += static_cast<double>(wire_bytes);
        head = start + wire;
        tail = end + wire;
    }
};

}  // namespace tessel
