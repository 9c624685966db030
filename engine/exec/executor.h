// The executor runs a program on a platform. It is a SystemC module with a single SC_METHOD that works through
// one event queue (event_queue.h) in simulated-time order, first come first served among events of one
// instant; it is the kernel's only process, so it moves from instant to instant itself and wakes the kernel
// once at the end to bring its clock along. Steps that become ready at one instant are issued together after
// that instant's events, in the order of a stable rank (the step's label when the program has labels, else its
// index), never in listing or pointer order, so a program's timing does not depend on the order its independent
// steps are listed in.
//
// Every resource sees its requests in the order they reach it: a transfer goes packet by packet (the smallest
// packet_bytes of the networks on its route, at least the program's packet_bytes; to or from a component that
// aligns its bursts, each packet starts at a multiple of that size; at most `max_outstanding` packets of one
// transfer in flight), and a packet is presented to the source memory, to each link of its route (one call per
// link, txn::hop) and to the destination memory when its head gets there. Fast path: when a packet's next request is
// earlier than everything else queued, it is made at once instead of through the queue; that is exactly the order the
// queue would give (a test runs programs both ways). With a global quantum > 0 (platform `quantum:`) a packet may also
// run ahead of the queue by up to one quantum: fewer events, requests up to a quantum out of arrival order.
//
// Requests are direct calls on the component's timing model (component::transport, the function its TLM
// target socket forwards to; composites still reach their parts through the sockets): a hop is the event
// queue's cheapest work, so it is not spent on socket indirections and extension lookups. A packet keeps its
// own route transaction from link to link (packet::t), so a hop is one call on the network.
#pragma once

#include <algorithm>
#include <exception>
#include <unordered_map>
#include <vector>

#include "engine/exec/event_queue.h"
#include "engine/exec/latency.h"
#include "engine/netlist/platform.h"
#include "engine/program/program.h"

namespace tessel {

class executor : public sc_core::sc_module, private event_sink {
public:
    SC_HAS_PROCESS(executor);
    executor(sc_core::sc_module_name name, platform& plat);
    ~executor() override;

    struct result {
        tick start = 0;                // simulated time when the program started
        tick end = 0;                  // when its last step finished
        std::vector<tick> step_start;  // absolute, per step
        std::vector<tick> step_end;
        std::uint64_t packets = 0;
        std::uint64_t events = 0;       // queued events the run took (requests made at once not counted)
        std::uint64_t activations = 0;  // SystemC process activations the run took
        latency_histogram latency;      // every packet: injection to its last byte written at the destination
        // Synthetic traffic (program::traffic): packets created in the measurement window, their latency from
        // creation, and flits delivered (accepted) during the window.
        latency_histogram measured_latency;
        std::uint64_t measured_packets = 0, window_flits_delivered = 0;
        tick duration() const { return end - start; }
    };

    /// Runs `p` to completion (sc_start) and returns its timing. Throws input_error for a program that can
    /// never finish (a dependency cycle, named), for unreachable endpoints and for static-schedule conflicts.
    result run(const program& p);
    /// Every request through the event queue (no fast path): for the test that proves the fast path exact.
    void set_queue_everything(bool on) { m_queue_everything = on; }

private:
    enum class ev : std::uint8_t { complete, issue, inject, stage, wake };
    struct event {
        tick time;
        std::uint32_t index;  // step, flow, packet or component, by kind
        ev kind;
    };
    struct flow {
        std::uint32_t step = 0;
        std::uint64_t sent = 0, total = 0;
        std::uint64_t packet = 0;
        std::uint32_t window = 1;
        std::uint64_t count = 0;      // packets injected
        std::uint64_t delivered = 0;  // packets written at the destination
        // When each of the last `window` packets gave its slot back (no_time while it holds it): at its delivery,
        // or, on a route through several networks, when it left the first (the source interface's window).
        std::vector<tick> ring;
        tick pace = 0;  // injection interval at the first link's rate
        tick last = 0;
        tick wait_from = 0;  // blocked on the window: earliest the next packet could go
        bool waiting = false;
        bool src_by_address = false, dst_by_address = false;
        bool src_is_port = false, dst_is_port = false;  // endpoint is a network port: no memory stage
        attach_point src_ap, dst_ap;
        std::vector<route_segment> route;
        bool local = false;  // source and destination share a network port (or none needed)
        // An end that aligns its bursts (component::aligns_bursts): packets start at multiples of the packet size
        // of `aligned_at` (that end's address), the first one shorter when the transfer starts between them.
        bool aligned = false;
        std::uint64_t aligned_at = 0;
    };
    // Cache-line aligned: a hop touches only the first line (net and t's link fields).
    struct alignas(64) packet {
        interconnect* net = nullptr;  // the network it is in (stage 1..segments), else null
        // Its head and tail throughout, and while it is in a network its route transaction, kept from one link
        // to the next (position, ports, bytes), so a hop costs one call to the network.
        txn t;
        std::uint32_t flow = 0;
        std::uint32_t number = 0;  // within its flow
        std::uint32_t stage = 0;   // 0: source read, 1..segments: a network, then the destination write
        bool own_route = false;    // routed by address differently from its flow
        std::uint64_t bytes = 0, offset = 0;
        tick created = 0;
        std::vector<route_segment> route;
    };

