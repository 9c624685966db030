// Arbitration and flow control of mesh_noc as registered policies (models/interconnect/arbitration/,
// models/interconnect/flow_control/): `flow_control: {impl: credit, arbitration: {impl: NAME}}`. The two
// arbiters' grant orders by hand; one packet pair timed by hand where round_robin interleaves two packets at an
// ejection port and oldest_first serves the older one whole (as the ideal model's links do); a misspelt impl of
// either family and an arbitration under ideal flow control as located errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/policy.h"
#include "models/interconnect/arbitration/oldest_first.h"
#include "models/interconnect/arbitration/round_robin.h"
#include "models/interconnect/mesh_noc.h"
#include "tests/support/errors.h"
#include "tests/support/harness.h"
#include "tests/support/mesh_platform.h"

using namespace tessel;
using test::mesh4x4_platform;
using test::ns;

namespace {

std::string error_with(const std::string& name, const std::string& extra) {
    return test::error_of([&] { test::bench b(mesh4x4_platform(name, extra), name); });
}

// Every platform is built before the first run (SystemC elaborates once per process).
struct benches {
    test::bench ideal{mesh4x4_platform("a_ideal", "flow_control: {impl: ideal}"), "a_ideal"};
    test::bench rr{mesh4x4_platform("a_rr", "flow_control: {impl: credit}"), "a_rr"};
    test::bench rr_named{
        mesh4x4_platform("a_rr_named", "flow_control: {impl: credit, arbitration: {impl: round_robin}}"), "a_rr_named"};
    test::bench oldest{mesh4x4_platform("a_oldest", "flow_control: {impl: credit, arbitration: {impl: oldest_first}}"),
                       "a_oldest"};
    std::string bad_arbiter =
        error_with("a_bad_arb", "flow_control: {impl: credit, arbitration: {impl: oldest_frist}}");
    std::string bad_flow = error_with("a_bad_fc", "flow_control: {impl: credits}");
    std::string arbiter_under_ideal =
        error_with("a_bad_ideal", "flow_control: {impl: ideal, arbitration: {impl: round_robin}}");
};
benches& all() {
    static benches b;
    return b;
}

int port(int x, int y) { return y * 4 + x; }

struct packet_spec {
    int from, to;
    std::uint64_t bytes;
    tick created;
};

// Runs one program of transfers, each created at its `created` (from the program's start), after aligning
// simulated time to a whole nanosecond; returns each packet's latency from creation to its last byte out.
std::vector<tick> latencies(test::bench& b, const std::vector<packet_spec>& packets) {
    const tick now = sc_core::sc_time_stamp().value();
    if (now % ns != 0) {
        program pad;
        pad.name = "align";
        pad.add_delay(pad.intern_op("align"), ns - now % ns, {});
        b.exec->run(pad);
    }
    program p;
    p.name = "arbitration";
    const auto op = p.intern_op("packet");
    for (const packet_spec& k : packets) {
        endpoint from = b.at("noc[0,0]"), to = from;
        from.unit = k.from;
        to.unit = k.to;
        p.steps[p.add_transfer(op, from, to, k.bytes, {})].not_before = k.created;
    }
    const executor::result r = b.exec->run(p);
    std::vector<tick> out;
    for (size_t s = 0; s < packets.size(); ++s) out.push_back(r.step_end[s] - r.step_start[s]);
    return out;
}

}  // namespace

TEST(arbitration, round_robin_grants_from_the_pointer_and_moves_past_the_winner) {
    const round_robin_arbitration a;
    std::uint8_t rr = 0;
    // Requesters 1, 3 and 6 of 8, asked three times: 1 (pointer 2), 3 (pointer 4), 6 (pointer 7); then from 7
    // the search wraps round to 1.
    const std::uint64_t req = (1u << 1) | (1u << 3) | (1u << 6);
    std::vector<std::uint32_t> order;
    order.reserve(4);
    for (int n = 0; n < 4; ++n) order.push_back(a.grant(req, 8, rr, nullptr));
    EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 6, 1}));
    EXPECT_EQ(rr, 2);
}

TEST(arbitration, oldest_first_grants_the_oldest_and_breaks_ties_in_round_robin_order) {
    const oldest_first_arbitration a;
    EXPECT_TRUE(a.uses_age());
    tick age[8] = {0, 50, 0, 20, 0, 0, 20, 0};
    std::uint8_t rr = 0;
    const std::uint64_t req = (1u << 1) | (1u << 3) | (1u << 6);
    // Ages 50, 20, 20: 3 and 6 tie as oldest; from pointer 0, 3 comes first (pointer 4); then from 4, 6 comes
    // first (pointer 7); then from 7 round to 3 again. 1, the youngest, waits while an older one asks.
    std::vector<std::uint32_t> order;
    order.reserve(3);
    for (int n = 0; n < 3; ++n) order.push_back(a.grant(req, 8, rr, age));
    EXPECT_EQ(order, (std::vector<std::uint32_t>{3, 6, 3}));
    EXPECT_EQ(a.grant(1u << 1, 8, rr, age), 1u) << "alone, the youngest is served";
    EXPECT_EQ(rr, 2);
}

