// Collectives lowered to transfers (engine/system/collectives.h), timed by hand from the network rules of
// docs/timing-model.md, and the symmetric fast path shown equal to the full lowering where symmetry holds.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/system/collectives.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;
using test::ps;

namespace {

// One platform, four places to run collectives (SystemC elaborates once per process):
//  - xt[0..7] on an 8-port crossbar;
//  - rt[0..7] on a bidirectional 8-node ring;
//  - mt[x,y] on a 2 x 4 mesh (x fastest, so rank r is mt[r % 2, r / 2]);
//  - two "nodes" of 4 tiles, at[i] on crossbar xa and bt[i] on crossbar xb, whose port 4 is joined by a chip link;
//  - st[0..3] on ports 0-3 of crossbar sx, whose ports 4-7 hold its in-network reduction engines sr[0..3], each
//    reducing 16 B/cycle (half a port's rate, so they are the bottleneck).
// Every network: 32 B/cycle at 1 GHz, packets of 256 B + 16 B header = 272 B on the wire, 8.5 ns per packet per
// link, 8 packets of a transfer in flight. Scratchpads are 16 banks x 1 KiB/cycle with no latency: a 256 B packet
// takes 0.0625 ns in each of 4 banks, hidden under the 8.5 ns on the wire, so times are the networks'.
const char* platform_yaml = R"(
platform: coll
clock: 1GHz
components:
  xt:
    kind: tile
    replicate: {i: 8}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  xbar:
    kind: crossbar
    params: {ports: 8, port_bandwidth: 32B/cycle, latency: 4cycles, packet_bytes: 256B, header_bytes: 16B,
             max_outstanding: 8}
  rt:
    kind: tile
    replicate: {i: 8}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  ring:
    kind: ring
    params: {nodes: 8, bidirectional: true, link_bandwidth: 32B/cycle, router_latency: 2cycles,
             link_latency: 1cycle, packet_bytes: 256B, header_bytes: 16B, max_outstanding: 8}
  mt:
    kind: tile
    replicate: {x: 2, y: 4}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  noc:
    kind: mesh_noc
    params: {width: 2, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle,
             packet_bytes: 256B, header_bytes: 16B, max_outstanding: 8}
  at:
    kind: tile
    replicate: {i: 4}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  bt:
    kind: tile
    replicate: {i: 4}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  xa:
    kind: crossbar
    params: {ports: 5, port_bandwidth: 32B/cycle, latency: 4cycles, packet_bytes: 256B, header_bytes: 16B,
             max_outstanding: 8}
  xb:
    kind: crossbar
    params: {ports: 5, port_bandwidth: 32B/cycle, latency: 4cycles, packet_bytes: 256B, header_bytes: 16B,
             max_outstanding: 8}
  link:
    kind: chip_link
    params: {lanes: 1, lane_bandwidth: 16GB/s, latency: 100ns, packet_bytes: 256B, header_bytes: 16B,
             max_outstanding: 8}
  st:
    kind: tile
    replicate: {i: 4}
    params: {sram: {capacity: 4MiB, banks: 16, bank_bandwidth: 1024B/cycle, latency: 0cycles}}
  sx:
    kind: crossbar
    params: {ports: 8, port_bandwidth: 32B/cycle, latency: 4cycles, packet_bytes: 256B, header_bytes: 16B,
             max_outstanding: 8}
  sr:
    kind: switch_reducer
    replicate: {i: 4}
    params: {reduce_bandwidth: 16B/cycle, latency: 0ns}
connections:
  - st[i] -> sx[i]
  - sr[i] -> sx[i + 4]
  - xt[i] -> xbar[i]
  - rt[i] -> ring[i]
  - mt[x,y] -> noc[x,y]
  - at[i] -> xa[i]
  - bt[i] -> xb[i]
  - xa[4] -> link[0]
  - link[1] -> xb[4]
)";

test::bench& b() {
    static test::bench bench(platform_yaml, "coll");
    return bench;
}

std::vector<endpoint> ranks_of(const std::string& group, int n) {
    std::vector<endpoint> out;
    for (int i = 0; i < n; ++i) out.push_back(b().at(group + "[" + std::to_string(i) + "]"));
    return out;
}

// The 8 mesh tiles in rank order (x fastest).
std::vector<endpoint> mesh_ranks() {
    std::vector<endpoint> out;
    for (int r = 0; r < 8; ++r)
        out.push_back(b().at("mt[" + std::to_string(r % 2) + "," + std::to_string(r / 2) + "]"));
    return out;
}