    void process();
    void check_acyclic(const program& p) const;
    void push(tick t, ev kind, std::uint32_t index) {
        m_queue.push(event{t, index, kind});
        ++m_result.events;
    }
    /// Whether a request at `t` may be made at once (nothing queued or still to issue comes first).
    bool may_go_now(tick t) const {
        // Steps still to issue at this instant come first (the rest of the batch, or steps made ready since).
        if (m_queue_everything || !m_ready.empty() || m_batch_left > 1) return false;
        if (m_queue.empty() || t < m_queue.next_time()) return true;
        return m_quantum > 0 && t <= m_now + m_quantum;
    }
    /// The time before which a network may move a packet over further links in one call (see txn::horizon).
    tick horizon() const {
        if (m_queue_everything || !m_ready.empty() || m_batch_left > 1) return 0;
        if (m_queue.empty()) return ~tick{0};
        const tick next = m_queue.next_time();
        return m_quantum > 0 ? std::max(next, m_now + m_quantum + 1) : next;
    }
    void issue(std::uint32_t s, tick now);
    /// What a step's not_before counts from: the program start, or its anchor's end at the next edge of the clock
    /// of the component it computes on.
    tick origin_of(const step& st) const;
    void complete(std::uint32_t s);
    void start_flow(std::uint32_t s, tick now);
    void inject(std::uint32_t f, tick now);
    void schedule_next(std::uint32_t f, tick earliest);
    /// Moves packet `k` on from where it is: its next request, and those after while nothing queued comes first
    /// (advance keeps the common case small, move_on does the rest).
    void advance(std::uint32_t k);
    void move_on(std::uint32_t k);
    /// A packet's read at its source memory or write at its destination memory (k.t's head and tail in and out).
    void memory_stage(packet& k, txn_kind kind, const endpoint& e, const flow& f);
    /// Moves packet `ki` into the network of its current stage (at its first link) or, past the last, to its
    /// destination stage.
    void enter_stage(packet& k, std::uint32_t ki);
    /// Packet `ki` has left the network of its stage: on to the next stage (the first network it leaves on a route
    /// through several gives its transfer's window slot back).
    void leave_network(packet& k, std::uint32_t ki);
    /// Packet `number` of flow `f` gives its window slot back at `at` (the next packet may be injected then).
    void release_slot(std::uint32_t f, std::uint32_t number, tick at);
    void delivered(std::uint32_t k);
    /// Refuses, before the run, steps on the wrong kind of resource and programs over the packet or simulated-time
    /// budget (models/core/limits.h).
    void check_budget(const program& p) const;
    attach_point attach_or_fail(const endpoint& e, std::int32_t unit, std::uint32_t s) const;
    const std::vector<route_segment>& route_of(const packet& k) const;
    void wake_at(component& c, tick at) override;
    void release(std::uint64_t token, std::uint32_t hop, tick head, tick tail) override;

    platform& m_plat;
    std::vector<component*> m_comps;    // component id -> the component (null: removed)
    std::vector<interconnect*> m_nets;  // component id -> the network, for route transactions (direct calls)
    sc_core::sc_event m_wake;
    txn m_txn;  // compute, sync and memory requests

    const program* m_prog = nullptr;
    std::vector<std::uint32_t> m_rank;  // tie-break order of each step
    std::vector<std::uint32_t> m_remaining;
    std::vector<std::uint32_t> m_succ_begin, m_succ;
    std::vector<std::uint32_t> m_ready;
    std::vector<std::uint32_t> m_issuing;
    std::size_t m_batch_left = 0;  // steps of m_issuing not yet issued, the one being issued included
    event_queue<event> m_queue;
    std::vector<flow> m_flows;
    std::vector<std::uint32_t> m_free_flows;
    std::vector<packet> m_packets;
    std::vector<std::uint32_t> m_free_packets;
    const interconnect* m_pace_net = nullptr;  // the last flow's first network, wire bytes and pace (a cache)
    std::uint64_t m_pace_wire = 0;
    tick m_pace = 0;
    std::size_t m_done = 0;
    tick m_now = 0;  // time of the event being handled
    tick m_quantum = 0;
    bool m_queue_everything = false;
    result m_result;
    std::exception_ptr m_error;
    std::unordered_map<std::uint64_t, std::uint32_t> m_holder;  // strict schedules: who last used a unit
};

}  // namespace tessel
