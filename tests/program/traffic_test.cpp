// Synthetic traffic (a program's `traffic:` block) expanded into packets: exact destinations of the
// deterministic patterns on a 4x4 mesh and rings, uniform never to self, packet counts against the offered
// rate (binomial, 4 sigma; periodic exactly), seeds, and one located error per class of bad input.
// No simulation: only the expansion (engine/program/traffic.h) is under test.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "engine/netlist/platform.h"
#include "engine/program/program_yaml.h"
#include "engine/program/traffic.h"

using namespace tessel;

namespace {

// noc: 4x4 mesh, 32 B/cycle links (so the default flit is 32 B), 16 B header, 1 GHz (a cycle is 1e6 ticks).
// ring6 and ring8: 1D networks of 6 and 8 ports; rect: a 4x2 mesh; sync: not a network.
const char* platform_yaml = R"(
platform: traffic_plat
clock: 1GHz
components:
  noc:
    kind: mesh_noc
    params: {width: 4, height: 4, link_bandwidth: 32B/cycle, header_bytes: 16B}
  ring6:
    kind: ring
    params: {nodes: 6}
  ring8:
    kind: ring
    params: {nodes: 8, link_bandwidth: 24B/cycle, clock: 500MHz}
  rect:
    kind: mesh_noc
    params: {width: 4, height: 2}
  sync:
    kind: barrier
    params: {latency: 10cycles}
)";

constexpr tick ns = 1000000;

struct bench {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    bench() {
        const yaml_node root = yaml_node::load_string(platform_yaml, "traffic_plat.yaml");
        plat = std::make_unique<platform>("traffic_plat", root, ctx, sim);
    }
};

const platform& plat() {
    static bench b;
    return *b.plat;
}

std::uint32_t net_id(const std::string& name) { return plat().find_group(name)->ids.front(); }

program load(const std::string& text) { return parse_program(yaml_node::load_string(text, "t.yaml"), plat()); }

/// A traffic program: `body` is the block's lines after `traffic:` (two-space indented).
program traffic(const std::string& body) { return load("program: t\ntraffic:\n" + body); }

/// Source -> destination of every packet; checks each packet is a transfer between ports of `net`.
std::map<std::uint32_t, std::set<std::uint32_t>> flows(const program& p, const std::string& net) {
    std::map<std::uint32_t, std::set<std::uint32_t>> out;
    for (const step& s : p.steps) {
        EXPECT_EQ(s.kind, step_kind::transfer);
        EXPECT_EQ(s.at.comp, net_id(net));
        EXPECT_EQ(s.to.comp, net_id(net));
        EXPECT_EQ(s.dep_count, 0u);
        out[static_cast<std::uint32_t>(s.at.unit)].insert(static_cast<std::uint32_t>(s.to.unit));
    }
    return out;
}

/// The error a program text raises: "line:column: message" (the file name dropped).
std::string error_of(const std::string& text) {
    try {
        load(text);
    } catch (const input_error& e) {
        return std::to_string(e.where().line) + ":" + std::to_string(e.where().column) + ": " + e.message();
    }
    return "no error";
}

const std::string base = "  network: noc\n  rate: 0.3\n  packet: 4flits\n  measure: 200cycles\n";

}  // namespace

TEST(traffic, transpose_sends_x_y_to_y_x_and_the_diagonal_stays_silent) {
    const program p = traffic(base + "  pattern: transpose\n");
    const auto f = flows(p, "noc");
    // (1,2) = port 1 + 4*2 = 9 -> (2,1) = port 6; (3,0) = 3 -> (0,3) = 12; the diagonal 0, 5, 10, 15 sends nothing.
    EXPECT_EQ(f.at(9), (std::set<std::uint32_t>{6}));
    EXPECT_EQ(f.at(3), (std::set<std::uint32_t>{12}));
    EXPECT_EQ(f.size(), 12u);
    for (std::uint32_t d : {0u, 5u, 10u, 15u}) EXPECT_EQ(f.count(d), 0u);
    for (const auto& [src, dst] : f) EXPECT_EQ(*dst.begin(), (src / 4) + 4 * (src % 4));
    EXPECT_EQ(p.traffic.nodes, 12u);
    EXPECT_EQ(p.traffic.pattern, "transpose");
}