// The two nodes' tiles: at[0..3] then bt[0..3].
std::vector<endpoint> node_ranks() {
    auto out = ranks_of("at", 4);
    for (const auto& e : ranks_of("bt", 4)) out.push_back(e);
    return out;
}

collective_call call(collective_kind k, collective_algorithm a, std::vector<endpoint> ranks, std::uint64_t bytes) {
    collective_call c;
    c.kind = k;
    c.algorithm = a;
    c.ranks = std::move(ranks);
    c.bytes = bytes;
    return c;
}

struct timing {
    std::vector<tick> done;  // per rank, from the program start; 0 for ranks not simulated
    tick last = 0;           // the latest done
    tick duration = 0;       // the whole program
    std::uint64_t transfers = 0;
};

// Lowers each call into one program (so they run concurrently) and runs it; returns each call's timing.
std::vector<timing> run_all(std::vector<collective_call> calls) {
    program p;
    p.name = "collectives";
    const auto op = p.intern_op("collective");
    std::vector<collective_steps> steps;
    for (auto& c : calls) {
        c.op = op;
        steps.push_back(lower_collective(p, c));
    }
    const auto r = b().exec->run(p);
    std::vector<timing> out;
    for (const auto& s : steps) {
        timing t;
        t.transfers = s.transfers;
        for (auto d : s.done) {
            t.done.push_back(d == ~0u ? 0 : r.step_end[d] - r.start);
            t.last = std::max(t.last, t.done.back());
        }
        t.duration = r.duration();
        out.push_back(t);
    }
    return out;
}

timing run_one(const collective_call& c) { return run_all({c}).front(); }

// A transfer of `packets` full packets over one crossbar (no contention): the first packet holds the input port
// for 8.5 ns and reaches the output port 4 ns (the traversal latency) after it entered; each further packet
// follows 8.5 ns later: packets x 8.5 + 4 ns.
constexpr tick xbar_transfer(int packets) { return packets * 8500 * ps + 4 * ns; }

std::string error_of(const collective_call& c) {
    program p;
    try {
        lower_collective(p, c);
    } catch (const input_error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(collectives, names_parse_and_bus_bandwidth_factors) {
    EXPECT_EQ(parse_collective_kind("reduce_scatter"), collective_kind::reduce_scatter);
    EXPECT_EQ(parse_collective_algorithm("hierarchical"), collective_algorithm::hierarchical);
    EXPECT_STREQ(name(collective_kind::all_to_all), "all_to_all");
    EXPECT_STREQ(name(collective_algorithm::torus), "torus");
    try {
        parse_collective_kind("all_reduc");
        FAIL() << "expected an error";
    } catch (const input_error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("unknown collective 'all_reduc'"), std::string::npos) << m;
        EXPECT_NE(m.find("did you mean 'all_reduce'"), std::string::npos) << m;
    }
    EXPECT_THROW(parse_collective_algorithm("rings"), input_error);
    // NCCL-tests: all-reduce 2(n-1)/n, reduce-scatter / all-gather / all-to-all (n-1)/n, broadcast 1.
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::all_reduce, 8), 1.75);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::reduce_scatter, 8), 0.875);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::all_gather, 4), 0.75);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::all_to_all, 2), 0.5);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::broadcast, 8), 1.0);
    EXPECT_DOUBLE_EQ(bus_bandwidth_factor(collective_kind::send_recv, 2), 1.0);
}

TEST(collectives, ring_all_reduce_on_a_crossbar) {
    // 16 KiB over 8 ranks: 14 steps (7 reduce-scatter, 7 all-gather), each rank i sending 2 KiB (8 packets) to
    // i+1 at once over disjoint ports: 8 x 8.5 + 4 = 72 ns a step, 14 x 72 = 1008 ns.
    const auto t = run_one(call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 16384));
    EXPECT_EQ(t.transfers, 8u * 14u);
    for (tick d : t.done) EXPECT_EQ(d, 14 * xbar_transfer(8));
    EXPECT_EQ(t.last, 1008 * ns);
    // Reduce-scatter and all-gather alone: 7 steps each, 504 ns.
    EXPECT_EQ(run_one(call(collective_kind::reduce_scatter, collective_algorithm::ring, ranks_of("xt", 8), 16384)).last,
              504 * ns);
    EXPECT_EQ(run_one(call(collective_kind::all_gather, collective_algorithm::ring, ranks_of("xt", 8), 16384)).last,
              504 * ns);
}

