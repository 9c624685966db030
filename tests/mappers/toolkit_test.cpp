// The mapper toolkit on its own: the address allocator every mapper lays tensors out with (bump allocation,
// best fit over freed ranges, coalescing, the capacity), the one rectangle type (grid blocks and tensor
// regions), the matrix-product split enumerator (visiting order, pruning, ties) and tensor liveness through
// views. Expected values are derived by hand in the comments.
#include <gtest/gtest.h>

#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/liveness.h"
#include "engine/mappers/toolkit/matmul_split.h"
#include "engine/workload/op_types.h"
#include "engine/workload/yaml_workload.h"
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
    EXPECT_TRUE(a.fits(0));
    EXPECT_FALSE(a.fits(1));
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

TEST(toolkit_allocator, a_freed_range_makes_room_in_a_full_memory) {
    // Two 4 KiB blocks fill an 8 KiB memory; freeing the first makes room for one block of up to 4 KiB, no more.
    address_allocator a({8192, 4096, 0, 0});
    const auto x = a.alloc(4096);
    a.alloc(1);
    EXPECT_FALSE(a.fits(1));
    a.free(x);
    EXPECT_TRUE(a.fits(4096));
    EXPECT_FALSE(a.fits(4097));  // two blocks: the freed range is one
    EXPECT_EQ(a.alloc(4000), 0u);
    EXPECT_FALSE(a.overflowed());
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

TEST(toolkit_split, visits_batch_then_m_n_k_with_each_list_given_the_factors_so_far) {
    // 4 units: batch {1, 2}; M {1, 2}; N up to the units left; K only 1. With batch 2 and M 2 nothing is left for N
    // beyond 1.
    toolkit::split_space sp;
    sp.batch = toolkit::fixed({1, 2});
    sp.m = toolkit::fixed({1, 2});
    sp.n = [](const toolkit::matmul_split& x) {
        std::vector<int> v;
        for (int n = 1; n <= 4 / (x.batch * x.m); n *= 2) v.push_back(n);
        return v;
    };
    // K: only 1, and no K at all for n = 4 (a branch the space skips).
    sp.k = [](const toolkit::matmul_split& x) { return x.n == 4 ? std::vector<int>{} : std::vector<int>{1}; };
    std::vector<std::string> seen;
    toolkit::for_each_split(sp, [&](const toolkit::matmul_split& x) { seen.push_back(x.str()); });
    const std::vector<std::string> want = {"1x1x1x1", "1x1x2x1", "1x2x1x1", "1x2x2x1", "2x1x1x1", "2x1x2x1", "2x2x1x1"};
    EXPECT_EQ(seen, want);
}

TEST(toolkit_split, best_split_keeps_the_cheapest_prunes_with_the_best_so_far_and_breaks_ties_by_the_policy) {
    // M x N of a 64 x 64 x 64 product on up to 8 units: cost = compute (64 * 64 / (m n)) + traffic (64 n + 64 m: A
    // once per N band, B once per M band). Visiting order (M first: 2, 1, 4, 8; N: 8 / m, and also 1 for m = 1):
    //   1x2x4x1: 512 + 256 + 128 = 896       (the first best)
    //   1x1x1x1: compute alone 4096 > 896    (pruned: not costed)
    //   1x1x8x1: 512 + 512 + 64 = 1088
    //   1x4x2x1: 512 + 128 + 256 = 896       (a tie: the policy keeps fewer M parts, so 2x4 stays)
    //   1x8x1x1: 512 + 64 + 512 = 1088
    struct plan {
        toolkit::matmul_split s;
        double cost;
    };
    toolkit::split_space sp;
    sp.batch = sp.k = toolkit::fixed({1});
    sp.m = toolkit::fixed({2, 1, 4, 8});
    sp.n = [](const toolkit::matmul_split& x) { return x.m == 1 ? std::vector<int>{1, 8} : std::vector<int>{8 / x.m}; };
    int costed = 0;
    const std::function<std::optional<plan>(const toolkit::matmul_split&, const plan*)> cost =
        [&](const toolkit::matmul_split& x, const plan* best) -> std::optional<plan> {
        const double compute = 64.0 * 64 / (x.m * x.n);
        if (best && compute > best->cost) return std::nullopt;  // cannot win
        ++costed;
        return plan{x, compute + 64.0 * x.n + 64.0 * x.m};
    };
    const std::function<bool(const plan&, const plan&)> better = [](const plan& a, const plan& b) {
        return a.cost < b.cost || (a.cost == b.cost && a.s.m < b.s.m);
    };
    const auto best = toolkit::best_split<plan>(sp, cost, better);
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->s.str(), "1x2x4x1");
    EXPECT_EQ(best->cost, 896);
    EXPECT_EQ(costed, 4);
}

TEST(toolkit_split, smooth_factors_are_powers_of_two_and_three_and_near_divisions) {
    // d = 10, at most 6 parts: 2^a 3^b <= 6: 1 2 3 4 6; ceil(10/q) for q = 1..8: 10 5 4 3 2 2 2 2 (10 > 6 dropped);
    // the limit 6.
    EXPECT_EQ(toolkit::smooth_factors(10, 6), (std::vector<int>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(toolkit::smooth_factors(1, 1216), (std::vector<int>{1}));
}

TEST(toolkit_liveness, views_share_their_source_and_its_last_read_comes_after_theirs) {
    // a = relu(x); v = reshape(a); w = reshape(v); b = add(a, w); c = relu(v). Every op's inputs are read once it
    // is done, a view's too (as the mappers do). a's storage: its 2 readers (v, b), then v's 2 (w, c) and w's 1
    // (b) as they are shared: 5 reads, by v, w, b (twice) and c; the last is c's.
    const workload_graph g = load_workload_yaml_text(R"(
workload: live
tensors:
  x: {shape: [4, 8], role: input}
ops:
  - {name: a, op: relu, inputs: [x]}
  - {name: v, op: reshape, inputs: [a], shape: [8, 4]}
  - {name: w, op: reshape, inputs: [v], shape: [4, 8]}
  - {name: b, op: add, inputs: [a, w]}
  - {name: c, op: relu, inputs: [v]}
)",
                                                     "live.yaml", {});
    toolkit::tensor_liveness live(g);
    const int a = g.find_tensor("a"), v = g.find_tensor("v"), w = g.find_tensor("w");
    std::vector<std::string> freed;
    for (int o : g.topological_order()) {
        const op_node& op = g.op(o);
        if (is_view(op))
            for (int t : op.outputs) live.share(t, view_source(g, op));
        live.read_inputs(op, [&](int r) { freed.push_back(op.name + ":" + g.tensor(r).name); });
    }
    EXPECT_EQ(live.root(v), a);
    EXPECT_EQ(live.root(w), a);  // a view of a view
    EXPECT_EQ(freed, (std::vector<std::string>{"a:x", "c:a"}));
    EXPECT_EQ(live.reads_left(a), 0u);
}
