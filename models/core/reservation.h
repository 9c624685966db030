// Busy-until reservation: the contention model of every resource that serves one request at a time (a link,
// a memory port, a bank, a compute pipe). A request that arrives while the resource is busy starts when it
// frees; no per-cycle events, no wait() per beat.
#pragma once

#include <algorithm>

#include "models/core/units.h"

namespace tessel {

struct reservation {
    tick free_at = 0;  // the resource is busy until this time
    tick busy = 0;     // total time it has been reserved

    /// Reserves `dur` ticks starting no earlier than `at`; returns the start time.
    tick reserve(tick at, tick dur) {
        const tick start = std::max(at, free_at);
        if (__builtin_add_overflow(start, dur, &free_at)) time_overflow(start, dur);
        busy += dur;
        return start;
    }
};

/// How busy a resource was and how much work it did, for utilisation reports and the physical bound check.
enum class resource_class { compute, memory, network, sync };
const char* resource_class_name(resource_class c);

struct resource_usage {
    std::string name;  // component path plus what ("mesh.tile[1,2].pe")
    std::string kind;  // the component's kind
    resource_class cls = resource_class::compute;
    double work = 0;            // amount of work done (in work_unit)
    std::string work_unit;      // "FLOP", "B"
    double peak_rate = 0;       // work_unit per second at peak, per unit
    double units = 1;           // parallel units in this resource
    double ideal_seconds = 0;   // sum over units of (work / peak) with each unit's own rates
    double ideal_max = 0;       // the largest ideal time of any one unit: the run can never be shorter
    double busy_seconds = 0;    // sum over units of the time they were reserved
    double busy_max = 0;        // the busiest unit's reserved time
    double dynamic_joules = 0;  // energy of the work counted (models/core/energy.h)
    double static_watts = 0;    // leakage of every unit, charged over the simulated time
    bool off_chip = false;      // a memory outside the chip (DRAM): its energy is reported apart from SRAM
};

}  // namespace tessel
