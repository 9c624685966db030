// The server's batching worked by hand on a three-request trace: continuous batching with KV-block admission and
// a preemption, chunked prefill, and static batching of the same requests. Step costs are a small hand-made table (its
// rule is step_table_test's), so every time below is a sum of those costs.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/serve/batcher.h"
#include "models/core/error.h"

using namespace tessel::serve;

namespace {

// Prefill: one prompt costs 10 ms at 4 tokens and 30 ms at 12 (linear between: 20 ms at 8, 22.5 ms at 9); two
// prompts padded to 8 cost 30 ms. Decode: 2 ms for one sequence, 3 ms for two, at any context.
step_table hand_table() {
    step_table t;
    t.add({true, 1, 4}, {0.010, 1});
    t.add({true, 1, 12}, {0.030, 3});
    t.add({true, 2, 8}, {0.030, 3});
    t.add({false, 1, 4}, {0.002, 0.2});
    t.add({false, 2, 4}, {0.003, 0.3});
    return t;
}

// Chunked prefill's steps: 2 ms + 1 ms a token, with no decodes or one beside the chunk (at 4 cached tokens);
// a decode of one sequence 2 ms at any context.
step_table chunked_table() {
    step_table t;
    t.add({true, 1, 1, 0, 0, 0}, {0.003, 3});
    t.add({true, 1, 6, 0, 0, 0}, {0.008, 8});
    t.add({true, 1, 1, 0, 1, 4}, {0.004, 4});
    t.add({true, 1, 5, 0, 1, 4}, {0.008, 8});
    t.add({false, 1, 4}, {0.002, 0.2});
    return t;
}

// r0 at 0 (prompt 8, output 3), r1 and r2 at 5 ms (prompts 4 and 8, outputs 2 and 4).
std::vector<request> three() { return {{0, 0.0, 8, 3}, {1, 0.005, 4, 2}, {2, 0.005, 8, 4}}; }

// Blocks of 4 tokens, 6 of them (24 tokens): too few for all three to grow at once.
server_config config(bool continuous) {
    server_config c;
    c.continuous = continuous;
    c.max_batch = 4;
    c.max_prefill_tokens = 64;
    c.block_tokens = 4;
    c.kv_blocks = 6;
    return c;
}

}  // namespace

TEST(batcher, continuous_batching_admits_by_blocks_and_preempts_the_newest) {
    const auto reqs = three();
    const serve_run run = run_server(reqs, config(true), hand_table());
    // 0      r0 admitted (8 tokens: 2 blocks, 4 free); prefill 1 x 8: 20 ms.
    // 20 ms  r0's first token. r1 (1 block) and r2 (2 blocks) admitted, 1 block free; prefill 2 x 8: 30 ms.
    // 50 ms  r1, r2 first tokens. Decoding needs a 5th token's block for each (3 > 1 free): r2, the newest, is
    //        preempted (its 2 blocks back, 3 free); r0 and r1 take one each (1 free); decode of 2: 3 ms.
    // 53 ms  r0 token 2, r1 token 2 = its last (its 2 blocks back, 3 free). r2 re-admitted over its prompt and
    //        its one token (9 tokens: 3 blocks, 0 free); prefill 1 x 9: 22.5 ms, which gives its 2nd token.
    // 75.5   decode of r0 and r2 (each has 9 cached, a 10th fits its 3 blocks): 3 ms.
    // 78.5   r0 token 3 = its last (3 blocks back). Decode of r2 alone: 2 ms.
    // 80.5   r2 token 4 = its last.
    ASSERT_EQ(run.steps.size(), 6u);
    const double ends[] = {0.020, 0.050, 0.053, 0.0755, 0.0785, 0.0805};
    const bool prefill[] = {true, true, false, true, false, false};
    const std::int64_t batch[] = {1, 2, 2, 1, 2, 1};
    const std::int64_t blocks[] = {2, 5, 5, 6, 6, 3};
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
        EXPECT_EQ(run.steps[i].prefill, prefill[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].batch, batch[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].kv_blocks, blocks[i]) << "step " << i;
    }
    EXPECT_DOUBLE_EQ(run.steps[2].context, 6);  // (8 + 4) / 2 cached before the first decode
    EXPECT_DOUBLE_EQ(run.steps[3].context, 9);  // the re-prefill's length
    const double first[] = {0.020, 0.050, 0.050}, finish[] = {0.0785, 0.053, 0.0805};
    const int preempted[] = {0, 0, 1};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(run.outcomes[i].first_token_s, first[i], 1e-12) << "request " << i;
        EXPECT_NEAR(run.outcomes[i].finish_s, finish[i], 1e-12) << "request " << i;
        EXPECT_EQ(run.outcomes[i].preemptions, preempted[i]) << "request " << i;
    }
}

