// Which fixed-size blocks (a TLB's pages) are held, least recently used first out, kept as extents of
// consecutive blocks instead of one entry per block. A kernel touches its operands as ascending address ranges,
// so what it leaves behind is a few extents however many pages they span: an access costs a logarithm per extent
// it meets, not a hash probe per page (the 1T GPT system run touches hundreds of pages per operand).
// Same hits and misses as block_cache reading the same ranges (a test compares them); no dirty state: a TLB
// holds translations, not data.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>

namespace tessel {

class extent_lru {
public:
    extent_lru() = default;
    extent_lru(std::uint64_t capacity, std::uint64_t block);

    /// Touches [address, address + bytes) in ascending order, as block_cache::read does; returns the number of
    /// blocks that were not held (each is then held, evicting the least recently used).
    std::uint64_t touch(std::uint64_t address, double bytes);
    void clear();

    std::uint64_t capacity() const { return m_blocks * m_block; }
    std::uint64_t block_bytes() const { return m_block; }
    /// Blocks held now.
    std::uint64_t held() const { return m_held; }

private:
    /// Blocks [first, end) of one extent; recency rises with the address inside it.
    struct extent {
        std::uint64_t end;
        std::uint64_t stamp;  // the access that last made it newest
    };
    /// Makes [first, end) the newest blocks (they are not held), evicting the oldest to stay within capacity.
    void insert(std::uint64_t first, std::uint64_t end, std::uint64_t stamp);
    /// Removes [first, end), which lies inside the extent starting at `lo`, keeping the rest where it was.
    void cut(std::uint64_t lo, std::uint64_t first, std::uint64_t end);
    void evict(std::uint64_t blocks);

    std::uint64_t m_block = 1;
    std::uint64_t m_blocks = 0;
    std::uint64_t m_held = 0;
    std::uint64_t m_stamp = 0;
    std::map<std::uint64_t, extent> m_by_address;  // first block -> extent
    // Recency: older stamp first; inside one stamp (an extent split by a later hit), lower addresses are older.
    std::set<std::pair<std::uint64_t, std::uint64_t>> m_by_age;  // (stamp, first block)
};

}  // namespace tessel
