// Credit-based flow control for a mesh_noc (`flow_control: {impl: credit}`): input-buffered routers with finite
// buffers, simulated cycle by cycle at the mesh's clock, data-oriented (flat arrays, no module per router) and
// woken by the executor's event loop only while flits are in the network (one wake_at per cycle while busy, none
// while idle).
//
// Algorithm, per cycle c, in this order:
//  1. Credits whose return time has come are added to their upstream's counters.
//  2. Every network interface with packets in its (unbounded, first in first out) source queue injects at most
//     one flit of its front packet into its router's local input port: the packet first takes a free VC there
//     (round robin), then each flit needs a credit for that VC.
//  3. Every router holding flits: each input VC whose front flit is ready computes its output port (the mesh's
//     routing policy) and, for a head, takes a free VC of the downstream input port (virtual channel
//     allocation, round robin; virtual cut-through: only a VC with room for the whole packet); then one
//     switch allocator per output port (the `arbitration` policy, round robin by default) grants one flit per output
//     and per input port per cycle to a VC that holds a downstream credit. The ejection port has `vcs` VCs with
//     unlimited credits and drains one flit per cycle.
// Timing: a flit granted the switch at cycle s crosses the link during s (one cycle per flit: the link's bytes per
// cycle are the flit), is in the downstream buffer at s + link_latency and may be granted again at
// s + link_latency + router_latency. Injection has no router stage, ejection adds link_latency; so one packet
// alone sees exactly the ideal model's zero-load latency (H + 1) * (router + link) + link + wire_bytes / bw (the
// last flit carries the remainder of the bytes) when buffer_flits covers the credit round trip.
// Credits: the slot a flit frees when it is granted at cycle s is usable upstream from cycle
// s + max(link_latency, 1 cycle); a round trip is 2 * link_latency + router_latency cycles. A downstream VC is
// held by one packet from its head's allocation until its tail is sent (wormhole); the next packet may then take
// it while the previous tail still sits in that buffer.
// Deadlock and livelock: every routing policy forbids enough turns (each says which) that a mesh has no cyclic
// channel dependency, and ejection always drains, so no deadlock; every round-robin pointer moves past the VC it
// served (and the allocation order rotates every cycle), so a waiting flit is served within a bounded number of
// grants.
// Leaves out: adaptive routing, speculative or lookahead allocation, separate route/VA/SA pipeline stages
// (router_latency is one lumped delay), input speedup, per-VC ejection buffers of finite size and per-flit trace
// slices. A packet's reported head is no earlier than the cycle its tail is ejected (the event loop cannot go
// back in time); its tail is exact.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/transaction.h"
#include "models/core/units.h"
#include "models/interconnect/arbitration/arbitration_policy.h"
#include "models/interconnect/flow_control/flow_control_policy.h"

namespace tessel {

class mesh_noc;

class credit_flow final : public noc_flow_engine {
public:
    struct config {
        int width = 0, height = 0;
        int vcs = 1, buffer_flits = 1;
        bool cut_through = false;  // virtual cut-through (else wormhole)
        std::uint64_t flit_bytes = 0;
        std::uint64_t router_cycles = 0, link_cycles = 0;
        tick cycle = 0;                               // ticks per cycle of the mesh clock
        const arbitration_policy* arbiter = nullptr;  // each output's switch allocator (owned by the policy)
    };
    credit_flow(mesh_noc& noc, const config& c);

    /// A packet whose head reaches its source's network interface (txn::hop ==
    /// 0); parks it.
    void accept(txn& t) override;
    /// One cycle of the whole network (called through component::wake at a cycle
    /// boundary).
    void wake(tick now) override;
    /// Flits of a packet with `wire_bytes` on the wire.
    std::uint64_t flits(std::uint64_t wire_bytes) const { return (wire_bytes + m_c.flit_bytes - 1) / m_c.flit_bytes; }

private:
    static constexpr std::uint32_t none = ~0u;
    struct packet {
        std::uint64_t token = 0;
        std::uint64_t payload = 0, wire = 0;
        tick head_in = 0,
             tail_in = 0;  // when its first and last byte reach the network interface
        std::uint32_t src = 0, dst = 0;
        std::uint32_t nflits = 0, sent = 0;  // flits, flits injected so far
        std::uint32_t next = none;           // next packet in its source queue
        std::uint64_t head_cycle = 0;        // cycle its head flit was ejected
        std::uint32_t op = 0;                // the op it belongs to, for its energy
        double link_bytes = 0;               // bytes its flits carried over links (inject, router outputs, eject)
    };

