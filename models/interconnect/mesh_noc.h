// `mesh_noc`: a 2D mesh network-on-chip. Ports are the routers at (x, y); a routing policy picks each hop
// (`routing: {impl: xy}` by default; the others in models/interconnect/routing/); per hop a router pipeline
// latency and a wire latency; links of a given bandwidth, plus an injection link from each port's network
// interface. Flow control is a registered policy too (`flow_control: {impl: ideal}` by default; the others in
// models/interconnect/flow_control/):
//  - `ideal` (default): each link is a busy-until reservation and buffers are unbounded. Zero-load latency of
//    one packet over H hops: (H + 1) * (router_latency + link_latency) + link_latency + wire_bytes / link_bandwidth.
//    A route transaction moves the packet over one link (txn::hop: 0 at the source's interface, node + 1 at a
//    router), so every link serves packets in the order their heads reach it. Two representations with
//    identical timing: `arrays` (data-oriented: link state in flat vectors, for meshes of any size, e.g. a
//    750 x 994 wafer) and `modules` (one mesh_router sc_module per node, reached through a TLM socket per
//    router).
//  - `credit`: input-buffered routers with `vcs` virtual channels of `buffer_flits` flits per input port,
//    credit-based flow control, wormhole or virtual cut-through switching, round-robin VC allocation and
//    a switch allocator picked by `arbitration: {impl: round_robin}` (models/interconnect/arbitration/), simulated
//    cycle by cycle while flits are in the network (credit_flow.h; arrays only). The packet is parked at its source's
//    interface (txn::parked) and handed back when its tail leaves. Same zero-load latency as `ideal` when buffer_flits
//    >= 2 * link_latency + router_latency (the credit round trip, in cycles); under load it shows head-of-line blocking
//    and back-pressure. A flit is the link's bytes per cycle. See docs/noc.md.
// Leaves out: adaptive routing, speculative allocation, faults.
#pragma once

#include <memory>

#include "models/interconnect/flow_control/flow_control_policy.h"
#include "models/interconnect/interconnect.h"
#include "models/interconnect/mesh_router.h"
#include "models/interconnect/routing/routing_policy.h"

namespace tessel {

class mesh_noc : public interconnect {
public:
    /// Which way a head turns at each router: a registered routing policy (routing_policy.h).
    struct routing_params {
        std::string impl;
        std::unique_ptr<const routing_policy> policy;
        void declare(param_decl& d);
    };
    /// How links and buffers hold packets: a registered flow-control policy (flow_control_policy.h), with the
    /// buffer geometry that the policies with finite buffers share.
    struct flow_control_params {
        std::string impl;
        std::unique_ptr<const flow_control_policy> policy;
        std::int64_t buffer_flits = 0, vcs = 0;
        std::string switching;
        void declare(param_decl& d);
    };
    struct params {
        frequency clock;
        std::int64_t width = 0, height = 0;
        bandwidth link_bandwidth;
        duration router_latency, link_latency;
        packet_params packets;
        link_energy energy;
        routing_params routing;
        flow_control_params flow_control;
        std::string representation;
        void declare(param_decl& d);
    };
    /// The parameters as read, for the policies that build on them (flow control).
    const params& settings() const { return m_p; }
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    mesh_noc(sc_core::sc_module_name name, const component_args& args);
    ~mesh_noc() override;

    std::vector<int> port_shape() const override { return {static_cast<int>(m_p.width), static_cast<int>(m_p.height)}; }
    int hops(std::uint32_t from, std::uint32_t to) const override;
    double link_bytes_per_second() const override { return m_bps; }
    int first_route_axis() const override { return m_p.routing.policy->first_axis(); }
    void transport(txn& t) override;
    void wake(tick now) override;
    void usage(std::vector<resource_usage>& out) const override;

    /// The next direction from node (x, y) towards (dx, dy), as the routing policy says; mesh_dir::local there.
    int next_direction(int x, int y, int dx, int dy) const { return m_p.routing.policy->next_direction(x, y, dx, dy); }
    tick ser_ticks(std::uint64_t wire_bytes) {
        if (wire_bytes != m_ser_bytes) {
            m_ser_bytes = wire_bytes;
            m_ser_ticks = transfer_ticks(static_cast<double>(wire_bytes), m_bps);
        }
        return m_ser_ticks;
    }
    tick router_ticks() const { return m_router; }
    tick wire_ticks() const { return m_wire; }
    int link_track(int node, int dir);
    /// Per-link bytes (nodes x 5, local = ejection), for floorplans and reports.
    std::vector<double> link_bytes() const override;

private:
    /// The modules representation: the injection link, else one router module's output link per call.
    void transport_modules(txn& t);
    /// Trace slices (out of the hop loop: tracing is rare).
    void trace_link(std::size_t l, int node, int dir, tick head, tick tail, const txn& t);
    void trace_inject(std::uint32_t src, tick head, tick tail, const txn& t);
    /// The position after leaving (x, y) in direction `dir` (txn::arrived for the ejection link).
    std::uint32_t neighbour_hop(int x, int y, int dir) const;
    params m_p;
    double m_bps = 0;
    std::uint64_t m_header = 0;  // header_bytes()
    tick m_router = 0, m_wire = 0;
    std::uint64_t m_ser_bytes = ~std::uint64_t{0};  // last serialisation computed (most packets are the same size)
    tick m_ser_ticks = 0;
    // Data-oriented state (representation: arrays).
    /// A link's reservation and bytes side by side (a hop touches one cache line, not two).
    struct link_state {
        reservation r;
        double bytes = 0;
    };
    /// The arrays representation's links, made when the first packet arrives.
    void allocate_links();
    std::size_t m_nodes = 0;
    /// Links by direction, each direction's in the order a route crosses them: east and west links row by row
    /// (node = y * width + x), north and south links column by column (x * height + y), then the ejection links.
    /// A packet's hops along one axis touch consecutive entries, not entries a row apart: on a wafer-sized mesh
    /// (4.5 M links, 107 MB) a hop in y was a cache and TLB miss.
    std::vector<link_state> m_links;
    std::size_t link_index(std::uint32_t node, int x, int y, int dir) const {
        const std::size_t n = m_nodes, d = static_cast<std::size_t>(dir);
        if (dir == mesh_dir::north || dir == mesh_dir::south)
            return d * n + static_cast<std::size_t>(x) * static_cast<std::size_t>(m_p.height) +
                   static_cast<std::size_t>(y);
        return d * n + node;
    }
    std::size_t link_index(std::uint32_t node, int dir) const {
        const std::uint32_t w = static_cast<std::uint32_t>(m_p.width);
        return link_index(node, static_cast<int>(node % w), static_cast<int>(node / w), dir);
    }
    std::vector<int> m_link_tracks;
    // Injection links, both representations.
    std::vector<link_state> m_inject;
    std::vector<int> m_inject_tracks;
    // Module representation.
    std::vector<std::unique_ptr<mesh_router>> m_routers;
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<mesh_noc>>> m_to_router;
    // The flow-control policy's engine (flow_control: {impl: credit}); null for the mesh's own busy-until links.
    std::unique_ptr<noc_flow_engine> m_flow;
    double& m_packets;
    double& m_bytes;
    friend class mesh_router;
    friend class credit_flow;
};

}  // namespace tessel
