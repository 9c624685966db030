// SRAM a program keeps on the PEs of a pe_grid for its whole run (weights, state, double-buffered rows), and the
// tally of bytes per PE that checks placements against one PE's SRAM. A mapper plans placements with a ledger
// (engine/mappers/toolkit/sram_ledger.h, over the same tally), the program carries them (program::placements,
// written to and read from emitted programs), and the component holding the grid takes them when the run begins
// (component::begin_program) and reports them in its statistics. Leaves out: where in the SRAM the bytes sit
// (banks, addresses) and anything placed or freed during a run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/core/rect.h"

namespace tessel {

struct grid_placement {
    grid_rect rect;           // the PEs, [x0, x1) x [y0, y1)
    double bytes_per_pe = 0;  // on every PE of the rectangle, counted in whole bytes (rounded up)
    std::string what;         // for messages: "op 'fc1' (weights, state and buffers)"
};

/// Bytes placed on each PE of a width x height grid (x-major, as pe_grid numbers its units), each PE holding at
/// most `capacity` bytes (below 4 GiB).
class sram_tally {
public:
    sram_tally() = default;
    /// `holder` names the grid in messages (the component's path).
    sram_tally(int width, int height, std::uint64_t capacity, std::string holder);

    /// Adds `p` to every PE of its rectangle. Throws input_error, leaving the tally as it was, when the rectangle
    /// leaves the grid, when the bytes are not a number >= 0, or when a PE would hold more than its capacity (naming
    /// the PE, what it already holds and the shortfall).
    void add(const grid_placement& p);
    /// Forgets every placement.
    void clear();

    std::uint64_t capacity() const { return m_cap; }
    std::uint64_t used(std::int32_t pe) const { return m_used[static_cast<size_t>(pe)]; }
    std::uint64_t max_used() const;
    /// Bytes per PE, every PE (x-major).
    const std::vector<std::uint32_t>& per_pe() const { return m_used; }

private:
    int m_width = 0, m_height = 0;
    std::uint64_t m_cap = 0;
    std::string m_holder;
    std::vector<std::uint32_t> m_used;
};

}  // namespace tessel
