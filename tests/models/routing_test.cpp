// Routing policies of mesh_noc (models/interconnect/routing/): registered by name, chosen by `routing: {impl:}`,
// and asked by every representation and flow-control model. west_first's routes against hand-drawn ones on a
// 4 x 4 mesh and its turn rule over every pair; one packet pair timed by hand where west_first avoids the link xy
// makes them share, in the arrays, modules and credit models; the policy mechanism's own rules (parameters read
// strictly, a duplicate name an error).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/policy.h"
#include "models/interconnect/mesh_noc.h"
#include "tests/support/errors.h"
#include "tests/support/harness.h"
#include "tests/support/mesh_platform.h"

using namespace tessel;
using test::mesh4x4_platform;
using test::ns;
using test::ps;

namespace {

// Every platform is built before the first run (SystemC elaborates once per process).
struct benches {
    test::bench xy{mesh4x4_platform("r_xy", "routing: {impl: xy}"), "r_xy"};
    test::bench xy_modules{mesh4x4_platform("r_xy_mod", "routing: {impl: xy}, representation: modules"), "r_xy_mod"};
    test::bench wf{mesh4x4_platform("r_wf", "routing: {impl: west_first}"), "r_wf"};
    test::bench wf_modules{mesh4x4_platform("r_wf_mod", "routing: {impl: west_first}, representation: modules"),
                           "r_wf_mod"};
    test::bench wf_credit{mesh4x4_platform("r_wf_credit", "routing: {impl: west_first}, flow_control: {impl: credit}"),
                          "r_wf_credit"};
    test::bench yx{mesh4x4_platform("r_yx", "routing: {impl: yx}"), "r_yx"};
    std::string misspelt =
        test::error_of([] { test::bench b(mesh4x4_platform("r_bad", "routing: {impl: west_frist}"), "r_bad"); });
};
benches& all() {
    static benches b;
    return b;
}

mesh_noc& noc_of(test::bench& b) { return dynamic_cast<mesh_noc&>(b.plat->comp(b.at("noc[0,0]").comp)); }

struct xy_pos {
    int x, y;
    bool operator==(const xy_pos& o) const { return x == o.x && y == o.y; }
};
std::ostream& operator<<(std::ostream& os, const xy_pos& p) { return os << "(" << p.x << "," << p.y << ")"; }

/// The routers a head visits from `from` to `to`, both included, asking the mesh's policy hop by hop.
std::vector<xy_pos> route(const mesh_noc& m, xy_pos from, xy_pos to) {
    std::vector<xy_pos> out{from};
    for (xy_pos at = from;;) {
        const int dir = m.next_direction(at.x, at.y, to.x, to.y);
        if (dir == mesh_dir::local) return out;
        at.x += dir == mesh_dir::east ? 1 : dir == mesh_dir::west ? -1 : 0;
        at.y += dir == mesh_dir::north ? 1 : dir == mesh_dir::south ? -1 : 0;
        out.push_back(at);
        if (out.size() > 16) return out;  // not minimal: the caller's comparison fails
    }
}

int port(int x, int y) { return y * 4 + x; }

/// Sends a: (0,0) -> (3,0) and b: (1,0) -> (3,3), 256 B each, both at the program's start; their latencies.
std::vector<tick> run_pair(test::bench& b) {
    program p;
    p.name = "pair";
    const auto op = p.intern_op("packet");
    for (auto [from, to] : {std::pair{port(0, 0), port(3, 0)}, std::pair{port(1, 0), port(3, 3)}}) {
        endpoint src = b.at("noc[0,0]"), dst = src;
        src.unit = static_cast<std::uint32_t>(from);
        dst.unit = static_cast<std::uint32_t>(to);
        p.add_transfer(op, src, dst, 256, {});
    }
    const executor::result r = b.exec->run(p);
    return {r.step_end[0] - r.step_start[0], r.step_end[1] - r.step_start[1]};
}

/// The links (node-major: east, west, north, south, eject) that carried bytes.
std::vector<std::string> used_links(const mesh_noc& m) {
    static const char* dirs[] = {"east", "west", "north", "south", "eject"};
    std::vector<std::string> out;
    const std::vector<double> bytes = m.link_bytes();
    for (size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] > 0)
            out.push_back("(" + std::to_string(i / 5 % 4) + "," + std::to_string(i / 5 / 4) + ")." + dirs[i % 5]);
    return out;
}

}  // namespace