TEST(traffic, bit_complement_neighbour_and_tornado_destinations) {
    auto f = flows(traffic(base + "  pattern: bit_complement\n"), "noc");
    // 9 = 1001b -> 0110b = 6; 1 -> 14; 0 -> 15: (x, y) -> (3 - x, 3 - y).
    EXPECT_EQ(f.at(9), (std::set<std::uint32_t>{6}));
    EXPECT_EQ(f.at(1), (std::set<std::uint32_t>{14}));
    EXPECT_EQ(f.at(0), (std::set<std::uint32_t>{15}));
    ASSERT_EQ(f.size(), 16u);
    for (const auto& [src, dst] : f) EXPECT_EQ(*dst.begin(), (3 - src % 4) + 4 * (3 - src / 4));

    f = flows(traffic(base + "  pattern: neighbour\n"), "noc");
    // (x + 1 mod 4, y): 9 = (1,2) -> (2,2) = 10; 11 = (3,2) -> (0,2) = 8.
    EXPECT_EQ(f.at(9), (std::set<std::uint32_t>{10}));
    EXPECT_EQ(f.at(11), (std::set<std::uint32_t>{8}));
    ASSERT_EQ(f.size(), 16u);
    for (const auto& [src, dst] : f) EXPECT_EQ(*dst.begin(), (src % 4 + 1) % 4 + 4 * (src / 4));

    // Tornado on a ring of 8: x + ceil(8/2) - 1 = x + 3 mod 8; 6 -> 1.
    f = flows(traffic("  network: ring8\n  rate: 0.5\n  packet: 2flits\n  measure: 200cycles\n  pattern: tornado\n"),
              "ring8");
    EXPECT_EQ(f.at(6), (std::set<std::uint32_t>{1}));
    ASSERT_EQ(f.size(), 8u);
    for (const auto& [src, dst] : f) EXPECT_EQ(*dst.begin(), (src + 3) % 8);
    // On a 4-wide mesh, x + ceil(4/2) - 1 = x + 1: 3 = (3,0) -> (0,0).
    f = flows(traffic(base + "  pattern: tornado\n"), "noc");
    EXPECT_EQ(f.at(3), (std::set<std::uint32_t>{0}));
    // On a ring of 6: x + 2 mod 6; 5 -> 1.
    f = flows(traffic("  network: ring6\n  rate: 0.5\n  packet: 2flits\n  measure: 200cycles\n  pattern: tornado\n"),
              "ring6");
    EXPECT_EQ(f.at(5), (std::set<std::uint32_t>{1}));
}

TEST(traffic, packets_are_transfers_with_creation_times_sizes_and_labels) {
    const program p = traffic(base + "  pattern: uniform\n  warmup: 100cycles\n  seed: 7\n");
    ASSERT_GT(p.size(), 0u);
    // A 4-flit packet of 32 B flits (the link's 32 B per cycle) less the 16 B header: 112 B of payload.
    for (size_t i = 0; i < p.size(); ++i) {
        const step& s = p.steps[i];
        EXPECT_EQ(s.bytes, 112u);
        EXPECT_EQ(s.not_before % ns, 0u);   // a whole 1 GHz cycle
        EXPECT_LT(s.not_before, 300 * ns);  // generated during warmup + measure only
        if (i) {
            EXPECT_GE(s.not_before, p.steps[i - 1].not_before);
        }
        EXPECT_EQ(p.op_names[s.op], "traffic");
    }
    ASSERT_EQ(p.step_labels.size(), p.size());
    // Labels count packets per node: the first packet of a node is n<node>.p0.
    std::set<std::string> labels(p.step_labels.begin(), p.step_labels.end());
    EXPECT_EQ(labels.size(), p.size());
    EXPECT_EQ(p.step_labels[0], "n" + std::to_string(p.steps[0].at.unit) + ".p0");
    const traffic_spec& t = p.traffic;
    EXPECT_TRUE(t.enabled());
    EXPECT_EQ(t.network, net_id("noc"));
    EXPECT_EQ(t.nodes, 16u);
    EXPECT_DOUBLE_EQ(t.rate, 0.3);
    EXPECT_EQ(t.flit_bytes, 32u);
    EXPECT_EQ(t.packet_flits, 4u);
    EXPECT_EQ(t.cycle, ns);
    EXPECT_EQ(t.measure_begin, 100 * ns);
    EXPECT_EQ(t.measure_end, 300 * ns);
    // A packet given as a size is rounded up to whole flits: 100 B of 32 B flits = 4 flits.
    EXPECT_EQ(
        traffic(base.substr(0, base.find("  packet")) + "  packet: 100B\n  measure: 10cycles\n  pattern: uniform\n")
            .traffic.packet_flits,
        4u);
}

