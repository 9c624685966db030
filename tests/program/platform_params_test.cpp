// Program expressions see the platform's parameters: a `for:` range written against the platform's size
// follows a --set override, loop variables shadow parameters, a parameter with a unit substitutes as text,
// and an unknown name is a located error. No simulation: only loading.
#include <gtest/gtest.h>

#include <memory>

#include "engine/netlist/platform.h"
#include "engine/program/program_yaml.h"

using namespace tessel;

namespace {

// A k x k mesh of tiles; k is a platform parameter (4 unless --set k=...).
const char* platform_yaml = R"(
platform: NAME
clock: 1GHz
parameters: {k: 4, pause: 2us, half: "${k / 2}"}
components:
  tile:
    kind: tile
    replicate: {x: "${k}", y: "${k}"}
  noc:
    kind: mesh_noc
    params: {width: "${k}", height: "${k}"}
connections:
  - tile[x,y] -> noc[x,y]
)";

struct bench {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    /// `sets`: --set overrides as PATH=VALUE.
    bench(const std::string& name, const std::vector<std::pair<std::string, std::string>>& sets = {}) {
        for (const auto& [k, v] : sets) ctx.add_override(k, v);
        std::string yaml = platform_yaml;
        yaml.replace(yaml.find("NAME"), 4, name);
        plat = std::make_unique<platform>(name.c_str(), yaml_node::load_string(yaml, name + ".yaml"), ctx, sim);
    }
    program load(const std::string& text) const { return parse_program(yaml_node::load_string(text, "p.yaml"), *plat); }
};

// Every tile sends to its east neighbour, wrapping: x and y run over the platform's size.
const char* program_yaml = R"(
program: ring_east
steps:
  - for: {x: "0..{k-1}", y: 0..k-1}
    id: "send_{x}_{y}"
    transfer: {from: "tile[{x},{y}]", to: "tile[{(x+1) % k},{y}]", bytes: 1KiB}
  - id: wait
    delay: "{pause}"
    after: "send_*"
)";

}  // namespace

TEST(program_params, a_for_range_follows_the_platforms_size) {
    const bench b4("p4");
    const program p = b4.load(program_yaml);
    ASSERT_EQ(p.size(), 4u * 4 + 1);
    EXPECT_EQ(p.step_labels[15], "send_3_3");
    EXPECT_EQ(b4.plat->name_of(p.steps[15].to), "tile[0,3]");
    EXPECT_EQ(p.steps[16].length, 2000000000u);  // pause: 2us, substituted as text
    EXPECT_EQ(p.steps[16].dep_count, 16u);

    // --set k=16: a 16 x 16 mesh and 256 sends, from the same program.
    const bench b16("p16", {{"k", "16"}});
    const program q = b16.load(program_yaml);
    ASSERT_EQ(q.size(), 16u * 16 + 1);
    EXPECT_EQ(q.step_labels[255], "send_15_15");
    EXPECT_EQ(b16.plat->name_of(q.steps[255].to), "tile[0,15]");
    EXPECT_EQ(q.steps[256].dep_count, 256u);
}

TEST(program_params, loop_variables_shadow_parameters_and_derived_parameters_are_numbers) {
    const bench b("shadow");
    // half = ${k / 2} = 2; a loop variable named k hides the parameter k inside its step.
    const program p = b.load(R"(
program: s
steps:
  - for: {k: 0..1}
    id: "d{k}"
    delay: "{k + half}us"
  - id: e
    delay: "{k}us"
)");
    ASSERT_EQ(p.size(), 3u);
    EXPECT_EQ(p.steps[0].length, 2000000000u);  // k = 0 (the loop's): 0 + 2 us
    EXPECT_EQ(p.steps[1].length, 3000000000u);
    EXPECT_EQ(p.steps[2].length, 4000000000u);  // k = 4 (the platform's)
    // A list may hold expressions too.
    const program l =
        b.load("program: l\nsteps:\n  - for: {i: [0, \"{k-1}\", half]}\n    id: \"d{i}\"\n    delay: 1us\n");
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(l.step_labels[1], "d3");
    EXPECT_EQ(l.step_labels[2], "d2");
}

TEST(program_params, an_unknown_name_is_a_located_error) {
    const bench b("unknown");
    try {
        b.load("program: u\nsteps:\n  - for: {x: \"0..{width-1}\"}\n    delay: 1us\n");
        FAIL() << "expected an error";
    } catch (const input_error& e) {
        EXPECT_EQ(e.where().line, 3);
        EXPECT_NE(e.message().find("width"), std::string::npos) << e.what();
    }
}

TEST(program_yaml, a_dependency_cycle_is_refused_at_its_first_step) {
    // Issue 16: the executor printed "step 1 'b' -> step 2 'c' -> step 0 'a' -> step 0 'a'" (the walk's start
    // twice, against the data flow) and no place. The loader names the cycle along the data flow from the step
    // listed first, each step once, at that step. Here d waits on the cycle without being part of it: a waits for
    // c, b for a and z, c for b, so a -> b -> c -> a; d, a, b and c can never start.
    const bench b("cycle");
    auto message = [&](const std::string& text) -> std::string {
        try {
            (void)b.load(text);
        } catch (const input_error& e) {
            return e.what();
        }
        return "loaded";
    };
    EXPECT_EQ(message("program: c\nsteps:\n  - {id: d, delay: 1us, after: [c]}\n  - {id: a, delay: 1us, after: [c]}\n"
                      "  - {id: z, delay: 1us}\n  - {id: b, delay: 1us, after: [a, z]}\n  - id: c\n    delay: 1us\n"
                      "    after: b\n"),
              "p.yaml:4:5: program 'c' can never finish: its steps wait on each other in a cycle: step 1 'a' -> step 3 "
              "'b' -> step 4 'c' -> step 1 'a' (4 steps are blocked)");
    EXPECT_EQ(message("program: c\nsteps:\n  - {id: z, delay: 1us}\n  - id: a\n    delay: 1us\n    after: [z, a]\n"),
              "p.yaml:4:5: program 'c' can never finish: step 1 'a' waits for itself (1 step is blocked)");
    // A step loop waiting on a later one is no cycle.
    EXPECT_EQ(message("program: c\nsteps:\n  - for: {i: 0..2}\n    id: \"s{i}\"\n    delay: 1us\n    after: last\n"
                      "  - {id: last, delay: 1us}\n"),
              "loaded");
}