TEST(routing, the_policies_register_themselves_by_name) {
    const auto& r = policy_registry<routing_policy>::instance();
    for (const char* name : {"xy", "yx", "west_first"}) EXPECT_NE(r.find(name), nullptr) << name;
    EXPECT_EQ(noc_of(all().xy).first_route_axis(), 0);
    EXPECT_EQ(noc_of(all().yx).first_route_axis(), 1);
    EXPECT_EQ(noc_of(all().wf).first_route_axis(), -1) << "west_first is not dimension order: no wafer mapper";
    EXPECT_NE(all().misspelt.find("r_bad.yaml:6:"), std::string::npos) << all().misspelt;
    EXPECT_NE(all().misspelt.find("'west_frist' is not one of: "), std::string::npos) << all().misspelt;
    EXPECT_NE(all().misspelt.find("(did you mean 'west_first'?)"), std::string::npos) << all().misspelt;
}

TEST(routing, west_first_routes_by_hand) {
    const mesh_noc& m = noc_of(all().wf);
    // Westbound: every west hop first, then north or south (as xy).
    EXPECT_EQ(route(m, {3, 1}, {0, 3}), (std::vector<xy_pos>{{3, 1}, {2, 1}, {1, 1}, {0, 1}, {0, 2}, {0, 3}}));
    EXPECT_EQ(route(m, {2, 3}, {1, 0}), (std::vector<xy_pos>{{2, 3}, {1, 3}, {1, 2}, {1, 1}, {1, 0}}));
    // Otherwise north or south first, then east (as yx): xy would go east first.
    EXPECT_EQ(route(m, {1, 3}, {3, 0}), (std::vector<xy_pos>{{1, 3}, {1, 2}, {1, 1}, {1, 0}, {2, 0}, {3, 0}}));
    EXPECT_EQ(route(m, {0, 0}, {2, 2}), (std::vector<xy_pos>{{0, 0}, {0, 1}, {0, 2}, {1, 2}, {2, 2}}));
    EXPECT_EQ(route(noc_of(all().xy), {0, 0}, {2, 2}), (std::vector<xy_pos>{{0, 0}, {1, 0}, {2, 0}, {2, 1}, {2, 2}}));
    // Along one axis there is one minimal route.
    EXPECT_EQ(route(m, {0, 2}, {3, 2}), (std::vector<xy_pos>{{0, 2}, {1, 2}, {2, 2}, {3, 2}}));
    EXPECT_EQ(route(m, {3, 3}, {3, 3}), (std::vector<xy_pos>{{3, 3}}));
}

TEST(routing, west_first_is_minimal_and_never_turns_into_the_west) {
    const mesh_noc& m = noc_of(all().wf);
    for (int from = 0; from < 16; ++from)
        for (int to = 0; to < 16; ++to) {
            const xy_pos s{from % 4, from / 4}, d{to % 4, to / 4};
            const std::vector<xy_pos> r = route(m, s, d);
            ASSERT_EQ(r.back(), d) << s << " -> " << d;
            ASSERT_EQ(static_cast<int>(r.size()) - 1,
                      m.hops(static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to)))
                << s << " -> " << d << ": not minimal";
            for (size_t i = 2; i < r.size(); ++i) {
                const bool west = r[i].x < r[i - 1].x, was_west = r[i - 1].x < r[i - 2].x;
                EXPECT_FALSE(west && !was_west) << s << " -> " << d << " turns west at " << r[i - 1];
            }
        }
}

