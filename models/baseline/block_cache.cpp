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
        throw input_error("a cache of " + std::to_string(m_blocks) + " blocks (capacity " + format_bytes(static_cast<double>(capacity)) +
                          " in blocks of " + format_bytes(static_cast<double>(m_block)) + ") is more than the " +
                          std::to_string(k_max_blocks) + " a residency model tracks; use larger blocks");
    m_slots.resize(static_cast<size_t>(m_blocks));
    std::uint64_t table = 16;
    while (table < 2 * m_blocks) table *= 2;  // at most half full: short probes
    m_keys.assign(static_cast<size_t>(table), 0);
    m_vals.assign(static_cast<size_t>(table), none);
    m_mask = table - 1;
}

namespace {
std::uint64_t spread(std::uint64_t b) { return (b + 1) * 0x9E3779B97F4A7C15ull; }
}  // namespace

std::uint32_t block_cache::find(std::uint64_t b) const {
    for (std::uint64_t i = (spread(b) >> 20) & m_mask;; i = (i + 1) & m_mask) {
        if (m_keys[i] == 0) return none;
        if (m_keys[i] == b + 1) return m_vals[i];
    }
}

void block_cache::index_insert(std::uint64_t b, std::uint32_t s) {
    std::uint64_t i = (spread(b) >> 20) & m_mask;
    while (m_keys[i] != 0) i = (i + 1) & m_mask;
    m_keys[i] = b + 1;
    m_vals[i] = s;
}

void block_cache::index_erase(std::uint64_t b) {
    std::uint64_t i = (spread(b) >> 20) & m_mask;
    while (m_keys[i] != b + 1) i = (i + 1) & m_mask;
    // Backward-shift deletion: later entries of the probe run move up, so lookups never need tombstones.
    for (std::uint64_t j = (i + 1) & m_mask; m_keys[j] != 0; j = (j + 1) & m_mask) {
        const std::uint64_t home = (spread(m_keys[j] - 1) >> 20) & m_mask;
        // Entry j may fill the hole at i unless its home lies cyclically in (i, j].
        const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        m_keys[i] = m_keys[j];
        m_vals[i] = m_vals[j];
        i = j;
    }
    m_keys[i] = 0;
    m_vals[i] = none;
}

void block_cache::unlink(std::uint32_t s) {
    slot& x = m_slots[s];
    if (x.newer != none) m_slots[x.newer].older = x.older;
    else m_newest = x.older;
    if (x.older != none) m_slots[x.older].newer = x.newer;
    else m_oldest = x.newer;
    x.newer = x.older = none;
}

void block_cache::link_front(std::uint32_t s) {
    slot& x = m_slots[s];
    x.newer = none;
    x.older = m_newest;
    if (m_newest != none) m_slots[m_newest].newer = s;
    m_newest = s;
    if (m_oldest == none) m_oldest = s;
}

void block_cache::clear() {
    m_used = 0;
    m_newest = m_oldest = none;
    std::fill(m_keys.begin(), m_keys.end(), 0);
}

std::uint32_t block_cache::touch(std::uint64_t b, std::vector<dram_access>& dram, bool* hit) {
    std::uint32_t s = find(b);
    *hit = s != none;
    if (s != none) {
        if (s != m_newest) {
            unlink(s);
            link_front(s);
        }
        return s;
    }
    if (m_blocks == 0) return none;
    if (m_used >= m_blocks) {
        s = m_oldest;
        const slot& victim = m_slots[s];
        if (victim.dirty > 0) emit(dram, victim.block * m_block, victim.dirty, true);
        index_erase(victim.block);
        unlink(s);
    } else {
        s = m_used++;
    }
    m_slots[s].block = b;
    m_slots[s].dirty = 0;
    link_front(s);
    index_insert(b, s);
    return s;
}

