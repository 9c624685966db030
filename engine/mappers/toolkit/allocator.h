// Addresses in one memory, for every mapper that lays tensors out in one (streaming memory, off-chip memory
// behind a mesh or an RDU's AGCUs, a GPU's device memory). Blocks are aligned; the range is
// [base, base + capacity). Without free() it is a bump allocator (weights and spills laid out once); with it,
// best fit over the freed ranges, coalescing neighbours on free (a caching allocator without size classes).
// The allocator only counts: whether running past the capacity is an error, and how to say so, is the mapper's.
#pragma once

#include <cstdint>
#include <map>

namespace tessel::toolkit {

class address_allocator {
public:
    struct options {
        std::uint64_t capacity = 0;   // bytes; 0 = unbounded
        std::uint64_t align = 4096;   // block granularity
        std::uint64_t base = 0;       // first address
        std::uint64_t min_block = 0;  // bytes a zero-byte request takes (0: none, it shares the next address)
    };
    address_allocator() = default;
    explicit address_allocator(const options& o) : m_o(o) {}

    /// The address of a new block for `bytes` (rounded up to the alignment).
    std::uint64_t alloc(std::uint64_t bytes);
    /// Returns the block at `address` to the free ranges (no-op for an address it did not hand out).
    void free(std::uint64_t address);

    /// Bytes from the base to the end of the highest block ever handed out.
    std::uint64_t high_water() const { return m_top; }
    /// The most bytes in blocks at once.
    std::uint64_t peak() const { return m_peak; }
    std::uint64_t capacity() const { return m_o.capacity; }
    /// Whether the blocks reach past the capacity.
    bool overflowed() const { return m_o.capacity > 0 && m_top > m_o.capacity; }
    /// Whether a block for `bytes` would fit now: in a freed range, or above the highest block within the capacity.
    bool fits(std::uint64_t bytes) const;

private:
    std::uint64_t block(std::uint64_t bytes) const;  // a request's block: aligned, or min_block for zero bytes

    options m_o;
    std::uint64_t m_top = 0, m_used = 0, m_peak = 0;
    std::map<std::uint64_t, std::uint64_t> m_free;  // offset -> bytes
    std::map<std::uint64_t, std::uint64_t> m_size;  // offset -> bytes of blocks in use
};

}  // namespace tessel::toolkit
