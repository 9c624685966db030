// Strict platform loading: every kind of mistake gives one message with file:line:column and what was expected.
#include <gtest/gtest.h>

#include "engine/netlist/platform.h"

using namespace tessel;

namespace {

const char* good = R"(platform: NAME
clock: 1GHz
components:
  tile:
    kind: tile
    replicate: {x: 2, y: 2}
  noc:
    kind: mesh_noc
    params: {width: 2, height: 2, link_bandwidth: 32B/cycle}
connections:
  - tile[x,y] -> noc[x,y]
)";

std::string with(const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    if (at == std::string::npos) throw std::logic_error("fixture text not found: " + from);
    return s.replace(at, from.size(), to);
}

int counter = 0;

/// Loads the platform text and returns the error message (empty if it loaded).
std::string error_of(std::string text, const std::vector<std::pair<std::string, std::string>>& sets = {}) {
    const std::string name = "p" + std::to_string(counter++);
    text.replace(text.find("NAME"), 4, name);
    sim_context sim;
    param_context ctx;
    for (const auto& [k, v] : sets) ctx.add_override(k, v);
    try {
        const yaml_node root = yaml_node::load_string(text, "plat.yaml");
        platform p(name.c_str(), root, ctx, sim);
        const auto unused = ctx.unused_overrides();
        if (!unused.empty()) return "unused override " + unused.front();
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST(platform_errors, the_good_platform_loads) { EXPECT_EQ(error_of(good), ""); }

TEST(platform_errors, unknown_top_level_key) {
    const std::string e = error_of(with("connections:", "conections:"));
    EXPECT_NE(e.find("plat.yaml:10:1: unknown key 'conections' in platform file (did you mean 'connections'?)"),
              std::string::npos)
        << e;
}

TEST(platform_errors, unknown_parameter_with_suggestion) {
    const std::string e = error_of(with("link_bandwidth: 32B/cycle", "link_bandwith: 32B/cycle"));
    EXPECT_NE(e.find("plat.yaml:9:35: unknown key 'link_bandwith'"), std::string::npos) << e;
    EXPECT_NE(e.find("did you mean 'link_bandwidth'"), std::string::npos) << e;
}

TEST(platform_errors, wrong_type) {
    const std::string e = error_of(with("width: 2,", "width: two,"));
    EXPECT_NE(e.find("plat.yaml:9:21: parameter 'width'"), std::string::npos) << e;
    EXPECT_NE(e.find("'two' is not a number"), std::string::npos) << e;
}

TEST(platform_errors, missing_required_parameter) {
    const std::string e = error_of(with("width: 2, ", ""));
    EXPECT_NE(e.find("plat.yaml:9:13: missing required parameter 'width' of component 'noc' (mesh_noc)"),
              std::string::npos)
        << e;
}

TEST(platform_errors, bad_unit) {
    const std::string e = error_of(with("32B/cycle", "32GHz"));
    EXPECT_NE(e.find("plat.yaml:9:51: parameter 'link_bandwidth'"), std::string::npos) << e;
    EXPECT_NE(
        e.find("expected a bandwidth or bandwidth per cycle (e.g. 3.35TB/s or 32B/cycle), got '32GHz' (a frequency)"),
        std::string::npos)
        << e;
    const std::string e2 = error_of(with("32B/cycle", "32Bps"));
    EXPECT_NE(e2.find("unknown unit 'Bps'"), std::string::npos) << e2;
}

TEST(platform_errors, unknown_kind) {
    const std::string e = error_of(with("kind: mesh_noc", "kind: mesh_nok"));
    EXPECT_NE(e.find("plat.yaml:8:11: unknown component kind 'mesh_nok' (did you mean 'mesh_noc'?)"), std::string::npos)
        << e;
}

TEST(platform_errors, dangling_connection) {
    const std::string e = error_of(with("-> noc[x,y]", "-> nok[x,y]"));
    EXPECT_NE(
        e.find("plat.yaml:11:5: connection 'tile[x,y] -> nok[x,y]': no component named 'nok' (did you mean 'noc'?)"),
        std::string::npos)
        << e;
    const std::string e2 = error_of(with("-> noc[x,y]", "-> noc[x,y+1]"));
    EXPECT_NE(e2.find("port [0,2] is outside noc's 2 x 2 ports"), std::string::npos) << e2;
    const std::string e3 = error_of(with("-> noc[x,y]", "-> tile[x,y]"));
    EXPECT_NE(e3.find("is not a network"), std::string::npos) << e3;
}

TEST(platform_errors, a_network_wired_to_itself) {
    // A port to itself, and two ports of one network: both are wiring mistakes, not loops to simulate.
    const std::string e =
        error_of(with("  - tile[x,y] -> noc[x,y]\n", "  - tile[x,y] -> noc[x,y]\n  - noc[0,0] -> noc[0,0]\n"));
    EXPECT_NE(e.find("plat.yaml:12:5: connection 'noc[0,0] -> noc[0,0]': joins noc's port 0 to itself"),
              std::string::npos)
        << e;
    const std::string e2 =
        error_of(with("  - tile[x,y] -> noc[x,y]\n", "  - tile[x,y] -> noc[x,y]\n  - noc[0,0] -> noc[1,1]\n"));
    EXPECT_NE(e2.find("joins noc to itself (ports 0 and 3)"), std::string::npos) << e2;
}

TEST(platform_errors, a_parallel_plan_on_one_chip) {
    const std::string e = error_of(good + std::string("parallel: {tp: 2}\n"));
    EXPECT_NE(e.find("plat.yaml:12:11: 'parallel:' sets how a system splits a model over its chips, but this "
                     "platform is a single chip"),
              std::string::npos)
        << e;
}

TEST(platform_errors, bad_override) {
    EXPECT_EQ(error_of(good, {{"noc.link_bandwidth", "64B/cycle"}}), "");
    const std::string e = error_of(good, {{"noc.link_bandwidth", "fast"}});
    EXPECT_NE(e.find("--set noc.link_bandwidth=fast: parameter 'link_bandwidth'"), std::string::npos) << e;
    EXPECT_NE(error_of(good, {{"noc.link_bandwith", "64B/cycle"}}).find("unused override noc.link_bandwith"),
              std::string::npos);
}

TEST(platform_errors, yaml_syntax_error_has_a_location) {
    const std::string e = error_of(with("{width: 2,", "{width: 2,,"));
    EXPECT_NE(e.find("plat.yaml:9:"), std::string::npos) << e;
}

TEST(platform_errors, unknown_preset_lists_presets) {
    const std::string e = error_of(with("  noc:\n", "  mem:\n    kind: hbm\n    preset: hbm4\n  noc:\n"));
    EXPECT_NE(e.find("kind 'hbm' has no preset 'hbm4'"), std::string::npos) << e;
    EXPECT_NE(e.find("hbm3_stack"), std::string::npos) << e;
}

TEST(platform_errors, missing_file) {
    sim_context sim;
    param_context ctx;
    try {
        platform::load("no/such/platform.yaml", ctx, sim);
        FAIL();
    } catch (const input_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open 'no/such/platform.yaml'"), std::string::npos);
    }
}

TEST(platform_errors, a_division_in_a_parameter_needs_no_spaces) {
    // Issue 16: "${1/0}" said "unknown unit '/' in '1/'" (the number reader took "1/" for a number with a unit)
    // while "${1 / 0}" said division by zero. Both say it now, at the value; "${6/2}" is 3, and units keep their
    // slash.
    EXPECT_EQ(error_of(with("clock: 1GHz", "parameters: {k: \"${1/0}\"}\nclock: 1GHz")),
              "plat.yaml:2:17: in '${1/0}': division by zero");
    EXPECT_EQ(error_of(with("clock: 1GHz", "parameters: {k: \"${1 / 0}\"}\nclock: 1GHz")),
              "plat.yaml:2:17: in '${1 / 0}': division by zero");
    sim_context sim;
    param_context ctx;
    std::string text = with("clock: 1GHz", "parameters: {k: \"${6/2}\"}\nclock: 1GHz");
    text.replace(text.find("NAME"), 4, "pdiv");
    const platform p("pdiv", yaml_node::load_string(text, "plat.yaml"), ctx, sim);
    EXPECT_EQ(p.parameters(), (std::vector<std::pair<std::string, std::string>>{{"k", "3"}}));
}