TEST(batcher, chunked_prefill_runs_decodes_beside_prompt_chunks_within_the_token_budget) {
    // 6 tokens a step. Mixed steps cost 2 ms + 1 ms a token at any decode count (rows of 0 and 1 decodes); decodes
    // alone 2 ms for one sequence, 3 ms for two. r0 at 0 (prompt 8, output 3), r1 at 5 ms (prompt 4, output 2),
    // r2 at 17 ms (prompt 3, output 2).
    step_table t = chunked_table();
    t.add({false, 2, 4}, {0.003, 0.3});
    server_config c = config(true);
    c.chunk = 6;
    c.kv_blocks = 20;
    const std::vector<request> reqs = {{0, 0.0, 8, 3}, {1, 0.005, 4, 2}, {2, 0.017, 3, 2}};
    const serve_run run = run_server(reqs, c, t);
    // 0      r0 admitted (2 blocks); its first 6 prompt tokens: 8 ms.
    // 8 ms   r0's last 2 (over its 6), then r1 admitted (1 block) and its 4: one chunk of 6 tokens, 8 ms; both
    //        prompts are done, so both first tokens come at its end.
    // 16 ms  r0 and r1 decode (a block more each: 5 in use), nothing waits: a decode of 2 over 6 on average, 3 ms.
    // 19 ms  r1's 2nd token is its last (2 blocks back). r0 decodes over 9 and r2 (arrived at 17, 1 block) takes 3
    //        of the 5 tokens left: 4 tokens, 1 decode: halfway along that row, 6 ms.
    // 25 ms  r0's 3rd token is its last, r2's first. r2 decodes alone over 3: 2 ms.
    ASSERT_EQ(run.steps.size(), 5u);
    const double ends[] = {0.008, 0.016, 0.019, 0.025, 0.027};
    const bool prefill[] = {true, true, false, true, false};
    const std::int64_t batch[] = {1, 2, 2, 2, 1}, tokens[] = {6, 6, 2, 4, 1}, decodes[] = {0, 0, 0, 1, 0};
    const std::int64_t blocks[] = {2, 3, 5, 4, 1};
    const double context[] = {0, 0, 6, 9, 3};
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
        EXPECT_EQ(run.steps[i].prefill, prefill[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].batch, batch[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].tokens, tokens[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].decodes, decodes[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].kv_blocks, blocks[i]) << "step " << i;
        EXPECT_DOUBLE_EQ(run.steps[i].context, context[i]) << "step " << i;
    }
    const double first[] = {0.016, 0.016, 0.025}, finish[] = {0.025, 0.019, 0.027};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(run.outcomes[i].first_token_s, first[i], 1e-12) << "request " << i;
        EXPECT_NEAR(run.outcomes[i].finish_s, finish[i], 1e-12) << "request " << i;
    }
}

