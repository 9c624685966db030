// A grid of processing elements held as data (a wafer-scale engine's PE array), as mappers see it: its size,
// the unit of each PE and one PE's data paths. A component offers it through component::grid(); one PE's
// timing is its unit_model() and one PE's SRAM its capacity_bytes(). It is a read-only description: what a
// program keeps in the PEs' SRAM (grid_placement.h) and the rectangles of PEs its steps run on in lockstep
// (grid_span.h) travel in the program, never as state a mapper sets on the component.
#pragma once

#include <cstdint>

#include "models/core/rect.h"

namespace tessel {

class pe_grid {
public:
    /// One PE's data paths, per cycle of its clock: SRAM read and write ports, the ramp to its router; and
    /// the fixed cycles every task pays.
    struct paths {
        double read_bpc = 0, write_bpc = 0, ramp_bpc = 0;
        double overhead_cycles = 0;
    };

    virtual ~pe_grid() = default;
    virtual int width() const = 0;
    virtual int height() const = 0;
    /// The unit of the PE at (x, y): PEs are numbered x-major, as their per-unit statistics are.
    std::int32_t unit_of(int x, int y) const { return static_cast<std::int32_t>(y * width() + x); }
    /// The PE a unit names as a 1 x 1 rectangle; empty when the unit is not a PE of the grid.
    grid_rect rect_of(std::int32_t unit) const {
        const std::int64_t w = width(), pes = w * height();
        if (unit < 0 || unit >= pes) return grid_rect{};
        const int x = static_cast<int>(unit % w), y = static_cast<int>(unit / w);
        return grid_rect{x, y, x + 1, y + 1};
    }
    /// Whether `r` is a non-empty rectangle of PEs inside the grid.
    bool holds(const grid_rect& r) const {
        return !r.empty() && r.x0 >= 0 && r.y0 >= 0 && r.x1 <= width() && r.y1 <= height();
    }
    virtual paths pe_paths() const = 0;
};

}  // namespace tessel
