// The timing rules of one compute unit (a PE, an IPU tile, an RDU PCU, a wafer PE), usable without simulating:
// what a mapper's cost callback asks when it compares plans. A compute component offers it through
// component::unit_model(); the component itself times its steps with the same rules, so a plan's estimate and
// the simulation cannot disagree about what one step costs.
#pragma once

#include <cstdint>
#include <string>

#include "models/core/transaction.h"
#include "models/core/units.h"

namespace tessel {

class compute_model {
public:
    virtual ~compute_model() = default;
    /// The unit's clock (cycles below are of it).
    virtual const clock_domain& clock() const = 0;
    /// Cycles one step of `w` occupies the unit (overheads and operand ports included).
    virtual double cycles(const work& w) const = 0;
    /// Seconds the arithmetic of `w` takes at peak rate (the physical bound).
    virtual double ideal_seconds(const work& w) const = 0;
    /// MACs per cycle at peak for a data type (0: the unit cannot multiply in it).
    virtual double peak_macs_per_cycle(dtype t) const = 0;
    /// Element operations per cycle at peak for a data type.
    virtual double peak_vector_ops_per_cycle(dtype t) const = 0;
    /// SIMD lanes: elements one operation works on side by side (1 where the kind does not say).
    virtual std::int64_t lanes() const { return 1; }
    /// Throws input_error naming `who` when the unit cannot compute in the data type of `w`.
    virtual void check(const work& w, const std::string& who) const = 0;
};

}  // namespace tessel
