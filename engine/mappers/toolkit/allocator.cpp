#include "engine/mappers/toolkit/allocator.h"

#include <algorithm>
#include <iterator>

namespace tessel::toolkit {

std::uint64_t address_allocator::block(std::uint64_t bytes) const {
    bytes = (bytes + m_o.align - 1) / m_o.align * m_o.align;
    return bytes == 0 ? m_o.min_block : bytes;
}

bool address_allocator::fits(std::uint64_t bytes) const {
    bytes = block(bytes);
    for (const auto& [at, room] : m_free)
        if (room >= bytes) return true;
    return m_o.capacity == 0 || m_top + bytes <= m_o.capacity;
}

std::uint64_t address_allocator::alloc(std::uint64_t bytes) {
    bytes = block(bytes);
    auto best = m_free.end();
    for (auto it = m_free.begin(); it != m_free.end(); ++it)
        if (it->second >= bytes && (best == m_free.end() || it->second < best->second)) best = it;
    std::uint64_t at;
    if (best != m_free.end()) {
        at = best->first;
        const std::uint64_t rest = best->second - bytes;
        m_free.erase(best);
        if (rest > 0) m_free[at + bytes] = rest;
    } else {
        at = m_top;
        m_top += bytes;
    }
    m_used += bytes;
    m_peak = std::max(m_peak, m_used);
    m_size[at] = bytes;
    return m_o.base + at;
}

void address_allocator::free(std::uint64_t address) {
    const std::uint64_t at = address - m_o.base;
    const auto s = m_size.find(at);
    if (s == m_size.end()) return;
    std::uint64_t bytes = s->second;
    m_size.erase(s);
    m_used -= bytes;
    auto next = m_free.find(at + bytes);
    if (next != m_free.end()) {
        bytes += next->second;
        m_free.erase(next);
    }
    auto it = m_free.lower_bound(at);
    if (it != m_free.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == at) {
            prev->second += bytes;
            return;
        }
    }
    m_free[at] = bytes;
}

}  // namespace tessel::toolkit
