// The state one simulation shares: statistics, traces, the global quantum, and every component by a stable id
// (creation order), so ties are broken the same way on every run.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/stats.h"
#include "models/core/tracer.h"
#include "models/core/units.h"

namespace tessel {

class component;

/// The event loop that drives a run (the executor). Networks that hold packets in finite buffers use it to be
/// woken at a later time and to hand a parked packet back, so their events are ordered with everyone else's.
class event_sink {
public:
    virtual ~event_sink() = default;
    /// Calls `c.wake(at)` when simulated time reaches `at` (after the requests that arrive at `at`).
    virtual void wake_at(component& c, tick at) = 0;
    /// A parked packet (`token`) moves on: its head reaches position `hop` of its route at `head`, its tail at
    /// `tail` (hop == txn::arrived: it has left the network).
    virtual void release(std::uint64_t token, std::uint32_t hop, tick head, tick tail) = 0;
};

class sim_context {
public:
    /// Sets SystemC's time resolution to 1 fs; must run before any sc_time is created in the process.
    static void init_systemc();

    stats_registry stats;
    tracer trace;
    energy_ledger energy;
    event_sink* events = nullptr;  // set by the executor while it runs a program

    std::uint32_t add_component(component* c) {
        m_components.push_back(c);
        return static_cast<std::uint32_t>(m_components.size() - 1);
    }
    void remove_component(std::uint32_t id) { m_components[id] = nullptr; }
    const std::vector<component*>& components() const { return m_components; }
    /// The component with hierarchical name `path` built so far ("sn40l.hbm"), or nullptr.
    component* find_component(const std::string& path) const;

private:
    std::vector<component*> m_components;
};

}  // namespace tessel