TEST(batcher, chunked_prefill_preempts_the_newest_for_the_decodes_blocks) {
    // Blocks of 4 tokens, 3 of them; 8 tokens a step. r0 and r1 at 0, each prompt 4 and output 4.
    server_config c = config(true);
    c.chunk = 8;
    c.kv_blocks = 3;
    const std::vector<request> reqs = {{0, 0.0, 4, 4}, {1, 0.0, 4, 4}};
    const serve_run run = run_server(reqs, c, chunked_table());
    // 0      both admitted (a block each, 1 free), one chunk of their 8 tokens: the row continued, 10 ms.
    // 10 ms  both first tokens. Both decodes need a 2nd block (2 > 1 free): r1, the newest, is preempted (its block
    //        back, 2 free) and r0 takes one (1 free). r1 needs 2 blocks for its prompt and token (5): it waits.
    //        r0 decodes alone over 4, 5, 6: 2 ms each; its 4th token at 16 ms is its last (2 blocks back, 3 free).
    // 16 ms  r1 admitted (2 blocks), its 5 tokens: 7 ms; its 2nd token at 23 ms, then decodes over 5 and 6: 27 ms.
    const double ends[] = {0.010, 0.012, 0.014, 0.016, 0.023, 0.025, 0.027};
    ASSERT_EQ(run.steps.size(), 7u);
    for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
    EXPECT_EQ(run.steps[4].tokens, 5);
    EXPECT_NEAR(run.outcomes[0].finish_s, 0.016, 1e-12);
    EXPECT_NEAR(run.outcomes[1].first_token_s, 0.010, 1e-12);
    EXPECT_NEAR(run.outcomes[1].finish_s, 0.027, 1e-12);
    EXPECT_EQ(run.outcomes[0].preemptions, 0);
    EXPECT_EQ(run.outcomes[1].preemptions, 1);
}

TEST(batcher, static_batching_waits_for_the_batch_and_pads_it) {
    const auto reqs = three();
    const serve_run run = run_server(reqs, config(false), hand_table());
    // 0      r0 alone (it holds 8 + 3 - 1 = 10 tokens: 3 blocks); prefill 20 ms, then 2 decodes of 2 ms.
    // 24 ms  r1 and r2, waiting since 5 ms, form the next batch (padded to 8 + 4 - 1 = 11 tokens: 3 blocks each);
    //        prefill 2 x 8: 30 ms, then decodes of 3 ms until r2's 4th token: r1 ends at the first.
    ASSERT_EQ(run.steps.size(), 7u);
    const double ends[] = {0.020, 0.022, 0.024, 0.054, 0.057, 0.060, 0.063};
    for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
    EXPECT_EQ(run.steps[3].kv_blocks, 6);
    EXPECT_DOUBLE_EQ(run.steps[6].context, 10);  // 8 + 2 decoded before it
    EXPECT_NEAR(run.outcomes[0].finish_s, 0.024, 1e-12);
    EXPECT_NEAR(run.outcomes[1].first_token_s, 0.054, 1e-12);
    EXPECT_NEAR(run.outcomes[1].finish_s, 0.057, 1e-12);
    EXPECT_NEAR(run.outcomes[2].finish_s, 0.063, 1e-12);
}

TEST(batcher, a_lone_request_waits_for_nothing_but_its_steps) {
    // TTFT of a request alone is its prefill; every later token one decode step.
    const std::vector<request> one = {{0, 1.0, 4, 3}};
    const serve_run run = run_server(one, config(true), hand_table());
    EXPECT_NEAR(run.outcomes[0].first_token_s - 1.0, 0.010, 1e-12);
    EXPECT_NEAR(run.outcomes[0].finish_s - 1.0, 0.014, 1e-12);
}

TEST(batcher, closed_loop_users_send_the_next_request_when_theirs_ends) {
    // One user, three requests of one prompt token and one output token (prefill only, 10 ms each, 1 x 4 row):
    // each starts when the last ends.
    std::vector<request> reqs = {{0, 0, 4, 1}, {1, -1, 4, 1}, {2, -1, 4, 1}};
    server_config c = config(true);
    c.closed_loop_users = 1;
    const serve_run run = run_server(reqs, c, hand_table());
    EXPECT_DOUBLE_EQ(run.arrivals[1], run.outcomes[0].finish_s);
    EXPECT_NEAR(run.outcomes[2].finish_s, 0.030, 1e-12);
}

TEST(batcher, replicas_take_requests_in_turn) {
    // Two replicas: r0 and r2 on the first, r1 on the second, which prefills it at once.
    const auto reqs = three();
    server_config c = config(true);
    c.replicas = 2;
    const serve_run run = run_server(reqs, c, hand_table());
    EXPECT_EQ(run.outcomes[1].replica, 1);
    EXPECT_EQ(run.outcomes[2].replica, 0);
    EXPECT_NEAR(run.outcomes[1].first_token_s, 0.015, 1e-12);  // 5 ms + prefill 1 x 4
}