TEST(collectives, ring_all_reduce_on_a_ring_network_one_way_and_both_ways) {
    // Rank i sends to i+1 (one hop clockwise). A packet: injection link 8.5 ns + 1 ns wire, router 2 ns, the
    // clockwise link, 1 ns wire, router 2 ns, the ejection link, 1 ns wire: 3 x 1 + 2 x 2 + 8.5 = 15.5 ns, and
    // each further packet 8.5 ns later: a 2 KiB step (8 packets) takes 7 + 8 x 8.5 = 75 ns; 14 steps 1050 ns.
    auto c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("rt", 8), 16384);
    EXPECT_EQ(run_one(c).last, 14 * 75 * ns);
    // Both ways round: each step sends 1 KiB clockwise to i+1 and 1 KiB counter-clockwise to i-1. Both leave
    // through the node's one injection link, which alternates them (cw packet k in [17k, 17k + 8.5), ccw in
    // [17k + 8.5, 17k + 17)); the last ccw packet (k = 3) leaves it at 68 ns and arrives 7 ns later: 75 ns, the
    // same step time. The ring's injection link, not its ring links, bounds a ring all-reduce here.
    c.bidirectional = true;
    EXPECT_EQ(run_one(c).last, 14 * 75 * ns);
}

TEST(collectives, two_concurrent_all_reduces_share_the_ports) {
    // Alone: 2 ranks, 4 KiB: two steps of 2 KiB (8 packets), 2 x 72 = 144 ns.
    auto a = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 2), 4096);
    EXPECT_EQ(run_one(a).last, 144 * ns);
    // Two at once on the same two ranks (A listed first, so it is issued first at equal times). Step 1: both
    // inject at 0; each input port alternates A and B: A's packet k holds it [17k, 17k + 8.5), B's
    // [17k + 8.5, 17k + 17). A's step ends when its last packet (k = 7, port at 119) is out: 119 + 8.5 + 4 =
    // 131.5 ns; B's at 140 ns. Step 2: A starts at 131.5 but B's last packet holds the port until 136, so A's
    // packet 0 takes [136, 144.5), packet 1 [144.5, 153); B starts at 140 and its packets (requested after A's
    // of the same instant) interleave from 153: A's packet k (k >= 1) at 127.5 + 17k, B's at 153 + 17k while A
    // has packets left. A's last takes [246.5, 255) and ends at 255 + 4 = 259 ns; B's packets 6 and 7 then
    // follow back to back, [255, 263.5) and [263.5, 272): B ends at 276 ns. 115 and 132 ns longer than alone.
    auto b2 = a;
    const auto both = run_all({a, b2});
    EXPECT_EQ(both[0].last, 259 * ns);
    EXPECT_EQ(both[1].last, 276 * ns);
    // On all 8 ranks the two keep interleaving on every port. Each input port carries 2 x 14 steps x 8 packets
    // = 224 packets of 8.5 ns and never idles until both are done (each one's next step starts while the
    // other's packets still queue), so the later (B) ends when the last packet has crossed: 224 x 8.5 + 4 =
    // 1908 ns, the port bound. A ends before B's last step has started its last 8 packets, which follow back to
    // back on their own: 1908 - 8 x 8.5 = 1840 ns. Alone it was 1008 ns.
    auto a8 = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 16384);
    const auto both8 = run_all({a8, a8});
    EXPECT_EQ(both8[1].last, 1908 * ns);
    EXPECT_EQ(both8[0].last, 1840 * ns);
}