TEST(traffic, the_networks_own_clock_and_link_width) {
    // ring8 runs at 500 MHz (a cycle is 2 ns) with 24 B/cycle links: flits of 24 B, 2 flits - 16 B = 32 B.
    const program p =
        traffic("  network: ring8\n  rate: 0.5\n  packet: 2flits\n  measure: 100cycles\n  pattern: neighbour\n");
    EXPECT_EQ(p.traffic.cycle, 2 * ns);
    EXPECT_EQ(p.traffic.flit_bytes, 24u);
    EXPECT_EQ(p.traffic.measure_end, 200 * ns);
    for (const step& s : p.steps) {
        EXPECT_EQ(s.bytes, 32u);
        EXPECT_EQ(s.not_before % (2 * ns), 0u);
    }
    // flit: given explicitly wins: 2 x 64 B - 16 B = 112 B.
    const program q = traffic(
        "  network: ring8\n  rate: 0.5\n  packet: 2flits\n  flit: 64B\n  measure: 100cycles\n  pattern: neighbour\n");
    EXPECT_EQ(q.steps.front().bytes, 112u);
}

TEST(traffic, uniform_never_sends_to_itself_and_reaches_everyone_else) {
    const program p =
        traffic("  network: noc\n  rate: 0.5\n  packet: 1flit\n  measure: 2000cycles\n  pattern: uniform\n");
    const auto f = flows(p, "noc");
    ASSERT_EQ(f.size(), 16u);
    for (const auto& [src, dst] : f) {
        EXPECT_EQ(dst.count(src), 0u) << "node " << src << " sent to itself";
        EXPECT_EQ(dst.size(), 15u) << "node " << src;  // ~1000 packets each: every other node is drawn
    }
}

TEST(traffic, bernoulli_packet_count_matches_the_rate) {
    // 16 nodes x 20000 cycles, each a packet start with probability 0.3 / 4 = 0.075:
    // mean 24000, sigma = sqrt(320000 x 0.075 x 0.925) = 148.9.
    const program p =
        traffic("  network: noc\n  rate: 0.3\n  packet: 4flits\n  measure: 20000cycles\n  pattern: uniform\n");
    const double trials = 16 * 20000, q = 0.3 / 4;
    const double mean = trials * q, sigma = std::sqrt(trials * q * (1 - q));
    EXPECT_NEAR(static_cast<double>(p.size()), mean, 4 * sigma);
    // Per node: 20000 x 0.075 = 1500, sigma 37.2.
    std::map<std::int32_t, int> per_node;
    for (const step& s : p.steps) ++per_node[s.at.unit];
    const double node_sigma = std::sqrt(20000 * q * (1 - q));
    for (const auto& [n, c] : per_node) EXPECT_NEAR(c, 1500, 4.5 * node_sigma) << "node " << n;
}

TEST(traffic, periodic_sends_exactly_the_rate) {
    // One packet every 4 / 0.3 = 13.33 cycles from a random phase: over 20000 cycles exactly 1500 per node.
    const program p = traffic(
        "  network: noc\n  rate: 0.3\n  packet: 4flits\n  measure: 20000cycles\n  pattern: uniform\n  process: "
        "periodic\n");
    std::map<std::int32_t, int> per_node;
    for (const step& s : p.steps) ++per_node[s.at.unit];
    ASSERT_EQ(per_node.size(), 16u);
    for (const auto& [n, c] : per_node) EXPECT_EQ(c, 1500) << "node " << n;
}

