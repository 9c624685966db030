#include "models/baseline/block_cache.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {

block_cache::block_cache(std::uint64_t capacity, std::uint64_t block)
    : m_block(std::max<std::uint64_t>(1, block)), m_blocks(capacity / std::max<std::uint64_t>(1, block)) {
    if (m_blocks > k_max_blocks)
        throw input_error("a cache of " + std::to_string(m_blocks) + " blocks (capacity " +
                          format_bytes(static_cast<double>(capacity)) + " in blocks of " +
                          format_bytes(static_cast<double>(m_block)) + ") is more than the " +
                          std::to_string(k_max_blocks) + " a residency model tracks; use larger blocks");
}

void block_cache::clear() {
    m_extents.clear();
    m_held = 0;
}

block_cache::extent_it block_cache::at_or_after(std::uint64_t b) {
    return std::lower_bound(m_extents.begin(), m_extents.end(), b,
                            [](const extent& e, std::uint64_t x) { return e.end <= x; });
}

std::vector<block_cache::extent>::const_iterator block_cache::at_or_after(std::uint64_t b) const {
    return std::lower_bound(m_extents.begin(), m_extents.end(), b,
                            [](const extent& e, std::uint64_t x) { return e.end <= x; });
}

void block_cache::cut(extent_it e, std::uint64_t from, std::uint64_t to) {
    m_held -= to - from;
    const extent whole = *e;
    if (whole.first < from && to < whole.end) {  // a hole in the middle: two pieces of the same age
        e->end = from;
        m_extents.insert(e + 1, extent{to, whole.end, whole.stamp, whole.dirty});
    } else if (whole.first < from) {
        e->end = from;
    } else if (to < whole.end) {
        e->first = to;
    } else {
        m_extents.erase(e);
    }
}

block_cache::extent_it block_cache::oldest() {
    auto o = m_extents.begin();
    for (auto e = o + 1; e < m_extents.end(); ++e)
        if (e->stamp < o->stamp) o = e;  // ties: the lower address, seen first, is older
    return o;
}

void block_cache::place_run(std::uint64_t from, std::uint64_t to, double dirty) {
    m_held += to - from;
    const auto next = at_or_after(from);
    // The access's previous piece ends here with the same dirty bytes: extend it (same recency order).
    if (next != m_extents.begin()) {
        const auto prev = next - 1;
        if (prev->end == from && prev->stamp == m_stamp && prev->dirty == dirty) {
            prev->end = to;
            return;
        }
    }
    m_extents.insert(next, extent{from, to, m_stamp, dirty});
}

void block_cache::place(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to, bool write,
                        double dirty) {
    if (!write) {
        place_run(from, to, dirty);
        return;
    }
    // A write adds its bytes in each block, up to a whole block: only the access's end blocks can be partial.
    auto written = [&](std::uint64_t b) {
        return std::min(static_cast<double>(m_block), dirty + static_cast<double>(part_of(b, address, end)));
    };
    place_run(from, from + 1, written(from));
    if (to - from > 2) place_run(from + 1, to - 1, written(from + 1));
    if (to - from > 1) place_run(to - 1, to, written(to - 1));
}

void block_cache::misses(std::vector<dram_access>& dram, std::uint64_t address, std::uint64_t end, std::uint64_t from,
                         std::uint64_t to) const {
    if (from == to) return;
    if (!m_coalesce) {
        for (std::uint64_t b = from; b < to; ++b)
            emit(dram, std::max(address, b * m_block), static_cast<double>(part_of(b, address, end)), false);
        return;
    }
    // One access is what the blocks' misses one by one would merge into.
    const std::uint64_t from_address = std::max(address, from * m_block);
    emit(dram, from_address, static_cast<double>(std::min(end, to * m_block) - from_address), false);
}