TEST(collectives, torus_2x4_on_a_mesh) {
    // Shape {2, 4} on the 2 x 4 mesh: dimension 0 is the row pair (x = 0, 1: one hop each way), dimension 1 the
    // column of 4 (y = 0..3), whose ring wraps from y = 3 back to y = 0 over 3 hops of the south links. 16 KiB:
    //  1. reduce-scatter along x: one step of 8 KiB (32 packets) over one hop: X = 7 + 32 x 8.5 = 279 ns (mesh
    //     zero-load latency (H + 1)(router + wire) + wire = 7 ns for H = 1); every rank ends at 279.
    //  2. reduce-scatter then all-gather along y: 6 steps of 2 KiB (8 packets). One hop: T1 = 7 + 68 = 75 ns;
    //     the wrap (3 hops): T3 = 4 x 3 + 1 + 68 = 81 ns. Each rank's step waits for its own previous step and
    //     for the piece from the rank before it; the wrap's sender (y = 3) depends only on itself and the fast
    //     y = 2, so it sends every 81 ns, and y = 0, fed by it, does too: y = 3 and y = 0 end at 6 x 81 = 486 ns
    //     after the phase began, the others earlier (y = 1 at 5 x 81 + 75).
    //  3. all-gather along x: one step of 8 KiB, X = 279 ns, from when each row is done.
    // Total: 279 + 486 + 279 = 1044 ns (rows y = 0 and y = 3).
    auto c = call(collective_kind::all_reduce, collective_algorithm::torus, mesh_ranks(), 16384);
    c.shape = {2, 4};
    const auto t = run_one(c);
    EXPECT_EQ(t.last, 1044 * ns);
    EXPECT_EQ(t.done[0], 1044 * ns);
    EXPECT_EQ(t.done[2], 279 * ns + 5 * 81 * ns + 75 * ns + 279 * ns) << "y = 1 ends one wrap step earlier";
    // Where symmetry does not hold: the fast path simulates rank 0 alone, whose column sends are one hop, so it
    // predicts 279 + 6 x 75 + 279 = 1008 ns and misses the wrap-around's 6 x 6 ns.
    c.symmetric = true;
    EXPECT_EQ(run_one(c).done[0], 1008 * ns);
}

TEST(collectives, hierarchical_2_groups_of_4) {
    // On the crossbar, all 8 ranks: reduce-scatter in each group of 4 (3 steps of 4 KiB = 16 packets:
    // 16 x 8.5 + 4 = 140 ns), all-reduce between groups on the quarter each rank owns (2 steps of 2 KiB:
    // 72 ns), all-gather in each group (3 x 140): 6 x 140 + 2 x 72 = 984 ns.
    auto c = call(collective_kind::all_reduce, collective_algorithm::hierarchical, ranks_of("xt", 8), 16384);
    c.shape = {4, 2};
    EXPECT_EQ(run_one(c).last, 6 * xbar_transfer(16) + 2 * xbar_transfer(8));
    EXPECT_EQ(run_one(c).last, 984 * ns);

    // Two nodes: group 0 is at[0..3] on crossbar xa, group 1 bt[0..3] on xb, one chip link (16 GB/s: 272 B in
    // 17 ns, 100 ns latency) between their ports 4. Reduce-scatter of 8 KiB:
    //  1. in each node, 3 ring steps of 2 KiB (8 packets): 3 x 72 = 216 ns, all ranks together;
    //  2. between nodes, local rank l sends 1 KiB (4 packets) to its peer; all 4 flows of a node go out of port
    //     4 and over the link, which takes their packets round-robin (flow 0's, 1's, 2's, 3's packet 0, then
    //     packet 1, ...) every 17 ns from 216 + 4: packet k of flow l starts on the link at 220 + 17(4k + l) and
    //     is written 17 + 100 + 4 ns later (link, latency, the far crossbar). Flow l ends at
    //     220 + 17(12 + l) + 121 = 545 + 17l ns: rank 3 (and 7) at 596 ns.
    auto h = call(collective_kind::reduce_scatter, collective_algorithm::hierarchical, node_ranks(), 8192);
    h.shape = {4, 2};
    const auto t = run_one(h);
    for (int l = 0; l < 4; ++l) {
        EXPECT_EQ(t.done[l], (545 + 17 * l) * ns) << "rank " << l;
        EXPECT_EQ(t.done[4 + l], (545 + 17 * l) * ns) << "rank " << 4 + l;
    }
    // The fast path sees one flow on the link (its packet k starts at 220 + 17k), so it predicts
    // 220 + 51 + 121 = 392 ns: several ranks' transfers sharing a link break symmetry (docs/collectives.md).
    h.symmetric = true;
    EXPECT_EQ(run_one(h).done[0], 392 * ns);
}

