// The rdu mapper's two representations on the bundled SN40L: the fine form (a transfer per pair of units, the
// mesh's own packets, exact order) against the coarse one (transfers of at least mapper.transfer_grain, packets
// of at least mapper.coarse_packet, a quantum): the same plan, the same work on the PCUs and PMUs, the same
// bytes through the AGCUs and HBM, far fewer steps and packets, and a run that takes as long within 4% on a
// BERT-large layer (7% for a 12 us MLP whose tiles are a few KiB). `auto` picks the fine form for small runs and
// the coarse one, with a note, above mapper.coarse_above. And the executor's aligned bursts at the AGCUs: the
// packets of a transfer to or from a DMA engine start at multiples of the packet size in its address space.
// And the coarse form in gangs (mapper.gangs, what a system over the steps budget maps in): the same plan and
// work, a step per gang of PCUs, and the time of the plain coarse form within 1% on the BERT-large layer.
#include <gtest/gtest.h>

#include "engine/mappers/rdu/rdu_mapper.h"
#include "engine/report/summary.h"
#include "engine/workload/load.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

test::bench_copies& b() {
    static test::bench_copies x("platforms/rdu/sn40l.yaml", "sn40l", 10);
    return x;
}

struct outcome {
    mapping m;
    executor::result r;
    std::vector<resource_usage> usage;
};

outcome run(test::bench& bench, const std::string& mapper_yaml, const std::string& workload,
            const std::map<std::string, std::string>& sets) {
    param_context ctx;
    rdu_mapper::options o;
    param_decl d(yaml_node::load_string(mapper_yaml, "mapper"), &ctx, "mapper", "mapper 'rdu'");
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

void compare(int pair, const std::string& workload, const std::map<std::string, std::string>& sets, double fewer_steps,
             double faster, double slower) {
    SCOPED_TRACE(workload);
    const outcome fine = run(b()[2 * static_cast<size_t>(pair)], "{representation: fine}", workload, sets);
    const outcome coarse = run(b()[2 * static_cast<size_t>(pair) + 1], "{representation: coarse}", workload, sets);
    EXPECT_GT(static_cast<double>(fine.m.prog.size()), fewer_steps * static_cast<double>(coarse.m.prog.size()));
    EXPECT_GT(fine.r.packets, 2 * coarse.r.packets);
    EXPECT_EQ(fine.m.prog.packet_bytes, 0u);
    EXPECT_EQ(coarse.m.prog.packet_bytes, 32u * 1024);
    EXPECT_EQ(fine.m.details["sections"].dump(), coarse.m.details["sections"].dump()) << "the same plan";
    for (const char* r : {"pcu[", "pmu[", "agcu", "hbm"})
        EXPECT_NEAR(usage_work(coarse, r), usage_work(fine, r), 1e-9 * usage_work(fine, r)) << r;
    const double tf = ticks_to_seconds(fine.r.duration()), tc = ticks_to_seconds(coarse.r.duration());
    EXPECT_GE(tc, tf * (1 - faster));
    EXPECT_LE(tc, tf * (1 + slower));
}

/// Busy seconds summed over the resources whose path starts with `prefix`.
double usage_busy(const outcome& o, const std::string& prefix) {
    double sum = 0;
    for (const auto& u : o.usage) {
        const size_t dot = u.name.find('.');
        if (dot != std::string::npos && u.name.compare(dot + 1, prefix.size(), prefix) == 0) sum += u.busy_seconds;
    }
    return sum;
}

/// Packets of one transfer between an AGCU at `agcu_address` and PMU 0, read (AGCU to PMU) or written.
std::uint64_t packets_of(test::bench& bench, std::uint64_t agcu_address, std::uint64_t bytes, bool read) {
    endpoint agcu = bench.at("agcu[0]");
    agcu.address = agcu_address;
    const endpoint pmu = bench.at("pmu[0,0]");
    program p;
    p.name = "burst";
    p.add_transfer(p.intern_op("move"), read ? agcu : pmu, read ? pmu : agcu, bytes, {});
    return bench.exec->run(p).packets;
}

}  // namespace

TEST(rdu_representation, an_mlp_runs_the_same_in_both_forms) {
    compare(0, std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml", {}, 2.5, 0.07,
            0.07);  // 11.7 us: a tile's few KiB move as one transfer
}

TEST(rdu_representation, a_bert_large_layer_trains_the_same_in_both_forms) {
    compare(1, "bert-large", {{"layers", "1"}, {"training", "adam"}, {"batch", "8"}}, 2.5, 0.04, 0.04);
}

