// The mapper toolkit on its own: the address allocator every mapper lays tensors out with (bump allocation,
// best fit over freed ranges, coalescing, the capacity), and the one rectangle type (grid blocks and tensor
// regions). Expected values are derived by hand in the comments.
#include <gtest/gtest.h>

#include "engine/mappers/toolkit/allocator.h"
#include "models/core/rect.h"

using namespace tessel;
using toolkit::address_allocator;

TEST(toolkit_allocator, bump_blocks_are_aligned_and_count_against_the_capacity) {
    // 4 KiB blocks from base 1 MiB in a 12 KiB memory: 100 B takes one block, 5000 B two, 0 B none.
    address_allocator a({12288, 4096, 1 << 20, 0});
    EXPECT_EQ(a.alloc(100), (1u << 20) + 0);
    EXPECT_EQ(a.alloc(5000), (1u << 20) + 4096);
    EXPECT_EQ(a.alloc(0), (1u << 20) + 12288);  // a zero-byte block takes no room: it shares the next address
    EXPECT_EQ(a.high_water(), 12288u);
    EXPECT_FALSE(a.overflowed());
    EXPECT_TRUE(a.room_for(0));
    EXPECT_FALSE(a.room_for(1));
    a.alloc(1);  // one more block: 16 KiB > 12 KiB
    EXPECT_TRUE(a.overflowed());
    EXPECT_EQ(a.high_water(), 16384u);
}

TEST(toolkit_allocator, best_fit_reuses_the_smallest_freed_range_and_coalesces_neighbours) {
    // 512-byte blocks, unbounded, zero-byte requests take one byte (the kernels mapper's device memory).
    address_allocator a({0, 512, 0, 1});
    const auto x = a.alloc(1000);  // [0, 1024)
    const auto y = a.alloc(512);   // [1024, 1536)
    const auto z = a.alloc(2048);  // [1536, 3584)
    const auto w = a.alloc(512);   // [3584, 4096)
    EXPECT_EQ(x, 0u);
    EXPECT_EQ(y, 1024u);
    EXPECT_EQ(z, 1536u);
    EXPECT_EQ(w, 3584u);
    a.free(x);  // free: [0, 1024)
    a.free(z);  // free: [0, 1024), [1536, 3584)
    // 600 B -> 1024: both ranges fit, the smaller (at 0, exactly 1024) wins.
    EXPECT_EQ(a.alloc(600), 0u);
    a.free(y);  // [1024, 1536) joins [1536, 3584): one range [1024, 3584) of 2560 B
    EXPECT_EQ(a.alloc(2560), 1024u);
    EXPECT_EQ(a.high_water(), 4096u);  // nothing new above the top
    EXPECT_EQ(a.peak(), 4096u);        // in use at most: 1024 + 512 + 2048 + 512
    EXPECT_EQ(a.alloc(0), 4096u);      // a one-byte block at the top
    EXPECT_EQ(a.high_water(), 4097u);
}

TEST(toolkit_rect, grid_blocks_and_tensor_regions_share_one_type) {
    const grid_rect r{2, 3, 6, 5};  // x in [2, 6), y in [3, 5): 4 x 2 PEs
    EXPECT_EQ(r.area(), 8);
    EXPECT_TRUE(r.contains(grid_rect{3, 3, 4, 5}));
    EXPECT_EQ(intersect(r, grid_rect{5, 0, 9, 4}).area(), 1);  // x in [5, 6), y in [3, 4)
    EXPECT_EQ(intersect(r, grid_rect{7, 0, 9, 9}).area(), 0);  // disjoint
    // Rows [0.25, 0.75) and columns [0.5, 1) of a tensor: a quarter of it.
    const region q = rows_cols(0.25, 0.75, 0.5, 1.0);
    EXPECT_EQ(q.y0, 0.25);
    EXPECT_EQ(q.x0, 0.5);
    EXPECT_DOUBLE_EQ(q.area(), 0.25);
    EXPECT_DOUBLE_EQ(intersect(q, rows_cols(0, 0.5, 0, 1)).area(), 0.125);
}