TEST(collectives, broadcast_chain_tree_and_pipelining) {
    // 8 KiB from rank 0 on the crossbar (32 packets: 32 x 8.5 + 4 = 276 ns per hop).
    auto c = call(collective_kind::broadcast, collective_algorithm::ring, ranks_of("xt", 8), 8192);
    // A chain 0 -> 1 -> ... -> 7, each hop after the one before: 7 x 276 = 1932 ns.
    EXPECT_EQ(run_one(c).last, 7 * xbar_transfer(32));
    // In 4 slices of 2 KiB (72 ns): slice s leaves rank v when rank v has it and has sent slice s - 1:
    // (4 + 8 - 2) x 72 = 720 ns.
    c.chunks = 4;
    EXPECT_EQ(run_one(c).last, 10 * xbar_transfer(8));
    // Binomial tree: 0 -> 4; then 0 -> 2, 4 -> 6; then 0 -> 1, 2 -> 3, 4 -> 5, 6 -> 7: 3 x 276 = 828 ns.
    auto tree = call(collective_kind::broadcast, collective_algorithm::tree, ranks_of("xt", 8), 8192);
    const auto t = run_one(tree);
    EXPECT_EQ(t.last, 3 * xbar_transfer(32));
    EXPECT_EQ(t.done[4], 1 * xbar_transfer(32) + 2 * xbar_transfer(32)) << "rank 4 sends to 6, then 5";
    EXPECT_EQ(t.transfers, 7u);
    // From root 3 the tree is the same, relative to rank 3.
    tree.root = 3;
    EXPECT_EQ(run_one(tree).last, 3 * xbar_transfer(32));
}

TEST(collectives, tree_all_reduce) {
    // 8 ranks, 2 KiB (8 packets, 72 ns): reduce up 1->0, 3->2, 5->4, 7->6; 2->0, 6->4; 4->0 (3 x 72) and
    // broadcast down 0->4; 0->2, 4->6; 0->1, 2->3, 4->5, 6->7 (3 x 72): 432 ns.
    const auto t = run_one(call(collective_kind::all_reduce, collective_algorithm::tree, ranks_of("xt", 8), 2048));
    EXPECT_EQ(t.last, 6 * xbar_transfer(8));
    EXPECT_EQ(t.transfers, 14u);
}

TEST(collectives, all_to_all_direct) {
    // 4 KiB per rank: 512 B (2 packets) to each of the 7 others, all at once. Rank r's input port takes its 14
    // packets back to back: first packet 0 to r+1, r+2, ..., r+7, then their packet 1, each 8.5 ns. In every
    // slot the 8 senders send to 8 different outputs (slot d - 1 goes to r + d), so no output port is shared:
    // the last packet leaves its input at 13 x 8.5 and arrives 8.5 + 4 later: 14 x 8.5 + 4 = 123 ns.
    const auto t = run_one(call(collective_kind::all_to_all, collective_algorithm::direct, ranks_of("xt", 8), 4096));
    EXPECT_EQ(t.transfers, 56u);
    EXPECT_EQ(t.last, 123 * ns);
}

TEST(collectives, send_recv_between_nodes) {
    // 1 KiB from at[0] to bt[0]: 4 packets leave the crossbar every 8.5 ns but the link takes 17 ns each:
    // packet k starts on it at 4 + 17k, is written 17 + 100 + 4 ns later: 4 + 51 + 121 = 176 ns.
    auto c = call(collective_kind::send_recv, collective_algorithm::direct, node_ranks(), 1024);
    c.root = 0;
    c.peer = 4;
    const auto t = run_one(c);
    EXPECT_EQ(t.transfers, 1u);
    EXPECT_EQ(t.done[4], 176 * ns);
    EXPECT_EQ(t.done[0], 176 * ns) << "the sender's buffer is free when the transfer is done";
    EXPECT_EQ(t.done[1], 0) << "a bystander takes no part";
}

