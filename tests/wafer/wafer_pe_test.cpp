// The wafer's components by hand: a PE step takes the slowest of datapath, ramp, SRAM reads and SRAM writes;
// a step carrying a span of PEs runs in lockstep and equals one step per PE when they are all free; the SRAM
// capacity is enforced with a message that says by how much, by the mappers' ledger while planning and by the
// PE array when a program's placements reach it; MemoryX shares its I/O bandwidth between ports.
#include <gtest/gtest.h>

#include "engine/mappers/toolkit/sram_ledger.h"
#include "models/core/grid_span.h"
#include "models/spatial/wafer_memoryx.h"
#include "models/spatial/wafer_pe_array.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

// 4 x 2 PEs at 1 GHz (the harness clock), so a cycle is 1 ns: 4 fp16 MACs per cycle, 16 B of SRAM reads, 8 B of
// writes and 4 B through the ramp per cycle, 2 cycles to start a task.
const char* k_params =
    "{width: 4, height: 2, sram: 48KiB, read_bandwidth: 16B/cycle, write_bandwidth: 8B/cycle, ramp_bandwidth: "
    "4B/cycle, "
    "macs_per_cycle: {fp16: 4, fp32: 1}, vector_ops_per_cycle: {fp16: 4, fp32: 1}, task_overhead: 2cycles}";

txn compute(std::int32_t unit, const work& w, tick at, const grid_span* span = nullptr) {
    txn t = test::request(txn_kind::compute, at);
    t.unit = unit;
    t.w = &w;
    t.payload = span;
    return t;
}

}  // namespace

TEST(wafer_pe, a_step_takes_the_slowest_of_datapath_ramp_and_sram) {
    sim_context sim;
    auto pe = test::make<wafer_pe_array>(sim, "wafer_pe_array", "pe", k_params);
    work w;
    w.type = dtype::fp16;
    w.macs = 400;       // 100 cycles
    w.vector_ops = 40;  // 10 cycles
    txn t = compute(0, w, 0);
    pe->transport(t);
    EXPECT_EQ(t.head, 0u);
    EXPECT_EQ(t.tail, 112 * test::ns);  // 2 + 100 + 10
    w.bytes_in = 1000;                  // 250 cycles through the ramp
    t = compute(1, w, 0);
    pe->transport(t);
    EXPECT_EQ(t.tail, 252 * test::ns);
    w.bytes_weight = 8000;  // 500 cycles of SRAM reads
    t = compute(2, w, 0);
    pe->transport(t);
    EXPECT_EQ(t.tail, 502 * test::ns);
    w.bytes_out = 4400;  // 550 cycles of SRAM writes
    t = compute(3, w, 0);
    pe->transport(t);
    EXPECT_EQ(t.tail, 552 * test::ns);
    // fp32 runs one MAC and one element op per cycle.
    work f;
    f.type = dtype::fp32;
    f.macs = 400;
    f.vector_ops = 40;
    t = compute(4, f, 0);
    pe->transport(t);
    EXPECT_EQ(t.tail, 442 * test::ns);
    // A second step on a busy PE waits for it.
    t = compute(0, w, 10 * test::ns);
    pe->transport(t);
    EXPECT_EQ(t.head, 112 * test::ns);
    EXPECT_EQ(t.tail, (112 + 552) * test::ns);
    // A type the PE has no rate for is the user's error.
    work i8;
    i8.type = dtype::int8;
    i8.macs = 1;
    t = compute(5, i8, 0);
    EXPECT_THROW(pe->transport(t), input_error);
}

