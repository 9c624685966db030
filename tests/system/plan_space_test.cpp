// The plans `tessel plan` considers (engine/plan/plan_space.h): every split Megatron's rules allow, the largest
// microbatch that fits with pp = 1 (and the largest for each cheaper recomputation), at least pp microbatches per
// pipeline, ZeRO 0 and 1 with dp > 1, the cheapest recomputation that fits, and the memory of each kept plan equal
// to the system mapper's own estimate.
#include <gtest/gtest.h>

#include <set>

#include "engine/plan/plan_space.h"
#include "engine/system/memory.h"
#include "engine/system/partition.h"

using namespace tessel;

namespace {

/// A 4-layer GPT, 8 heads: tp must divide 8, pp must divide 4 (interleave 2 needs pp * 2 | 4).
const std::map<std::string, std::string> k_gpt = {{"training", "adam"}, {"batch", "16"}, {"layers", "4"},
                                                  {"hidden", "256"},    {"heads", "8"},  {"seq", "128"},
                                                  {"vocab", "512"}};

double estimate(const parallel_plan& p, double capacity) {
    partition_result part = partition("gpt2", k_gpt, p);
    return memory_per_chip(part, capacity).worst().total;
}

/// What plan `p` needs per chip with recomputation `recompute` (whatever `p` says), with no capacity limit.
double needs(parallel_plan p, const std::string& recompute) {
    p.recompute = recompute;
    return estimate(p, 1e15);
}

}  // namespace

TEST(plan_space, every_kept_plan_is_valid_fits_and_follows_the_rules) {
    const double capacity = 80e9;  // everything fits: the search shape alone
    const plan_space s = enumerate_plans("gpt2", k_gpt, 8, capacity, {});
    ASSERT_FALSE(s.candidates.empty());
    EXPECT_TRUE(s.rejected.empty());
    std::set<std::tuple<int, int, int>> splits;
    std::map<std::tuple<int, int, int, int>, std::set<int>> zeros;  // (dp, tp, pp, interleave) -> microbatches per zero
    for (const auto& c : s.candidates) {
        const parallel_plan& p = c.plan;
        EXPECT_TRUE(plan_violations(p, s.target).empty()) << p.str();
        EXPECT_EQ(p.chips(), 8);
        EXPECT_EQ(p.recompute, "none") << p.str();  // 80 GB: nothing needs recomputation
        EXPECT_LE(c.memory_bytes, capacity);
        splits.insert({p.dp, p.tp, p.pp});
        if (p.pp == 1) {
            EXPECT_EQ(p.microbatch, 16 / p.dp) << "pp = 1 keeps the largest microbatch: " << p.str();
        } else {
            EXPECT_GE(microbatches(p, 16), p.pp) << p.str();
        }
        if (p.dp == 1) {
            EXPECT_EQ(p.zero, 0) << p.str();
        }
        EXPECT_LE(p.zero, 1) << p.str();
        EXPECT_EQ(p.schedule, p.interleave > 1 ? "interleaved_1f1b" : "1f1b");
    }
    // tp in {1, 2, 4, 8} (divides 8 heads), pp in {1, 2, 4} (divides 4 layers), tp * pp | 8: nine splits.
    const std::set<std::tuple<int, int, int>> expected = {{8, 1, 1}, {4, 1, 2}, {2, 1, 4}, {4, 2, 1}, {2, 2, 2},
                                                          {1, 2, 4}, {2, 4, 1}, {1, 4, 2}, {1, 8, 1}};
    EXPECT_EQ(splits, expected);
    // dp = 2, tp = 2, pp = 2: batch 16 / dp 2 = 8 per replica; microbatch 8 leaves 1 microbatch per pipeline
    // (< pp), so 4, 2 and 1 (m = 2, 4, 8); interleave 1 and 2; ZeRO 0 and 1: 3 x 2 x 2 = 12 plans.
    int n = 0;
    for (const auto& c : s.candidates) n += c.plan.dp == 2 && c.plan.tp == 2 && c.plan.pp == 2;
    EXPECT_EQ(n, 12);
}

