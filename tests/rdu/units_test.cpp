// The RDU units against timings worked out by hand from their documented rules: a PCU's SIMD and systolic
// matrix products (compute-, input- and output-bound), element-wise work, the mode a `best` PCU picks; a PMU's
// banks and address pipeline; an AGCU in front of two memory tiers (one address space), on a small platform.
#include <gtest/gtest.h>

#include "models/spatial/rdu_agcu.h"
#include "models/spatial/rdu_pcu.h"
#include "models/spatial/rdu_pmu.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

// 1 GHz, 16 lanes x 6 stages of fp32 FUs, 64 B/cycle in and out: Plasticine's PCU.
const char* plasticine_pcu =
    "{lanes: 16, stages: 6, fu_macs: {fp32: 1}, input_bandwidth: 64B/cycle, output_bandwidth: 64B/cycle}";

work gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
    work w;
    w.type = dtype::fp32;
    w.m = m;
    w.n = n;
    w.k = k;
    w.batch = 1;
    w.macs = static_cast<double>(m * n * k);
    return w;
}

tick run(component& c, const work& w, tick at = 0) {
    txn t = test::request(txn_kind::compute, at);
    t.w = &w;
    c.transport(t);
    return t.tail - t.head;
}

}  // namespace

TEST(rdu_pcu, simd_matrix_product_is_bound_by_its_vector_ports) {
    sim_context sim;
    auto p = test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_simd", plasticine_pcu);
    // 64 x 32 x 60: K in ceil(60/6) = 10 blocks, N in ceil(32/16) = 2. Compute 20 x 64 + 6 = 1286 cycles.
    // In: A 64*60*4 B x 2 N blocks = 30720, weights 60*32*4 = 7680, partial sums 9*64*32*4 = 73728: 112128 B
    // at 64 B/cycle = 1752 cycles. Out: 73728 + 64*32*4 = 81920 B = 1280 cycles. The input port decides.
    EXPECT_EQ(run(*p, gemm(64, 32, 60)), 1752 * test::ns);
    // 64 x 32 x 12: 2 K blocks: compute 4 x 64 + 6 = 262 cycles; in 6144 + 1536 + 8192 = 15872 B = 248 cycles;
    // out 8192 + 8192 = 256 cycles. Compute decides.
    EXPECT_EQ(run(*p, gemm(64, 32, 12), 10 * test::ns * 1000), 262 * test::ns);
}

TEST(rdu_pcu, systolic_configuration_trades_fill_for_fewer_partial_sums) {
    sim_context sim;
    auto simd =
        test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_a", std::string(plasticine_pcu).insert(1, "matmul_mode: simd, "));
    auto sys =
        test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_b", std::string(plasticine_pcu).insert(1, "matmul_mode: systolic, "));
    auto best =
        test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_c", std::string(plasticine_pcu).insert(1, "matmul_mode: best, "));
    // 256 x 6 x 256. SIMD (K along 6 stages, N along 16 lanes): 43 x 1 blocks of 256 rows = 11008 + 6 = 11014
    // cycles; ports: in 262144 + 6144 + 42*256*6*4 = 526336 B = 8224, out 258048 + 6144 = 4128: compute-bound.
    // Systolic (16 x 6 array, K along 16 rows): 16 x 1 folds of 2*16 + 6 + 256 - 2 = 292 cycles = 4672;
    // in 262144 + 6144 + 15*256*6*4 = 360448 B = 5632 cycles; out 92160 + 6144 = 1536. Input-bound: 5632.
    const work w = gemm(256, 6, 256);
    EXPECT_EQ(run(*simd, w), 11014 * test::ns);
    EXPECT_EQ(run(*sys, w), 5632 * test::ns);
    EXPECT_EQ(run(*best, w, 100 * 1000 * test::ns), 5632 * test::ns);
    // 64 x 32 x 60 (above): SIMD 1752 cycles; systolic 4 x 6 folds of 100 cycles = 2400 (in 124416 B = 1944):
    // `best` keeps SIMD.
    const work v = gemm(64, 32, 60);
    EXPECT_EQ(run(*sys, v, 200 * 1000 * test::ns), 2400 * test::ns);
    EXPECT_EQ(run(*best, v, 300 * 1000 * test::ns), 1752 * test::ns);
}

