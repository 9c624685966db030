// Up-front validation: every --set path and value of a sweep is loaded on the real platform and workload before
// any point runs; mistakes point into the sweep file, and combinations the filter removed are never judged.
#include <gtest/gtest.h>

#include "engine/sweep/validate.h"

using namespace tessel;
using namespace tessel::sweep;

namespace {

std::string bundled(const std::string& name) {
    if (name == "mesh4x4") return "platforms/teaching/mesh4x4.yaml";
    throw input_error("cannot open platform '" + name + "': no such file, and no bundled platform by that name");
}

validation check(const std::string& text) {
    const spec s = parse_spec(text, "sw.yaml");
    return validate_points(s, expand(s).points, bundled);
}

std::string error_of(const std::string& text) {
    try {
        check(text);
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST(sweep_validate, a_good_sweep_loads_each_value_once) {
    const validation v = check(R"Y(platform: mesh4x4
workload: mlp
axes:
  noc.link_bandwidth: [16B/cycle, 32B/cycle, 64B/cycle]
  workload.batch: [8, 16]
  mapper.resident_fraction: [0.25, 0.5]
)Y");
    // Platform: (16B, 0.25) then 16B with 0.5, then 32B and 64B: four loads. Workload: its names, then batch 8, 16.
    EXPECT_EQ(v.platform_loads, 4u);
    EXPECT_EQ(v.workload_loads, 3u);
}

TEST(sweep_validate, values_the_caller_computed_load_once) {
    // tessel plan's mapper.holds is a value per plan, computed by its sizing: its first value is loaded, the others
    // load nothing more. The link bandwidth's three values still load three times.
    const std::string text = R"Y(platform: mesh4x4
workload: mlp
axes:
  noc.link_bandwidth: [16B/cycle, 32B/cycle, 64B/cycle]
  mapper.resident_fraction: [0.25, 0.5]
)Y";
    const spec s = parse_spec(text, "sw.yaml");
    EXPECT_EQ(validate_points(s, expand(s).points, bundled).platform_loads, 4u);
    EXPECT_EQ(validate_points(s, expand(s).points, bundled, {"mapper.resident_fraction"}).platform_loads, 3u);
}

TEST(sweep_validate, unknown_paths_point_at_their_key) {
    EXPECT_EQ(
        error_of("platform: mesh4x4\nworkload: mlp\naxes:\n  noc.link_bandwith: [16B/cycle]\n"),
        "sw.yaml:4:3: 'noc.link_bandwith' is not a parameter of platform 'mesh4x4' (did you mean "
        "'noc.link_bandwidth'?) "
        "(platform parameters are COMPONENT.PARAM such as noc.link_bandwidth, mapper options mapper.NAME, workload "
        "parameters workload.NAME)");
    EXPECT_EQ(
        error_of("platform: mesh4x4\nworkload: mlp\nset:\n  workload.bach: 8\naxes:\n  noc.width: [4]\n"),
        "sw.yaml:4:3: workload 'mlp' has no parameter 'bach' (did you mean 'batch'?); its parameters are: batch, fuse, "
        "precision, training, width");
    const std::string e = error_of("platform: mesh4x4\nworkload: mlp\naxes:\n  mapper.tile: [a]\n");
    EXPECT_NE(
        e.find("sw.yaml:4:3: 'mapper.tile' is not a parameter of platform 'mesh4x4' (did you mean 'mapper.tiles'?)"),
        std::string::npos)
        << e;
}

TEST(sweep_validate, bad_values_point_at_the_value) {
    const std::string e = error_of("platform: mesh4x4\nworkload: mlp\naxes:\n  noc.link_bandwidth: [16B/cycle, 32]\n");
    EXPECT_NE(
        e.find("sw.yaml:4:35: point 1 (noc.link_bandwidth=32) does not load: --set noc.link_bandwidth=32: parameter "
               "'link_bandwidth' of component 'noc' (mesh_noc): expected a bandwidth"),
        std::string::npos)
        << e;
    const std::string w =
        error_of("platform: mesh4x4\nworkload: mlp\naxes:\n  noc.width: [4]\n  workload.batch: [8, lots]\n");
    EXPECT_NE(w.find("sw.yaml:5:23: point 1 (noc.width=4 workload.batch=lots) does not load:"), std::string::npos) << w;
    const std::string d = error_of(
        "platform: mesh4x4\nworkload: mlp\naxes:\n  workload.batch: [8]\nderived:\n  tile.sram.capacity: "
        "\"workload.batch * 1024\"\n");
    EXPECT_NE(d.find("sw.yaml:6:3: point 0 (workload.batch=8 tile.sram.capacity=8192) does not load: --set "
                     "tile.sram.capacity=8192:"),
              std::string::npos)
        << d;
}

TEST(sweep_validate, inputs_that_do_not_exist) {
    EXPECT_EQ(error_of("platform: mesh4x5\nworkload: mlp\naxes:\n  noc.width: [4]\n"),
              "sw.yaml:1:11: cannot open platform 'mesh4x5': no such file, and no bundled platform by that name");
    const std::string w = error_of("platform: mesh4x4\naxes:\n  workload: [mlp, mpl]\n");
    EXPECT_NE(w.find("sw.yaml:3:19: workload 'mpl' does not load: unknown workload 'mpl' (did you mean 'mlp'?)"),
              std::string::npos)
        << w;
    EXPECT_NE(error_of("platform: mesh4x4\nprogram: workloads/programs/superstep.yaml\naxes:\n  workload.batch: [1]\n")
                  .find("sw.yaml:4:3: 'workload.batch': a program has no workload parameters"),
              std::string::npos);
}

TEST(sweep_validate, programs_and_filtered_combinations) {
    const validation v = check(R"Y(platform: platforms/teaching/mesh4x4.yaml
program: workloads/programs/superstep.yaml
axes:
  noc.link_bandwidth: [16B/cycle, 32B/cycle]
)Y");
    EXPECT_EQ(v.platform_loads, 2u);
    EXPECT_EQ(v.workload_loads, 0u);
    // noc.width=3 does not fit the 4x4 tile grid, but the filter removes it before anything loads it.
    EXPECT_EQ(error_of("platform: mesh4x4\nworkload: gemm\naxes:\n  noc.width: [3, 4]\nfilter: noc.width == 4\n"), "");
    const std::string e = error_of("platform: mesh4x4\nworkload: gemm\naxes:\n  noc.width: [3, 4]\n");
    EXPECT_NE(e.find("sw.yaml:1:11: point 0 (noc.width=3) does not load: "), std::string::npos) << e;
    EXPECT_NE(e.find("mesh4x4.yaml:48:5: connection 'tile[x,y] -> noc[x,y]'"), std::string::npos) << e;
}
