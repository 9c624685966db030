// The executor runs a program on a platform. It is a SystemC module with one TLM-2.0 initiator socket bound to
// every component; a single SC_METHOD, woken at the next pending time, issues each step the moment its
// dependencies are done (ties broken by step id, so runs are deterministic) as a loosely-timed b_transport:
// the component answers with when the work starts and ends. Transfers go packet by packet along their route
// (source memory, each network, destination memory), at most `max_outstanding` packets in flight per transfer.
// With a global quantum > 0 (tlm_global_quantum) a transfer may run ahead of the kernel's time by up to one
// quantum before yielding: fewer kernel activations, coarser interleaving of competing flows.
#pragma once

#include <tlm_utils/multi_passthrough_initiator_socket.h>

#include <exception>
#include <unordered_map>
#include <vector>

#include "engine/netlist/platform.h"
#include "engine/program/program.h"

namespace tessel {

class executor : public sc_core::sc_module {
public:
    SC_HAS_PROCESS(executor);
    executor(sc_core::sc_module_name name, platform& plat);

    struct result {
        tick start = 0;                // simulated time when the program started
        tick end = 0;                  // when its last step finished
        std::vector<tick> step_start;  // absolute, per step
        std::vector<tick> step_end;
        std::uint64_t packets = 0;
        std::uint64_t activations = 0;  // SystemC process activations the run took
        tick duration() const { return end - start; }
    };

    /// Runs `p` to completion (sc_start) and returns its timing. Throws input_error for a program that can
    /// never finish (a dependency cycle, named), for unreachable endpoints and for static-schedule conflicts.
    result run(const program& p);

private:
    struct event {
        tick time;
        std::uint64_t seq;
        std::uint32_t kind;  // 0: step completes, 1: flow injects
        std::uint32_t index;
    };
    struct event_later {
        bool operator()(const event& a, const event& b) const {
            return a.time != b.time ? a.time > b.time : a.seq > b.seq;
        }
    };
    struct flow {
        std::uint32_t step = 0;
        std::uint64_t sent = 0, total = 0;
        std::uint64_t packet = 0;
        std::uint32_t window = 1;
        std::uint64_t count = 0;           // packets injected
        std::vector<tick> delivered;       // ring buffer of the last `window` delivery times
        tick next_at = 0;
        tick pace = 0;                     // injection interval at the first link's rate
        tick last = 0;
        bool src_by_address = false, dst_by_address = false;
        attach_point src_ap, dst_ap;
        std::vector<route_segment> route;
        bool local = false;                // source and destination share a network port (or none needed)
    };

    void process();
    void check_acyclic(const program& p) const;
    void push(tick t, std::uint32_t kind, std::uint32_t index);
    void issue(std::uint32_t s, tick now);
    void complete(std::uint32_t s, tick at);
    void start_flow(std::uint32_t s, tick now);
    void inject(std::uint32_t f, tick now);
    void send(std::uint32_t comp, txn& t);
    attach_point attach_or_fail(const endpoint& e, std::int32_t unit, std::uint32_t s) const;

    tlm_utils::multi_passthrough_initiator_socket<executor> m_out;
    platform& m_plat;
    std::vector<int> m_socket;  // component id -> socket index (through owners)
    sc_core::sc_event m_wake;
    txn_payload m_payload;

    const program* m_prog = nullptr;
    std::vector<std::uint32_t> m_remaining;
    std::vector<std::uint32_t> m_succ_begin, m_succ;
    std::vector<std::uint32_t> m_ready;
    std::vector<std::uint32_t> m_issuing;
    std::vector<route_segment> m_reroute;
    std::vector<event> m_heap;
    std::uint64_t m_seq = 0;
    std::vector<flow> m_flows;
    std::vector<std::uint32_t> m_free_flows;
    std::size_t m_done = 0;
    tick m_quantum = 0;
    result m_result;
    std::exception_ptr m_error;
    std::unordered_map<std::uint64_t, std::uint32_t> m_holder;  // strict schedules: who last used a unit
};

}  // namespace tessel
