#include "engine/mappers/toolkit/sram_ledger.h"

#include <stdexcept>

namespace tessel::toolkit {

namespace {

const pe_grid& grid_of(const component& c) {
    const pe_grid* g = c.grid();
    if (!g) throw std::logic_error("sram_ledger: " + c.path() + " is not an array of PEs held as data");
    return *g;
}

}  // namespace

sram_ledger::sram_ledger(const component& holder, program& prog)
    : m_comp(holder.id()),
      m_grid(grid_of(holder)),
      m_prog(prog),
      m_tally(m_grid.width(), m_grid.height(), holder.capacity_bytes(), holder.path()) {}

void sram_ledger::place(const grid_rect& r, double bytes_per_pe, const std::string& what) {
    grid_placement p{r, bytes_per_pe, what};
    m_tally.add(p);
    if (bytes_per_pe > 0 && !r.empty()) m_prog.placements.push_back(placement{m_comp, std::move(p)});
}

std::uint64_t sram_ledger::used_bytes(int x, int y) const { return m_tally.used(m_grid.unit_of(x, y)); }

}  // namespace tessel::toolkit