TEST(batcher, a_request_longer_than_the_cache_is_refused) {
    const std::vector<request> big = {{0, 0, 20, 8}};  // 27 tokens: 7 blocks of 4, the cache has 6
    try {
        run_server(big, config(true), hand_table());
        FAIL() << "expected an input_error";
    } catch (const tessel::input_error& e) {
        EXPECT_NE(std::string(e.what()).find("needs more KV cache than a replica has"), std::string::npos) << e.what();
    }
}

TEST(batcher, disaggregated_prefill_sends_each_cache_to_the_decode_replica) {
    // Replica 0 prefills, replica 1 decodes. A cache of 4 tokens takes 2 ms to send and one of 8 tokens 4 ms (the
    // table's line: 0.5 ms a token). r0 at 0 (prompt 8, output 3); r1 and r2 at 5 ms (prompts 4, outputs 2).
    transfer_table sent;
    sent.add(4, 0.002);
    sent.add(8, 0.004);
    server_config c = config(true);
    c.replicas = 2;
    c.prefill_replicas = 1;
    c.transfers = &sent;
    const std::vector<request> reqs = {{0, 0.0, 8, 3}, {1, 0.005, 4, 2}, {2, 0.005, 4, 2}};
    const serve_run run = run_server(reqs, c, hand_table());
    // 0      replica 0 prefills r0 (2 blocks): 20 ms.
    // 20     r0's first token; its cache leaves (8 tokens: 4 ms, its 2 blocks held until then). r1 and r2 were
    //        waiting: replica 0 prefills them together, padded to 4 (the table's batch of 2: 30 ms).
    // 24     r0's cache arrives; replica 1 admits it (2 blocks, and a 3rd for its 9th token) and decodes: 2 ms.
    // 26     r0 token 2; decode again: 2 ms. 28: r0 token 3, its last.
    // 50     r1 and r2's first tokens; their caches leave one after the other over replica 0's links: r1 50-52,
    //        r2 52-54 (2 ms waiting).
    // 52     r1 arrives and decodes alone: 2 ms. 54: r1's last token; r2 arrives and decodes: 56 ms.
    ASSERT_EQ(run.steps.size(), 6u);
    const double ends[] = {0.020, 0.050, 0.026, 0.028, 0.054, 0.056};
    const bool prefill[] = {true, true, false, false, false, false};
    const int replica[] = {0, 0, 1, 1, 1, 1};
    const std::int64_t blocks[] = {2, 4, 3, 3, 2, 2};
    for (std::size_t i = 0; i < 6; ++i) {
        EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
        EXPECT_EQ(run.steps[i].prefill, prefill[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].replica, replica[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].kv_blocks, blocks[i]) << "step " << i;
    }
    const double first[] = {0.020, 0.050, 0.050}, finish[] = {0.028, 0.054, 0.056};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(run.outcomes[i].first_token_s, first[i], 1e-12) << "request " << i;
        EXPECT_NEAR(run.outcomes[i].finish_s, finish[i], 1e-12) << "request " << i;
    }
    ASSERT_EQ(run.transfers.size(), 3u);
    const double ready[] = {0.020, 0.050, 0.050}, start[] = {0.020, 0.050, 0.052}, end[] = {0.024, 0.052, 0.054};
    const std::int64_t tokens[] = {8, 4, 4};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(run.transfers[i].request, static_cast<int>(i));
        EXPECT_EQ(run.transfers[i].from, 0);
        EXPECT_EQ(run.transfers[i].to, 1);
        EXPECT_EQ(run.transfers[i].tokens, tokens[i]);
        EXPECT_NEAR(run.transfers[i].ready_s, ready[i], 1e-12) << "transfer " << i;
        EXPECT_NEAR(run.transfers[i].start_s, start[i], 1e-12) << "transfer " << i;
        EXPECT_NEAR(run.transfers[i].end_s, end[i], 1e-12) << "transfer " << i;
    }
    // Every replica prefilling leaves none to decode.
    c.prefill_replicas = 2;
    EXPECT_THROW(run_server(reqs, c, hand_table()), tessel::input_error);
}