TEST(rdu_pcu, elementwise_work_streams_at_the_port_rate_and_never_beats_peak) {
    sim_context sim;
    auto p = test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_vec", plasticine_pcu);
    work w;
    w.type = dtype::fp32;
    w.vector_ops = 10000;
    w.bytes_in = 80000;
    w.bytes_out = 40000;
    // ceil(10000 / 96) = 105 cycles of ALU work, but 80000 B in at 64 B/cycle take 1250: 1250 + 6 fill.
    EXPECT_EQ(run(*p, w), 1256 * test::ns);
    EXPECT_LE(p->model().ideal_seconds(w), 1256e-9);
    // A second step queues behind the first (busy-until).
    txn t = test::request(txn_kind::compute, 0);
    t.w = &w;
    p->transport(t);
    EXPECT_EQ(t.head, 1256 * test::ns);
    // The peak is lanes x stages FMAs: 16 x 6 x 2 FLOP x 1 GHz.
    std::array<double, dtype_count> by{};
    by[static_cast<size_t>(dtype::fp32)] = 1;
    EXPECT_DOUBLE_EQ(p->model().peak_flops(by), 192e9);
}

TEST(rdu_pcu, unsupported_type_is_an_input_error) {
    sim_context sim;
    auto p = test::make<rdu_pcu>(sim, "rdu_pcu", "pcu_bf", "{fu_macs: {bf16: 1}}");
    work w = gemm(8, 8, 8);
    EXPECT_THROW(p->model().check(w, "pcu"), input_error);
    w.type = dtype::fp16;  // fp16 stands in for bf16
    EXPECT_NO_THROW(p->model().check(w, "pcu"));
}

TEST(rdu_pmu, banks_and_address_pipeline) {
    sim_context sim;
    // 16 banks of one 4 B word per cycle (64 B/cycle), 2-cycle latency, one 64 B address per cycle.
    auto m =
        test::make<rdu_pmu>(sim, "rdu_pmu", "pmu_a",
                            "{capacity: 256KiB, banks: 16, bank_bandwidth: 4B/cycle, interleave: 4B, latency: 2cycles, "
                            "addresses_per_cycle: 1, access_bytes: 64B}");
    txn t = test::request(txn_kind::write, 0, 4096, 0);
    m->transport(t);
    // 256 B per bank at 4 B/cycle = 64 cycles; 64 addresses at 1 per cycle = 64 cycles; + 2 latency.
    EXPECT_EQ(t.tail, 66 * test::ns);
    txn u = test::request(txn_kind::read, 0, 4096, 0);
    m->transport(u);
    EXPECT_EQ(u.tail, 130 * test::ns) << "the second access waits for the banks";
    EXPECT_EQ(m->capacity_bytes(), 256u * 1024u);
    // One address per 4 B word: the address pipeline, not the banks, takes 1024 cycles.
    auto slow =
        test::make<rdu_pmu>(sim, "rdu_pmu", "pmu_b",
                            "{capacity: 256KiB, banks: 16, bank_bandwidth: 4B/cycle, interleave: 4B, latency: 2cycles, "
                            "addresses_per_cycle: 1, access_bytes: 4B}");
    txn v = test::request(txn_kind::read, 0, 4096, 0);
    slow->transport(v);
    EXPECT_EQ(v.tail, 1026 * test::ns);
    // Four addresses per cycle (SN40L) keep up with the banks again.
    auto fast =
        test::make<rdu_pmu>(sim, "rdu_pmu", "pmu_c",
                            "{capacity: 256KiB, banks: 16, bank_bandwidth: 4B/cycle, interleave: 4B, latency: 2cycles, "
                            "addresses_per_cycle: 4, access_bytes: 16B}");
    txn x = test::request(txn_kind::read, 0, 4096, 0);
    fast->transport(x);
    EXPECT_EQ(x.tail, 66 * test::ns);
}

