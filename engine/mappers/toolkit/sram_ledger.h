// SRAM placements while a mapper plans, for arrays of PEs held as data (the wafer: component::grid()). Each
// placement is checked against one PE's SRAM (the component's capacity_bytes()) as it is made, with an
// input_error naming the PE, what it already holds and the shortfall, and is written into the program, which
// carries it to the component when the run begins (program::placements, component::begin_program). The ledger
// answers what a PE holds for the mapper's notes and reports; nothing is set on the component while mapping, so
// a mapper works on a const platform and its program replays on a fresh one.
#pragma once

#include <cstdint>
#include <string>

#include "engine/program/program.h"
#include "models/core/component.h"
#include "models/core/grid_placement.h"
#include "models/core/pe_grid.h"

namespace tessel::toolkit {

class sram_ledger {
public:
    /// Placements on the PEs of `holder` (a component with a grid()), recorded in `prog`.
    sram_ledger(const component& holder, program& prog);

    /// Places `bytes_per_pe` bytes of `what` on every PE of `r` (nothing when the bytes are 0). Throws
    /// input_error, placing nothing, when a PE would hold more than its SRAM.
    void place(const grid_rect& r, double bytes_per_pe, const std::string& what);
    /// Bytes placed so far on the PE at (x, y), and the most on any PE.
    std::uint64_t used_bytes(int x, int y) const;
    std::uint64_t max_used_bytes() const { return m_tally.max_used(); }

private:
    std::uint32_t m_comp;
    const pe_grid& m_grid;
    program& m_prog;
    sram_tally m_tally;
};

}  // namespace tessel::toolkit
