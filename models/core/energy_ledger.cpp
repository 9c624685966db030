#include "models/core/energy_ledger.h"

#include <algorithm>

namespace tessel {

const char* energy_part_name(energy_part p) {
    switch (p) {
        case energy_part::compute:
            return "compute";
        case energy_part::sram:
            return "sram";
        case energy_part::dram:
            return "dram";
        case energy_part::network:
            return "network";
        case energy_part::sync:
            return "sync";
    }
    return "?";
}

void energy_ledger::settle() const {
    double rate = 0;
    for (size_t b = 0; b < m_bins.size(); ++b) {
        rate += m_full[b];
        m_full[b] = 0;
        m_bins[b] += rate;
    }
    if (!m_full.empty()) m_full.back() = 0;
}

void energy_ledger::cover(tick last) {
    // The bins must reach `last`: widen them (merging pairs) until max_bins of them do.
    if ((last >> m_shift) >= max_bins) {
        settle();
        while ((last >> m_shift) >= max_bins) {
            std::vector<double> merged((m_bins.size() + 1) / 2, 0.0);
            for (size_t i = 0; i < m_bins.size(); ++i) merged[i / 2] += m_bins[i];
            m_bins = std::move(merged);
            ++m_shift;
        }
        m_full.assign(m_bins.size() + 1, 0.0);
    }
    const size_t need = static_cast<size_t>(last >> m_shift) + 1;
    if (m_bins.size() < need) {
        m_bins.resize(need, 0.0);
        m_full.resize(need + 1, 0.0);
    }
}

void energy_ledger::grow_and_spend(std::uint32_t op, energy_part p, double joules, tick start, tick end) {
    if (op >= m_by_op.size()) m_by_op.resize(op + 1, parts{});
    m_ops = m_by_op.size();
    m_by_op[op][static_cast<size_t>(p)] += joules;
    cover(end - 1);
    m_nbins = m_bins.size();
    spread(joules, start, end);
}

const std::vector<double>& energy_ledger::bins() const {
    settle();
    return m_bins;
}

energy_ledger::parts energy_ledger::total() const {
    parts t{};
    for (const parts& o : m_by_op)
        for (size_t i = 0; i < energy_part_count; ++i) t[i] += o[i];
    return t;
}

double energy_ledger::peak_watts() const {
    const std::vector<double>& b = bins();
    const double most = b.empty() ? 0.0 : *std::max_element(b.begin(), b.end());
    return most / ticks_to_seconds(bin_ticks());
}

}  // namespace tessel
