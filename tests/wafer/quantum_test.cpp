// The wafers run with a quantum (platforms/wafer/wse2.yaml, `quantum: 64cycles`): a packet may take links up to
// 64 cycles ahead of requests still queued, instead of one queued event per hop. That is a coarser form of the
// same run, so it must agree with exact arrival order (--set quantum=0) on cases small enough to run both: a
// BERT-large training layer and a 2-layer inference on a 300 x 300 WSE-2, within 0.5% in simulated time and in
// steady-state throughput, with at least ten times fewer events, and never faster than physics allows.
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
    const nlohmann::json coarse = run(args), exact = run(args + " --set quantum=0");
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
