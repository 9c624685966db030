#include "models/core/grid_placement.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {

sram_tally::sram_tally(int width, int height, std::uint64_t capacity, std::string holder)
    : m_width(width), m_height(height), m_cap(capacity), m_holder(std::move(holder)) {
    if (width < 0 || height < 0 || capacity > 0xffffffffULL) throw std::logic_error("sram_tally: bad grid or capacity");
    m_used.assign(static_cast<size_t>(width) * static_cast<size_t>(height), 0);
}

void sram_tally::add(const grid_placement& p) {
    const grid_rect& r = p.rect;
    if (!(p.bytes_per_pe >= 0) || !std::isfinite(p.bytes_per_pe))
        throw input_error(p.what + ": " + std::to_string(p.bytes_per_pe) + " bytes per PE of " + m_holder +
                          " (expected a number of bytes, 0 or more)");
    if (p.bytes_per_pe == 0 || r.empty()) return;
    if (r.x0 < 0 || r.y0 < 0 || r.x1 > m_width || r.y1 > m_height)
        throw input_error(p.what + ": PEs [" + std::to_string(r.x0) + "," + std::to_string(r.x1) + ") x [" +
                          std::to_string(r.y0) + "," + std::to_string(r.y1) + ") are outside the " +
                          std::to_string(m_width) + " x " + std::to_string(m_height) + " PEs of " + m_holder);
    // Whole bytes; both sides below 2^53, so the sums are exact.
    const double add = std::ceil(p.bytes_per_pe - 1e-9), cap = static_cast<double>(m_cap);
    for (int y = r.y0; y < r.y1; ++y)
        for (int x = r.x0; x < r.x1; ++x) {
            const double u = m_used[static_cast<size_t>(y) * static_cast<size_t>(m_width) + static_cast<size_t>(x)];
            if (u + add > cap)
                throw input_error(p.what + " needs " + format_bytes(add) + " on PE (" + std::to_string(x) + "," +
                                  std::to_string(y) + ") of " + m_holder + ", which already holds " + format_bytes(u) +
                                  " of its " + format_bytes(cap) + " (" + format_bytes(u + add - cap) + " short)");
        }
    const auto a = static_cast<std::uint32_t>(add);
    for (int y = r.y0; y < r.y1; ++y) {
        std::uint32_t* row = &m_used[static_cast<size_t>(y) * static_cast<size_t>(m_width)];
        for (int x = r.x0; x < r.x1; ++x) row[x] += a;
    }
}

void sram_tally::clear() { std::fill(m_used.begin(), m_used.end(), 0u); }

std::uint64_t sram_tally::max_used() const {
    std::uint32_t m = 0;
    for (std::uint32_t u : m_used) m = std::max(m, u);
    return m;
}

}  // namespace tessel
