// Pipeline schedules against orders written out by hand (SC21 Figures 3 and 4, Megatron-LM's schedules.py), and
// the ideal bubble fractions.
#include <gtest/gtest.h>

#include "engine/system/pipeline_schedule.h"

using namespace tessel;

namespace {
std::string order(const std::string& schedule, int pp, int v, int m, int stage) {
    return schedule_str(stage_schedule(schedule, pp, v, m, stage), v > 1);
}
}  // namespace

TEST(pipeline_schedule, gpipe_pp4_m8) {
    // All forwards, then all backwards, on every stage.
    for (int s = 0; s < 4; ++s)
        EXPECT_EQ(order("gpipe", 4, 1, 8, s), "F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7") << s;
}

TEST(pipeline_schedule, one_f_one_b_pp4_m8) {
    // Stage s: pp - s - 1 warm-up forwards, then one forward and one backward, then the remaining backwards.
    EXPECT_EQ(order("1f1b", 4, 1, 8, 0), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
    EXPECT_EQ(order("1f1b", 4, 1, 8, 1), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
    EXPECT_EQ(order("1f1b", 4, 1, 8, 2), "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
    EXPECT_EQ(order("1f1b", 4, 1, 8, 3), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
    // Fewer microbatches than stages: the warm-up is cut at m.
    EXPECT_EQ(order("1f1b", 4, 1, 2, 0), "F0 F1 B0 B1");
}

TEST(pipeline_schedule, interleaved_pp4_m8_v2) {
    // Stage s holds chunks s and s + 4. Warm-up: (pp - s - 1) * 2 + (v - 1) * pp forward items; forward item k is
    // microbatch (k / 8) * 4 + k % 4 through virtual chunk (k % 8) / 4; backward items visit the chunks in reverse.
    // Stage 0: warm-up 10 = F0-3 on chunk 0, F0-3 on chunk 4, F4-5 on chunk 0; 6 steady pairs; 10 backwards.
    EXPECT_EQ(order("interleaved_1f1b", 4, 2, 8, 0),
              "F0.c0 F1.c0 F2.c0 F3.c0 F0.c4 F1.c4 F2.c4 F3.c4 F4.c0 F5.c0 "
              "F6.c0 B0.c4 F7.c0 B1.c4 F4.c4 B2.c4 F5.c4 B3.c4 F6.c4 B0.c0 F7.c4 B1.c0 "
              "B2.c0 B3.c0 B4.c4 B5.c4 B6.c4 B7.c4 B4.c0 B5.c0 B6.c0 B7.c0");
    // Stage 3 (the last): warm-up 4, then 12 pairs, then 4 backwards.
    EXPECT_EQ(order("interleaved_1f1b", 4, 2, 8, 3),
              "F0.c3 F1.c3 F2.c3 F3.c3 "
              "F0.c7 B0.c7 F1.c7 B1.c7 F2.c7 B2.c7 F3.c7 B3.c7 F4.c3 B0.c3 F5.c3 B1.c3 F6.c3 B2.c3 F7.c3 B3.c3 "
              "F4.c7 B4.c7 F5.c7 B5.c7 F6.c7 B6.c7 F7.c7 B7.c7 "
              "B4.c3 B5.c3 B6.c3 B7.c3");
    // Every stage runs each (microbatch, chunk) once forward and once backward, the forward first.
    for (int s = 0; s < 4; ++s) {
        const auto items = stage_schedule("interleaved_1f1b", 4, 2, 8, s);
        EXPECT_EQ(items.size(), 32u);
        for (const auto& i : items) {
            EXPECT_EQ(i.chunk % 4, s);
            if (i.pass == pass_dir::backward) {
                bool seen = false;
                for (const auto& j : items) {
                    if (&j == &i) break;
                    seen |= j.pass == pass_dir::forward && j.microbatch == i.microbatch && j.chunk == i.chunk;
                }
                EXPECT_TRUE(seen) << "B" << i.microbatch << ".c" << i.chunk << " before its forward";
            }
        }
    }
}

TEST(pipeline_schedule, plan_and_errors) {
    parallel_plan p;
    p.pp = 4;
    const auto all = pipeline_schedule(p, 8);
    ASSERT_EQ(all.size(), 4u);
    EXPECT_EQ(schedule_str(all[3], false), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
    EXPECT_THROW(stage_schedule("1f1b", 4, 2, 8, 0), input_error);              // interleave needs interleaved_1f1b
    EXPECT_THROW(stage_schedule("interleaved_1f1b", 4, 2, 6, 0), input_error);  // 6 microbatches, pp 4
    EXPECT_THROW(stage_schedule("zigzag", 4, 1, 8, 0), input_error);
}

TEST(pipeline_schedule, ideal_bubble) {
    EXPECT_DOUBLE_EQ(bubble_fraction("gpipe", 4, 1, 8), 3.0 / 8);
    EXPECT_DOUBLE_EQ(bubble_fraction("1f1b", 4, 1, 8), 3.0 / 8);
    EXPECT_DOUBLE_EQ(bubble_fraction("interleaved_1f1b", 4, 2, 8), 3.0 / 16);
    // The 1T row of SC21 Table 1: p = 64, global batch 3072 on d = 6 replicas, microbatch 1 -> m = 512; v = 2.
    EXPECT_DOUBLE_EQ(bubble_fraction("interleaved_1f1b", 64, 2, 512), 63.0 / 1024);
    EXPECT_DOUBLE_EQ(bubble_fraction("1f1b", 1, 1, 8), 0);
}
