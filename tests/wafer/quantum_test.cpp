// The layer-pipelined wafer runs with a quantum (mapper.quantum=auto: 1% of the planned slowest interval between
// chunks, at most 64 cycles): a packet may take links that far ahead of requests still queued, instead of one
// queued event per hop. That is a coarser form of the same run, so it must agree with exact arrival order
// (mapper.quantum=0) on cases small enough to run both: a BERT-large training layer and a 2-layer inference on a
// 300 x 300 WSE-2, within 0.5% in simulated time and in steady-state throughput, with at least ten times fewer
// events, and never faster than physics allows. (tests/wafer/planner_test.cpp's MLP, whose whole run is about a
// microsecond, checks that auto stays small enough for short pipelines.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/cli.h"

using tessel::test::run_tessel;

namespace {

nlohmann::json run(const std::string& args) {
    const auto r = run_tessel("run -p platforms/wafer/wse2.yaml --set width=300 --set height=300 " + args + " --json");
    EXPECT_EQ(r.code, 0) << r.out;
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

void expect_same_run(const std::string& args) {
    SCOPED_TRACE(args);
    const nlohmann::json coarse = run(args), exact = run(args + " --set mapper.quantum=0");
    ASSERT_TRUE(coarse.contains("sim_time_s") && exact.contains("sim_time_s"));
    const double tc = coarse["sim_time_s"], te = exact["sim_time_s"];
    EXPECT_NEAR(tc, te, 0.005 * te);
    const double sc = coarse["steady_throughput_per_s"], se = exact["steady_throughput_per_s"];
    EXPECT_NEAR(sc, se, 0.005 * se);
    EXPECT_EQ(coarse["packets"], exact["packets"]);
    EXPECT_LT(10 * coarse["events"].get<double>(), exact["events"].get<double>());
    EXPECT_GE(tc, coarse["physical_bound_s"].get<double>());
}

}  // namespace

TEST(wafer_quantum, agrees_with_exact_arrival_order_on_a_training_layer) {
    expect_same_run("-w bert-large --set workload.layers=1 --set workload.training=adam --set workload.batch=32");
}

TEST(wafer_quantum, agrees_with_exact_arrival_order_on_inference) {
    expect_same_run("-w bert-large --set workload.layers=2 --set workload.batch=8");
}

TEST(wafer_quantum, a_quantum_that_is_not_a_time_is_a_clear_error) {
    const auto r = run_tessel("run -p wafer16 -w mlp --set mapper.quantum=5W");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("mapper.quantum: expected auto, 0 or a time such as 16cycles or 20ns, got '5W'"),
              std::string::npos)
        << r.out;
    const auto fixed = run_tessel("run -p wafer16 -w mlp --set mapper.quantum=8cycles");
    EXPECT_EQ(fixed.code, 0) << fixed.out;
    EXPECT_NE(fixed.out.find("fabric requests served up to 8 ns ahead of queued ones (mapper.quantum=8cycles"),
              std::string::npos)
        << fixed.out;
}
