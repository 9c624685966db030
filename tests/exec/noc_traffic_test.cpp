// Synthetic traffic on the 8x8 teaching mesh (platforms/teaching/mesh8x8.yaml: 4 B flits, 1-cycle router and
// wire, one header flit): the zero-load latency equals the hand formula packet by packet, latency grows with
// load, and the saturation throughput lands within 10% of the channel-load bound for uniform, transpose and
// hotspot traffic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "engine/program/program_yaml.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

struct noc {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat = platform::load("platforms/teaching/mesh8x8.yaml", ctx, sim);
    std::unique_ptr<executor> exec = std::make_unique<executor>("noc_exec", *plat);
};

noc& n() {
    static noc x;
    return x;
}

program traffic(const std::string& pattern, double rate, int measure = 6000, const std::string& extra = "") {
    const std::string text =
        "program: t\ntraffic:\n  network: noc\n  pattern: " + pattern + "\n  rate: " + std::to_string(rate) +
        "\n  packet: 4flits\n  seed: 3\n  warmup: 1000cycles\n  measure: " + std::to_string(measure) + "cycles\n" +
        extra;
    return parse_program(yaml_node::load_string(text, "t.yaml"), *n().plat);
}

const std::string hotspot = "  hotspot: {nodes: [\"3,3\"], fraction: 0.2}\n";

struct load_point {
    double offered = 0, accepted = 0, mean_cycles = 0;
};

load_point run(const std::string& pattern, double rate) {
    const program p = traffic(pattern, rate, 6000, pattern == "hotspot" ? hotspot : "");
    const auto r = n().exec->run(p);
    const traffic_spec& t = p.traffic;
    const double node_cycles = 6000.0 * t.nodes;
    return {static_cast<double>(r.measured_packets * t.packet_flits) / node_cycles,
            static_cast<double>(r.window_flits_delivered) / node_cycles,
            r.measured_latency.mean_ticks() / static_cast<double>(t.cycle)};
}

// The channel-load bound: route every (source, destination) pair of the pattern with XY routing, weight it by
// how often the source picks that destination, and find the most loaded channel (injection, ejection and the
// links between routers); at offered load L flits/node/cycle it carries L * load flits/cycle, at most 1.
double channel_load_bound(const std::string& pattern) {
    const int k = 8, nodes = k * k;
    std::map<std::pair<int, int>, double>
        load;  // (node, direction 0-3 | 4 inject | 5 eject) -> share of a node's traffic
    auto route = [&](int s, int d, double w) {
        if (s == d || w == 0) return;
        int x = s % k, y = s / k;
        const int dx = d % k, dy = d / k;
        load[{s, 4}] += w;
        while (x != dx) {
            load[{y * k + x, dx > x ? 0 : 1}] += w;
            x += dx > x ? 1 : -1;
        }
        while (y != dy) {
            load[{y * k + x, dy > y ? 2 : 3}] += w;
            y += dy > y ? 1 : -1;
        }
        load[{d, 5}] += w;
    };
    for (int s = 0; s < nodes; ++s) {
        if (pattern == "uniform" || pattern == "hotspot") {
            const int hot = 3 * k + 3;
            const double f = pattern == "hotspot" && s != hot ? 0.2 : 0.0;
            for (int d = 0; d < nodes; ++d)
                if (d != s) route(s, d, (1 - f) / (nodes - 1) + (d == hot ? f : 0.0));
        } else if (pattern == "transpose") {
            route(s, (s % k) * k + s / k, 1.0);  // the diagonal sends nothing; offered load counts senders only
        }
    }
    double worst = 0;
    for (const auto& [_, l] : load) worst = std::max(worst, l);
    return 1.0 / worst;
}

}  // namespace

TEST(noc_traffic, zero_load_latency_is_the_hand_formula_for_every_packet) {
    // A 4-flit packet (16 B at 4 B/cycle: 4 cycles) over H hops: (H + 1) * (router 1 + wire 1) + wire 1 + 4 =
    // 2H + 7 cycles from creation to its last flit ejected. At 0.0005 flits/node/cycle packets rarely meet: every
    // packet alone in the network for its whole life takes exactly that, and none takes less.
    const program p = traffic("uniform", 0.0005, 40000);
    const auto r = n().exec->run(p);
    const int w = 8;
    std::vector<std::pair<tick, tick>> life;
    for (std::uint32_t s = 0; s < p.size(); ++s) life.emplace_back(r.step_start[s], r.step_end[s]);
    std::size_t alone = 0;
    for (std::uint32_t s = 0; s < p.size(); ++s) {
        const step& st = p.steps[s];
        const int h = std::abs(st.at.unit % w - st.to.unit % w) + std::abs(st.at.unit / w - st.to.unit / w);
        const tick formula = static_cast<tick>(2 * h + 7) * p.traffic.cycle, took = life[s].second - life[s].first;
        ASSERT_EQ(life[s].first - r.start, st.not_before) << "a packet enters when it is created";
        ASSERT_GE(took, formula) << p.describe(s);
        bool overlaps = false;
        for (std::uint32_t o = 0; o < p.size() && !overlaps; ++o)
            overlaps = o != s && life[o].first < life[s].second && life[s].first < life[o].second;
        if (!overlaps) {
            ++alone;
            ASSERT_EQ(took, formula) << p.describe(s);
        }
    }
    EXPECT_GT(alone, p.size() / 2) << "most packets should be alone at this load";
}

TEST(noc_traffic, latency_grows_with_load) {
    double last = 0;
    for (double rate : {0.05, 0.15, 0.25, 0.35, 0.45}) {
        const load_point q = run("uniform", rate);
        EXPECT_GT(q.mean_cycles, last) << "rate " << rate;
        EXPECT_NEAR(q.accepted, q.offered, 0.02 * q.offered) << "below saturation all offered traffic is accepted";
        last = q.mean_cycles;
    }
}

TEST(noc_traffic, saturation_is_within_ten_percent_of_the_channel_load_bound) {
    // Saturation throughput: the largest offered load the mesh still accepts (accepted within 2% of offered),
    // found by bisection over the offered load.
    for (const std::string pattern : {"uniform", "transpose", "hotspot"}) {
        const double bound = channel_load_bound(pattern);
        double lo = 0.25 * bound, hi = 1.5 * bound;
        ASSERT_GE(run(pattern, lo).accepted, 0.98 * run(pattern, lo).offered) << pattern;
        for (int i = 0; i < 7; ++i) {
            const double mid = 0.5 * (lo + hi);
            const load_point q = run(pattern, mid);
            (q.accepted >= 0.98 * q.offered ? lo : hi) = mid;
        }
        EXPECT_NEAR(lo, bound, 0.1 * bound) << pattern << ": saturates at " << lo << ", bound " << bound;
    }
}
