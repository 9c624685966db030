// The rdu mapper's coarse transfers (mapper.transfer_grain) against the fine form (a transfer per pair of units)
// on the bundled SN40L: the same plan, the same work on the PCUs and PMUs, the same bytes through the AGCUs and
// HBM, far fewer steps, and a run that takes as long within 1% (7% for a 12 us MLP whose tiles are a few KiB).
// The coarse form is never faster than the fine one by more than rounding: its lanes carry the same bytes over
// fewer links and PMU ports.
#include <gtest/gtest.h>

#include "engine/mappers/rdu/rdu_mapper.h"
#include "engine/report/summary.h"
#include "engine/workload/load.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

test::bench_copies& b() {
    static test::bench_copies x("platforms/rdu/sn40l.yaml", "sn40l", 4);
    return x;
}

struct outcome {
    mapping m;
    executor::result r;
    std::vector<resource_usage> usage;
};

outcome run(test::bench& bench, const std::string& grain, const std::string& workload, const std::map<std::string, std::string>& sets) {
    param_context ctx;
    rdu_mapper::options o;
    param_decl d(yaml_node::load_string("{transfer_grain: " + grain + "}", "mapper"), &ctx, "mapper", "mapper 'rdu'");
    o.declare(d);
    d.finish();
    rdu_mapper mp(o);
    const workload_graph g = load_workload(workload, sets);
    outcome out;
    out.m = mp.map(g, *bench.plat);
    out.r = bench.exec->run(out.m.prog);
    for (std::uint32_t c : bench.plat->top_level()) bench.plat->comp(c).usage(out.usage);
    return out;
}

/// The work of every resource whose path (after the platform's name) starts with `prefix`.
double usage_work(const outcome& o, const std::string& prefix) {
    double sum = 0;
    bool found = false;
    for (const auto& u : o.usage) {
        const size_t dot = u.name.find('.');
        if (dot == std::string::npos || u.name.compare(dot + 1, prefix.size(), prefix) != 0) continue;
        sum += u.work;
        found = true;
    }
    if (!found) ADD_FAILURE() << "no resource " << prefix;
    return sum;
}

void compare(int pair, const std::string& workload, const std::map<std::string, std::string>& sets, double fewer_steps, double slower) {
    SCOPED_TRACE(workload);
    const outcome fine = run(b()[static_cast<size_t>(2 * pair)], "0B", workload, sets);
    const outcome coarse = run(b()[static_cast<size_t>(2 * pair + 1)], "16KiB", workload, sets);
    EXPECT_GT(static_cast<double>(fine.m.prog.size()), fewer_steps * static_cast<double>(coarse.m.prog.size()));
    EXPECT_EQ(fine.m.details["sections"].dump(), coarse.m.details["sections"].dump()) << "the same plan";
    for (const char* r : {"pcu[", "pmu[", "agcu", "hbm"})
        EXPECT_NEAR(usage_work(coarse, r), usage_work(fine, r), 1e-9 * usage_work(fine, r)) << r;
    const double tf = ticks_to_seconds(fine.r.duration()), tc = ticks_to_seconds(coarse.r.duration());
    EXPECT_GE(tc, tf * (1 - 1e-3));
    EXPECT_LE(tc, tf * (1 + slower));
}

}  // namespace

TEST(rdu_grain, an_mlp_runs_the_same_in_both_forms) {
    compare(0, std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml", {}, 2.5, 0.07);  // 11.7 us: a tile's few KiB move as one transfer
}

TEST(rdu_grain, a_bert_large_layer_trains_the_same_in_both_forms) {
    compare(1, "bert-large", {{"layers", "1"}, {"training", "adam"}, {"batch", "8"}}, 2.5, 0.01);
}
