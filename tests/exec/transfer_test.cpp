// The executor moving data packet by packet: one transfer's time by hand, two flows sharing a link each
// about twice as slow, disjoint flows unaffected, loads from HBM, compute after its inputs.
#include <gtest/gtest.h>

#include "tests/support/harness.h"

using namespace tessel;
using test::ns;
using test::ps;

namespace {

// A 4x4 mesh whose scratchpads are fast enough never to be the bottleneck and have no latency, so transfer
// times are the network's alone.
const char* platform_yaml = R"(
platform: xfer
clock: 1GHz
components:
  tile:
    kind: tile
    replicate: {x: 4, y: 4}
    params:
      sram: {capacity: 1MiB, banks: 8, bank_bandwidth: 64B/cycle, latency: 0cycles}
  noc:
    kind: mesh_noc
    params: {width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle,
             packet_bytes: 256B, header_bytes: 16B, max_outstanding: 8}
  hbm:
    kind: hbm
    preset: hbm2e_stack
    params: {channels: 4}
  sync:
    kind: barrier
    params: {latency: 100cycles}
connections:
  - tile[x,y] -> noc[x,y]
  - hbm[c] -> noc[0,c]
)";

test::bench& b() {
    static test::bench bench(platform_yaml, "xfer");
    return bench;
}

tick run_transfers(const std::vector<std::pair<std::string, std::string>>& pairs, std::uint64_t bytes,
                   std::vector<tick>* each = nullptr) {
    program p;
    p.name = "transfers";
    const auto op = p.intern_op("send");
    for (const auto& [from, to] : pairs) p.add_transfer(op, b().at(from), b().at(to), bytes, {});
    const auto r = b().exec->run(p);
    if (each)
        for (size_t i = 0; i < pairs.size(); ++i) each->push_back(r.step_end[i] - r.start);
    return r.duration();
}

}  // namespace

TEST(transfer, one_transfer_is_latency_plus_bytes_over_bandwidth) {
    // 64 KiB from (0,0) to (3,0): 256 packets of 256 B + 16 B header = 8.5 ns each on every link, pipelined.
    // The first packet arrives after the zero-load latency (H + 1) x (2 + 1) + 1 + 8.5 = 21.5 ns (the scratchpads
    // read and write a packet in 1 ns, hidden under the 8.5 ns serialisation). Every further packet arrives
    // 8.5 ns later: 21.5 + 255 x 8.5 = 2189 ns.
    const tick t = run_transfers({{"tile[0,0]", "tile[3,0]"}}, 64 * 1024);
    EXPECT_EQ(t, 2189 * ns);
}

TEST(transfer, two_flows_sharing_a_link_are_each_about_twice_as_slow) {
    const std::uint64_t bytes = 256 * 1024;
    const tick alone = run_transfers({{"tile[0,0]", "tile[3,0]"}}, bytes);
    std::vector<tick> each;
    run_transfers({{"tile[0,0]", "tile[3,0]"}, {"tile[1,0]", "tile[3,0]"}}, bytes, &each);
    for (tick t : each) {
        EXPECT_GT(static_cast<double>(t) / alone, 1.8);
        EXPECT_LT(static_cast<double>(t) / alone, 2.1);
    }
}

TEST(transfer, disjoint_flows_do_not_slow_each_other) {
    const std::uint64_t bytes = 256 * 1024;
    const tick alone = run_transfers({{"tile[0,1]", "tile[3,1]"}}, bytes);
    std::vector<tick> each;
    run_transfers({{"tile[0,1]", "tile[3,1]"}, {"tile[0,2]", "tile[3,2]"}, {"tile[0,3]", "tile[3,3]"}}, bytes, &each);
    for (tick t : each) EXPECT_EQ(t, alone);
}

