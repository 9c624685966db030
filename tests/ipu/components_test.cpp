// IPU tiles and exchange timed by hand: the six barrel-scheduled workers (a tile is as slow as its busiest
// worker), SRAM ports, exchange send and receive sides, multicast.
#include <gtest/gtest.h>

#include "models/bsp/ipu_exchange.h"
#include "models/bsp/ipu_tiles.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;

namespace {

// 1 GHz, so a cycle is a nanosecond. 6 workers, 64 fp16 MACs and 4 fp16 element ops per cycle per tile,
// 16 B/cycle loads and 8 B/cycle stores, no SRAM latency.
const char* tiles_params =
    "{width: 2, height: 2, threads: 6, amp_macs_per_cycle: {fp32: 16, fp16: 64}, vector_ops_per_cycle: {fp32: 2, fp16: "
    "4},"
    " memory: 64KiB, load_bandwidth: 16B/cycle, store_bandwidth: 8B/cycle, memory_latency: 0cycles}";

sim_context& sim() {
    static sim_context s;
    return s;
}

ipu_tiles& tiles() {
    static auto t = test::make<ipu_tiles>(sim(), "ipu_tiles", "tiles", tiles_params);
    return *t;
}

ipu_exchange& exchange() {
    static auto x = test::make<ipu_exchange>(
        sim(), "ipu_exchange", "exchange",
        "{tiles: 4, external_ports: 1, tile_bandwidth: 4B/cycle, external_bandwidth: 16B/cycle,"
        " latency: 10cycles, packet_bytes: 64KiB, header_bytes: 0B, max_outstanding: 4}");
    return *x;
}

tick compute(std::uint32_t tile, const work& w, tick at) {
    txn t = test::request(txn_kind::compute, at);
    t.unit = static_cast<std::int32_t>(tile);
    t.w = &w;
    tiles().transport(t);
    return t.tail - t.head;
}

}  // namespace

TEST(ipu_tiles, a_matmul_takes_as_long_as_its_busiest_worker) {
    // 12 x 64 x 64: the 64 output columns are shared by 6 workers, the busiest gets ceil(64/6) = 11 columns of
    // 12 x 64 MACs = 8448 MACs, issuing every 6th cycle at 64 MACs: 8448 x 6 / 64 = 792 cycles (the ideal is 768).
    // Operands: (12x64 + 64x64) x 2 B = 9728 B at 16 B/cycle = 608 cycles, hidden under the arithmetic.
    work w;
    w.type = dtype::fp16;
    w.m = 12, w.n = 64, w.k = 64, w.batch = 1;
    w.macs = 12.0 * 64 * 64;
    w.bytes_in = 12 * 64 * 2;
    w.bytes_weight = 64 * 64 * 2;
    w.bytes_out = 12 * 64 * 2;
    EXPECT_EQ(compute(0, w, 0), 792 * ns);
}

TEST(ipu_tiles, fewer_rows_than_workers_leave_workers_idle) {
    // One output row and one column: a single worker does all 64 MACs at one issue every 6 cycles: 6 cycles.
    work w;
    w.type = dtype::fp16;
    w.m = 1, w.n = 1, w.k = 64, w.batch = 1;
    w.macs = 64;
    EXPECT_EQ(compute(1, w, 0), 6 * ns);
}

TEST(ipu_tiles, vector_work_and_memory_bound_steps) {
    // 1000 fp16 element ops: ceil(1000 / 6) = 167 per worker, 4 per 6 cycles: 167 x 6 / 4 = 250.5 -> 251 cycles.
    work v;
    v.type = dtype::fp16;
    v.vector_ops = 1000;
    EXPECT_EQ(compute(2, v, 0), 251 * ns);
    // 16000 operand bytes and no arithmetic: 16000 / 16 = 1000 cycles of loads.
    work m;
    m.type = dtype::fp16;
    m.bytes_in = 16000;
    EXPECT_EQ(compute(3, m, 0), 1000 * ns);
}

