// The step grid and its interpolation rule (engine/serve/step_table.h), by hand.
#include <gtest/gtest.h>

#include "engine/serve/step_table.h"

using namespace tessel::serve;

TEST(step_table, batch_grid_is_powers_of_two_then_the_cap) {
    EXPECT_EQ(batch_grid(1), (std::vector<std::int64_t>{1}));
    EXPECT_EQ(batch_grid(6), (std::vector<std::int64_t>{1, 2, 4, 6}));
    EXPECT_EQ(batch_grid(8), (std::vector<std::int64_t>{1, 2, 4, 8}));
}

TEST(step_table, the_grid_holds_what_fits_the_cache_and_the_prefill_budget) {
    grid_bounds b;
    b.max_batch = 8;
    b.max_prefill_batch = 4;
    b.max_prefill_tokens = 2048;
    b.prompt_min = b.prompt_max = 512;
    b.context_min = 512;
    b.context_max = 638;
    b.kv_tokens = 4000;
    const auto g = step_grid(b);
    // Prefill 1, 2 and 4 prompts of 512 (4 x 512 = 2048, the budget); decode 1, 2 and 4 sequences at 512 and 638
    // cached tokens (4 x 638 = 2552 fit 4000; 8 x 512 do not).
    std::vector<step_shape> want = {{false, 1, 512}, {false, 1, 638}, {false, 2, 512}, {false, 2, 638}, {false, 4, 512},
                                    {false, 4, 638}, {true, 1, 512},  {true, 2, 512},  {true, 4, 512}};
    EXPECT_EQ(g, want);
    // With 4500 tokens of cache, batch 8 holds 562 each: it is simulated from 512 to 562 cached tokens.
    b.kv_tokens = 4500;
    const auto g2 = step_grid(b);
    EXPECT_NE(std::find(g2.begin(), g2.end(), step_shape{false, 8, 562}), g2.end());
}

TEST(step_table, steps_between_the_grid_are_linear_in_length_then_in_batch) {
    step_table t;
    t.add({false, 1, 100}, {1, 10});
    t.add({false, 1, 200}, {2, 20});
    t.add({false, 4, 100}, {4, 40});
    t.add({false, 4, 200}, {6, 60});
    EXPECT_DOUBLE_EQ(t.decode(4, 100).seconds, 4);    // on the grid: exactly
    EXPECT_DOUBLE_EQ(t.decode(1, 150).seconds, 1.5);  // halfway along batch 1's row
    EXPECT_DOUBLE_EQ(t.decode(4, 150).seconds, 5);
    // Batch 2 is a third of the way from 1 to 4: 1.5 + (5 - 1.5) / 3.
    EXPECT_DOUBLE_EQ(t.decode(2, 150).seconds, 1.5 + 3.5 / 3);
    EXPECT_DOUBLE_EQ(t.decode(2, 150).joules, 15 + 35.0 / 3);
    EXPECT_DOUBLE_EQ(t.decode(1, 300).seconds, 3);  // past the row's end, its line continues
}

TEST(transfer_table, is_exact_at_its_points_and_linear_between_and_beyond) {
    transfer_table t;
    t.add(512, 0.001);
    t.add(1024, 0.0015);
    t.add(2048, 0.003);
    EXPECT_DOUBLE_EQ(t.seconds(1024), 0.0015);
    EXPECT_DOUBLE_EQ(t.seconds(768), 0.00125);
    EXPECT_DOUBLE_EQ(t.seconds(256), 0.00075);  // the first segment continued
    EXPECT_DOUBLE_EQ(t.seconds(4096), 0.006);   // the last one continued
    transfer_table one;
    one.add(512, 0.001);
    EXPECT_DOUBLE_EQ(one.seconds(600), 0.001);  // one point: every length takes its time
}