TEST(wafer_pe, a_span_runs_in_lockstep_from_when_its_last_pe_is_free) {
    sim_context sim;
    auto pe = test::make<wafer_pe_array>(sim, "wafer_pe_array", "pe", k_params);
    work w;
    w.type = dtype::fp16;
    w.macs = 400;  // 102 cycles with the overhead
    txn t = compute(pe->unit_of(1, 0), w, 0);
    pe->transport(t);
    EXPECT_EQ(t.tail, 102 * test::ns);
    const grid_span row0({0, 0, 4, 1});
    t = compute(pe->unit_of(0, 0), w, 0, &row0);  // the step names the span's first PE
    pe->transport(t);
    EXPECT_EQ(t.head, 102 * test::ns);
    EXPECT_EQ(t.tail, 204 * test::ns);
    // Every PE of the row is now busy until 204 ns; row 1 was untouched.
    t = compute(pe->unit_of(3, 0), w, 0);
    pe->transport(t);
    EXPECT_EQ(t.head, 204 * test::ns);
    t = compute(pe->unit_of(3, 1), w, 0);
    pe->transport(t);
    EXPECT_EQ(t.head, 0u);
    const auto busy = pe->unit_busy();
    EXPECT_DOUBLE_EQ(busy[static_cast<size_t>(pe->unit_of(0, 0))], 102e-9);
    EXPECT_DOUBLE_EQ(busy[static_cast<size_t>(pe->unit_of(1, 0))], 204e-9);
    EXPECT_DOUBLE_EQ(busy[static_cast<size_t>(pe->unit_of(3, 0))], 204e-9);
    EXPECT_DOUBLE_EQ(busy[static_cast<size_t>(pe->unit_of(2, 1))], 0.0);
    const grid_span outside({2, 0, 5, 1}), empty({1, 1, 1, 2});
    t = compute(pe->unit_of(2, 0), w, 0, &outside);
    EXPECT_THROW(pe->transport(t), input_error);  // leaves the array
    t = compute(pe->unit_of(1, 1), w, 0, &empty);
    EXPECT_THROW(pe->transport(t), input_error);
    t = compute(pe->unit_of(0, 1), w, 0, &row0);
    EXPECT_THROW(pe->transport(t), input_error);  // the step's PE is not in its span
    t = compute(8, w, 0);
    EXPECT_THROW(pe->transport(t), input_error);  // not a PE
}

TEST(wafer_pe, a_span_on_free_pes_equals_one_step_per_pe) {
    sim_context sim;
    auto a = test::make<wafer_pe_array>(sim, "wafer_pe_array", "pe_a", k_params);
    auto b = test::make<wafer_pe_array>(sim, "wafer_pe_array", "pe_b", k_params);
    work w;
    w.type = dtype::fp16;
    w.macs = 1000;
    w.bytes_in = 900;
    w.bytes_weight = 300;
    const grid_span all({0, 0, 4, 2});
    for (int round = 0; round < 3; ++round) {
        tick end_a = 0;
        for (std::int32_t u = 0; u < 8; ++u) {
            txn t = compute(u, w, 0);
            a->transport(t);
            end_a = std::max(end_a, t.tail);
        }
        txn t = compute(0, w, 0, &all);
        b->transport(t);
        EXPECT_EQ(t.tail, end_a);
    }
    EXPECT_EQ(a->unit_busy(), b->unit_busy());
    std::vector<resource_usage> ua, ub;
    a->usage(ua);
    b->usage(ub);
    ASSERT_EQ(ua.size(), ub.size());
    for (size_t i = 0; i < ua.size(); ++i) {
        EXPECT_DOUBLE_EQ(ua[i].work, ub[i].work) << ua[i].name;
        EXPECT_DOUBLE_EQ(ua[i].ideal_max, ub[i].ideal_max) << ua[i].name;
    }
}

