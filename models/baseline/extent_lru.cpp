#include "models/baseline/extent_lru.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace tessel {

extent_lru::extent_lru(std::uint64_t capacity, std::uint64_t block)
    : m_block(std::max<std::uint64_t>(1, block)), m_blocks(capacity / std::max<std::uint64_t>(1, block)) {}

void extent_lru::clear() {
    m_by_address.clear();
    m_by_age.clear();
    m_held = 0;
}

void extent_lru::cut(std::uint64_t lo, std::uint64_t first, std::uint64_t end) {
    const auto it = m_by_address.find(lo);
    const extent e = it->second;
    if (lo < first) {
        it->second.end = first;
    } else {
        m_by_address.erase(it);
        m_by_age.erase({e.stamp, lo});
    }
    if (end < e.end) {
        m_by_address.emplace(end, extent{e.end, e.stamp});
        m_by_age.emplace(e.stamp, end);
    }
    m_held -= end - first;
}

void extent_lru::evict(std::uint64_t blocks) {
    while (blocks > 0 && !m_by_age.empty()) {
        const auto [stamp, lo] = *m_by_age.begin();
        const auto it = m_by_address.find(lo);
        const std::uint64_t end = it->second.end, take = std::min(blocks, end - lo);
        m_by_address.erase(it);
        m_by_age.erase(m_by_age.begin());
        if (lo + take < end) {  // the extent's oldest blocks are its lowest
            m_by_address.emplace(lo + take, extent{end, stamp});
            m_by_age.emplace(stamp, lo + take);
        }
        m_held -= take;
        blocks -= take;
    }
}

void extent_lru::insert(std::uint64_t first, std::uint64_t end, std::uint64_t stamp) {
    if (end - first >= m_blocks) {
        // More than the capacity: one at a time, the range evicts everything and then its own head.
        clear();
        first = end - m_blocks;
    } else if (m_held + (end - first) > m_blocks) {
        evict(m_held + (end - first) - m_blocks);
    }
    if (first == end) return;
    m_held += end - first;
    // The access's previous piece ends here: extend it (same recency order, one extent fewer).
    auto next = m_by_address.lower_bound(first);
    if (next != m_by_address.begin()) {
        auto prev = std::prev(next);
        if (prev->second.end == first && prev->second.stamp == stamp) {
            prev->second.end = end;
            return;
        }
    }
    m_by_address.emplace_hint(next, first, extent{end, stamp});
    m_by_age.emplace(stamp, first);
}

std::uint64_t extent_lru::touch(std::uint64_t address, double bytes) {
    if (bytes <= 0) return 0;
    const std::uint64_t first = address / m_block;
    const std::uint64_t end = (address + static_cast<std::uint64_t>(std::ceil(bytes)) - 1) / m_block + 1;
    if (m_blocks == 0) return end - first;
    const std::uint64_t stamp = ++m_stamp;
    std::uint64_t misses = 0;
    // Piece by piece in ascending order, each piece either held throughout (a hit: it becomes newest) or held
    // nowhere up to the next extent (misses: evict as many of the oldest, then become newest). Taking a piece at
    // once is what block by block does: a piece's own blocks are newer than anything it evicts.
    for (std::uint64_t p = first; p < end;) {
        auto it = m_by_address.upper_bound(p);
        if (it != m_by_address.begin()) {
            const auto held = std::prev(it);
            if (held->second.end > p) {
                const std::uint64_t q = std::min(held->second.end, end);
                cut(held->first, p, q);
                insert(p, q, stamp);
                p = q;
                continue;
            }
        }
        const std::uint64_t q = it == m_by_address.end() ? end : std::min(it->first, end);
        misses += q - p;
        insert(p, q, stamp);
        p = q;
    }
    return misses;
}

}  // namespace tessel
