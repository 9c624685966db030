// A gang: units that are components of their own (unlike a grid_span's PEs of one component) running one compute
// step in lockstep, each an equal share of the step's work. The step's work is the gang's total; its matrix-
// product view is one member's. The step starts when every member is free and occupies each for the same time.
// The RDU mapper's gang form gives a stage's run of adjacent PCUs one step per tile this way instead of one each.
// Members are named by their component id's distance from the step's own unit: a chip's program joined onto
// another chip of a system (program::append) has its ids moved by one shift, so the distances still hold.
// A gang holds no references to steps, so steps may share one.
#pragma once

#include <cstdint>
#include <vector>

#include "models/core/step_payload.h"

namespace tessel {

struct unit_gang final : step_payload {
    static constexpr type payload_type_tag = type::unit_gang;
    explicit unit_gang(std::vector<std::int32_t> o) : step_payload(type::unit_gang), others(std::move(o)) {}
    std::vector<std::int32_t> others;  // each other member's component id minus the step's own unit's
    size_t size() const { return others.size() + 1; }
};

}  // namespace tessel
