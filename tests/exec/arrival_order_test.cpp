// Resources serve requests in the order they reach them, not the order steps are listed or issued in:
// `start:` really delays a step, a swap takes the one-way time, results do not depend on listing order, and the
// executor's fast path (requests made at once when nothing queued comes first) equals queueing every request.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "tests/support/harness.h"

using namespace tessel;
using test::ns;
using test::ps;

namespace {

// One platform, three networks: 16 tiles on a 4x4 mesh, 6 on a ring, 5 on a crossbar, and two tiles joined by
// a chip link. Scratchpads are wide (8 banks x 64 B/cycle) with no latency so transfer times are the networks'.
const char* platform_yaml = R"(
platform: order
clock: 1GHz
components:
  tile:
    kind: tile
    replicate: {x: 4, y: 4}
    params: {sram: {capacity: 4MiB, banks: 8, bank_bandwidth: 64B/cycle, latency: 0cycles}}
  noc:
    kind: mesh_noc
    params: {width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle,
             packet_bytes: 256B, header_bytes: 16B, max_outstanding: 8}
  rt:
    kind: tile
    replicate: {i: 6}
    params: {sram: {capacity: 4MiB, banks: 8, bank_bandwidth: 64B/cycle, latency: 0cycles}}
  ring:
    kind: ring
    params: {nodes: 6, link_bandwidth: 32B/cycle, router_latency: 1cycle, link_latency: 1cycle, packet_bytes: 256B}
  xt:
    kind: tile
    replicate: {i: 5}
    params: {sram: {capacity: 4MiB, banks: 8, bank_bandwidth: 64B/cycle, latency: 0cycles}}
  xbar:
    kind: crossbar
    params: {ports: 5, port_bandwidth: 32B/cycle, latency: 4cycles, packet_bytes: 256B}
  lt:
    kind: tile
    replicate: {i: 2}
    params: {sram: {capacity: 4MiB, banks: 8, bank_bandwidth: 64B/cycle, latency: 0cycles}}
  link:
    kind: chip_link
    params: {lanes: 1, lane_bandwidth: 4GB/s, latency: 500ns, packet_bytes: 4KiB, header_bytes: 64B, max_outstanding: 16}
connections:
  - tile[x,y] -> noc[x,y]
  - rt[i] -> ring[i]
  - xt[i] -> xbar[i]
  - lt[i] -> link[i]
)";

test::bench& b() {
    static test::bench bench(platform_yaml, "order");
    return bench;
}

struct xfer {
    std::string label, from, to;
    std::uint64_t bytes;
    tick start;
};

/// Runs the transfers as one program (steps labelled, in the order given); returns each label's end time
/// relative to the program start.
std::map<std::string, tick> run(const std::vector<xfer>& xs, bool queue_everything = false) {
    program p;
    p.name = "order";
    const auto op = p.intern_op("send");
    for (const auto& x : xs) {
        const auto s = p.add_transfer(op, b().at(x.from), b().at(x.to), x.bytes, {});
        p.steps[s].not_before = x.start;
        p.step_labels.push_back(x.label);
    }
    b().exec->set_queue_everything(queue_everything);
    const auto r = b().exec->run(p);
    b().exec->set_queue_everything(false);
    std::map<std::string, tick> end;
    for (size_t i = 0; i < xs.size(); ++i) end[xs[i].label] = r.step_end[i] - r.start;
    return end;
}

}  // namespace

TEST(arrival_order, a_later_listed_packet_created_first_is_not_held_back) {
    // The issue's two-packet program: A created at cycle 100, listed first; B created at 0. 32 B + 16 B header
    // = 48 B at 32 B/cycle = 1.5 ns per link; (0,0) -> (1,0) is H = 1 hop: (H + 1) * (2 + 1) + 1 + 1.5 = 8.5 ns.
    const auto t = run({{"A", "tile[0,0]", "tile[1,0]", 32, 100 * ns}, {"B", "tile[0,0]", "tile[1,0]", 32, 0}});
    EXPECT_EQ(t.at("B"), 8 * ns + 500 * ps);
    EXPECT_EQ(t.at("A"), 108 * ns + 500 * ps);
}

