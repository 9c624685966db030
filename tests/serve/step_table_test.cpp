// The step grid and its interpolation rule (engine/serve/step_table.h), by hand.
#include <gtest/gtest.h>

#include <algorithm>

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

TEST(step_table, speculative_verify_steps_take_the_decode_steps_place_and_rule) {
    grid_bounds b;
    b.max_batch = 2;
    b.prompt_min = b.prompt_max = 512;
    b.max_prefill_tokens = 512;
    b.context_min = 512;
    b.context_max = 638;
    b.kv_tokens = 4000;
    b.speculate = 3;
    // Beside each decode shape, a verify of 4 tokens a sequence (3 drafts and one more) over the same context.
    const auto g = step_grid(b);
    for (const std::int64_t batch : {1, 2})
        for (const std::int64_t context : {512, 638}) {
            EXPECT_NE(std::find(g.begin(), g.end(), step_shape{false, batch, context}), g.end());
            EXPECT_NE(std::find(g.begin(), g.end(), step_shape{true, batch, 4, context}), g.end());
        }
    // The rule: linear in the context within a batch size, then linear between batch sizes; the decode and
    // prefill steps beside them are not taken for verify steps.
    step_table t;
    t.add({true, 1, 4, 100}, {1, 10});
    t.add({true, 1, 4, 200}, {2, 20});
    t.add({true, 4, 4, 100}, {4, 40});
    t.add({true, 4, 4, 200}, {6, 60});
    t.add({false, 1, 100}, {100, 100});
    t.add({true, 1, 4}, {100, 100});
    EXPECT_DOUBLE_EQ(t.verify(1, 4, 150).seconds, 1.5);
    EXPECT_DOUBLE_EQ(t.verify(4, 4, 150).seconds, 5.0);
    EXPECT_DOUBLE_EQ(t.verify(2, 4, 150).seconds, 1.5 + (5.0 - 1.5) / 3);  // a third of the way from 1 to 4
    EXPECT_DOUBLE_EQ(t.verify(1, 4, 250).joules, 25);                      // the last segment continued
    EXPECT_DOUBLE_EQ(t.decode(1, 100).seconds, 100);
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

TEST(step_table, the_chunked_grid_has_mixed_steps_instead_of_whole_prefills) {
    grid_bounds b;
    b.max_batch = 4;
    b.chunk = 64;
    b.prompt_min = 100;
    b.prompt_max = 300;
    b.context_min = 100;
    b.context_max = 400;
    b.kv_tokens = 100000;
    const auto g = step_grid(b);
    auto has = [&](const step_shape& s) { return std::find(g.begin(), g.end(), s) != g.end(); };
    // Decode counts 0, 1, 2, 3 (the most that leave a token for a prompt), each at T + 1 tokens and at 16, 32, 64
    // tokens in all, the decodes over the shortest context.
    for (const std::int64_t d : {0, 1, 2, 3}) {
        EXPECT_TRUE(has({true, 1, 1, 0, d, d > 0 ? 100 : 0})) << d;
        for (const std::int64_t t : {16, 32, 64}) EXPECT_TRUE(has({true, 1, t - d, 0, d, d > 0 ? 100 : 0})) << d;
    }
    EXPECT_FALSE(has({true, 1, 64, 0, 4, 100})) << "4 decodes fill the batch";
    // The chunks alone over the longest prefix (a 300-token prompt's last chunk starts at most 299 in).
    for (const std::int64_t t : {1, 16, 32, 64}) EXPECT_TRUE(has({true, 1, t, 299, 0, 0})) << t;
    // No whole prefill of a prompt, and the decode steps as without chunks.
    EXPECT_FALSE(has({true, 1, 100, 0, 0, 0}));
    EXPECT_TRUE(has({false, 4, 100}));
    EXPECT_TRUE(has({false, 4, 400}));
    EXPECT_EQ(g.size(), 4u * 4 + 4 + 3 * 2);
}

TEST(step_table, a_mixed_step_by_the_rule_by_hand) {
    step_table t;
    // At the reference contexts (the decodes over 100, no prefix): 2 ms + 0.1 ms a token without decodes, 3 ms +
    // 0.1 ms a token with 2 decodes.
    t.add({true, 1, 10, 0, 0, 0}, {0.003, 3});
    t.add({true, 1, 50, 0, 0, 0}, {0.007, 7});
    t.add({true, 1, 8, 0, 2, 100}, {0.004, 4});
    t.add({true, 1, 48, 0, 2, 100}, {0.008, 8});
    // The decodes of 2 over 100 and 300 cached tokens: 1 ms more at 300.
    t.add({false, 2, 100}, {0.002, 2});
    t.add({false, 2, 300}, {0.003, 3});
    // The chunk over the longest prefix, 400: 2 ms more at 10 tokens, 4 ms more at 50.
    t.add({true, 1, 10, 400, 0, 0}, {0.005, 5});
    t.add({true, 1, 50, 400, 0, 0}, {0.011, 11});
    EXPECT_DOUBLE_EQ(t.mixed(0, 0, 50, 0).seconds, 0.007);    // on the grid
    EXPECT_DOUBLE_EQ(t.mixed(2, 100, 28, 0).seconds, 0.006);  // 30 tokens with 2 decodes: halfway along its row
    // 1 decode: halfway between the rows at 30 tokens (5 ms and 6 ms); the decode steps' only row (batch 2)
    // stands for every batch: context 200 adds half of its 1 ms.
    EXPECT_NEAR(t.mixed(1, 200, 29, 0).seconds, 0.0055 + 0.0005, 1e-15);
    // A chunk of 30 over a prefix of 100: a quarter of the way to 400, where it adds 3 ms at 30 tokens.
    EXPECT_NEAR(t.mixed(0, 0, 30, 100).seconds, 0.005 + 0.00075, 1e-15);
    EXPECT_NEAR(t.mixed(0, 0, 30, 100).joules, 5 + 0.75, 1e-12);
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
