// Flow control of mesh_noc: the credit model (finite buffers, virtual channels,
// cycle by cycle) against the ideal model (busy-until links). Zero-load
// latencies by hand for both; a too-shallow buffer throttles one packet by
// hand; under uniform random load, shallow single-VC buffers saturate before
// deep multi-VC ones; at low load both models agree; the credit model is
// deterministic and loses no packet; per-link bytes match. Every program moves
// packets between network ports (no memory stage), created at their
// `not_before`.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "models/interconnect/mesh_noc.h"
#include "tests/support/files.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;
using test::ps;

namespace {

const char* common =
    "width: 4, height: 4, router_latency: 2cycles, "
    "link_latency: 1cycle, header_bytes: 16B";

std::string platform_text(const std::string& name, const std::string& extra) {
    const bool own_bandwidth = extra.find("link_bandwidth") != std::string::npos;
    return "platform: " + name +
           "\nclock: 1GHz\ncomponents:\n  noc:\n    kind: mesh_noc\n    params: "
           "{" +
           common + (own_bandwidth ? "" : ", link_bandwidth: 32B/cycle") + (extra.empty() ? "" : ", " + extra) + "}\n";
}

// Every platform is built before the first run (SystemC elaborates once per
// process).
struct benches {
    test::bench ideal{platform_text("fc_ideal", ""), "fc_ideal"};
    test::bench credit{platform_text("fc_credit", "flow_control: {impl: credit}"), "fc_credit"};
    test::bench shallow{platform_text("fc_shallow", "flow_control: {impl: credit, buffer_flits: 2, vcs: 1}"),
                        "fc_shallow"};
    test::bench deep{platform_text("fc_deep", "flow_control: {impl: credit, buffer_flits: 8, vcs: 4}"), "fc_deep"};
    test::bench vct{platform_text("fc_vct",
                                  "packet_bytes: 112B, flow_control: {impl: "
                                  "credit, buffer_flits: 4, vcs: 2, "
                                  "switching: virtual_cut_through}"),
                    "fc_vct"};
    test::bench b4v1{platform_text("fc_b4v1", "flow_control: {impl: credit, buffer_flits: 4, vcs: 1}"), "fc_b4v1"};
    test::bench b2v2{platform_text("fc_b2v2", "flow_control: {impl: credit, buffer_flits: 2, vcs: 2}"), "fc_b2v2"};
    // Platforms the credit model rejects (loaded here too: nothing may be built
    // once a run has started).
    std::vector<std::string> errors;
    benches() {
        const char* bad[] = {"flow_control: {impl: credit}, representation: modules",
                             "flow_control: {impl: credit}, clock: 1.5GHz, link_bandwidth: 40GB/s",
                             ("flow_control: {impl: credit, buffer_flits: 4, switching: "
                              "virtual_cut_through}"),
                             "flow_control: {impl: credit, vcs: 9}"};
        int n = 0;
        for (const char* extra : bad) {
            const std::string name = "fc_bad" + std::to_string(n++);
            try {
                test::bench b(platform_text(name, extra), name);
                errors.emplace_back();
            } catch (const input_error& e) {
                errors.emplace_back(e.what());
            }
        }
    }
};
benches& all() {
    static benches b;
    return b;
}

mesh_noc& noc_of(test::bench& b) { return dynamic_cast<mesh_noc&>(b.plat->comp(b.at("noc[0,0]").comp)); }

struct packet_spec {
    int from, to;
    std::uint64_t bytes;
    tick created;  // relative to the run's start
};

// Runs the bench until simulated time is on a whole nanosecond (a cycle of the
// 1 GHz mesh), so that the next program's creation times (`not_before`, from
// the program's start) fall on cycle edges as the comments assume.
void align(test::bench& b) {
    const tick now = sc_core::sc_time_stamp().value();
    if (now % ns == 0) return;
    program pad;
    pad.name = "align";
    pad.add_delay(pad.intern_op("align"), ns - now % ns, {});
    b.exec->run(pad);
}

struct outcome {
    std::vector<tick> latency;  // per packet: creation to its last byte out of the network
    std::vector<tick> end;      // per packet, relative to the program's start
    executor::result r;
    double mean_ns() const {
        double s = 0;
        for (tick t : latency) s += static_cast<double>(t);
        return latency.empty() ? 0 : s / static_cast<double>(latency.size()) / static_cast<double>(ns);
    }
};

outcome run(test::bench& b, const std::vector<packet_spec>& packets) {
    program p;
    p.name = "flow_control";
    const auto op = p.intern_op("packet");
    align(b);
    for (const packet_spec& k : packets) {
        endpoint from = b.at("noc[0,0]"), to = from;
        from.unit = k.from;
        to.unit = k.to;
        const std::uint32_t s = p.add_transfer(op, from, to, k.bytes, {});
        p.steps[s].not_before = k.created;
    }
    outcome o;
    o.r = b.exec->run(p);
    for (size_t s = 0; s < packets.size(); ++s) {
        o.latency.push_back(o.r.step_end[s] - o.r.step_start[s]);
        o.end.push_back(o.r.step_end[s] - o.r.start);
    }
    return o;
}

int port(int x, int y) { return y * 4 + x; }

// Uniform random traffic: each node creates a packet of `flits` flits (32 B
// each, 16 B of header) with probability load / flits every cycle for `cycles`
// cycles, to a destination drawn uniformly from the others.
std::vector<packet_spec> uniform(double load, int cycles, std::uint64_t flits, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    std::vector<packet_spec> out;
    for (int c = 0; c < cycles; ++c)
        for (int n = 0; n < 16; ++n)
            if (coin(rng) < load / static_cast<double>(flits)) {
                int d = static_cast<int>(rng() % 15);
                if (d >= n) ++d;
                out.push_back(packet_spec{n, d, flits * 32 - 16, static_cast<tick>(c) * ns});
            }
    return out;
}

}  // namespace