namespace {

// Two tiers behind two AGCUs at the ends of a 4 x 1 mesh; a PMU in the middle. The AGCUs coalesce only 1 B per
// cycle, so they, not the DRAM, set the time of a load.
const char* two_tier = R"(
platform: agcu_bench
clock: 1GHz
components:
  near:
    kind: hbm
    preset: hbm2e_stack
    params: {channels: 2, capacity: 1MiB, tREFI: 0ns}
  far:
    kind: hbm
    preset: ddr4_3200
    params: {channels: 1, capacity: 1MiB, tREFI: 0ns}
  pmu:
    kind: rdu_pmu
    replicate: {x: 1, y: 1}
    params: {capacity: 256KiB, banks: 16, bank_bandwidth: 4B/cycle, interleave: 4B, latency: 2cycles}
  agcu:
    kind: rdu_agcu
    params: {count: 2, memory: "near, far", unit_bandwidth: 1B/cycle, latency: 10cycles}
  vnet:
    kind: mesh_noc
    params: {width: 4, height: 1, link_bandwidth: 64B/cycle, router_latency: 1cycle, link_latency: 1cycle,
             packet_bytes: 4KiB, header_bytes: 0B, max_outstanding: 8}
connections:
  - pmu[i,j] -> vnet[1, 0]
  - agcu[a] -> vnet[a * 3, 0]
)";

}  // namespace

TEST(rdu_agcu, loads_through_the_coalescer_from_the_tier_the_address_names) {
    test::bench b(two_tier, "agcu_bench");
    const auto* agcu = dynamic_cast<const rdu_agcu*>(&b.plat->comp(b.at("agcu").comp));
    ASSERT_NE(agcu, nullptr);
    ASSERT_EQ(agcu->tiers().size(), 2u);
    EXPECT_EQ(agcu->tiers()[1].base, 1024u * 1024u) << "the second tier follows the first's capacity";
    program p;
    p.name = "loads";
    const auto op = p.intern_op("load");
    endpoint src = b.at("agcu");
    src.unit = 0;
    src.address = 0;
    const auto s0 = p.add_transfer(op, src, b.at("pmu[0,0]"), 4096, {});
    endpoint far = src;
    far.unit = 1;
    far.address = 1024 * 1024 + 8192;  // in 'far'
    const auto s1 = p.add_transfer(op, far, b.at("pmu[0,0]"), 1024, {s0});
    const auto r = b.exec->run(p);
    // The coalescer takes 4096 B at 1 B/cycle (4096 cycles) + 10 latency; the DRAM is far faster. The packet
    // then crosses one router (1 + 1 cycles, 64 cycles of link) and the PMU banks (64 cycles, + 2): the tail
    // leaves the AGCU at 4106 and reaches the PMU within a few cycles of that.
    const double t0 = ticks_to_seconds(r.step_end[s0] - r.step_start[s0]) * 1e9;
    EXPECT_GE(t0, 4106);
    EXPECT_LE(t0, 4106 + 8);
    const double t1 = ticks_to_seconds(r.step_end[s1] - r.step_start[s1]) * 1e9;
    EXPECT_GE(t1, 1024 + 10);
    EXPECT_LE(t1, 1024 + 10 + 4 * 3 + 8);
    // The second load came from the far tier only.
    std::vector<resource_usage> u;
    b.plat->comp(b.at("near").comp).usage(u);
    b.plat->comp(b.at("far").comp).usage(u);
    ASSERT_EQ(u.size(), 2u);
    EXPECT_DOUBLE_EQ(u[0].work, 4096);
    EXPECT_DOUBLE_EQ(u[1].work, 1024);
}
