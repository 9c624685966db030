// A grid of processing elements held as data (a wafer-scale engine's PE array): every PE has a private SRAM
// whose placements the grid checks, and rectangles of PEs may be registered as extra units (spans) whose
// compute steps run on every PE of the span in lockstep. What the wafer mappers place and run on; a component
// offers it through component::grid(). The timing of one PE is its unit_model(); the data paths below are what
// that model does not say.
#pragma once

#include <cstdint>
#include <string>

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
    /// The unit of the PE at (x, y).
    virtual std::int32_t unit_of(int x, int y) const = 0;
    virtual paths pe_paths() const = 0;

    /// Registers a rectangle of PEs as a unit for lockstep compute steps; returns its unit number.
    virtual std::int32_t add_span(const grid_rect& s) = 0;
    /// The rectangle a unit covers (a single PE for the PEs' own units).
    virtual grid_rect span_of(std::int32_t unit) const = 0;
    /// Places `bytes_per_pe` bytes of `what` on every PE of `s`; throws input_error when a PE would hold more
    /// than its SRAM.
    virtual void place(const grid_rect& s, double bytes_per_pe, const std::string& what) = 0;
    /// Bytes placed on a PE so far, and the most on any PE.
    virtual std::uint64_t used_bytes(std::int32_t pe) const = 0;
    virtual std::uint64_t max_used_bytes() const = 0;
    /// Forgets all placements (a mapper starting over with another plan).
    virtual void clear_placements() = 0;
};

}  // namespace tessel
