// The TLB's extent LRU against block_cache reading the same ranges (block_cache is itself checked against a
// plain list LRU): the same misses on every access of random mixes of short accesses, repeats and scans longer
// than the capacity, unaligned at both ends.
#include <gtest/gtest.h>

#include <random>

#include "models/baseline/block_cache.h"
#include "models/baseline/extent_lru.h"

using namespace tessel;

TEST(extent_lru, misses_as_block_cache_reads_do) {
    for (std::uint64_t blocks : {0, 1, 3, 16, 64}) {
        const std::uint64_t block = 2048, capacity = blocks * block;
        extent_lru e(capacity, block);
        block_cache c(capacity, block);
        std::mt19937_64 rng(11 + blocks);
        for (int round = 0; round < 4000; ++round) {
            const std::uint64_t address = rng() % (96 * block);
            const std::uint64_t span = rng() % 4 == 0 ? 3 * blocks + 5 : (rng() % 2 ? 2 : 12);
            const double bytes = static_cast<double>(1 + rng() % (span * block));
            std::vector<block_cache::dram_access> misses;
            c.read(address, bytes, misses);
            ASSERT_EQ(e.touch(address, bytes), misses.size()) << "blocks " << blocks << " round " << round;
            ASSERT_LE(e.held(), blocks);
        }
        e.clear();
        EXPECT_EQ(e.held(), 0u);
        EXPECT_EQ(e.touch(0, 3.0 * block), 3u) << "cleared";
    }
}

TEST(extent_lru, a_hit_in_the_middle_of_an_extent_keeps_the_rest_in_its_place) {
    extent_lru e(4 * 1024, 1024);        // 4 pages of 1 KiB
    EXPECT_EQ(e.touch(0, 4096), 4u);     // pages 0 1 2 3, oldest first
    EXPECT_EQ(e.touch(2048, 1024), 0u);  // page 2 newest: 0 1 3 2
    EXPECT_EQ(e.touch(8192, 2048), 2u);  // evicts 0 and 1: 3 2 8 9
    EXPECT_EQ(e.touch(3072, 1024), 0u);  // 3 held: 2 8 9 3
    EXPECT_EQ(e.touch(0, 1024), 1u);     // evicts 2: 8 9 3 0
    EXPECT_EQ(e.touch(2048, 1024), 1u);  // 2 was evicted
    EXPECT_EQ(e.held(), 4u);
}
