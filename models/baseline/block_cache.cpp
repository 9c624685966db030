#include "models/baseline/block_cache.h"

#include <algorithm>
#include <cmath>

namespace tessel {

block_cache::block_cache(std::uint64_t capacity, std::uint64_t block)
    : m_block(std::max<std::uint64_t>(1, block)), m_blocks(capacity / std::max<std::uint64_t>(1, block)) {}

void block_cache::clear() {
    m_lru.clear();
    m_map.clear();
}

bool block_cache::touch(std::uint64_t b, std::vector<dram_access>& dram, entry** e) {
    auto it = m_map.find(b);
    if (it != m_map.end()) {
        m_lru.splice(m_lru.begin(), m_lru, it->second.pos);
        *e = &it->second;
        return true;
    }
    if (m_blocks == 0) {
        *e = nullptr;
        return false;
    }
    if (m_map.size() >= m_blocks) {
        const std::uint64_t victim = m_lru.back();
        auto v = m_map.find(victim);
        if (v->second.dirty > 0) dram.push_back({victim * m_block, v->second.dirty, true});
        m_map.erase(v);
        m_lru.pop_back();
    }
    m_lru.push_front(b);
    entry& n = m_map[b];
    n.pos = m_lru.begin();
    n.dirty = 0;
    *e = &n;
    return false;
}

double block_cache::read(std::uint64_t address, double bytes, std::vector<dram_access>& dram) {
    if (bytes <= 0) return 0;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    double hits = 0;
    std::uint64_t a = address;
    while (a < end) {
        const std::uint64_t b = a / m_block;
        const std::uint64_t next = std::min(end, (b + 1) * m_block);
        const double part = static_cast<double>(next - a);
        entry* e = nullptr;
        // The miss is appended before touch() may append the write-back it causes: the fill is what the kernel
        // waits for.
        if (m_map.count(b)) {
            touch(b, dram, &e);
            hits += part;
        } else {
            dram.push_back({a, part, false});
            touch(b, dram, &e);
        }
        a = next;
    }
    return hits;
}

void block_cache::write(std::uint64_t address, double bytes, std::vector<dram_access>& dram) {
    if (bytes <= 0) return;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    std::uint64_t a = address;
    while (a < end) {
        const std::uint64_t b = a / m_block;
        const std::uint64_t next = std::min(end, (b + 1) * m_block);
        const double part = static_cast<double>(next - a);
        entry* e = nullptr;
        touch(b, dram, &e);
        if (e) e->dirty = std::min(static_cast<double>(m_block), e->dirty + part);
        else dram.push_back({a, part, true});  // no cache: the write goes straight to DRAM
        a = next;
    }
}

double block_cache::resident(std::uint64_t address, double bytes) const {
    if (bytes <= 0) return 0;
    const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
    double in = 0;
    for (std::uint64_t a = address; a < end;) {
        const std::uint64_t b = a / m_block;
        const std::uint64_t next = std::min(end, (b + 1) * m_block);
        if (m_map.count(b)) in += static_cast<double>(next - a);
        a = next;
    }
    return in;
}

}  // namespace tessel