TEST(traffic, hotspot_sends_its_fraction_to_the_hotspot) {
    // Port 15 = (3,3) gets 0.5 of the other nodes' packets plus 1/15 of the uniform rest: 0.5 + 0.5 / 15.
    const program p = traffic(
        "  network: noc\n  rate: 0.5\n  packet: 1flit\n  measure: 4000cycles\n  pattern: hotspot\n"
        "  hotspot: {nodes: [\"3,3\"], fraction: 0.5}\n");
    double n = 0, hot = 0;
    for (const step& s : p.steps) {
        EXPECT_NE(s.at.unit, s.to.unit);
        if (s.at.unit == 15) continue;
        ++n;
        hot += s.to.unit == 15 ? 1 : 0;
    }
    const double q = 0.5 + 0.5 / 15;
    EXPECT_NEAR(hot, n * q, 4 * std::sqrt(n * q * (1 - q)));
    // A port index names the same node.
    const program i = traffic(
        "  network: noc\n  rate: 0.5\n  packet: 1flit\n  measure: 4000cycles\n  pattern: hotspot\n"
        "  hotspot: {nodes: [15], fraction: 0.5}\n");
    ASSERT_EQ(i.size(), p.size());
    for (size_t k = 0; k < p.size(); ++k) EXPECT_EQ(i.steps[k].to.unit, p.steps[k].to.unit);
}

TEST(traffic, a_seed_gives_one_program) {
    auto sig = [](const program& p) {
        std::vector<std::uint64_t> v;
        for (const step& s : p.steps) {
            v.push_back(static_cast<std::uint64_t>(s.at.unit));
            v.push_back(static_cast<std::uint64_t>(s.to.unit));
            v.push_back(s.not_before);
        }
        return v;
    };
    const std::string body =
        "  network: noc\n  rate: 0.3\n  packet: 4flits\n  measure: 1000cycles\n  pattern: uniform\n";
    const auto a = sig(traffic(body + "  seed: 3\n")), b = sig(traffic(body + "  seed: 3\n")),
               c = sig(traffic(body + "  seed: 4\n"));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    // The default seed is 1.
    EXPECT_EQ(sig(traffic(body)), sig(traffic(body + "  seed: 1\n")));
}

TEST(traffic, mt19937_64_draws_are_the_standards) {
    // The 10000th output of a default-seeded mt19937_64 is fixed by the C++ standard: our streams are portable.
    std::mt19937_64 rng;
    rng.discard(9999);
    EXPECT_EQ(rng(), 9981545732273789042ull);
    std::mt19937_64 r2(5);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_LT(uniform_below(r2, 7), 7u);
        const double u = uniform_unit(r2);
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
    }
}

TEST(traffic, steps_and_traffic_side_by_side) {
    const program p = load(
        "program: both\nsteps:\n  - {id: a, delay: 1us}\n  - {id: b, delay: 1us, after: a}\n"
        "traffic:\n" +
        base + "  pattern: neighbour\n");
    ASSERT_GT(p.size(), 2u);
    EXPECT_EQ(p.step_labels[0], "a");
    EXPECT_EQ(p.steps[1].dep_count, 1u);
    EXPECT_EQ(p.steps[2].kind, step_kind::transfer);
    EXPECT_EQ(p.step_labels.size(), p.size());
}