    std::uint32_t ivc(std::uint32_t node, int port, int vc) const {
        return (node * 5 + static_cast<std::uint32_t>(port)) * m_v + static_cast<std::uint32_t>(vc);
    }
    std::uint32_t neighbour(std::uint32_t node, int dir) const;
    tick flit_ready(const packet& p, std::uint32_t k) const;
    void push_flit(std::uint32_t i, std::uint32_t pkt, std::uint32_t idx, std::uint64_t ready);
    void activate(std::uint32_t node);
    void touch(std::uint32_t node);
    void inject(std::uint32_t node, std::uint64_t c);
    void step_router(std::uint32_t node, std::uint64_t c);
    void send(std::uint32_t node, std::uint32_t i, int out, std::uint64_t c);
    void finish(std::uint32_t pkt, std::uint64_t c);
    bool busy() const { return m_queued > 0 || m_in_routers > 0 || m_credit_head < m_credit_q.size(); }

    mesh_noc& m_noc;
    config m_c;
    std::uint32_t m_v = 1, m_b = 1, m_nodes = 0;
    std::uint64_t m_credit_delay = 1;
    // Input VCs (node * 5 + port) * vcs + vc; flits in a ring of buffer_flits
    // slots each.
    std::vector<std::uint32_t> m_slot_pkt, m_slot_idx;
    std::vector<std::uint64_t> m_slot_ready;  // cycle from which the flit may be granted
    std::vector<std::uint32_t> m_fifo_head, m_fifo_count;
    std::vector<std::int8_t> m_route,
        m_outvc;                              // of the packet at the front of each input VC (-1: none yet)
    std::vector<std::int32_t> m_credits;      // free slots of each input VC as its upstream sees them
    std::vector<std::uint8_t> m_taken;        // input VC held by a packet (allocated upstream, tail not sent)
    std::vector<std::uint8_t> m_eject_taken;  // node * vcs + vc
    // Round-robin pointers.
    std::vector<std::uint8_t> m_va_rr, m_ovc_rr,
        m_sa_rr;  // per node; per node * 5 + output; per node * 5 + output
    // Routers holding flits.
    std::vector<std::uint32_t> m_router_flits, m_active;
    std::vector<std::uint8_t> m_is_active;
    // Network interfaces: source queues (linked through packet::next) and the VC
    // of the packet in injection.
    std::vector<std::uint32_t> m_src_head, m_src_tail, m_ni_list;
    std::vector<std::int8_t> m_ni_vc;
    std::vector<std::uint8_t> m_ni_rr, m_ni_active;
    std::vector<std::uint64_t> m_ni_last;  // cycle + 1 of the interface's last injected flit (0: never)
    // Nodes whose round-robin state moved since the network was last idle (reset
    // when it drains again).
    std::vector<std::uint32_t> m_touched;
    std::vector<std::uint8_t> m_is_touched;
    // Credits on their way back: (cycle they arrive, input VC), in cycle order.
    struct credit {
        std::uint64_t cycle;
        std::uint32_t vc;
    };
    std::vector<credit> m_credit_q;
    std::size_t m_credit_head = 0;
    std::vector<packet> m_packets;
    std::vector<std::uint32_t> m_free;
    std::uint64_t m_queued = 0;      // packets in source queues
    std::uint64_t m_in_routers = 0;  // flits in router buffers
    std::uint64_t m_next_cycle = 0;  // first cycle not simulated yet
    std::uint64_t m_epoch = 0;       // first cycle of the current busy period
    bool m_wake_pending = false;
};

}  // namespace tessel