namespace {

// Speculative decoding, 2 draft tokens a step. The model: a prefill of 8 tokens 20 ms, a verify of 3 tokens a
// sequence 5 ms at any context. The draft: a prefill of 8 tokens 4 ms, a decode 1 ms at any context.
step_table speculative_table() {
    step_table t;
    t.add({true, 1, 8}, {0.020, 2});
    t.add({true, 1, 3, 8}, {0.005, 0.5});
    t.add({true, 1, 3, 16}, {0.005, 0.5});
    t.add({false, 1, 8}, {0.002, 0.2});
    return t;
}

step_table draft_table() {
    step_table t;
    t.add({true, 1, 8}, {0.004, 0.4});
    t.add({false, 1, 8}, {0.001, 0.1});
    t.add({false, 1, 16}, {0.001, 0.1});
    return t;
}

server_config speculative_config(const step_table& draft, double acceptance) {
    server_config c = config(true);
    c.speculate = 2;
    c.acceptance = acceptance;
    c.draft = &draft;
    return c;
}

}  // namespace

TEST(batcher, speculative_decoding_keeps_the_accepted_drafts_and_one_more) {
    // One request: prompt 8, output 6; every draft token accepted.
    // 0      prefill, the model's and the draft's: 20 + 4 = 24 ms; the first token (8 cached, 2 blocks).
    // 24 ms  a step writes 3 tokens (the last one and 2 drafts): 11 tokens, 3 blocks; 2 draft decodes and a
    //        verify: 1 + 1 + 5 = 7 ms. All accepted: 2 drafts and the model's own token, 3 (4 in all; 11 cached).
    // 31 ms  2 tokens still needed, so the step writes 2: 13 tokens, 4 blocks; 7 ms; both kept (6 = done).
    // 38 ms  its last token: TPOT (38 - 24) / 5 = 2.8 ms.
    const step_table draft = draft_table();
    const std::vector<request> one = {{0, 0.0, 8, 6}};
    const serve_run run = run_server(one, speculative_config(draft, 1.0), speculative_table());
    ASSERT_EQ(run.steps.size(), 3u);
    const double ends[] = {0.024, 0.031, 0.038};
    const std::int64_t emitted[] = {0, 3, 2}, blocks[] = {2, 3, 4};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_NEAR(run.steps[i].end_s, ends[i], 1e-12) << "step " << i;
        EXPECT_EQ(run.steps[i].emitted, emitted[i]) << "step " << i;
        EXPECT_EQ(run.steps[i].kv_blocks, blocks[i]) << "step " << i;
    }
    EXPECT_NEAR(run.steps[1].energy_j, 0.1 + 0.1 + 0.5, 1e-12);
    EXPECT_NEAR(run.outcomes[0].first_token_s, 0.024, 1e-12);
    EXPECT_NEAR(run.outcomes[0].finish_s, 0.038, 1e-12);
    // Nothing accepted: each step keeps only the model's own token, 5 steps of 7 ms after the prefill.
    const serve_run none = run_server(one, speculative_config(draft, 0.0), speculative_table());
    ASSERT_EQ(none.steps.size(), 6u);
    EXPECT_NEAR(none.outcomes[0].finish_s, 0.024 + 5 * 0.007, 1e-12);
    // Speculation needs continuous batching without chunked prefill.
    server_config chunked = speculative_config(draft, 0.5);
    chunked.chunk = 16;
    EXPECT_THROW(run_server(one, chunked, speculative_table()), tessel::input_error);
}

TEST(batcher, draft_acceptances_are_independent_draws_at_the_stated_rate) {
    // With independent acceptances at rate a, the tokens a step keeps (accepted drafts + 1) average
    // (1 - a^(k+1)) / (1 - a): 2.3056 for a = 0.6, k = 4.
    double kept = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) kept += 1.0 + static_cast<double>(accepted_drafts(7, i % 1000, i / 1000, 4, 0.6));
    EXPECT_NEAR(kept / n, (1 - std::pow(0.6, 5)) / 0.4, 0.01);
    EXPECT_EQ(accepted_drafts(7, 3, 10, 4, 0.6), accepted_drafts(7, 3, 10, 4, 0.6));  // deterministic
    for (int i = 0; i < 100; ++i) {
        EXPECT_EQ(accepted_drafts(1, i, 0, 4, 0.0), 0);
        EXPECT_EQ(accepted_drafts(1, i, 0, 4, 1.0), 4);
    }
}
