// The state one simulation shares: statistics, traces, the global quantum, and every component by a stable id
// (creation order), so ties are broken the same way on every run.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/stats.h"
#include "models/core/tracer.h"
#include "models/core/units.h"

namespace tessel {

class component;

class sim_context {
public:
    /// Sets SystemC's time resolution to 1 fs; must run before any sc_time is created in the process.
    static void init_systemc();

    stats_registry stats;
    tracer trace;

    std::uint32_t add_component(component* c) {
        m_components.push_back(c);
        return static_cast<std::uint32_t>(m_components.size() - 1);
    }
    void remove_component(std::uint32_t id) { m_components[id] = nullptr; }
    const std::vector<component*>& components() const { return m_components; }

private:
    std::vector<component*> m_components;
};

}  // namespace tessel
