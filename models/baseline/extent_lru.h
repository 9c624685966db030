// Which fixed-size blocks (a TLB's pages) are held, least recently used first out, kept as extents of
// consecutive blocks instead of one entry per block. A kernel touches its operands as ascending address ranges,
// so what it leaves behind is a few extents however many pages they span: an access costs a few steps per extent
// it meets, not a hash probe per page (the 1T GPT system run touches hundreds of pages per operand).
// Same hits and misses as block_cache reading the same ranges (a test compares them); no dirty state: a TLB
// holds translations, not data.
#pragma once

#include <cstdint>
#include <vector>

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
    /// Blocks [first, end) held; recency rises with the address inside an extent. Older stamps are older; inside
    /// one stamp (the pieces of one access, or an extent split by a later hit) lower addresses are older.
    struct extent {
        std::uint64_t first, end;
        std::uint64_t stamp;  // the access that last made it newest
    };
    /// The extent holding block b, or the first one after it.
    std::vector<extent>::iterator at_or_after(std::uint64_t b);
    /// Makes [first, end) the newest blocks (they are not held), evicting the oldest to stay within capacity.
    void insert(std::uint64_t first, std::uint64_t end, std::uint64_t stamp);
    /// Removes [first, end), which lies inside extent `e`, keeping the rest where it was.
    void cut(std::vector<extent>::iterator e, std::uint64_t first, std::uint64_t end);
    void evict(std::uint64_t blocks);

    std::uint64_t m_block = 1;
    std::uint64_t m_blocks = 0;
    std::uint64_t m_held = 0;
    std::uint64_t m_stamp = 0;
    // By address. A TLB meets a few extents at a time (a kernel's operands), so a flat sorted vector beats
    // node-based trees; the oldest is found by a look at each.
    std::vector<extent> m_extents;
};

}  // namespace tessel
