#include "models/core/energy_ledger.h"

#include <algorithm>

namespace tessel {

const char* energy_part_name(energy_part p) {
    switch (p) {
        case energy_part::compute: return "compute";
        case energy_part::sram: return "sram";
        case energy_part::dram: return "dram";
        case energy_part::network: return "network";
        case energy_part::sync: return "sync";
    }
    return "?";
}

void energy_ledger::cover(tick end) {
    // The bins must reach `end`: widen them (merging pairs) until max_bins of them do.
    while (end / m_bin >= max_bins) {
        std::vector<double> merged((m_bins.size() + 1) / 2, 0.0);
        for (size_t i = 0; i < m_bins.size(); ++i) merged[i / 2] += m_bins[i];
        m_bins = std::move(merged);
        m_bin *= 2;
    }
    const size_t need = static_cast<size_t>(end / m_bin) + 1;
    if (m_bins.size() < need) m_bins.resize(need, 0.0);
}

void energy_ledger::spend(std::uint32_t op, energy_part p, double joules, tick start, tick end) {
    if (joules == 0) return;
    if (op >= m_by_op.size()) m_by_op.resize(op + 1, parts{});
    m_by_op[op][static_cast<size_t>(p)] += joules;
    if (end <= start) {
        cover(start);
        m_bins[start / m_bin] += joules;
        return;
    }
    cover(end - 1);
    // Spread evenly over the interval: each bin gets the share of the interval it holds.
    const double per_tick = joules / static_cast<double>(end - start);
    for (tick b = start / m_bin; b <= (end - 1) / m_bin; ++b) {
        const tick lo = std::max(start, b * m_bin), hi = std::min(end, (b + 1) * m_bin);
        m_bins[b] += per_tick * static_cast<double>(hi - lo);
    }
}

energy_ledger::parts energy_ledger::total() const {
    parts t{};
    for (const parts& o : m_by_op)
        for (size_t i = 0; i < energy_part_count; ++i) t[i] += o[i];
    return t;
}

double energy_ledger::peak_watts() const {
    const double most = m_bins.empty() ? 0.0 : *std::max_element(m_bins.begin(), m_bins.end());
    return most / ticks_to_seconds(m_bin);
}

}  // namespace tessel
