// Processing element timing against hand-computed cycles: SIMD rate, issue overhead, vector lanes, and the
// systolic array's fill/drain and tile quantisation for each dataflow.
#include <gtest/gtest.h>

#include <tuple>

#include "models/compute/pe.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;

namespace {
work gemm(std::int64_t m, std::int64_t n, std::int64_t k, dtype t = dtype::fp16) {
    work w;
    w.m = m;
    w.n = n;
    w.k = k;
    w.batch = 1;
    w.macs = static_cast<double>(m * n * k);
    w.type = t;
    return w;
}
}  // namespace

TEST(pe, simd_rate_per_data_type_plus_issue_overhead) {
    sim_context sim;
    auto p = test::make<pe>(sim, "pe", "p1",
                            "{macs_per_cycle: {fp16: 256, fp32: 64}, issue_overhead: 4cycles, vector_lanes: 16}");
    EXPECT_DOUBLE_EQ(p->model().cycles(gemm(16, 16, 16)), 4 + 4096 / 256);
    EXPECT_DOUBLE_EQ(p->model().cycles(gemm(16, 16, 16, dtype::fp32)), 4 + 4096 / 64);
    EXPECT_DOUBLE_EQ(p->model().cycles(gemm(16, 16, 16, dtype::bf16)), 4 + 16)
        << "bf16 runs at the fp16 rate when not listed";
    work v;
    v.vector_ops = 100;
    EXPECT_DOUBLE_EQ(p->model().cycles(v), 4 + 7) << "ceil(100 / 16) vector cycles";
    EXPECT_THROW(p->model().check(gemm(4, 4, 4, dtype::int8), "p1"), input_error);
}

TEST(pe, steps_queue_on_the_datapath) {
    sim_context sim;
    auto p = test::make<pe>(sim, "pe", "p2", "{macs_per_cycle: {fp16: 256}, issue_overhead: 0cycles}");
    const work w = gemm(16, 16, 16);
    txn a = test::request(txn_kind::compute, 0), b = test::request(txn_kind::compute, 0);
    a.w = b.w = &w;
    p->transport(a);
    p->transport(b);
    EXPECT_EQ(a.tail, 16 * ns);
    EXPECT_EQ(b.head, 16 * ns);
    EXPECT_EQ(b.tail, 32 * ns);
}

TEST(pe, systolic_folds_are_timed_as_scalesim_v2_times_them) {
    sim_context sim;
    // 4 x 4 array, no issue overhead.
    auto ws =
        test::make<pe>(sim, "pe", "ws", "{mode: systolic, rows: 4, cols: 4, dataflow: ws, issue_overhead: 0cycles}");
    auto os =
        test::make<pe>(sim, "pe", "os", "{mode: systolic, rows: 4, cols: 4, dataflow: os, issue_overhead: 0cycles}");
    auto is =
        test::make<pe>(sim, "pe", "is", "{mode: systolic, rows: 4, cols: 4, dataflow: is, issue_overhead: 0cycles}");
    // (8 x 4) . (4 x 4): WS keeps the 4 x 4 weights (one fold) and streams M = 8 rows: 2*4 + 4 + 8 - 2 = 18.
    EXPECT_DOUBLE_EQ(ws->model().cycles(gemm(8, 4, 4)), 18);
    // OS: output 8 x 4 in ceil(8/4) x ceil(4/4) = 2 folds, each streaming K = 4 with no weight load:
    // 2 * (4 + 4 + 4 - 2) = 20.
    EXPECT_DOUBLE_EQ(os->model().cycles(gemm(8, 4, 4)), 20);
    // IS: inputs K x M = 4 x 8 in 1 x 2 folds, each streaming N = 4: 2 * 14 = 28.
    EXPECT_DOUBLE_EQ(is->model().cycles(gemm(8, 4, 4)), 28);
    // Quantisation: N = 5 needs two column folds though the second is almost empty.
    EXPECT_DOUBLE_EQ(ws->model().cycles(gemm(8, 5, 4)), 2 * 18);
    // A large product approaches one MAC per cell per cycle: fill/drain amortised.
    const work big = gemm(4096, 4, 4);
    EXPECT_NEAR(big.macs / (ws->model().cycles(big) * 16), 1.0, 0.01);
    // A tiny one is mostly fill and drain.
    const work tiny = gemm(1, 4, 4);
    EXPECT_LT(tiny.macs / (ws->model().cycles(tiny) * 16), 0.1);
}

TEST(pe, the_scalesim_count_reproduces_scalesim_v2_compute_cycles) {
    // SCALE-Sim v2 (scalesim-project/scale-sim-v2, InterfaceBandwidth: CALC) on a 128 x 128 array reports
    // folds x per-fold - 1: 512^3 is 4 x 4 folds, 1024^3 8 x 8; per fold OS 128 + 128 + T - 2, WS and IS
    // 2 x 128 + 128 + T - 2.
    sim_context sim;
    for (const auto& [df, small, large] :
         std::vector<std::tuple<std::string, double, double>>{{"os", 16 * 766 - 1, 64 * 1278 - 1},
                                                              {"ws", 16 * 894 - 1, 64 * 1406 - 1},
                                                              {"is", 16 * 894 - 1, 64 * 1406 - 1}}) {
        auto p = test::make<pe>(sim, "pe", "scalesim_" + df,
                                "{mode: systolic, rows: 128, cols: 128, dataflow: " + df + ", scalesim: true}");
        EXPECT_DOUBLE_EQ(p->model().cycles(gemm(512, 512, 512)), small) << df;
        EXPECT_DOUBLE_EQ(p->model().cycles(gemm(1024, 1024, 1024)), large) << df;
    }
    EXPECT_EQ(16 * 766 - 1, 12255);  // the figures SCALE-Sim prints
    EXPECT_EQ(64 * 1406 - 1, 89983);
    // Without the setting a step is busy one cycle more, plus the issue overhead.
    auto plain = test::make<pe>(sim, "pe", "plain",
                                "{mode: systolic, rows: 128, cols: 128, dataflow: os, issue_overhead: 4cycles}");
    EXPECT_DOUBLE_EQ(plain->model().cycles(gemm(512, 512, 512)), 16 * 766 + 4);
}

TEST(pe, ideal_time_is_work_over_peak) {
    sim_context sim;
    auto p = test::make<pe>(sim, "pe", "p3", "{macs_per_cycle: {fp16: 256}, vector_lanes: 16}");
    work w = gemm(64, 64, 64);
    w.vector_ops = 1600;
    EXPECT_DOUBLE_EQ(p->model().ideal_seconds(w), 262144 / 256e9 + 1600 / 16e9);
    EXPECT_GE(ticks_to_seconds(p->model().ticks(w)), p->model().ideal_seconds(w));
}