TEST(flow_control, what_the_credit_model_cannot_do_is_a_located_error) {
    const auto& e = all().errors;
    ASSERT_EQ(e.size(), 4u);
    // The flow_control map is on line 6 of the generated platform text, the
    // link_bandwidth key on line 6 too.
    EXPECT_NE(e[0].find("fc_bad0.yaml:6:"), std::string::npos) << e[0];
    EXPECT_NE(e[0].find("flow_control 'credit' is simulated on flat arrays only; "
                        "use representation: arrays"),
              std::string::npos)
        << e[0];
    EXPECT_NE(e[1].find("fc_bad1.yaml:6:"), std::string::npos) << e[1];
    EXPECT_NE(e[1].find("makes a flit of the link's bytes per cycle, but "
                        "link_bandwidth is 26.6667 B/cycle"),
              std::string::npos)
        << e[1];
    EXPECT_NE(e[2].find("virtual cut-through needs a buffer that holds a whole "
                        "packet: 9 flits of 32 B, but "
                        "buffer_flits is 4"),
              std::string::npos)
        << e[2];
    EXPECT_NE(e[3].find("flow_control.vcs is 9; at most 8 are supported"), std::string::npos) << e[3];
}

TEST(flow_control, zero_load_latency_is_the_ideal_formula_in_both_models) {
    // (H + 1) * (router 2 + wire 1) + wire 1 + wire_bytes / 32 B/ns, one packet
    // at a time (1 us apart).
    //  (0,0) -> (0,0), H = 0,   1 B: 17 B = 1 flit (0.53125 ns):      3 + 1 +
    //  0.53125 =  4.53125 ns (0,0) -> (1,0), H = 1, 240 B: 256 B = 8 whole flits
    //  (8 ns):     6 + 1 + 8       = 15 ns (0,0) -> (3,0), H = 3, 256 B: 272 B
    //  = 8.5 flits (9, 8.5 ns):   12 + 1 + 8.5     = 21.5 ns (0,0) -> (3,3), H =
    //  6, 256 B:                                   21 + 1 + 8.5     = 30.5 ns
    //  (3,3) -> (0,0), H = 6,   1 B:                                   21 + 1 +
    //  0.53125 = 22.53125 ns (2,1) -> (1,3), H = 3, 112 B: 128 B = 4 flits (4
    //  ns):           12 + 1 + 4       = 17 ns
    const std::vector<packet_spec> packets = {
        {port(0, 0), port(0, 0), 1, 0},           {port(0, 0), port(1, 0), 240, 1000 * ns},
        {port(0, 0), port(3, 0), 256, 2000 * ns}, {port(0, 0), port(3, 3), 256, 3000 * ns},
        {port(3, 3), port(0, 0), 1, 4000 * ns},   {port(2, 1), port(1, 3), 112, 5000 * ns}};
    const std::vector<tick> expected = {4 * ns + 531250,    15 * ns,          21 * ns + 500 * ps,
                                        30 * ns + 500 * ps, 22 * ns + 531250, 17 * ns};
    for (test::bench* b : {&all().ideal, &all().credit, &all().deep}) {
        const outcome o = run(*b, packets);
        for (size_t i = 0; i < packets.size(); ++i)
            EXPECT_EQ(o.latency[i], expected[i]) << b->plat->name() << " packet " << i;
    }
}