TEST(wafer_pe, placing_more_than_a_pe_holds_is_an_error_that_says_by_how_much) {
    sim_context sim;
    auto pe = test::make<wafer_pe_array>(sim, "wafer_pe_array", "pe", k_params);
    // A mapper plans with a ledger: 40 KiB on row 0, then 10 KiB on column 1, which overfills PE (1,0) of its
    // 48 KiB by 2 KiB.
    program prog;
    toolkit::sram_ledger sram(*pe, prog);
    sram.place({0, 0, 4, 1}, 40 * 1024, "weights of fc1");
    EXPECT_EQ(sram.max_used_bytes(), 40u * 1024);
    EXPECT_EQ(sram.used_bytes(3, 0), 40u * 1024);
    EXPECT_EQ(sram.used_bytes(0, 1), 0u);
    try {
        sram.place({1, 0, 2, 2}, 10 * 1024, "activations of fc2");
        FAIL() << "placed 50 KiB on a 48 KiB PE";
    } catch (const input_error& e) {
        EXPECT_EQ(e.message(),
                  "activations of fc2 needs 10 KiB on PE (1,0) of pe, which already holds 40 KiB of its 48 KiB "
                  "(2 KiB short)");
    }
    // Nothing of the failed placement stays behind, in the ledger or in the program.
    EXPECT_EQ(sram.used_bytes(1, 1), 0u);
    ASSERT_EQ(prog.placements.size(), 1u);
    EXPECT_EQ(prog.placements[0].comp, pe->id());
    EXPECT_EQ(prog.placements[0].data.what, "weights of fc1");
    EXPECT_DOUBLE_EQ(prog.placements[0].data.bytes_per_pe, 40 * 1024);
    // Planning set nothing on the PE array; it holds a program's placements from the run's start, and a new
    // program starts from empty.
    EXPECT_EQ(pe->max_used_bytes(), 0u);
    pe->begin_program(0, {prog.placements[0].data});
    EXPECT_EQ(pe->max_used_bytes(), 40u * 1024);
    EXPECT_EQ(pe->used_bytes(pe->unit_of(1, 0)), 40u * 1024);
    EXPECT_EQ(pe->used_bytes(pe->unit_of(1, 1)), 0u);
    pe->begin_program(0, {});
    EXPECT_EQ(pe->max_used_bytes(), 0u);
    // Placements that do not fit (a program edited by hand) are the same error when the run begins.
    try {
        pe->begin_program(0, {prog.placements[0].data, grid_placement{{1, 0, 2, 2}, 10 * 1024, "activations of fc2"}});
        FAIL() << "held 50 KiB on a 48 KiB PE";
    } catch (const input_error& e) {
        EXPECT_NE(e.message().find("(2 KiB short)"), std::string::npos) << e.message();
    }
    // Bytes count whole (rounded up), and a rectangle outside the array is an error.
    sram.place({3, 1, 4, 2}, 0.5, "a flag");
    EXPECT_EQ(sram.used_bytes(3, 1), 1u);
    EXPECT_THROW(sram.place({3, 1, 5, 2}, 1, "a spill"), input_error);
}

TEST(wafer_memoryx, ports_share_the_io_bandwidth_each_way) {
    sim_context sim;
    auto mx = test::make<wafer_memoryx>(
        sim, "wafer_memoryx", "mx", "{ports: 4, capacity: 1TB, io_bandwidth: 16GB/s, latency: 1us, interleave: 4KiB}");
    const tick us = 1000 * test::ns;
    // 16 kB at 16 GB/s is 1 us on the link, plus 1 us of latency.
    txn a = test::request(txn_kind::read, 0, 16000);
    a.unit = 0;
    mx->transport(a);
    EXPECT_EQ(a.head, 1 * us);
    EXPECT_EQ(a.tail, 2 * us);
    // Another port, same direction: waits for the shared link.
    txn b = test::request(txn_kind::read, 0, 16000);
    b.unit = 3;
    mx->transport(b);
    EXPECT_EQ(b.head, 2 * us);
    EXPECT_EQ(b.tail, 3 * us);
    // Out of the wafer is the other direction: not delayed by the reads.
    txn c = test::request(txn_kind::write, 0, 16000);
    c.unit = 1;
    mx->transport(c);
    EXPECT_EQ(c.tail, 2 * us);
    EXPECT_EQ(mx->unit_for_address(8192), 2);
    EXPECT_EQ(mx->capacity_bytes(), 1000000000000ull);
}
