// The block cache against a plain reference LRU (a list of blocks, searched linearly) on random mixes of short
// accesses and scans longer than the cache: the extents and the closed form of long scans must give
// the same hits, the same DRAM reads and write-backs in the same order, and the same residency afterwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <random>
#include <tuple>

#include "models/baseline/block_cache.h"
#include "models/baseline/dram_stream.h"
#include "models/core/error.h"

using namespace tessel;

namespace {

/// Write-allocate, write-back LRU over whole blocks, one block at a time: the definition block_cache follows.
class reference_lru {
public:
    reference_lru(std::uint64_t capacity, std::uint64_t block) : m_block(block), m_blocks(capacity / block) {}

    double access(std::uint64_t address, double bytes, bool write, std::vector<block_cache::dram_access>& dram) {
        if (bytes <= 0) return 0;
        const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
        double hits = 0;
        for (std::uint64_t a = address; a < end;) {
            const std::uint64_t b = a / m_block, next = std::min(end, (b + 1) * m_block);
            const double part = static_cast<double>(next - a);
            auto it = std::find_if(m_lru.begin(), m_lru.end(), [b](const entry& e) { return e.block == b; });
            const bool hit = it != m_lru.end();
            if (hit && !write) hits += part;
            if (!hit && !write) dram.push_back({a, part, false});
            double dirty = 0;
            if (hit) {
                dirty = it->dirty;
                m_lru.erase(it);
            } else if (m_blocks == 0) {
                if (write) dram.push_back({a, part, true});
                a = next;
                continue;
            } else if (m_lru.size() >= m_blocks) {
                if (m_lru.back().dirty > 0) dram.push_back({m_lru.back().block * m_block, m_lru.back().dirty, true});
                m_lru.pop_back();
            }
            if (write) dirty = std::min(static_cast<double>(m_block), dirty + part);
            m_lru.push_front({b, dirty});
            a = next;
        }
        return hits;
    }
    double resident(std::uint64_t address, double bytes) const {
        const std::uint64_t end = address + static_cast<std::uint64_t>(std::ceil(bytes));
        double in = 0;
        for (std::uint64_t a = address; a < end;) {
            const std::uint64_t b = a / m_block, next = std::min(end, (b + 1) * m_block);
            if (std::any_of(m_lru.begin(), m_lru.end(), [b](const entry& e) { return e.block == b; }))
                in += static_cast<double>(next - a);
            a = next;
        }
        return in;
    }

private:
    struct entry {
        std::uint64_t block;
        double dirty;
    };
    std::uint64_t m_block, m_blocks;
    std::list<entry> m_lru;
};

void expect_same(const std::vector<block_cache::dram_access>& a, const std::vector<block_cache::dram_access>& b,
                 int round) {
    ASSERT_EQ(a.size(), b.size()) << "round " << round;
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].address, b[i].address) << "round " << round << " access " << i;
        EXPECT_EQ(a[i].bytes, b[i].bytes) << "round " << round << " access " << i;
        EXPECT_EQ(a[i].write, b[i].write) << "round " << round << " access " << i;
    }
}

/// A memory that takes whole streams and records what it is asked for: each request's address, bytes,
/// direction and the time it may start (the pacing), finishing it at once.
struct recording_memory : tlm::tlm_fw_transport_if<> {
    std::vector<std::tuple<std::uint64_t, std::uint64_t, bool, tick>> requests;
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) override {
        const txn* t = nullptr;
        gp.get_extension(t);
        requests.emplace_back(t->address, t->bytes, t->kind == txn_kind::write, t->head);
    }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
        return tlm::TLM_COMPLETED;
    }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload&) override { return 0; }
};

}  // namespace

TEST(block_cache, coalesced_accesses_make_the_same_whole_stream_requests) {
    // Coalescing merges what a whole-stream memory would merge anyway, and writes long scans in closed form:
    // the memory must see the same requests, in the same order, paced alike, and the hits must agree.
    for (std::uint64_t blocks : {0, 1, 3, 16}) {
        const std::uint64_t block = 1024, capacity = blocks * block;
        block_cache plain(capacity, block), merged(capacity, block);
        merged.coalesce(true);
        std::mt19937_64 rng(3 + blocks);
        for (int round = 0; round < 1500; ++round) {
            std::vector<block_cache::dram_access> a, b;
            double ha = 0, hb = 0;
            for (int o = 0, ops = 1 + static_cast<int>(rng() % 4); o < ops; ++o) {  // a kernel's operands
                if (rng() % 8 == 0) {  // an access the device adds itself (a re-read of a long row, say)
                    const block_cache::dram_access extra{rng() % (64 * block),
                                                         static_cast<double>(1 + rng() % (2 * block)), rng() % 2 == 0};
                    a.push_back(extra);
                    b.push_back(extra);
                }
                const std::uint64_t address = rng() % ((round % 3 == 0 ? 4096 : 64) * block);
                const double bytes = static_cast<double>(1 + rng() % ((rng() % 3 == 0 ? 6 * blocks + 3 : 3) * block));
                if (rng() % 3 == 0) {
                    plain.write(address, bytes, a);
                    merged.write(address, bytes, b);
                } else {
                    ha += plain.read(address, bytes, a);
                    hb += merged.read(address, bytes, b);
                }
            }
            ASSERT_EQ(ha, hb) << "blocks " << blocks << " round " << round;
            ASSERT_LE(b.size(), a.size());
            recording_memory ma, mb;
            txn_payload pa, pb;
            stream_to_memory(ma, pa, a, 1000, 1e9, 256, 0, 0, true);
            stream_to_memory(mb, pb, b, 1000, 1e9, 256, 0, 0, true);
            ASSERT_EQ(ma.requests, mb.requests) << "blocks " << blocks << " round " << round;
        }
    }
}

