// Where a run's dynamic energy went, as the components spend it: by op of the program and by part (compute,
// on-chip memory, off-chip memory, network, sync), and over simulated time as a power timeline. A kind spends an
// action here when it serves the transaction that does it, with the same figures its usage() charges, so the
// by-op table and the timeline add up to the summary's totals (tests/report/energy_ledger_test checks every kind).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/core/units.h"

namespace tessel {

/// Where dynamic energy is reported: compute, on-chip memory (SRAM, caches), off-chip memory (DRAM), network, sync.
enum class energy_part : std::uint8_t { compute, sram, dram, network, sync };
inline constexpr size_t energy_part_count = 5;
const char* energy_part_name(energy_part p);

class energy_ledger {
public:
    using parts = std::array<double, energy_part_count>;

    /// `joules` spent for op `op` over [start, end) (an instant when end <= start).
    void spend(std::uint32_t op, energy_part p, double joules, tick start, tick end);

    /// Joules by part, per op index (ops that spent nothing may be missing at the end).
    const std::vector<parts>& by_op() const { return m_by_op; }
    parts total() const;

    /// The power timeline: joules spent in each bin of bin_ticks() from time 0. Bins double in width (pairs
    /// merge) whenever a spend ends past the last one, so a run of any length keeps at most max_bins of them.
    const std::vector<double>& bins() const { return m_bins; }
    tick bin_ticks() const { return m_bin; }
    static constexpr size_t max_bins = 1024;
    /// The highest dynamic power over one bin (0 W when nothing was spent).
    double peak_watts() const;

private:
    void cover(tick end);

    std::vector<parts> m_by_op;
    std::vector<double> m_bins;
    tick m_bin = 1;
};

}  // namespace tessel