TEST(collectives, in_network_reduction_in_the_switch) {
    // All-reduce of 4 KiB over st[0..3]: each rank writes 16 packets into its engine sr[r]. Packet j reaches
    // the engine 4 ns after it entered the crossbar, which is at most every 8.5 ns, but the engine reduces a
    // 256 B packet in 16 ns, so it ends at 4 + 16 x 16 = 260 ns. Then every engine sends the 16 packets of the
    // result back (a read costs nothing: the switch multicasts): 16 x 8.5 + 4 = 140 ns, done at 400 ns.
    auto c = call(collective_kind::all_reduce, collective_algorithm::in_network, ranks_of("st", 4), 4096);
    c.engines = ranks_of("sr", 4);
    timing t = run_one(c);
    EXPECT_EQ(t.transfers, 8u);
    for (tick d : t.done) EXPECT_EQ(d, 260 * ns + xbar_transfer(16));
    // In 4 slices of 1 KiB (4 packets): slice s enters the engine once slice s-1's transfer ended, at 68 s ns,
    // and is reduced 68 ns later (4 + 4 x 16); its result goes back in 4 x 8.5 + 4 = 38 ns, after the slice
    // before has: slice 3 at 272 + 38 = 310 ns. The engines reduce 4 KiB at 16 GB/s: 256 ns is the bound.
    c.chunks = 4;
    t = run_one(c);
    for (tick d : t.done) EXPECT_EQ(d, 310 * ns);
    EXPECT_GE(t.last, 256 * ns);
    // Reduce-scatter: the whole buffer in, each rank's quarter back (4 packets): 260 + 38 = 298 ns.
    auto rs = call(collective_kind::reduce_scatter, collective_algorithm::in_network, ranks_of("st", 4), 4096);
    rs.engines = ranks_of("sr", 4);
    for (tick d : run_one(rs).done) EXPECT_EQ(d, 260 * ns + xbar_transfer(4));
    // An engine waits for every rank's contribution: rank 2 starting 100 ns late holds every result back.
    program p;
    const std::uint32_t late = p.add_delay(p.intern_op("late"), 100 * ns, {});
    auto held = call(collective_kind::all_reduce, collective_algorithm::in_network, ranks_of("st", 4), 4096);
    held.engines = ranks_of("sr", 4);
    held.after = {{}, {}, {late}, {}};
    held.op = p.intern_op("collective");
    const collective_steps cs = lower_collective(p, held);
    const auto r = b().exec->run(p);
    for (auto d : cs.done) EXPECT_EQ(r.step_end[d] - r.start, 360 * ns + xbar_transfer(16));
    // The symmetric fast path emits rank 0's transfer and its engine's, with the same times.
    c.symmetric = true;
    t = run_one(c);
    EXPECT_EQ(t.transfers, 2u * 4u);
    EXPECT_EQ(t.done[0], 310 * ns);
}

TEST(collectives, after_holds_each_rank) {
    // A 100 ns delay before rank 0 only: rank 0's first send and rank 7's first send into rank 0 wait for it; the
    // rest of the ring waits for them in turn, so the whole all-reduce ends 100 ns later (1108 ns).
    program p;
    p.name = "after";
    const auto op = p.intern_op("x");
    const auto d = p.add_delay(op, 100 * ns, {});
    auto c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 16384);
    c.op = op;
    c.after.assign(8, {});
    c.after[0] = {d};
    const auto s = lower_collective(p, c);
    const auto r = b().exec->run(p);
    tick last = 0;
    for (auto x : s.done) last = std::max(last, r.step_end[x] - r.start);
    EXPECT_EQ(last, 1108 * ns);
    EXPECT_EQ(r.step_start[s.first], r.start + 100 * ns) << "rank 0's first send";
}

// The symmetric fast path: the representative's done time equals the full lowering's, exactly, where the ranks
// are interchangeable (every rank's transfers over links of their own with the same timing).
TEST(collectives, symmetric_fast_path_equals_the_full_lowering) {
    struct variant {
        const char* what;
        collective_kind kind;
        collective_algorithm algo;
        std::vector<int> shape;
        bool both_ways;
        const char* group;
    };
    using k = collective_kind;
    using a = collective_algorithm;
    const std::vector<variant> variants = {
        {"ring all_reduce (crossbar)", k::all_reduce, a::ring, {}, false, "xt"},
        {"ring reduce_scatter (crossbar)", k::reduce_scatter, a::ring, {}, false, "xt"},
        {"ring all_gather (crossbar)", k::all_gather, a::ring, {}, false, "xt"},
        {"ring all_reduce both ways (crossbar)", k::all_reduce, a::ring, {}, true, "xt"},
        {"hierarchical 4 x 2 all_reduce (crossbar)", k::all_reduce, a::hierarchical, {4, 2}, false, "xt"},
        {"hierarchical 2 x 4 all_reduce (crossbar)", k::all_reduce, a::hierarchical, {2, 4}, false, "xt"},
        {"torus 2 x 4 all_reduce (crossbar)", k::all_reduce, a::torus, {2, 4}, false, "xt"},
        {"torus 2 x 2 x 2 all_reduce (crossbar)", k::all_reduce, a::torus, {2, 2, 2}, false, "xt"},
        {"torus 4 x 2 reduce_scatter (crossbar)", k::reduce_scatter, a::torus, {4, 2}, false, "xt"},
        {"direct all_to_all (crossbar)", k::all_to_all, a::direct, {}, false, "xt"},
        {"ring all_reduce (ring)", k::all_reduce, a::ring, {}, false, "rt"},
        {"ring reduce_scatter (ring)", k::reduce_scatter, a::ring, {}, false, "rt"},
        {"ring all_gather (ring)", k::all_gather, a::ring, {}, false, "rt"},
        {"ring all_reduce both ways (ring)", k::all_reduce, a::ring, {}, true, "rt"},
    };
    for (const auto& v : variants) {
        for (std::uint32_t chunks : {0u, 4u}) {
            auto c = call(v.kind, v.algo, ranks_of(v.group, 8), 65536);
            c.shape = v.shape;
            c.bidirectional = v.both_ways;
            c.chunks = chunks;
            const auto full = run_one(c);
            for (int rep : {0, 5}) {
                c.symmetric = true;
                c.representative = rep;
                const auto sym = run_one(c);
                EXPECT_EQ(sym.done[rep], full.done[rep]) << v.what << ", chunks " << chunks << ", rank " << rep;
                EXPECT_EQ(sym.done[rep], full.last) << v.what << ", chunks " << chunks;
                EXPECT_EQ(sym.transfers * 8, full.transfers) << v.what;
                for (int r = 0; r < 8; ++r) {
                    if (r == rep) continue;
                    EXPECT_EQ(sym.done[r], 0) << "rank " << r << " is not simulated";
                }
            }
        }
    }
}