TEST(traffic, errors_name_the_value_and_its_place) {
    struct bad {
        std::string body, expect;
    };
    // Lines: 1 program, 2 traffic, 3 network, 4 rate, 5 packet, 6 measure, 7.. the case's own lines; an error
    // about the whole block points at its first key (3:3).
    const std::vector<bad> cases = {
        {"  network: noc\n  rate: 0\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n",
         "4:9: rate: the offered load is in flits per node per cycle, above 0 and at most 1; got '0'"},
        {"  network: noc\n  rate: 1.5\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n",
         "4:9: rate: the offered load is in flits per node per cycle, above 0 and at most 1; got '1.5'"},
        {"  network: ring6\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: bit_complement\n",
         "7:12: pattern: pattern bit_complement needs a power-of-two number of ports; 'ring6' has 6 ports"},
        {"  network: rect\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: transpose\n",
         "7:12: pattern: pattern transpose needs a square 2D network (k x k ports); 'rect' has 4 x 2 ports"},
        {"  network: ring6\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: transpose\n",
         "7:12: pattern: pattern transpose needs a square 2D network (k x k ports); 'ring6' has 6 ports"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 0cycles\n  pattern: uniform\n",
         "6:12: measure: the measurement window must be longer than 0, got '0cycles'"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: -10cycles\n  pattern: uniform\n",
         "6:12: measure: the measurement window must be longer than 0, got '-10cycles'"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n  warmup: -1us\n",
         "8:11: warmup: the warmup cannot be negative, got '-1us'"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100\n  pattern: uniform\n",
         "6:12: measure: expected cycles of the network's clock (1000cycles) or a time (1us), got '100'"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: unifrom\n",
         "7:12: pattern: unknown pattern 'unifrom' (did you mean 'uniform'?); expected one of: uniform, transpose, "
         "bit_complement, hotspot, neighbour, tornado"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n  process: "
         "poisson\n",
         "8:12: process: unknown injection process 'poisson'; expected one of: bernoulli, periodic"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n  sed: 3\n",
         "8:3: unknown key 'sed' in traffic (did you mean 'seed'?)"},
        {"  network: nco\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n",
         "3:12: network: no component named 'nco' (did you mean 'noc'?); networks: noc, ring6, ring8, rect"},
        {"  network: sync\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n",
         "3:12: network: 'sync' is a barrier, not a network; networks: noc, ring6, ring8, rect"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: hotspot\n"
         "  hotspot: {nodes: [\"4,1\"], fraction: 0.2}\n",
         "8:21: hotspot.nodes: '4,1' is not a port of 'noc' (4 x 4 ports: give \"x,y\" or an index below 16)"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: hotspot\n"
         "  hotspot: {nodes: [16], fraction: 0.2}\n",
         "8:21: hotspot.nodes: '16' is not a port of 'noc'"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: uniform\n"
         "  hotspot: {nodes: [\"1,1\"], fraction: 0.2}\n",
         "8:12: hotspot: only for pattern: hotspot (this block's pattern is uniform)"},
        {"  network: noc\n  rate: 0.1\n  packet: 4flits\n  measure: 100cycles\n  pattern: hotspot\n",
         "7:12: pattern hotspot needs 'hotspot: {nodes: [\"x,y\", ...], fraction: 0.2}'"},
        {"  network: noc\n  rate: 0.1\n  packet: 16B\n  flit: 16B\n  measure: 100cycles\n  pattern: uniform\n",
         "5:11: packet: 1 flit of 16 B leave no payload after the 16 B header of 'noc' (its header_bytes); make "
         "packets larger"},
        {"  network: noc\n  rate: 0.1\n  packet: 4\n  measure: 100cycles\n  pattern: uniform\n",
         "5:11: packet: expected flits (4flits) or a size (64B), got '4'"},
        {"  network: noc\n  rate: 1\n  packet: 1flit\n  measure: 10000000cycles\n  pattern: uniform\n",
         "3:3: traffic would create about 1.6e+08 packets (16 nodes x 1e+07 cycles x rate 1 / 1 flits per packet), "
         "over the "
         "limit of 5e+07: lower rate, warmup or measure, or make packets larger"},
        {"  network: noc\n  pattern: uniform\n", "3:3: traffic needs 'rate'"},
    };
    for (const auto& c : cases) {
        const std::string got = error_of("program: t\ntraffic:\n" + c.body);
        EXPECT_EQ(got.substr(0, c.expect.size()), c.expect) << c.body;
    }
}

TEST(traffic, values_may_use_platform_parameters_and_expressions) {
    // A platform parameter `load` and an expression in the block.
    sim_context sim;
    param_context ctx;
    const std::string yaml = std::string(platform_yaml)
                                 .replace(std::string(platform_yaml).find("platform: traffic_plat"), 22,
                                          "platform: traffic_param\nparameters: {load: 0.25}");
    const yaml_node root = yaml_node::load_string(yaml, "p.yaml");
    platform pl("traffic_param", root, ctx, sim);
    const program p = parse_program(
        yaml_node::load_string("program: t\ntraffic:\n  network: noc\n  rate: \"{load}\"\n  packet: \"{2*2}flits\"\n"
                               "  measure: \"{100*10}cycles\"\n  pattern: uniform\n  process: periodic\n",
                               "t.yaml"),
        pl);
    EXPECT_DOUBLE_EQ(p.traffic.rate, 0.25);
    EXPECT_EQ(p.traffic.packet_flits, 4u);
    EXPECT_EQ(p.traffic.measure_end, 1000 * ns);
    // Periodic: 1000 cycles x 0.25 / 4 = 62.5 packets per node, so 62 or 63 from a random phase.
    std::map<std::int32_t, int> per_node;
    for (const step& s : p.steps) ++per_node[s.at.unit];
    for (const auto& [n, c] : per_node) {
        EXPECT_GE(c, 62);
        EXPECT_LE(c, 63);
    }
}
