// A span: a rectangle of PEs of a pe_grid that one compute step runs on in lockstep, the same work on every PE
// of it, starting when the last of them is free (a row of 750 PEs doing the same thing is one step). It is the
// step's payload (step_payload.h): the program says which PEs the step covers, so nothing is registered on the
// component beforehand and an emitted program replays on a fresh platform. The step's own unit is one of the
// span's PEs (the mappers name its first, the corner (x0, y0)); transfers always name single PEs. Spans hold no
// references to steps, so steps may share one.
#pragma once

#include "models/core/rect.h"
#include "models/core/step_payload.h"

namespace tessel {

struct grid_span final : step_payload {
    static constexpr type payload_type_tag = type::grid_span;
    explicit grid_span(const grid_rect& r) : step_payload(type::grid_span), rect(r) {}
    grid_rect rect;  // [x0, x1) x [y0, y1) of the grid's PEs
};

}  // namespace tessel