TEST(ipu_tiles, steps_on_one_tile_queue_and_types_without_a_rate_are_refused) {
    work w;
    w.type = dtype::fp16;
    w.vector_ops = 24;  // 24 / 6 = 4 per worker, 4 x 6 / 4 = 6 cycles
    txn a = test::request(txn_kind::compute, 10000 * ns);
    a.unit = 0;
    a.w = &w;
    tiles().transport(a);
    txn b = test::request(txn_kind::compute, 10000 * ns);
    b.unit = 0;
    b.w = &w;
    tiles().transport(b);
    EXPECT_EQ(b.head, a.tail) << "the second step waits for the tile";
    work i8;
    i8.type = dtype::int8;
    i8.macs = 100;
    EXPECT_THROW(tiles().model().check(i8, "tile"), input_error);
}

TEST(ipu_tiles, a_multicast_read_is_read_once) {
    // Two reads of the same 1600 B at the same address and time: one message heard by two receivers.
    txn a = test::request(txn_kind::read, 20000 * ns, 1600, 0xABC00000);
    a.unit = 1;
    tiles().transport(a);
    EXPECT_EQ(a.tail - a.head, 100 * ns);  // 1600 B at 16 B/cycle
    txn b = test::request(txn_kind::read, 20000 * ns, 1600, 0xABC00000);
    b.unit = 1;
    tiles().transport(b);
    EXPECT_EQ(b.head, a.head);
    EXPECT_EQ(b.tail, a.tail);
    txn c = test::request(txn_kind::read, 20000 * ns, 1600, 0xDEF00000);  // other data: queues behind
    c.unit = 1;
    tiles().transport(c);
    EXPECT_EQ(c.head, a.tail);
}

TEST(ipu_exchange, a_message_takes_its_bytes_over_the_tile_bandwidth_plus_latency) {
    // 1 KiB at 4 B/cycle: 256 cycles on the sender's side; the receiver sees the first word 10 cycles later.
    txn t = test::request(txn_kind::route, 0, 1024, 1);
    t.src_port = 0;
    t.dst_port = 1;
    exchange().traverse(t);
    EXPECT_EQ(t.head, 10 * ns);
    EXPECT_EQ(t.tail, 266 * ns);
}

TEST(ipu_exchange, receivers_serialise_and_multicast_sends_once) {
    const tick t0 = 100000 * ns;
    // Tiles 0 and 2 send 1 KiB each to tile 3: the second waits for tile 3's receive side.
    txn a = test::request(txn_kind::route, t0, 1024, 2);
    a.src_port = 0, a.dst_port = 3;
    exchange().traverse(a);
    txn b = test::request(txn_kind::route, t0, 1024, 3);
    b.src_port = 2, b.dst_port = 3;
    exchange().traverse(b);
    EXPECT_EQ(a.tail, t0 + 266 * ns);
    EXPECT_EQ(b.tail, t0 + 522 * ns);
    // Tile 1 sends the same message to tiles 0 and 2 at once: its send side is taken once.
    const tick t1 = 200000 * ns;
    txn c = test::request(txn_kind::route, t1, 1024, 7);
    c.src_port = 1, c.dst_port = 0;
    exchange().traverse(c);
    txn d = test::request(txn_kind::route, t1, 1024, 7);
    d.src_port = 1, d.dst_port = 2;
    exchange().traverse(d);
    EXPECT_EQ(c.tail, t1 + 266 * ns);
    EXPECT_EQ(d.tail, t1 + 266 * ns) << "a multicast copy does not wait for the sender again";
    // The external port runs at its own rate: 1 KiB at 16 B/cycle = 64 cycles into tile 0.
    const tick t2 = 300000 * ns;
    txn e = test::request(txn_kind::route, t2, 1024, 9);
    e.src_port = 4, e.dst_port = 0;
    exchange().traverse(e);
    EXPECT_EQ(e.tail, t2 + (10 + 256) * ns)
        << "the tile's 4 B/cycle receive side, not the 16 B/cycle port, sets the end";
}