TEST(plan_space, memory_is_the_system_mappers_estimate_and_the_ladder_picks_the_cheapest_fit) {
    // dp 2 x pp 4, one sequence per microbatch, ZeRO 1: stage 0 holds 4 microbatches in flight, so recomputation
    // saves memory. (With pp = 1 and one microbatch in flight it does not: the chunk's re-created activations are
    // all alive during its backward, memory.h.) A capacity between what it needs without and with full recomputation.
    parallel_plan q;
    q.dp = 2;
    q.pp = 4;
    q.zero = 1;
    const double none = needs(q, "none");
    const double selective = needs(q, "selective");
    const double full = needs(q, "full");
    ASSERT_LT(full, none);
    const double capacity = (none + full) / 2;
    const std::string cheapest = selective <= capacity ? "selective" : "full";
    plan_limits l;
    l.tp = {1};
    l.pp = {4};
    const plan_space s = enumerate_plans("gpt2", k_gpt, 8, capacity, l);
    bool found = false;
    for (const auto& c : s.candidates) {
        EXPECT_DOUBLE_EQ(c.memory_bytes, estimate(c.plan, capacity)) << c.plan.str();
        EXPECT_LE(c.memory_bytes, capacity) << c.plan.str();
        if (c.plan.microbatch == 1 && c.plan.zero == 1 && c.plan.interleave == 1) {
            found = true;
            EXPECT_EQ(c.plan.recompute, cheapest);
        }
    }
    EXPECT_TRUE(found);
}

TEST(plan_space, a_plan_that_fits_nowhere_is_kept_as_rejected_with_its_memory) {
    plan_limits only_dp;
    only_dp.tp = {1};
    only_dp.pp = {1};
    const plan_space s = enumerate_plans("gpt2", k_gpt, 8, 1e6, only_dp);  // 1 MB per chip
    EXPECT_TRUE(s.candidates.empty());
    ASSERT_EQ(s.rejected.size(), 1u);
    const plan_candidate& r = s.rejected.front();
    EXPECT_EQ(r.plan.dp, 8);
    EXPECT_EQ(r.plan.microbatch, 1) << "the smallest microbatch tried last";
    EXPECT_EQ(r.plan.zero, 2) << "ZeRO 2 is tried where 0 and 1 do not fit";
    EXPECT_EQ(r.plan.recompute, "full");
    EXPECT_DOUBLE_EQ(r.memory_bytes, estimate(r.plan, 1e6));
    EXPECT_NE(r.rejected.find("needs"), std::string::npos) << r.rejected;
}

TEST(plan_space, user_lists_restrict_and_a_refused_combination_is_named) {
    plan_limits l;
    l.tp = {3};  // does not divide 8 heads
    const plan_space s = enumerate_plans("gpt2", k_gpt, 8, 80e9, l);
    EXPECT_TRUE(s.candidates.empty());
    EXPECT_TRUE(s.rejected.empty());
    EXPECT_NE(s.first_violation.find("tp=3"), std::string::npos) << s.first_violation;
    l.tp = {2};
    l.pp = {2};
    l.microbatch = {2};
    const plan_space t = enumerate_plans("gpt2", k_gpt, 8, 80e9, l);
    for (const auto& c : t.candidates) {
        EXPECT_EQ(c.plan.tp, 2);
        EXPECT_EQ(c.plan.pp, 2);
        EXPECT_EQ(c.plan.microbatch, 2);
    }
    EXPECT_EQ(t.candidates.size(), 4u);  // interleave 1, 2 x ZeRO 0, 1
    const plan_space u =
        enumerate_plans("gpt2", {{"batch", "16"}, {"layers", "4"}, {"hidden", "256"}, {"heads", "8"}}, 8, 80e9, {});
    EXPECT_FALSE(u.training);
}

TEST(plan_space, pp1_keeps_the_largest_microbatch_per_cheaper_recomputation) {
    // dp 8, tp 1, pp 1, ZeRO 0: 2 sequences per replica, microbatch 2 or 1. At a capacity where microbatch 2 fits
    // only with recomputation and microbatch 1 fits without, both are kept: the larger kernels may or may not pay
    // for the re-run forward, and only simulating both says which.
    parallel_plan q;
    q.dp = 8;
    q.microbatch = 2;
    const double two_none = needs(q, "none");
    const double two_full = needs(q, "full");
    const double two_selective = needs(q, "selective");
    q.microbatch = 1;
    const double one_none = needs(q, "none");
    const double capacity = std::max(one_none, two_full);
    ASSERT_LT(capacity, two_none) << "the shape must make microbatch 2 need recomputation";
    plan_limits l;
    l.tp = {1};
    l.pp = {1};
    l.zero = {0};
    const plan_space s = enumerate_plans("gpt2", k_gpt, 8, capacity, l);
    std::set<std::pair<int, std::string>> kept;
    for (const auto& c : s.candidates) kept.insert({c.plan.microbatch, c.plan.recompute});
    const std::string cheapest = two_selective <= capacity ? "selective" : "full";
    EXPECT_EQ(kept, (std::set<std::pair<int, std::string>>{{2, cheapest}, {1, "none"}}));

    // With room for microbatch 2 without recomputation, it alone is kept.
    const plan_space roomy = enumerate_plans("gpt2", k_gpt, 8, two_none, l);
    ASSERT_EQ(roomy.candidates.size(), 1u);
    EXPECT_EQ(roomy.candidates.front().plan.microbatch, 2);
    EXPECT_EQ(roomy.candidates.front().plan.recompute, "none");
}