TEST(transfer, loads_from_hbm_use_every_channel) {
    // 1 MiB interleaved over 4 channels on the west edge into four tiles of column 1, one per row: each row's
    // link carries its channel's quarter.
    program p;
    p.name = "loads";
    const auto op = p.intern_op("load");
    endpoint h = b().at("hbm");
    for (int y = 0; y < 4; ++y) {
        h.address = static_cast<std::uint64_t>(y) * 256;  // each starts on channel y; 256 B interleave
        p.add_transfer(op, h, b().at("tile[1," + std::to_string(y) + "]"), 256 * 1024, {});
    }
    const auto r = b().exec->run(p);
    const double bw = 1024.0 * 1024 / ticks_to_seconds(r.duration());
    // Four transfers of 256 KiB each walk all 4 channels; the mesh links into column 1 (4 x 32 GB/s) bound it.
    EXPECT_GT(bw, 0.5 * 4 * 32e9 * 256 / 272);
    EXPECT_LE(bw, 4 * 32e9 * 256 / 272 * 1.0001);
}

TEST(transfer, compute_waits_for_its_inputs_and_barrier_for_its_last_arrival) {
    program p;
    p.name = "deps";
    const auto op = p.intern_op("x");
    work w;
    w.macs = 256 * 1000;  // 1000 cycles at 256 MACs/cycle (+4 issue)
    const auto wi = p.add_work(w);
    const auto in = p.add_transfer(op, b().at("tile[0,0]"), b().at("tile[1,0]"), 4096, {});
    const auto c1 = p.add_compute(op, b().at("tile[1,0]"), wi, {in});
    const auto c2 = p.add_compute(op, b().at("tile[2,0]"), wi, {});
    const auto c3 = p.add_compute(op, b().at("tile[3,0]"), wi, {c2});
    const auto s = p.add_sync(op, b().at("sync"), {c1, c2, c3});
    const auto after = p.add_delay(op, 0, {s});
    const auto r = b().exec->run(p);
    EXPECT_EQ(r.step_start[c1], r.step_end[in]);
    EXPECT_EQ(r.step_end[c3] - r.start, 2 * 1004 * ns);
    const tick last = std::max({r.step_end[c1], r.step_end[c2], r.step_end[c3]});
    EXPECT_EQ(r.step_end[s], last + 100 * ns) << "the barrier releases after the last arrival plus its latency";
    EXPECT_EQ(r.step_end[after], r.step_end[s]);
}

TEST(transfer, a_cycle_is_reported_with_the_steps_in_it) {
    program p;
    p.name = "cyclic";
    const auto op = p.intern_op("x");
    p.step_labels = {"a", "b", "c"};
    p.add_delay(op, 1, {2});
    p.add_delay(op, 1, {0});
    p.add_delay(op, 1, {1});
    try {
        b().exec->run(p);
        FAIL() << "expected an error";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("cycle"), std::string::npos) << m;
        EXPECT_NE(m.find("'a'"), std::string::npos) << m;
        EXPECT_NE(m.find("'b'"), std::string::npos) << m;
        EXPECT_NE(m.find("'c'"), std::string::npos) << m;
    }
}

TEST(transfer, a_static_schedule_conflict_names_both_steps_and_the_cycle) {
    program p;
    p.name = "schedule";
    p.strict_schedule = true;
    const auto op = p.intern_op("x");
    p.step_labels = {"first", "second"};
    work w;
    w.macs = 2560;  // 10 cycles + 4 issue = 14 cycles
    const auto wi = p.add_work(w);
    p.add_compute(op, b().at("tile[0,0]"), wi, {});
    const auto s2 = p.add_compute(op, b().at("tile[0,0]"), wi, {});
    p.steps[0].not_before = 0;         // times count from the program start
    p.steps[s2].not_before = 10 * ns;  // scheduled while the first still runs
    try {
        b().exec->run(p);
        FAIL() << "expected a conflict";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("'first'"), std::string::npos) << m;
        EXPECT_NE(m.find("'second'"), std::string::npos) << m;
        EXPECT_NE(m.find("cycle 10"), std::string::npos) << m;
        EXPECT_NE(m.find("cycle 14"), std::string::npos) << m;
    }
}