TEST(arrival_order, a_swap_over_a_chip_link_takes_the_one_way_time) {
    // 1 MiB each way over a 4 GB/s link: 256 packets of 4 KiB + 64 B header = 4160 B, each 1.04 us on the
    // wire, back to back, plus 500 ns latency: 256 * 1.04 us + 0.5 us = 266.74 us. Each direction has its own
    // lanes. (It took 16x the one-way time while links were booked in injection order.)
    const tick one_way = run({{"ab", "lt[0]", "lt[1]", 1 << 20, 0}}).at("ab");
    EXPECT_EQ(one_way, 266740 * ns);
    const auto swap = run({{"ab", "lt[0]", "lt[1]", 1 << 20, 0}, {"ba", "lt[1]", "lt[0]", 1 << 20, 0}});
    EXPECT_EQ(swap.at("ab"), one_way);
    EXPECT_EQ(swap.at("ba"), one_way);
}

TEST(arrival_order, a_swap_on_disjoint_mesh_links_takes_the_one_way_time) {
    // (0,0) <-> (3,0): eastbound and westbound links are different links; the wide scratchpads serve the
    // outgoing reads and incoming writes of each tile without slowing either.
    const tick one_way = run({{"ab", "tile[0,0]", "tile[3,0]", 1 << 20, 0}}).at("ab");
    // 4096 packets of 256 B + 16 B at 32 B/ns = 8.5 ns each, back to back: 4096 * 8.5 ns + 13 ns to the head.
    EXPECT_EQ(one_way, 4096 * (8 * ns + 500 * ps) + 13 * ns);
    const auto swap = run({{"ab", "tile[0,0]", "tile[3,0]", 1 << 20, 0}, {"ba", "tile[3,0]", "tile[0,0]", 1 << 20, 0}});
    EXPECT_EQ(swap.at("ab"), one_way);
    EXPECT_EQ(swap.at("ba"), one_way);
}

namespace {
// A random program of independent transfers among `nodes` (sizes from one packet to many, start times spread
// over a window so packets meet on shared links).
std::vector<xfer> random_program(std::mt19937& rng, const std::vector<std::string>& nodes, int n) {
    std::vector<xfer> xs;
    for (int i = 0; i < n; ++i) {
        const auto a = rng() % nodes.size();
        auto c = rng() % nodes.size();
        if (c == a) c = (c + 1) % nodes.size();
        xs.push_back({"t" + std::to_string(i), nodes[a], nodes[c], 32 + rng() % 3000, (rng() % 400) * ns / 2});
    }
    return xs;
}

std::vector<std::string> names(const std::string& group, int n) {
    std::vector<std::string> v;
    for (int i = 0; i < n; ++i) v.push_back(group + "[" + std::to_string(i) + "]");
    return v;
}
}  // namespace

TEST(arrival_order, timing_does_not_depend_on_listing_order) {
    std::vector<std::string> mesh;
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) mesh.push_back("tile[" + std::to_string(x) + "," + std::to_string(y) + "]");
    const std::vector<std::vector<std::string>> networks = {mesh, names("rt", 6), names("xt", 5)};
    std::mt19937 rng(11);
    for (const auto& nodes : networks) {
        for (int trial = 0; trial < 6; ++trial) {
            auto xs = random_program(rng, nodes, 40);
            const auto reference = run(xs);
            for (int perm = 0; perm < 3; ++perm) {
                std::shuffle(xs.begin(), xs.end(), rng);
                ASSERT_EQ(run(xs), reference) << nodes.front() << " trial " << trial << " permutation " << perm;
            }
        }
    }
}

TEST(arrival_order, the_fast_path_equals_queueing_every_request) {
    std::vector<std::string> mesh;
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) mesh.push_back("tile[" + std::to_string(x) + "," + std::to_string(y) + "]");
    std::mt19937 rng(5);
    for (const auto& nodes : {mesh, names("rt", 6), names("xt", 5)}) {
        for (int trial = 0; trial < 5; ++trial) {
            const auto xs = random_program(rng, nodes, 60);
            ASSERT_EQ(run(xs, true), run(xs, false)) << nodes.front() << " trial " << trial;
        }
    }
}
