// The residency part of a last-level cache (a GPU's L2, a TPU's CMEM), tracked in blocks of a few tens of KiB
// rather than 128-byte lines: which address ranges are on chip between kernels, least recently used first out,
// write-allocate and write-back. A kernel's reads are hits where a block is resident and DRAM reads where not;
// its writes allocate dirty blocks; evicting a dirty block writes its bytes back to DRAM. A stream longer than
// the cache evicts its own head before it comes round again, as LRU does, so a tensor hits only if it fits.
// Leaves out: associativity and set conflicts, the 128 B line and sector granularity, the two L2 partitions of
// the A100/H100 (data is counted once), replacement policies other than LRU.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace tessel {

class block_cache {
public:
    /// A DRAM access the cache asks for: a miss to read or a dirty block to write back.
    struct dram_access {
        std::uint64_t address;
        double bytes;
        bool write;
    };

    block_cache() = default;
    block_cache(std::uint64_t capacity, std::uint64_t block);

    /// Reads [address, address + bytes): returns the bytes found on chip; misses and write-backs are appended
    /// to `dram`.
    double read(std::uint64_t address, double bytes, std::vector<dram_access>& dram);
    /// Writes [address, address + bytes): allocates dirty blocks; write-backs of evicted blocks go to `dram`.
    void write(std::uint64_t address, double bytes, std::vector<dram_access>& dram);
    /// Empties the cache without writing anything back.
    void clear();

    std::uint64_t capacity() const { return m_blocks * m_block; }
    std::uint64_t block_bytes() const { return m_block; }
    /// Bytes of [address, address + bytes) resident now.
    double resident(std::uint64_t address, double bytes) const;

private:
    struct entry {
        std::list<std::uint64_t>::iterator pos;
        double dirty = 0;  // bytes written since the block was filled
    };
    /// Makes block b most recently used, inserting it (and evicting) when absent; returns whether it was there.
    bool touch(std::uint64_t b, std::vector<dram_access>& dram, entry** e);

    std::uint64_t m_block = 1;
    std::uint64_t m_blocks = 0;
    std::list<std::uint64_t> m_lru;  // front: most recent
    std::unordered_map<std::uint64_t, entry> m_map;
};

}  // namespace tessel