bool block_cache::holds_any(std::uint64_t first, std::uint64_t n) const {
    // Slots [0, m_used) are exactly the resident blocks (a slot is only freed by clear()).
    for (std::uint32_t s = 0; s < m_used; ++s)
        if (m_slots[s].block - first < n) return true;
    return false;
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
    auto from_of = [&](std::uint64_t i) { return std::max(address, (first + i) * m_block); };
    auto part_of = [&](std::uint64_t i) {
        return static_cast<double>(std::min(end, (first + i + 1) * m_block) - from_of(i));
    };
    // A scan of more blocks than the cache holds: after its first K blocks the cache holds exactly those (each
    // is newer than anything else), so every later block misses and evicts the block K places behind it. The
    // first K go block by block; the rest follow in closed form (same misses, write-backs and final state).
    const std::uint64_t K = m_blocks;
    const bool long_scan = K > 0 && n > K;
    const bool cold = long_scan && !holds_any(first, n);
    if (cold) {
        // A cold long scan (a large model's weight or activation stream): its first K blocks all miss and evict
        // the cache's contents oldest first (once any free slots are filled), with no lookups.
        m_scan_dirty.resize(static_cast<size_t>(K));
        const std::uint64_t free = K - m_used;
        std::uint32_t victim = m_oldest;
        for (std::uint64_t i = 0; i < K; ++i) {
            if (!write) emit(dram, from_of(i), part_of(i), false);
            if (i >= free) {
                const slot& v = m_slots[victim];
                if (v.dirty > 0) emit(dram, v.block * m_block, v.dirty, true);
                victim = v.newer;
            }
            m_scan_dirty[static_cast<size_t>(i)] = write ? std::min(static_cast<double>(m_block), part_of(i)) : 0.0;
        }
    }
    const std::uint64_t exact = cold ? 0 : long_scan ? K : n;
    double hits = 0;
    for (std::uint64_t i = 0; i < exact; ++i) {
        const std::uint64_t b = first + i;
        const double part = part_of(i);
        if (write) {
            bool hit = false;
            const std::uint32_t s = touch(b, dram, &hit);
            if (s != none) m_slots[s].dirty = std::min(static_cast<double>(m_block), m_slots[s].dirty + part);
            else emit(dram, from_of(i), part, true);  // no cache: the write goes straight to DRAM
            continue;
        }
        // The miss is appended before touch() may append the write-back it causes: the fill is what the kernel
        // waits for.
        const std::uint32_t s = find(b);
        if (s != none) {
            if (s != m_newest) {
                unlink(s);
                link_front(s);
            }
            hits += part;
        } else {
            emit(dram, from_of(i), part, false);
            bool hit = false;
            touch(b, dram, &hit);
        }
    }
    if (!long_scan) return hits;
    if (!cold) {
        m_scan_dirty.resize(static_cast<size_t>(K));
        for (std::uint64_t i = 0; i < K; ++i) m_scan_dirty[static_cast<size_t>(i)] = m_slots[find(first + i)].dirty;
    }
    // Dirty bytes of scan position i once it is resident.
    auto dirty_of = [&](std::uint64_t i) {
        if (i < K) return m_scan_dirty[static_cast<size_t>(i)];
        return write ? std::min(static_cast<double>(m_block), part_of(i)) : 0.0;
    };
    // Coalesced, the scan's blocks from 2K on go at once: a read's are one run of misses (their victims, read
    // by this scan, are clean); a write's are one run of full dirty victims (interior blocks of the scan).
    // A read whose first K blocks leave nothing dirty behind goes at once from K on too.
    const bool clean = !write && std::all_of(m_scan_dirty.begin(), m_scan_dirty.end(), [](double d) { return d == 0; });
    const std::uint64_t each = !m_coalesce ? n : clean ? K : std::min(n, 2 * K);
    for (std::uint64_t i = K; i < each; ++i) {
        if (!write) emit(dram, from_of(i), part_of(i), false);
        const double victim = dirty_of(i - K);
        if (victim > 0) emit(dram, (first + i - K) * m_block, victim, true);
    }
    if (each < n) {
        if (write) emit(dram, (first + K) * m_block, static_cast<double>((n - 2 * K) * m_block), true);
        else emit(dram, from_of(each), static_cast<double>(end - from_of(each)), false);
    }
    clear();
    for (std::uint64_t i = n - K; i < n; ++i) {
        const std::uint32_t s = m_used++;
        m_slots[s].block = first + i;
        m_slots[s].dirty = dirty_of(i);
        link_front(s);
        index_insert(first + i, s);
    }
    return hits;
}

double block_cache::resident(std::uint64_t address, double bytes) const {
    if (bytes <= 0) return 0;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    double in = 0;
    for (std::uint64_t a = address; a < end;) {
        const std::uint64_t b = a / m_block;
        const std::uint64_t next = std::min(end, (b + 1) * m_block);
        if (find(b) != none) in += static_cast<double>(next - a);
        a = next;
    }
    return in;
}

}  // namespace tessel