TEST(collectives, symmetric_ring_of_512_ranks) {
    // 512 ranks (the crossbar's 8 tiles stand for them: the representative, rank 0, only sends to rank 1, xt[1]).
    // 1 MiB: 2 x 511 steps of 2 KiB (72 ns): 1022 transfers, 1022 x 72 = 73584 ns. The full lowering would have
    // 512 x 1022 transfers.
    std::vector<endpoint> ranks;
    for (int r = 0; r < 512; ++r) ranks.push_back(b().at("xt[" + std::to_string(r % 8) + "]"));
    auto c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks, 512 * 2048);
    c.symmetric = true;
    const auto t = run_one(c);
    EXPECT_EQ(t.transfers, 1022u);
    EXPECT_EQ(t.done[0], 1022 * xbar_transfer(8));
    EXPECT_EQ(t.done[0], 73584 * ns);
}

TEST(collectives, a_late_rank_breaks_symmetry) {
    // Rank 3 starts 100 ns late: the full lowering ends 100 ns later (1108 ns: the delay reaches every rank
    // through the ring within the 14 steps), the fast path with rank 0 as the representative does not see it
    // (1008 ns): it assumes every rank starts when the representative does.
    auto late = [](bool symmetric) {
        program p;
        p.name = "late";
        const auto op = p.intern_op("x");
        const auto d = p.add_delay(op, 100 * ns, {});
        auto c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 16384);
        c.op = op;
        c.after.assign(8, {});
        c.after[3] = {d};
        c.symmetric = symmetric;
        const auto s = lower_collective(p, c);
        const auto r = b().exec->run(p);
        tick last = 0;
        for (auto x : s.done)
            if (x != ~0u) last = std::max(last, r.step_end[x] - r.start);
        return last;
    };
    EXPECT_EQ(late(false), 1108 * ns);
    EXPECT_EQ(late(true), 1008 * ns);
}