void block_cache::fill_over(std::vector<dram_access>& dram, std::uint64_t address, std::uint64_t end,
                            std::uint64_t from, std::uint64_t count, std::uint64_t victim, double dirty,
                            bool write) const {
    if (dirty == 0 || (m_coalesce && dirty == static_cast<double>(m_block))) {
        // Coalesced, the misses and the whole-block write-backs each continue their own run: two accesses.
        if (!write) misses(dram, address, end, from, from + count);
        if (dirty > 0) emit(dram, victim * m_block, static_cast<double>(count * m_block), true);
        return;
    }
    for (std::uint64_t k = 0; k < count; ++k) {
        if (!write) misses(dram, address, end, from + k, from + k + 1);
        emit(dram, (victim + k) * m_block, dirty, true);
    }
}

void block_cache::fill(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to, bool write,
                       std::vector<dram_access>& dram) {
    const std::uint64_t free = std::min(to - from, m_blocks - m_held);
    if (!write) misses(dram, address, end, from, from + free);
    for (std::uint64_t b = from + free; b < to;) {
        const auto o = oldest();
        const std::uint64_t take = std::min(to - b, o->end - o->first);
        const std::uint64_t victim = o->first;
        const double dirty = o->dirty;
        // An extent's oldest blocks are its lowest.
        m_held -= take;
        if (o->first + take < o->end)
            o->first += take;
        else
            m_extents.erase(o);
        fill_over(dram, address, end, b, take, victim, dirty, write);
        b += take;
    }
    place(address, end, from, to, write, 0.0);
}

double block_cache::access_blocks(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to,
                                  bool write, std::vector<dram_access>& dram) {
    double hits = 0;
    // Piece by piece in ascending order, each piece either resident throughout (hits: it becomes newest) or
    // resident nowhere up to the next extent (misses: it evicts as many of the oldest blocks, then becomes
    // newest). A piece at once is what block by block does: its own blocks are newer than anything it evicts.
    for (std::uint64_t p = from; p < to;) {
        const auto e = at_or_after(p);
        if (e != m_extents.end() && e->first <= p) {
            const std::uint64_t q = std::min(e->end, to);
            const double dirty = e->dirty;
            cut(e, p, q);
            if (!write) hits += static_cast<double>(std::min(end, q * m_block) - std::max(address, p * m_block));
            place(address, end, p, q, write, dirty);
            p = q;
            continue;
        }
        const std::uint64_t q = e == m_extents.end() ? to : std::min(e->first, to);
        if (m_blocks == 0) {  // no cache: every access goes straight to DRAM
            for (std::uint64_t b = p; b < q; ++b)
                emit(dram, std::max(address, b * m_block), static_cast<double>(part_of(b, address, end)), write);
        } else {
            fill(address, end, p, q, write, dram);
        }
        p = q;
    }
    return hits;
}

double block_cache::read(std::uint64_t address, double bytes, std::vector<dram_access>& dram) {
    return access(address, bytes, false, dram);
}

void block_cache::write(std::uint64_t address, double bytes, std::vector<dram_access>& dram) {
    access(address, bytes, true, dram);
}

