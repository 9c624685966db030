#include "models/interconnect/switch_reducer.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void switch_reducer::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "engine clock (for a bandwidth or latency given in cycles)");
    d(reduce_bandwidth, "reduce_bandwidth", "64B/cycle", "bytes of contributions one engine reduces per second");
    d(latency, "latency", "0ns", "added to every access (in and out)");
    declare_energy(d, energy, energy_45nm::noc, "energy", "energy per byte of contributions reduced, and static power");
}

std::vector<stat_decl> switch_reducer::stat_table() {
    return {
        {"reduced_bytes", "B", "bytes of contributions written in and reduced"},
        {"multicast_bytes", "B", "bytes of results read out (replicated by the switch)"},
        {"busy", "s", "time the engine was reducing"},
    };
}

switch_reducer::switch_reducer(sc_core::sc_module_name n, const component_args& a)
    : component(n, a), m_reduced(stats().scalar("reduced_bytes")), m_multicast(stats().scalar("multicast_bytes")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_bps = m_p.reduce_bandwidth.bytes_per_second(clock());
    m_latency = m_p.latency.to_ticks(clock());
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_engine.busy); });
}

void switch_reducer::transport(txn& t) {
    if (t.kind == txn_kind::write) {
        // The engine takes the contribution as it arrives, at its reduction rate.
        const tick dur = transfer_ticks(static_cast<double>(t.bytes), m_bps);
        const tick start = m_engine.reserve(t.head, dur);
        m_reduced += static_cast<double>(t.bytes);
        spend(t, energy_part::network, static_cast<double>(t.bytes) * m_p.energy.transfer.joules(), start, start + dur);
        sim().trace.slice(m_track, start, start + dur, t.op, t.step);
        t.tail = std::max(t.tail, start + dur);
    } else {
        m_multicast += static_cast<double>(t.bytes);
    }
    t.head += m_latency;
    t.tail += m_latency;
    t.unit = 0;
}

void switch_reducer::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::network;
    u.work = m_reduced;
    u.work_unit = "B";
    u.peak_rate = m_bps;
    u.ideal_seconds = u.work / m_bps;
    u.ideal_max = u.ideal_seconds;
    u.busy_seconds = u.busy_max = ticks_to_seconds(m_engine.busy);
    charge(u, u.work * m_p.energy.transfer.joules(), m_p.energy.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<switch_reducer>("switch_reducer", "interconnect",
                                               "in-network reduction engine of a switch (NVLink SHARP, SwarmX): "
                                               "reduces contributions at a rate, multicasts results"));

}  // namespace tessel
