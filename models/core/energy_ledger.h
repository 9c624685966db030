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

    /// `joules` spent for op `op` over [start, end) (an instant when end <= start). Inline: every action of a run
    /// passes here; a new op or a time past the last bin takes the slow path.
    __attribute__((always_inline)) void spend(std::uint32_t op, energy_part p, double joules, tick start, tick end) {
        if (joules == 0) return;
        if (end <= start) end = start + 1;  // an instant: the bin it falls in
        if (op >= m_ops || ((end - 1) >> m_shift) >= m_nbins) return grow_and_spend(op, p, joules, start, end);
        m_by_op.data()[op][static_cast<size_t>(p)] += joules;
        spread(joules, start, end);
    }

    /// Joules by part, per op index (ops that spent nothing may be missing at the end).
    const std::vector<parts>& by_op() const { return m_by_op; }
    parts total() const;

    /// The power timeline: joules spent in each bin of bin_ticks() from time 0. Bins double in width (pairs
    /// merge) whenever a spend ends past the last one, so a run of any length keeps at most max_bins of them.
    const std::vector<double>& bins() const;
    tick bin_ticks() const { return tick{1} << m_shift; }
    static constexpr size_t max_bins = 1024;
    /// The highest dynamic power over one bin (0 W when nothing was spent).
    double peak_watts() const;

private:
    void grow_and_spend(std::uint32_t op, energy_part p, double joules, tick start, tick end);
    void cover(tick last);
    /// Spreads `joules` evenly over [start, end), inside the bins: the partial first and last bins their share,
    /// the whole bins between one bin's worth each (as a difference in m_full).
    void spread(double joules, tick start, tick end) {
        const tick first = start >> m_shift, last = (end - 1) >> m_shift;
        double* bins = m_bins.data();
        if (first == last) {
            bins[first] += joules;
            return;
        }
        // Tick counts as signed (they are far below 2^63): one instruction to convert, where unsigned takes several.
        auto real = [](tick t) { return static_cast<double>(static_cast<std::int64_t>(t)); };
        const double per_tick = joules / real(end - start);
        bins[first] += per_tick * real(((first + 1) << m_shift) - start);
        bins[last] += per_tick * real(end - (last << m_shift));
        if (last > first + 1) {
            const double whole = per_tick * real(tick{1} << m_shift);
            double* full = m_full.data();
            full[first + 1] += whole;
            full[last] -= whole;
        }
    }

    /// Adds the pending whole-bin shares (m_full) into m_bins.
    void settle() const;

    std::vector<parts> m_by_op;
    // A spend over many bins adds its partial first and last bins directly and its whole bins as a difference
    // (m_full: +rate at its first whole bin, -rate after its last), so each spend costs the same however long.
    mutable std::vector<double> m_bins, m_full;
    unsigned m_shift = 0;           // bins are 2^m_shift ticks wide
    size_t m_ops = 0, m_nbins = 0;  // m_by_op.size(), m_bins.size(): the hot path's bounds in one load each
};

}  // namespace tessel
