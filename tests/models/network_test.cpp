// Networks against hand-computed timings: zero-load latency of one packet, two packets on one link
// serialise, packets on disjoint links do not interact; the mesh's two representations agree exactly.
#include <gtest/gtest.h>

#include <random>

#include "models/interconnect/chip_link.h"
#include "models/interconnect/crossbar.h"
#include "models/interconnect/mesh_noc.h"
#include "models/interconnect/ring.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;
using test::ps;

namespace {
txn packet(std::uint32_t from, std::uint32_t to, std::uint64_t bytes, tick at) {
    txn t = test::request(txn_kind::route, at, bytes);
    t.src_port = from;
    t.dst_port = to;
    return t;
}
const char* mesh_params =
    "{width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle, header_bytes: "
    "16B}";
}  // namespace

TEST(mesh_noc, zero_load_latency_of_one_packet) {
    sim_context sim;
    auto m = test::make<mesh_noc>(sim, "mesh_noc", "m1", mesh_params);
    // (0,0) -> (3,0): H = 3 hops. 256 B + 16 B header = 272 B at 32 B/ns = 8.5 ns on each link.
    // (H + 1) * (router 2 + wire 1) + wire 1 + 8.5 = 21.5 ns.
    txn t = packet(0, 3, 256, 0);
    m->traverse(t);
    EXPECT_EQ(t.tail, 21 * ns + 500 * ps);
    EXPECT_EQ(t.head, 13 * ns) << "cut-through: the head arrives one serialisation earlier";
    EXPECT_EQ(m->hops(0, 15), 6);
}

TEST(mesh_noc, two_packets_on_one_link_serialise_disjoint_ones_do_not) {
    sim_context sim;
    auto m = test::make<mesh_noc>(sim, "mesh_noc", "m2", mesh_params);
    txn a = packet(0, 3, 256, 0), b = packet(1, 3, 256, 0);  // share (1,0)->(2,0), (2,0)->(3,0) and the ejection
    m->traverse(a);
    m->traverse(b);
    EXPECT_EQ(a.tail, 21 * ns + 500 * ps);
    // b is injected at (1,0) at 0 and reaches link (1,0)->(2,0) at 3 ns, but a holds it from 6 to 14.5 ns:
    // b follows a on every shared link, one serialisation (8.5 ns) behind.
    EXPECT_EQ(b.tail, a.tail + 8 * ns + 500 * ps);
    txn c = packet(4, 7, 256, 100 * ns), d = packet(8, 11, 256, 100 * ns);  // rows 1 and 2: nothing shared
    m->traverse(c);
    m->traverse(d);
    EXPECT_EQ(c.tail, 121 * ns + 500 * ps);
    EXPECT_EQ(d.tail, 121 * ns + 500 * ps);
}

TEST(mesh_noc, yx_routing_takes_the_other_path) {
    sim_context sim;
    auto xy = test::make<mesh_noc>(sim, "mesh_noc", "xy", mesh_params);
    auto yx = test::make<mesh_noc>(sim, "mesh_noc", "yx",
                                   "{width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, "
                                   "link_latency: 1cycle, header_bytes: 16B, routing: {impl: yx}}");
    EXPECT_EQ(xy->next_direction(0, 0, 3, 3), mesh_dir::east);
    EXPECT_EQ(yx->next_direction(0, 0, 3, 3), mesh_dir::north);
}

TEST(ring, shortest_direction_and_latency) {
    sim_context sim;
    auto r = test::make<ring>(
        sim, "ring", "r1",
        "{nodes: 8, link_bandwidth: 32B/cycle, router_latency: 1cycle, link_latency: 1cycle, header_bytes: 0B}");
    EXPECT_EQ(r->hops(0, 6), 2) << "counter-clockwise is shorter";
    // 0 -> 2: inject (wire 1) + 2 hops x (1 + 1) + eject (1 + 1) + 256 B / 32 B/ns = 1 + 4 + 2 + 8 = 15 ns.
    txn t = packet(0, 2, 256, 0);
    r->traverse(t);
    EXPECT_EQ(t.tail, 15 * ns);
}

TEST(crossbar, output_contention_serialises) {
    sim_context sim;
    auto x = test::make<crossbar>(sim, "crossbar", "x1",
                                  "{ports: 4, port_bandwidth: 64B/cycle, latency: 4cycles, header_bytes: 0B}");
    txn a = packet(0, 3, 256, 0), b = packet(1, 3, 256, 0), c = packet(2, 1, 256, 0);
    x->traverse(a);
    x->traverse(b);
    x->traverse(c);
    // 256 B at 64 B/ns = 4 ns on each port; cut-through: the output starts 4 cycles after the input did,
    // so the last byte leaves at 4 + 4 = 8 ns.
    EXPECT_EQ(a.tail, 8 * ns);
    EXPECT_EQ(b.tail, 12 * ns) << "b waits for output 3";
    EXPECT_EQ(c.tail, 8 * ns) << "c uses other ports";
}

TEST(chip_link, lanes_times_bandwidth_plus_latency) {
    sim_context sim;
    auto l = test::make<chip_link>(sim, "chip_link", "l1",
                                   "{lanes: 2, lane_bandwidth: 50GB/s, latency: 500ns, header_bytes: 0B}");
    txn t = packet(0, 1, 100000, 0);  // 100 kB at 100 GB/s = 1 us
    l->traverse(t);
    EXPECT_EQ(t.tail, 1500 * ns);
    txn back = packet(1, 0, 100000, 0);  // the other direction is free
    l->traverse(back);
    EXPECT_EQ(back.tail, 1500 * ns);
}
