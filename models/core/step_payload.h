// What a step carries beyond its `work` for a device that needs more than a count of operations: a GPU or TPU
// kernel's operand addresses (kernel_device.h), a TSP instruction's cycle, slice and stream registers (tsp.h),
// the rectangle of a wafer's PEs a step runs on in lockstep (grid_span.h), a whole IPU superstep in coarse form
// (bsp_superstep.h), the units of their own that run a step in lockstep (unit_gang.h).
// The payload travels with the step in the program and reaches the device in the step's transaction
// (txn::payload), so a mapped program is self-contained: it can be saved, replayed and joined with others
// without setting anything on the platform beforehand.
#pragma once

#include <cstdint>
#include <memory>

namespace tessel {

struct step_payload {
    enum class type : std::uint8_t { kernel, tsp_instruction, grid_span, bsp_superstep, unit_gang };
    explicit step_payload(type t) : payload_type(t) {}
    virtual ~step_payload() = default;
    /// A copy whose references to other steps are moved by `offset` (programs appended to one another), or
    /// null when the payload names no steps and can be shared as it is.
    virtual std::shared_ptr<const step_payload> shifted(std::uint32_t offset) const { return nullptr; }

    type payload_type;
};

/// The payload as `T` when it is one (T::payload_type_tag names the type), else null.
template <class T>
const T* payload_as(const step_payload* p) {
    return p && p->payload_type == T::payload_type_tag ? static_cast<const T*>(p) : nullptr;
}

}  // namespace tessel