TEST(flow_control, a_buffer_shorter_than_the_credit_round_trip_throttles_one_packet) {
    // buffer_flits 2, round trip 2 * link 1 + router 2 = 4 cycles: every hop
    // passes 2 flits per 4 cycles. (0,0) -> (3,0), 272 B = 9 flits: injected at
    // cycles 0, 1, 4, 5, 8, 9, 12, 13, 16; each flit is ejected 12 cycles after
    // injection (wire 1 + 3 hops x 3 + router 2), the last at 28; it leaves at 28
    // + wire 1
    // + the last flit's half cycle = 29.5 ns (ideal: 21.5 ns).
    const outcome o = run(all().shallow, {{port(0, 0), port(3, 0), 256, 0}});
    EXPECT_EQ(o.latency[0], 29 * ns + 500 * ps);
}

TEST(flow_control, two_packets_into_one_ejection_port) {
    // A: (0,0) -> (2,0) and B: (3,0) -> (2,0), 4 flits each, created together.
    // Ideal: B's ejection starts at wire 1 + 1 hop x 3 + router 2 = 6 and ends at
    // 10, out at 11 ns; A's head asks at 1 + 2 x 3 + 2 = 9, the ejection link is
    // free at 10: 10 + 4 + 1 = 15 ns. Credit (2 VCs, so the ejection port
    // interleaves the two packets flit by flit): B is granted at 6, 7, 8; at 9
    // both B's tail and A's head are ready, and the ejection arbiter, last
    // granted to B (east input), turns to A (west input) first: A 9, B 10, A 11,
    // 12, 13. B leaves at 10 + 1 + 1 = 12 ns, A at 13 + 1
    // + 1 = 15 ns: the mean is 0.5 ns worse than ideal, the sum of tails the
    // same.
    const std::vector<packet_spec> two = {{port(0, 0), port(2, 0), 112, 0}, {port(3, 0), port(2, 0), 112, 0}};
    const outcome i = run(all().ideal, two), c = run(all().credit, two);
    EXPECT_EQ(i.latency[0], 15 * ns);
    EXPECT_EQ(i.latency[1], 11 * ns);
    EXPECT_EQ(c.latency[0], 15 * ns);
    EXPECT_EQ(c.latency[1], 12 * ns);
}

