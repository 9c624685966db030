#include "models/sync/barrier.h"

#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void barrier::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the sync logic");
    d(latency, "latency", "100cycles", "fixed latency from the last arrival to the release");
    d(level_latency, "level_latency", "0cycles", "added per level of a binary tree over the participants");
    declare_energy(d, energy, barrier_network);
}

std::vector<stat_decl> barrier::stat_table() {
    return {
        {"syncs", "sync", "synchronisations completed"},
        {"sync_time", "s", "time spent between last arrival and release"},
    };
}

barrier::barrier(sc_core::sc_module_name n, const component_args& a)
    : component(n, a), m_syncs(stats().scalar("syncs")), m_sync_time(stats().scalar("sync_time")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_track = trace_track("");
}

tick barrier::sync_ticks(std::uint32_t participants) const {
    const double levels = participants > 1 ? std::ceil(std::log2(static_cast<double>(participants))) : 0.0;
    return m_p.latency.to_ticks(clock()) + clock().cycles(levels * m_p.level_latency.to_cycles(clock()));
}

void barrier::transport(txn& t) {
    const tick d = sync_ticks(t.participants);
    const tick start = t.head;
    t.tail = start + d;
    t.head = t.tail;
    m_syncs += 1;
    m_sync_time += ticks_to_seconds(d);
    m_busy += d;
    spend(t, energy_part::sync, m_p.energy.sync.joules(), start, start + d);
    sim().trace.slice(m_track, start, start + d, t.op, t.step);
}

void barrier::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::sync;
    u.work = m_syncs;
    u.work_unit = "sync";
    u.busy_seconds = ticks_to_seconds(m_busy);
    u.busy_max = u.busy_seconds;
    u.ideal_seconds = u.busy_seconds;  // a sync cannot be faster than its latency
    u.ideal_max = 0;                   // overlapping syncs of different groups do not add up
    charge(u, m_syncs * m_p.energy.sync.joules(), m_p.energy.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND(
    make_kind<barrier>("barrier", "sync",
                       "global barrier: releases after the last arrival plus a fixed and a per-tree-level "
                       "latency"));

}  // namespace tessel
