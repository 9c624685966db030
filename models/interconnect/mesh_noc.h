// `mesh_noc`: a 2D mesh network-on-chip. Ports are the routers at (x, y); dimension-order routing (XY by
// default, YX selectable); per hop a router pipeline latency and a wire latency; links of a given bandwidth,
// each a busy-until reservation, plus an injection link from each port's network interface.
// Zero-load latency of one packet over H hops: (H + 1) * (router_latency + link_latency) + link_latency +
// wire_bytes / link_bandwidth.
// Two representations with identical timing: `arrays` (data-oriented: link state in flat vectors, for meshes
// of any size, e.g. a 750 x 994 wafer) and `modules` (one mesh_router sc_module per node, TLM sockets between
// neighbours). Leaves out: virtual channels, credit flow control between routers, adaptive routing.
#pragma once

#include <memory>

#include "models/interconnect/interconnect.h"
#include "models/interconnect/mesh_router.h"

namespace tessel {

class mesh_noc : public interconnect {
public:
    struct routing_params {
        std::string impl;
        void declare(param_decl& d);
    };
    struct params {
        frequency clock;
        std::int64_t width = 0, height = 0;
        bandwidth link_bandwidth;
        duration router_latency, link_latency;
        packet_params packets;
        routing_params routing;
        std::string representation;
        void declare(param_decl& d);
    };

    mesh_noc(sc_core::sc_module_name name, const component_args& args);
    ~mesh_noc() override;

    std::vector<int> port_shape() const override { return {static_cast<int>(m_p.width), static_cast<int>(m_p.height)}; }
    int hops(std::uint32_t from, std::uint32_t to) const override;
    double link_bytes_per_second() const override { return m_bps; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

    /// The next direction from node (x, y) towards (dx, dy); mesh_router::local when there.
    int next_direction(int x, int y, int dx, int dy) const;
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
    std::vector<double> link_bytes() const;

private:
    void route_arrays(txn& t, std::uint64_t wire_bytes);
    params m_p;
    double m_bps = 0;
    tick m_router = 0, m_wire = 0;
    bool m_x_first = true;
    std::uint64_t m_ser_bytes = ~std::uint64_t{0};  // last serialisation computed (most packets are the same size)
    tick m_ser_ticks = 0;
    // Data-oriented state (representation: arrays).
    std::vector<reservation> m_links;  // node * 5 + direction
    std::vector<double> m_link_bytes;
    std::vector<int> m_link_tracks;
    // Injection links, both representations.
    std::vector<reservation> m_inject;
    std::vector<double> m_inject_bytes;
    std::vector<int> m_inject_tracks;
    // Module representation.
    std::vector<std::unique_ptr<mesh_router>> m_routers;
    std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<mesh_noc>>> m_to_router;
    double& m_packets;
    double& m_bytes;
    friend class mesh_router;
};

}  // namespace tessel