double block_cache::access(std::uint64_t address, double bytes, bool write, std::vector<dram_access>& dram) {
    if (bytes <= 0) return 0;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    const std::uint64_t first = address / m_block, n = (end - 1) / m_block - first + 1;
    ++m_stamp;
    const std::uint64_t K = m_blocks;
    if (K == 0 || n <= K) return access_blocks(address, end, first, first + n, write, dram);

    // A scan of more blocks than the cache holds: after its first K blocks the cache holds exactly those (each
    // is newer than anything else), so every later block misses and evicts the block K places behind it. The
    // first K go as any access does; the rest follow in closed form (same misses, write-backs and final state).
    auto from_of = [&](std::uint64_t i) { return std::max(address, (first + i) * m_block); };
    const double whole = static_cast<double>(m_block);
    // Dirty bytes of the scan's first K blocks once they are resident, as runs.
    m_scan_runs.clear();
    double hits = 0;
    const auto met = at_or_after(first);
    if (met == m_extents.end() || met->first >= first + n) {
        // A cold long scan (a large model's weight or activation stream): its first K blocks all miss and evict
        // the cache's contents oldest first (once any free slots are filled).
        std::vector<extent> by_age(m_extents);
        std::stable_sort(by_age.begin(), by_age.end(),
                         [](const extent& a, const extent& b) { return a.stamp < b.stamp; });
        const std::uint64_t free = K - m_held;
        if (!write) misses(dram, address, end, first, first + free);
        std::uint64_t i = free;
        for (const extent& v : by_age) {
            fill_over(dram, address, end, first + i, v.end - v.first, v.first, v.dirty, write);
            i += v.end - v.first;
        }
        // Written, only the first block can be partial (the scan ends K blocks or more later).
        if (write)
            m_scan_runs = {{1, std::min(whole, static_cast<double>(part_of(first, address, end)))}, {K - 1, whole}};
        else
            m_scan_runs = {{K, 0.0}};
    } else {
        hits = access_blocks(address, end, first, first + K, write, dram);
        for (auto e = at_or_after(first); e != m_extents.end() && e->first < first + K; ++e)
            m_scan_runs.push_back({std::min(e->end, first + K) - e->first, e->dirty});
    }
    // Visits scan positions [lo, hi) as runs (from, to, dirty bytes once resident): the first K as recorded,
    // later ones whole blocks written or clean reads, the last block possibly partial.
    auto for_runs = [&](std::uint64_t lo, std::uint64_t hi, auto&& visit) {
        std::uint64_t at = 0;
        for (const scan_run& r : m_scan_runs) {
            if (std::max(lo, at) < std::min(hi, at + r.count))
                visit(std::max(lo, at), std::min(hi, at + r.count), r.dirty);
            at += r.count;
        }
        const double last = write ? std::min(whole, static_cast<double>(part_of(first + n - 1, address, end))) : 0.0;
        if (std::max(lo, K) < std::min(hi, n - 1)) visit(std::max(lo, K), std::min(hi, n - 1), write ? whole : 0.0);
        if (lo <= n - 1 && n - 1 < hi) visit(n - 1, n, last);
    };
    // Coalesced, the scan's blocks from 2K on go at once: a read's are one run of misses (their victims, read
    // by this scan, are clean); a write's are one run of full dirty victims (interior blocks of the scan).
    // A read whose first K blocks leave nothing dirty behind goes at once from K on too.
    const bool clean =
        !write && std::all_of(m_scan_runs.begin(), m_scan_runs.end(), [](const scan_run& r) { return r.dirty == 0; });
    const std::uint64_t each = !m_coalesce ? n : clean ? K : std::min(n, 2 * K);
    // Position i evicts the scan's own block K places behind it.
    for_runs(0, each - K, [&](std::uint64_t from, std::uint64_t to, double dirty) {
        fill_over(dram, address, end, first + from + K, to - from, first + from, dirty, write);
    });
    if (each < n) {
        if (write)
            emit(dram, (first + K) * m_block, static_cast<double>((n - 2 * K) * m_block), true);
        else
            emit(dram, from_of(each), static_cast<double>(end - from_of(each)), false);
    }
    clear();
    for_runs(n - K, n,
             [&](std::uint64_t from, std::uint64_t to, double dirty) { place_run(first + from, first + to, dirty); });
    return hits;
}

double block_cache::resident(std::uint64_t address, double bytes) const {
    if (bytes <= 0) return 0;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    const std::uint64_t last = (end - 1) / m_block;
    double in = 0;
    for (auto e = at_or_after(address / m_block); e != m_extents.end() && e->first <= last; ++e)
        in += static_cast<double>(std::min(end, e->end * m_block) - std::max(address, e->first * m_block));
    return in;
}

}  // namespace tessel