TEST(rdu_representation, auto_is_fine_for_small_runs_and_coarse_above_the_threshold) {
    const std::string mlp = std::string(TESSEL_SOURCE_DIR) + "/workloads/mlp.yaml";
    const outcome small = run(b()[4], "{}", mlp, {});
    EXPECT_EQ(small.m.prog.packet_bytes, 0u);
    EXPECT_EQ(small.m.prog.quantum, 0u);
    const outcome fine = run(b()[5], "{representation: fine}", mlp, {});
    EXPECT_EQ(small.m.prog.size(), fine.m.prog.size());
    bool same = small.m.prog.size() == fine.m.prog.size();
    for (size_t i = 0; same && i < small.m.prog.size(); ++i) {
        const step &a = small.m.prog.steps[i], &f = fine.m.prog.steps[i];
        same = a.kind == f.kind && a.bytes == f.bytes && a.at.comp == f.at.comp && a.to.comp == f.to.comp &&
               a.to.address == f.to.address;
    }
    EXPECT_TRUE(same) << "auto below the threshold is the fine form";
    // Above it: the coarse form, and a note that says so and how to force the fine one.
    const outcome big = run(b()[6], "{coarse_above: 100}", mlp, {});
    EXPECT_EQ(big.m.prog.packet_bytes, 32u * 1024);
    EXPECT_GT(big.m.prog.quantum, 0u);
    EXPECT_LT(big.m.prog.size(), fine.m.prog.size());
    bool noted = false;
    for (const auto& n : big.m.notes)
        noted = noted || (n.find("coarse form") != std::string::npos &&
                          n.find("mapper.representation=fine") != std::string::npos);
    EXPECT_TRUE(noted);
}

TEST(rdu_representation, packets_to_and_from_an_agcu_start_at_multiples_of_the_packet_size) {
    // The mesh's packets are 4 KiB: 8 KiB from address 1,000 go as 3,096 + 4,096 + 1,000 bytes, not as two
    // packets that each open a DRAM row the next one opens again; from an aligned address, as two.
    test::bench& bench = b()[7];
    EXPECT_EQ(packets_of(bench, 1000, 8192, true), 3u);
    EXPECT_EQ(packets_of(bench, 1000, 8192, false), 3u);
    EXPECT_EQ(packets_of(bench, 8192, 8192, true), 2u);
    EXPECT_EQ(packets_of(bench, 4096 - 10, 10, true), 1u);
}

TEST(rdu_representation, gangs_of_pcus_train_a_bert_large_layer_as_the_coarse_form_does) {
    const std::map<std::string, std::string> layer{{"layers", "1"}, {"training", "adam"}, {"batch", "8"}};
    const outcome coarse = run(b()[8], "{representation: coarse}", "bert-large", layer);
    const outcome gangs = run(b()[9], "{representation: coarse, gangs: 64}", "bert-large", layer);
    EXPECT_EQ(coarse.m.details["sections"].dump(), gangs.m.details["sections"].dump()) << "the same plan";
    for (const char* r : {"pcu[", "pmu[", "agcu", "hbm"})
        EXPECT_NEAR(usage_work(gangs, r), usage_work(coarse, r), 1e-9 * usage_work(coarse, r)) << r;
    // Every PCU is still busy for its own share: lockstep moves no work from one unit to another.
    EXPECT_NEAR(usage_busy(gangs, "pcu["), usage_busy(coarse, "pcu["), 0.02 * usage_busy(coarse, "pcu["));
    // A compute step per gang of at most 64 lanes per stage and tile, not one per PCU.
    size_t computes = 0, ganged = 0, coarse_computes = 0;
    for (const step& st : gangs.m.prog.steps)
        if (st.kind == step_kind::compute) {
            ++computes;
            if (st.payload != ~0u) ++ganged;
        }
    for (const step& st : coarse.m.prog.steps) coarse_computes += st.kind == step_kind::compute ? 1 : 0;
    EXPECT_GT(ganged, 0u);
    EXPECT_GT(static_cast<double>(coarse_computes), 4.0 * static_cast<double>(computes));
    EXPECT_GT(static_cast<double>(coarse.m.prog.size()), 2.5 * static_cast<double>(gangs.m.prog.size()));
    const double tc = ticks_to_seconds(coarse.r.duration()), tg = ticks_to_seconds(gangs.r.duration());
    EXPECT_NEAR(tg, tc, 0.01 * tc);  // 2.058 against 2.054 ms
    bool noted = false;
    for (const auto& n : gangs.m.notes) noted = noted || n.find("mapper.gangs") != std::string::npos;
    EXPECT_TRUE(noted);
}