TEST(flow_control, shallow_buffers_saturate_first_and_low_load_agrees_with_ideal) {
    // 4-flit packets (112 B + 16 B header) of uniform random traffic for 3000
    // cycles.
    const std::vector<packet_spec> low = uniform(0.02, 3000, 4, 7);
    const std::vector<double> ideal_before = noc_of(all().ideal).link_bytes(),
                              credit_before = noc_of(all().credit).link_bytes();
    const double li = run(all().ideal, low).mean_ns(), lc = run(all().credit, low).mean_ns();
    std::printf("load 0.02: ideal %.3f ns, credit %.3f ns over %zu packets\n", li, lc, low.size());
    EXPECT_NEAR(lc / li, 1.0, 0.03);
    // Both models carry the same bytes over the same links (usage and utilisation
    // reports).
    const std::vector<double> ideal_after = noc_of(all().ideal).link_bytes(),
                              credit_after = noc_of(all().credit).link_bytes();
    double total = 0;
    for (size_t l = 0; l < ideal_after.size(); ++l) {
        EXPECT_EQ(credit_after[l] - credit_before[l], ideal_after[l] - ideal_before[l]) << "link " << l;
        if (l % 5 == 4) total += credit_after[l] - credit_before[l];
    }
    EXPECT_EQ(total, 128.0 * static_cast<double>(low.size())) << "every packet ejected, 128 B each";

    // Mean latency against offered load (flits per node per cycle): the knee of
    // each configuration. The ideal model has no buffers to fill and stays near
    // its zero-load latency far longer.
    struct config {
        const char* name;
        test::bench* b;
    };
    const config configs[] = {{"ideal", &all().ideal}, {"b2v1", &all().shallow}, {"b2v2", &all().b2v2},
                              {"b4v1", &all().b4v1},   {"b4v2", &all().credit},  {"b8v4", &all().deep},
                              {"b4v2 vct", &all().vct}};
    std::printf("%-6s", "load");
    for (const config& c : configs) std::printf(" %9s", c.name);
    std::printf("   (mean latency, ns; 3000 cycles, 4-flit packets)\n");
    double shallow_hot = 0, deep_hot = 0;
    for (double load : {0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5}) {
        const std::vector<packet_spec> hot = uniform(load, 3000, 4, 11);
        std::printf("%-6.2f", load);
        for (const config& c : configs) {
            const outcome o = run(*c.b, hot);
            ASSERT_EQ(o.r.packets, hot.size()) << c.name;
            std::printf(" %9.2f", o.mean_ns());
            if (load == 0.3 && c.b == &all().shallow) shallow_hot = o.mean_ns();
            if (load == 0.3 && c.b == &all().deep) deep_hot = o.mean_ns();
        }
        std::printf("\n");
    }
    // At 0.3 flits/node/cycle the 2-flit single-VC buffers are past their knee
    // (head-of-line blocking and a credit round trip of 4 cycles on every hop),
    // the 8-flit 4-VC ones are not.
    EXPECT_GT(shallow_hot, 3 * deep_hot);
    EXPECT_LT(deep_hot, 1.5 * lc);
}

/// The cells of docs/noc.md's simulation-cost table row for `load` ("0.02"): load, packets, ideal events, credit
/// events, then the wall times (empty when the row is missing).
std::vector<std::string> noc_cost_row(const std::string& load) {
    std::istringstream doc(test::slurp("docs/noc.md"));
    bool in_table = false;  // the table whose header is "| load | packets | ideal events | credit events | ..."
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("| load | packets | ideal events | credit events |", 0) == 0) in_table = true;
        if (line.rfind("|", 0) != 0) in_table = false;
        if (!in_table || line.rfind("| " + load + " |", 0) != 0) continue;
        std::vector<std::string> cells;
        std::istringstream row(line.substr(1));
        for (std::string cell; std::getline(row, cell, '|');) cells.push_back(cell.substr(1, cell.size() - 2));
        return cells;
    }
    return {};
}

TEST(flow_control, simulation_cost_of_the_credit_model) {
    // One measurement on a shared machine, for docs/noc.md: the same program on the ideal and the credit mesh. The
    // wall times are what this machine gave once; the packet and event counts are exact, and the doc's table must
    // say them.
    for (const char* load_text : {"0.02", "0.30"}) {
        const double load = std::stod(load_text);
        const std::vector<std::string> row = noc_cost_row(load_text);
        ASSERT_GE(row.size(), 4u) << "docs/noc.md has no simulation-cost row for load " << load_text;
        const std::vector<packet_spec> traffic = uniform(load, 20000, 4, 5);
        EXPECT_EQ(row[1], std::to_string(traffic.size())) << "packets at load " << load_text;
        for (test::bench* b : {&all().ideal, &all().credit}) {
            const auto t0 = std::chrono::steady_clock::now();
            const outcome o = run(*b, traffic);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf(
                "load %.2f %-9s: %zu packets, %llu events, %.1f ms wall, "
                "%.0f ns mean latency\n",
                load, std::string(b->plat->name()).c_str(), traffic.size(), static_cast<unsigned long long>(o.r.events),
                wall * 1e3, o.mean_ns());
            EXPECT_EQ(o.r.packets, traffic.size());
            EXPECT_EQ(row[b == &all().ideal ? 2 : 3], std::to_string(o.r.events))
                << b->plat->name() << " events at load " << load_text << " (docs/noc.md)";
        }
    }
}

TEST(flow_control, same_program_twice_gives_identical_times_and_every_packet_arrives) {
    const std::vector<packet_spec> hot = uniform(0.3, 1000, 4, 3);
    const outcome a = run(all().shallow, hot), b = run(all().shallow, hot);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.r.packets, hot.size());
    for (size_t s = 0; s < hot.size(); ++s) EXPECT_GT(a.end[s], hot[s].created) << "packet " << s;
}
