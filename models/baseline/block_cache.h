// The residency part of a last-level cache (a GPU's L2, a TPU's CMEM), tracked in blocks of a few tens of KiB
// rather than 128-byte lines: which address ranges are on chip between kernels, least recently used first out,
// write-allocate and write-back. A kernel's reads are hits where a block is resident and DRAM reads where not;
// its writes allocate dirty blocks; evicting a dirty block writes its bytes back to DRAM. A stream longer than
// the cache evicts its own head before it comes round again, as LRU does, so a tensor hits only if it fits.
// Leaves out: associativity and set conflicts, the 128 B line and sector granularity, the two L2 partitions of
// the A100/H100 (data is counted once), replacement policies other than LRU.
#pragma once

#include <algorithm>
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

    /// Blocks one cache may track (a long scan's first pass goes block by block where its victims are partly
    /// dirty: the bound keeps that affordable).
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
    /// (component::takes_whole_streams): accesses that continue the last one in their direction are appended to it
    /// (see emit), and a long scan's tail in closed form. The requests and their order as the memory sees them do
    /// not change.
    void coalesce(bool on) { m_coalesce = on; }

    std::uint64_t capacity() const { return m_blocks * m_block; }
    std::uint64_t block_bytes() const { return m_block; }
    /// Bytes of [address, address + bytes) resident now.
    double resident(std::uint64_t address, double bytes) const;

private:
    /// Blocks [first, end) resident, each with `dirty` bytes written since it was filled. Recency rises with the
    /// address inside an extent; an older stamp is older, and inside one stamp (the pieces of one access, or an
    /// extent split by a later access) lower addresses are older.
    struct extent {
        std::uint64_t first, end;
        std::uint64_t stamp;  // the access that last made these blocks newest
        double dirty;
    };
    using extent_it = std::vector<extent>::iterator;

    double access(std::uint64_t address, double bytes, bool write, std::vector<dram_access>& dram);
    /// Accesses blocks [from, to) of the access [address, end), in ascending order, as LRU does block by block;
    /// needs to - from < the capacity in blocks (so no block of this access is evicted by it). Returns the hits.
    double access_blocks(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to, bool write,
                         std::vector<dram_access>& dram);
    /// Makes the absent blocks [from, to) newest, evicting the oldest blocks first when the cache is full: a read
    /// asks DRAM for each block before the write-back of the block it evicts, as LRU would one block at a time.
    void fill(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to, bool write,
              std::vector<dram_access>& dram);
    /// Read misses of blocks [from, to) of the access [address, end).
    void misses(std::vector<dram_access>& dram, std::uint64_t address, std::uint64_t end, std::uint64_t from,
                std::uint64_t to) const;
    /// Blocks [from, from + count) of the access [address, end) come in one by one, each evicting the next of
    /// blocks victim, victim + 1, ... (each with `dirty` bytes to write back).
    void fill_over(std::vector<dram_access>& dram, std::uint64_t address, std::uint64_t end, std::uint64_t from,
                   std::uint64_t count, std::uint64_t victim, double dirty, bool write) const;
    /// Places [from, to) as the newest blocks (they are absent), with each block's dirty bytes after a read
    /// (`dirty`) or after a write of the access [address, end) on top of `dirty`.
    void place(std::uint64_t address, std::uint64_t end, std::uint64_t from, std::uint64_t to, bool write,
               double dirty);
    void place_run(std::uint64_t from, std::uint64_t to, double dirty);
    /// The extent holding block b, or the first one after it.
    extent_it at_or_after(std::uint64_t b);
    std::vector<extent>::const_iterator at_or_after(std::uint64_t b) const;
    /// Removes [from, to), which lies inside extent `e`, leaving the rest where it was.
    void cut(extent_it e, std::uint64_t from, std::uint64_t to);
    /// The extent with the oldest blocks (a look at each: a cache holds few extents, a kernel's operands).
    extent_it oldest();
    /// Bytes of block b inside [address, end).
    std::uint64_t part_of(std::uint64_t b, std::uint64_t address, std::uint64_t end) const {
        return std::min(end, (b + 1) * m_block) - std::max(address, b * m_block);
    }
    /// Appends a DRAM access. Coalescing, it is merged into the last access in its direction where it continues
    /// it and at most one access of the other direction lies between: a whole-stream memory keeps one open run per
    /// direction, so the requests it makes do not change (misses interleaved with write-backs stay two runs).
    void emit(std::vector<dram_access>& dram, std::uint64_t address, double bytes, bool write) const {
        if (m_coalesce && !dram.empty()) {
            dram_access* same = &dram.back();
            if (same->write != write && dram.size() > 1) same = &dram[dram.size() - 2];
            if (same->write == write && same->address + static_cast<std::uint64_t>(std::ceil(same->bytes)) == address) {
                same->bytes += bytes;
                return;
            }
        }
        dram.push_back({address, bytes, write});
    }

    std::uint64_t m_block = 1;
    std::uint64_t m_blocks = 0;
    std::uint64_t m_held = 0;
    std::uint64_t m_stamp = 0;
    // By address. A kernel's operands leave a few extents however many blocks they span, so an access costs a
    // few steps per extent it meets rather than a lookup and a list splice per block (the TPU's 2048-block CMEM
    // made those most of a 7B GPT plan's run time).
    std::vector<extent> m_extents;
    bool m_coalesce = false;
    struct scan_run {
        std::uint64_t count;
        double dirty;
    };
    std::vector<scan_run> m_scan_runs;  // a long scan's first K blocks' dirty bytes, run by run
};

}  // namespace tessel