TEST(block_cache, equals_a_reference_lru_on_random_accesses_and_long_scans) {
    for (std::uint64_t blocks : {0, 1, 3, 16, 64}) {
        const std::uint64_t block = 1024, capacity = blocks * block;
        block_cache c(capacity, block);
        reference_lru r(capacity, block);
        std::mt19937_64 rng(7 + blocks);
        for (int round = 0; round < 3000; ++round) {
            // Addresses in a window a few times the cache, so blocks come back; lengths from a few bytes to
            // several cache sizes (the closed form of long scans), unaligned at both ends.
            // Every third round in a wide window: long scans that find nothing resident (the cold-scan path).
            const std::uint64_t address = rng() % ((round % 3 == 0 ? 4096 : 64) * block);
            const double bytes = static_cast<double>(1 + rng() % ((rng() % 4 == 0 ? 5 * blocks + 3 : 3) * block));
            const bool write = rng() % 3 == 0;
            std::vector<block_cache::dram_access> got, want;
            const double h = write ? (c.write(address, bytes, got), 0.0) : c.read(address, bytes, got);
            const double hr = r.access(address, bytes, write, want);
            ASSERT_EQ(h, hr) << "blocks " << blocks << " round " << round;
            expect_same(got, want, round);
            const std::uint64_t probe = rng() % (64 * block);
            ASSERT_EQ(c.resident(probe, 8 * block), r.resident(probe, 8 * block))
                << "blocks " << blocks << " round " << round;
        }
        c.clear();
        EXPECT_EQ(c.resident(0, 64 * block), 0) << "cleared";
    }
}

TEST(block_cache, misses_that_evict_dirty_blocks_are_two_runs_when_coalesced) {
    // 4 blocks of 1 KiB. Writing [0, 4 KiB) fills the cache with 4 dirty blocks (no DRAM traffic); reading
    // [8 KiB, 12 KiB) then misses 4 times, each miss evicting the oldest dirty block: block by block that is
    // read 8 KiB, write back 0, read 9 KiB, write back 1 KiB, ... A whole-stream memory sees one read stream of
    // 4 KiB and one write-back stream of 4 KiB, and the coalesced cache hands it exactly those two accesses.
    for (bool coalesce : {false, true}) {
        block_cache c(4 * 1024, 1024);
        c.coalesce(coalesce);
        std::vector<block_cache::dram_access> dram;
        c.write(0, 4096, dram);
        EXPECT_TRUE(dram.empty());
        EXPECT_EQ(c.read(8192, 4096, dram), 0.0);
        if (coalesce) {
            ASSERT_EQ(dram.size(), 2u);
            EXPECT_EQ(dram[0].address, 8192u);
            EXPECT_EQ(dram[0].bytes, 4096.0);
            EXPECT_FALSE(dram[0].write);
            EXPECT_EQ(dram[1].address, 0u);
            EXPECT_EQ(dram[1].bytes, 4096.0);
            EXPECT_TRUE(dram[1].write);
        } else {
            ASSERT_EQ(dram.size(), 8u);
            for (std::uint64_t k = 0; k < 4; ++k) {
                EXPECT_EQ(dram[2 * k].address, 8192 + 1024 * k);
                EXPECT_FALSE(dram[2 * k].write);
                EXPECT_EQ(dram[2 * k + 1].address, 1024 * k);
                EXPECT_EQ(dram[2 * k + 1].bytes, 1024.0);
                EXPECT_TRUE(dram[2 * k + 1].write);
            }
        }
        EXPECT_EQ(c.resident(0, 4096), 0.0);
        EXPECT_EQ(c.resident(8192, 4096), 4096.0);
    }
}

TEST(block_cache, too_many_blocks_is_an_input_error) {
    EXPECT_THROW(block_cache(std::uint64_t{1} << 40, 64), input_error);
}
