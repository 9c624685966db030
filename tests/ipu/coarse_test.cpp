// The IPU's coarse form (models/bsp/bsp_superstep.h: one program step per superstep) against the fine form (a
// step per message and per tile's compute) on the bundled GC200, for models small enough to simulate message by
// message: the same supersteps, the same compute phases where the data arrive at the same time, exchange phases
// never slower and at most a third faster (the fine form serves a phase's messages in the order they were emitted,
// the coarse one takes the compiled exchange's bound), whole runs within 3%, and the same bytes, MACs and SRAM
// traffic in the statistics. The coarse form needs a few hundred
// steps where the fine one needs over a million.
#include <gtest/gtest.h>

#include "engine/mappers/bsp/bsp_mapper.h"
#include "engine/report/explain/explainer.h"
#include "engine/report/summary.h"
#include "engine/workload/load.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

test::bench_copies& b() {
    static test::bench_copies x("platforms/ipu/gc200.yaml", "gc200", 6);
    return x;
}

struct outcome {
    mapping m;
    executor::result r;
    run_summary s;
    std::vector<resource_usage> usage;
};

outcome run(test::bench& bench, const std::string& representation, const std::string& workload,
            const std::map<std::string, std::string>& sets) {
    param_context ctx;
    bsp_mapper::options o;
    param_decl d(yaml_node::load_string("{representation: " + representation + "}", "mapper"), &ctx, "mapper",
                 "mapper 'bsp'");
    o.declare(d);
    d.finish();
    bsp_mapper mp(o);
    const workload_graph g = load_workload(workload, sets);
    outcome out;
    out.m = mp.map(g, *bench.plat);
    out.r = bench.exec->run(out.m.prog);
    out.s = summarise(*bench.plat, out.r, out.m.prog, g.total().flops, out.m.samples);
    explain_run("bsp", out.m, *bench.plat, out.r, out.s);
    for (std::uint32_t c : bench.plat->top_level()) bench.plat->comp(c).usage(out.usage);
    return out;
}

double usage_work(const outcome& o, const std::string& suffix) {
    for (const auto& u : o.usage)
        if (u.name.size() >= suffix.size() && u.name.compare(u.name.size() - suffix.size(), suffix.size(), suffix) == 0)
            return u.work;
    ADD_FAILURE() << "no resource " << suffix;
    return 0;
}

void compare(int pair, const std::string& workload, const std::map<std::string, std::string>& sets) {
    SCOPED_TRACE(workload);
    const outcome fine = run(b()[static_cast<size_t>(2 * pair)], "fine", workload, sets);
    const outcome coarse = run(b()[static_cast<size_t>(2 * pair + 1)], "coarse", workload, sets);
    EXPECT_GT(fine.m.prog.size(), 100 * coarse.m.prog.size());
    const auto& fs = fine.s.details["supersteps"];
    const auto& cs = coarse.s.details["supersteps"];
    ASSERT_EQ(fs.size(), cs.size());
    for (size_t i = 0; i < fs.size(); ++i) {
        SCOPED_TRACE(fs[i]["name"].get<std::string>());
        EXPECT_EQ(fs[i]["name"], cs[i]["name"]);
        EXPECT_DOUBLE_EQ(fs[i]["exchange_bytes"].get<double>(), cs[i]["exchange_bytes"].get<double>());
        const double fx = fs[i]["exchange_s"], cx = cs[i]["exchange_s"];
        // The coarse phase is the compiled exchange's bound: never slower than the fine form, which serves a phase's
        // messages in the order they were emitted and can leave a receiver idle while its sender serves others
        // (up to a third of a short phase).
        EXPECT_LE(cx, fx + 2e-9);
        EXPECT_GE(cx, 0.65 * fx - 2e-9);
        const double fc = fs[i]["compute_s"], cc = cs[i]["compute_s"];
        if (std::fabs(cx - fx) < 1e-12) {
            EXPECT_NEAR(cc, fc, 1e-12) << "same data-in times, same compute";
        }
        EXPECT_DOUBLE_EQ(fs[i]["sync_s"].get<double>(), cs[i]["sync_s"].get<double>());
    }
    const double tf = ticks_to_seconds(fine.r.duration()), tc = ticks_to_seconds(coarse.r.duration());
    EXPECT_NEAR(tc, tf, 0.03 * tf);
    for (const char* r : {"exchange.tiles", "tiles.compute", "tiles.sram"})
        EXPECT_NEAR(usage_work(coarse, r), usage_work(fine, r), 1e-9 * usage_work(fine, r)) << r;
}

}  // namespace

TEST(ipu_coarse, an_mlp_runs_the_same_in_both_forms) {
    compare(0, std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml", {});
}

TEST(ipu_coarse, a_transformer_layer_runs_within_a_few_percent_in_both_forms) {
    compare(1, "gpt2", {{"layers", "1"}, {"seq", "32"}, {"vocab", "8192"}});
}

TEST(ipu_coarse, a_convolutional_network_runs_within_a_few_percent_in_both_forms) { compare(2, "resnet18", {}); }
