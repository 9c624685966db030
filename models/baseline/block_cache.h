// The residency part of a last-level cache (a GPU's L2, a TPU's CMEM), tracked in blocks of a few tens of KiB
// rather than 128-byte lines: which address ranges are on chip between kernels, least recently used first out,
// write-allocate and write-back. A kernel's reads are hits where a block is resident and DRAM reads where not;
// its writes allocate dirty blocks; evicting a dirty block writes its bytes back to DRAM. A stream longer than
// the cache evicts its own head before it comes round again, as LRU does, so a tensor hits only if it fits.
// Leaves out: associativity and set conflicts, the 128 B line and sector granularity, the two L2 partitions of
// the A100/H100 (data is counted once), replacement policies other than LRU.
#pragma once

#include <cmath>
#include <cstdint>
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

    /// Blocks one cache may track (its slots are allocated up front).
    static constexpr std::uint64_t k_max_blocks = std::uint64_t{1} << 22;

    block_cache() = default;
    block_cache(std::uint64_t capacity, std::uint64_t block);

    /// Reads [address, address + bytes): returns the bytes found on chip; misses and write-backs are appended
    /// to `dram`.
    double read(std::uint64_t address, double bytes, std::vector<dram_access>& dram);
    /// Writes [address, address + bytes): allocates dirty blocks; write-backs of evicted blocks go to `dram`.
    void write(std::uint64_t address, double bytes, std::vector<dram_access>& dram);
    /// Empties the cache without writing anything back.
    void clear();

    /// For a memory that takes contiguous accesses in one direction as one request
    /// (component::takes_whole_streams): adjacent accesses that continue each other are appended as one, and a
    /// long scan's tail in closed form. Requests and their order as the memory sees them do not change.
    void coalesce(bool on) { m_coalesce = on; }

    std::uint64_t capacity() const { return m_blocks * m_block; }
    std::uint64_t block_bytes() const { return m_block; }
    /// Bytes of [address, address + bytes) resident now.
    double resident(std::uint64_t address, double bytes) const;

private:
    static constexpr std::uint32_t none = ~0u;
    /// A resident block. Slots are allocated once (one per block of capacity) and linked in recency order:
    /// a kernel touches thousands of blocks, and the cache must not allocate per touch.
    struct slot {
        std::uint64_t block = 0;
        double dirty = 0;  // bytes written since the block was filled
        std::uint32_t newer = none, older = none;
    };
    /// Makes block b most recently used, inserting it (and evicting) when absent; returns its slot, or `none`
    /// when the cache holds nothing. `*hit` says whether it was there.
    std::uint32_t touch(std::uint64_t b, std::vector<dram_access>& dram, bool* hit);
    std::uint32_t find(std::uint64_t b) const;
    /// Whether any of blocks [first, first + n) is resident (a look at every slot: the cache has few).
    bool holds_any(std::uint64_t first, std::uint64_t n) const;
    double access(std::uint64_t address, double bytes, bool write, std::vector<dram_access>& dram);
    /// Appends a DRAM access (merged into the last one where coalescing and it continues it).
    void emit(std::vector<dram_access>& dram, std::uint64_t address, double bytes, bool write) const {
        if (m_coalesce && !dram.empty()) {
            dram_access& last = dram.back();
            if (last.write == write && last.address + static_cast<std::uint64_t>(std::ceil(last.bytes)) == address) {
                last.bytes += bytes;
                return;
            }
        }
        dram.push_back({address, bytes, write});
    }
    void index_insert(std::uint64_t b, std::uint32_t s);
    void index_erase(std::uint64_t b);
    void unlink(std::uint32_t s);
    void link_front(std::uint32_t s);

    std::uint64_t m_block = 1;
    std::uint64_t m_blocks = 0;
    std::vector<slot> m_slots;
    std::uint32_t m_used = 0, m_newest = none, m_oldest = none;
    // Block -> slot, open addressing with linear probing (keys stored + 1; 0 = empty).
    std::vector<std::uint64_t> m_keys;
    std::vector<std::uint32_t> m_vals;
    std::uint64_t m_mask = 0;
    bool m_coalesce = false;
    std::vector<double> m_scan_dirty;  // a long scan's first blocks' dirty bytes
};

}  // namespace tessel
