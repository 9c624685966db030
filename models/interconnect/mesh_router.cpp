#include "models/interconnect/mesh_router.h"

#include "models/core/component.h"
#include "models/core/sim_context.h"
#include "models/interconnect/mesh_noc.h"

namespace tessel {

mesh_router::mesh_router(sc_core::sc_module_name n, mesh_noc& noc, int x, int y)
    : sc_core::sc_module(n), in("in"), m_noc(noc), m_x(x), m_y(y) {
    in.register_b_transport(this, &mesh_router::b_transport);
}

void mesh_router::b_transport(int /*from*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& /*delay*/) {
    txn& t = *gp.get_extension<txn>();
    const int w = static_cast<int>(m_noc.port_shape()[0]);
    const int dx = static_cast<int>(t.dst_port % static_cast<std::uint32_t>(w));
    const int dy = static_cast<int>(t.dst_port / static_cast<std::uint32_t>(w));
    const int dir = m_noc.next_direction(m_x, m_y, dx, dy);
    const std::uint64_t wire = t.bytes + m_noc.header_bytes();
    m_noc.cross(t, m_noc.m_p.energy, links[static_cast<size_t>(dir)], link_bytes[static_cast<size_t>(dir)], wire,
                m_noc.ser_ticks(wire), m_noc.router_ticks(), m_noc.wire_ticks(), t.head, t.tail);
    if (tracks[static_cast<size_t>(dir)] == -2) tracks[static_cast<size_t>(dir)] = m_noc.link_track(m_y * w + m_x, dir);
    m_noc.sim().trace.slice(tracks[static_cast<size_t>(dir)], t.head - m_noc.wire_ticks(), t.tail - m_noc.wire_ticks(),
                            t.op, t.step);
    t.hop = m_noc.neighbour_hop(m_x, m_y, dir);
}

}  // namespace tessel