TEST(routing, west_first_avoids_the_link_xy_shares_in_every_model) {
    // a: (0,0) -> (3,0), H = 3; b: (1,0) -> (3,3), H = 5; 256 B + 16 B header = 272 B, 8.5 ns per link.
    // Zero-load (H + 1) * (router 2 + wire 1) + wire 1 + 8.5: a 21.5 ns, b 27.5 ns.
    // west_first sends b north from (1,0) and then east along row 3: no link in common with a, so both see their
    // zero-load latency, in the arrays, the modules and the credit model alike.
    // xy sends b east along row 0 too, over (1,0)->(2,0) and (2,0)->(3,0), which it reaches first: b's head is at
    // (1,0)->(2,0) at 3 ns (injection 1 + router 2) and holds it until 3 + 8.5 = 11.5 ns, a's head gets there at
    // 6 ns (two hops of 3 ns) and waits 5.5 ns; one hop later the link b holds until 14.5 ns is free again when a
    // arrives at 11.5 + 1 + 2 = 14.5 ns. So b sees its zero-load 27.5 ns and a 21.5 + 5.5 = 27 ns.
    for (test::bench* b : {&all().wf, &all().wf_modules, &all().wf_credit})
        EXPECT_EQ(run_pair(*b), (std::vector<tick>{21 * ns + 500 * ps, 27 * ns + 500 * ps})) << b->plat->name();
    for (test::bench* b : {&all().xy, &all().xy_modules})
        EXPECT_EQ(run_pair(*b), (std::vector<tick>{27 * ns, 27 * ns + 500 * ps})) << b->plat->name();
    const std::vector<std::string> wf_links = {"(0,0).east",  "(1,0).east",  "(1,0).north", "(2,0).east",
                                               "(3,0).eject", "(1,1).north", "(1,2).north", "(1,3).east",
                                               "(2,3).east",  "(3,3).eject"};
    for (test::bench* b : {&all().wf, &all().wf_modules, &all().wf_credit})
        EXPECT_EQ(used_links(noc_of(*b)), wf_links) << b->plat->name();
}

namespace {
// A family of one test policy with a parameter: what a policy with settings (a flow-control model) would do.
struct test_scale {
    using family = test_scale;
    static constexpr const char* family_name = "test_scale";
    virtual ~test_scale() = default;
    virtual double factor() const = 0;
};
struct fixed_scale final : test_scale {
    struct params {
        double factor = 0;
        void declare(param_decl& d) { d(factor, "factor", "2", "what factor() answers"); }
    };
    explicit fixed_scale(const params& p) : m_factor(p.factor) {}
    double factor() const override { return m_factor; }
    double m_factor;
};
TESSEL_REGISTER_POLICY(make_policy<fixed_scale>("fixed", "answers its parameter"));

struct owner_params {
    std::string impl;
    std::unique_ptr<const test_scale> policy;
    void declare(param_decl& d) { declare_policy(d, impl, policy, "fixed", "the scale policy"); }
};
double load_factor(const std::string& yaml) {
    param_context ctx;
    owner_params p;
    param_decl d(yaml_node::load_string(yaml, "scale.yaml"), &ctx, "owner.scale", "owner.scale");
    p.declare(d);
    d.finish();
    return p.policy->factor();
}
}  // namespace

TEST(routing, a_policy_reads_its_own_parameters_strictly) {
    EXPECT_EQ(load_factor("{impl: fixed, factor: 3}"), 3);
    EXPECT_EQ(load_factor("{}"), 2) << "the default implementation with its defaults";
    EXPECT_NE(test::error_of([] { load_factor("{impl: fixed, fator: 3}"); }).find("fator"), std::string::npos);
    const std::vector<param_spec> specs = describe_params<owner_params>();
    ASSERT_EQ(specs.size(), 2u);
    EXPECT_EQ(specs[0].name, "impl");
    EXPECT_EQ(specs[0].choices, std::vector<std::string>{"fixed"});
    EXPECT_EQ(specs[1].name, "factor") << "describing lists the default implementation's parameters";
}

TEST(routing, a_name_registered_twice_is_an_error) {
    const size_t before = policy_registry_errors().size();
    EXPECT_FALSE(register_policy(make_policy<fixed_scale>("fixed", "again")));
    ASSERT_EQ(policy_registry_errors().size(), before + 1);
    EXPECT_EQ(policy_registry_errors().back(), "test_scale policy 'fixed' is registered twice");
}