TEST(arbitration, oldest_first_serves_the_older_packet_whole_at_an_ejection_port) {
    // B: (3,0) -> (2,0), 240 B + 16 B header = 8 flits, created at 0; A: (0,0) -> (2,0), 112 B + 16 B = 4 flits,
    // created at 1 ns. Router 2 cycles, wire 1, 32 B flits, 4-flit buffers, 2 VCs (the round trip, 4 cycles, is
    // covered, so neither is throttled by credits).
    // B's flits reach (2,0) ready at 0 + wire 1 + (router 2 + wire 1) + router 2 = 6, 7, ..., 13; A's head at
    // 1 + 1 + 2 x 3 + 2 = 10, its flits ready at 10, 11, 12, 13. Both ask the ejection port from cycle 10.
    // round_robin: B alone at 6, 7, 8, 9; at 10 the pointer (past B's east-input VC 0) finds A's west-input VC 2
    //   first, then the two alternate: A 10, 12, 14, 16; B 11, 13, 15, 17. A's tail leaves at 16 + wire 1 + its
    //   last flit 1 = 18 ns, 17 ns after its creation; B's at 17 + 1 + 1 = 19 ns.
    // oldest_first: B (created at 0) wins every cycle it asks: B 6..13, then A 14..17. B leaves at 13 + 2 = 15 ns
    //   (its zero-load latency, (1 + 1) x 3 + 1 + 8), A at 17 + 2 = 19 ns, 18 ns after its creation.
    // ideal: the ejection link serves heads in arrival order, B's first: B 6..14 out at 15, A 14..18 out at 19:
    //   the same as oldest_first.
    const std::vector<packet_spec> two = {{port(3, 0), port(2, 0), 240, 0}, {port(0, 0), port(2, 0), 112, ns}};
    EXPECT_EQ(latencies(all().rr, two), (std::vector<tick>{19 * ns, 17 * ns}));
    EXPECT_EQ(latencies(all().rr_named, two), (std::vector<tick>{19 * ns, 17 * ns}));
    EXPECT_EQ(latencies(all().oldest, two), (std::vector<tick>{15 * ns, 18 * ns}));
    EXPECT_EQ(latencies(all().ideal, two), (std::vector<tick>{15 * ns, 18 * ns}));
}

TEST(arbitration, an_unknown_impl_is_a_located_error_listing_the_known_ones) {
    // The params map is on line 6 of the generated platform text.
    const std::string& a = all().bad_arbiter;
    EXPECT_NE(a.find("a_bad_arb.yaml:6:"), std::string::npos) << a;
    EXPECT_NE(a.find("'oldest_frist' is not one of: "), std::string::npos) << a;
    EXPECT_NE(a.find("oldest_first"), std::string::npos) << a;
    EXPECT_NE(a.find("round_robin"), std::string::npos) << a;
    const std::string& f = all().bad_flow;
    EXPECT_NE(f.find("a_bad_fc.yaml:6:"), std::string::npos) << f;
    EXPECT_NE(f.find("'credits' is not one of: "), std::string::npos) << f;
    EXPECT_NE(f.find("(did you mean 'credit'?)"), std::string::npos) << f;
    const std::string& i = all().arbiter_under_ideal;
    EXPECT_NE(i.find("a_bad_ideal.yaml:6:"), std::string::npos) << i;
    EXPECT_NE(i.find("arbitration"), std::string::npos) << i;
}

TEST(arbitration, the_families_are_registered_and_described) {
    const auto* credit = policy_registry<flow_control_policy>::instance().find("credit");
    ASSERT_NE(credit, nullptr);
    const auto specs = credit->describe();
    ASSERT_EQ(specs.size(), 2u) << "the arbitration group's heading, then its impl";
    EXPECT_EQ(specs[1].name, "arbitration.impl") << "credit's own parameter, as describe lists it";
    EXPECT_EQ(specs[1].default_text, "round_robin");
    EXPECT_EQ(policy_registry<arbitration_policy>::instance().names(),
              (std::vector<std::string>{"oldest_first", "round_robin"}));
    EXPECT_EQ(policy_registry<flow_control_policy>::instance().names(), (std::vector<std::string>{"credit", "ideal"}));
}
