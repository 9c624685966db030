#include "models/baseline/extent_lru.h"

#include <algorithm>
#include <cmath>

namespace tessel {

extent_lru::extent_lru(std::uint64_t capacity, std::uint64_t block)
    : m_block(std::max<std::uint64_t>(1, block)), m_blocks(capacity / std::max<std::uint64_t>(1, block)) {}

void extent_lru::clear() {
    m_extents.clear();
    m_held = 0;
}

std::vector<extent_lru::extent>::iterator extent_lru::at_or_after(std::uint64_t b) {
    return std::lower_bound(m_extents.begin(), m_extents.end(), b,
                            [](const extent& e, std::uint64_t x) { return e.end <= x; });
}

void extent_lru::cut(std::vector<extent>::iterator e, std::uint64_t first, std::uint64_t end) {
    m_held -= end - first;
    const extent whole = *e;
    if (whole.first < first && end < whole.end) {  // a hole in the middle: two pieces of the same age
        e->end = first;
        m_extents.insert(e + 1, extent{end, whole.end, whole.stamp});
    } else if (whole.first < first) {
        e->end = first;
    } else if (end < whole.end) {
        e->first = end;
    } else {
        m_extents.erase(e);
    }
}

void extent_lru::evict(std::uint64_t blocks) {
    while (blocks > 0 && !m_extents.empty()) {
        auto oldest = m_extents.begin();
        for (auto e = m_extents.begin() + 1; e != m_extents.end(); ++e)
            if (e->stamp < oldest->stamp) oldest = e;  // ties: the lower address, seen first, is older
        const std::uint64_t take = std::min(blocks, oldest->end - oldest->first);
        // An extent's oldest blocks are its lowest.
        if (oldest->first + take < oldest->end)
            oldest->first += take;
        else
            m_extents.erase(oldest);
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
    const auto next = at_or_after(first);
    // The access's previous piece ends here: extend it (same recency order, one extent fewer).
    if (next != m_extents.begin()) {
        const auto prev = next - 1;
        if (prev->end == first && prev->stamp == stamp) {
            prev->end = end;
            return;
        }
    }
    m_extents.insert(next, extent{first, end, stamp});
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
        const auto e = at_or_after(p);
        if (e != m_extents.end() && e->first <= p) {
            const std::uint64_t q = std::min(e->end, end);
            cut(e, p, q);
            insert(p, q, stamp);
            p = q;
            continue;
        }
        const std::uint64_t q = e == m_extents.end() ? end : std::min(e->first, end);
        misses += q - p;
        insert(p, q, stamp);
        p = q;
    }
    return misses;
}

}  // namespace tessel