TEST(collectives, bad_calls_say_what_to_change) {
    auto c = call(collective_kind::all_reduce, collective_algorithm::ring, {}, 1024);
    EXPECT_NE(error_of(c).find("all_reduce (ring) has no ranks"), std::string::npos) << error_of(c);

    c = call(collective_kind::all_reduce, collective_algorithm::torus, ranks_of("xt", 8), 1024);
    c.shape = {4, 4};
    EXPECT_NE(error_of(c).find("shape 4 x 4 has 16 ranks, but 8 ranks were given"), std::string::npos) << error_of(c);
    c.shape = {};
    EXPECT_NE(error_of(c).find("give a shape"), std::string::npos) << error_of(c);
    c.algorithm = collective_algorithm::hierarchical;
    c.shape = {2, 2, 2};
    EXPECT_NE(error_of(c).find("{ranks per group, groups}"), std::string::npos) << error_of(c);
    c.algorithm = collective_algorithm::ring;
    c.shape = {8};
    EXPECT_NE(error_of(c).find("a shape is only for the torus and hierarchical"), std::string::npos) << error_of(c);

    c = call(collective_kind::broadcast, collective_algorithm::tree, ranks_of("xt", 8), 1024);
    c.root = 8;
    EXPECT_NE(error_of(c).find("root 8 is out of range (ranks 0..7)"), std::string::npos) << error_of(c);
    c = call(collective_kind::send_recv, collective_algorithm::direct, ranks_of("xt", 8), 1024);
    c.peer = 0;
    EXPECT_NE(error_of(c).find("root and peer are the same rank 0"), std::string::npos) << error_of(c);

    c = call(collective_kind::all_to_all, collective_algorithm::ring, ranks_of("xt", 8), 1024);
    EXPECT_NE(error_of(c).find("all_to_all has no 'ring' algorithm; it has: direct"), std::string::npos) << error_of(c);

    c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 1024);
    c.after.assign(3, {});
    EXPECT_NE(error_of(c).find("'after' has 3 lists for 8 ranks"), std::string::npos) << error_of(c);

    // The fast path refuses what is not symmetric (a rooted tree); a size that does not split evenly is padded to
    // a multiple of ranks x slices x 2: 1001 B over 8 ranks moves as 1008 B, 14 ring steps of 126 B from rank 0.
    c = call(collective_kind::all_reduce, collective_algorithm::tree, ranks_of("xt", 8), 1024);
    c.symmetric = true;
    EXPECT_NE(error_of(c).find("cannot be lowered symmetrically"), std::string::npos) << error_of(c);
    c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 1001);
    c.symmetric = true;
    {
        program p;
        lower_collective(p, c);
        std::uint64_t sent = 0;
        for (const step& st : p.steps)
            if (st.kind == step_kind::transfer) sent += st.bytes;
        EXPECT_EQ(sent, 14u * 126u);
    }
    c.representative = 9;
    EXPECT_NE(error_of(c).find("representative 9 is out of range"), std::string::npos) << error_of(c);
}

TEST(collectives, in_network_needs_one_engine_per_rank) {
    auto c = call(collective_kind::all_reduce, collective_algorithm::in_network, ranks_of("st", 4), 4096);
    EXPECT_NE(error_of(c).find("give one switch engine per rank (0 engines for 4 ranks)"), std::string::npos)
        << error_of(c);
    auto ring = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("st", 4), 4096);
    ring.engines = ranks_of("sr", 4);
    EXPECT_NE(error_of(ring).find("switch engines are only for the in_network algorithm"), std::string::npos);
    auto ag = call(collective_kind::all_gather, collective_algorithm::in_network, ranks_of("st", 4), 4096);
    ag.engines = ranks_of("sr", 4);
    EXPECT_NE(error_of(ag).find("all_gather has no 'in_network' algorithm"), std::string::npos) << error_of(ag);
}

TEST(collectives, a_cached_schedule_lowers_to_the_same_steps) {
    // The system mapper lowers one tensor-parallel all-reduce per layer and microbatch through a schedule cache:
    // the steps must be those of a fresh lowering, for calls that share a schedule but not their buffers or
    // dependencies, and a call that differs in anything the schedule reads must not take another's.
    collective_schedules cache;
    program fresh, cached;
    const std::uint32_t before = fresh.add_delay(0, 5, {});
    cached.add_delay(0, 5, {});
    auto c = call(collective_kind::all_reduce, collective_algorithm::ring, ranks_of("xt", 8), 65536);
    for (int round = 0; round < 6; ++round) {
        c.symmetric = round % 2 == 0;
        c.chunks = round < 4 ? 0 : 4;
        c.representative = round == 2 ? 3 : 0;
        c.after.assign(8, {before});
        lower_collective(fresh, c);
        lower_collective(cached, c, &cache);
    }
    ASSERT_EQ(cached.size(), fresh.size());
    for (std::uint32_t i = 0; i < fresh.size(); ++i) {
        const step& a = fresh.steps[i];
        const step& b = cached.steps[i];
        ASSERT_EQ(a.kind, b.kind) << "step " << i;
        EXPECT_EQ(a.at.comp, b.at.comp) << "step " << i;
        EXPECT_EQ(a.at.address, b.at.address) << "step " << i;
        EXPECT_EQ(a.to.comp, b.to.comp) << "step " << i;
        EXPECT_EQ(a.to.address, b.to.address) << "step " << i;
        EXPECT_EQ(a.bytes, b.bytes) << "step " << i;
        ASSERT_EQ(a.dep_count, b.dep_count) << "step " << i;
        EXPECT_TRUE(std::equal(fresh.deps_of(i), fresh.deps_of(i) + a.dep_count, cached.deps_of(i))) << "step " << i;
    }
}
