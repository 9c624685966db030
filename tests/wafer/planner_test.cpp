// The layer-pipelined wafer's planner against its own simulation (summary.json mapping.timing: each op's
// planned and measured interval between chunks). The plan schedules every op's chunks: its own work, its
// producers' output streams (sent once per reader), stationary inputs whole before the first chunk, graph inputs
// at the MemoryX I/O rate, and the busiest fabric link on the routes that feed it while it works.
#include <gtest/gtest.h>

#include "tests/support/run_summary.h"

namespace {

struct op_timing {
    std::string name;
    double measured = 0, planned = 0;
};

std::vector<op_timing> timing(const nlohmann::json& s) {
    std::vector<op_timing> out;
    for (const auto& o : s["mapping"]["timing"])
        out.push_back(
            {o["op"].get<std::string>(), o["interval_s"].get<double>(), o["planned_interval_s"].get<double>()});
    return out;
}

const op_timing& slowest(const std::vector<op_timing>& ops) {
    const op_timing* w = &ops.front();
    for (const auto& o : ops)
        if (o.measured > w->measured) w = &o;
    return *w;
}

}  // namespace

TEST(wafer_planner, the_mlp_pipeline_runs_at_the_memoryx_input_rate_the_plan_computes) {
    const auto s = tessel::test::run_summary("-p wse2 -w mlp");
    const auto ops = timing(s);
    ASSERT_EQ(ops.size(), 7u);
    // By hand: a chunk of the 64 x 1024 fp16 input is 131,072 B / 4 = 32,768 B, at MemoryX's 150 GB/s: 218.45 ns;
    // every op downstream keeps that pace (its own work per chunk is far less).
    for (const auto& o : ops) {
        EXPECT_NEAR(o.planned, 32768 / 150e9, 0.01e-9) << o.name;
        EXPECT_GT(o.measured, 0.9 * o.planned) << o.name;
        EXPECT_LT(o.measured, 1.1 * o.planned) << o.name;
    }
    // The outputs leave over the I/O too: 64 x 1024 fp16 in 4 chunks, no faster than the I/O allows (the run's
    // steady state is under 64 samples per 873.8 ns), and not throttled by one row of links to one MemoryX port.
    EXPECT_LT(s["steady_throughput_per_s"].get<double>(), 64 / (131072 / 150e9));
    EXPECT_GT(s["steady_throughput_per_s"].get<double>(), 0.9 * 64 / (131072 / 150e9));
}

TEST(wafer_planner, the_slowest_op_is_planned_within_a_factor_of_two) {
    // The case was BERT-large: its slowest op measured 20 times the plan.
    for (const std::string w : {"resnet50", "bert-base", "bert-large"}) {
        const auto ops = timing(tessel::test::run_summary("-p wse2 -w " + w));
        ASSERT_FALSE(ops.empty()) << w;
        const op_timing& o = slowest(ops);
        EXPECT_LT(o.measured, 2 * o.planned) << w << ": " << o.name;
        EXPECT_GT(o.measured, 0.5 * o.planned) << w << ": " << o.name;
    }
}
