// Program input errors through the command line: a bad `traffic:` block and a program expression that reads a
// platform parameter (following --set) exit 2 with the file:line:column of the value, and nothing runs.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

using result = tessel::test::cli_result;
using tessel::test::run_tessel;

fs::path scratch() {
    const fs::path d = fs::temp_directory_path() / ("tessel_program_input_test_" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

}  // namespace

TEST(cli_program, bad_traffic_exits_2_at_the_value) {
    const fs::path d = scratch();
    std::ofstream(d / "t.yaml") << "program: t\ntraffic:\n  network: noc\n  pattern: transpose\n  rate: 2\n"
                                   "  packet: 4flits\n  measure: 100cycles\n";
    const result r = run_tessel("run -p mesh4x4 -g " + (d / "t.yaml").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(
        r.out.find("t.yaml:5:9: rate: the offered load is in flits per node per cycle, above 0 and at most 1; got '2'"),
        std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
    fs::remove_all(d);
}

TEST(cli_program, expressions_see_platform_parameters_and_set) {
    // A k x k platform; the program names tile[k,0], one past the edge, so the message shows the k in force.
    const fs::path d = scratch();
    std::ofstream(d / "plat.yaml") << "platform: kxk\nclock: 1GHz\nparameters: {k: 4}\ncomponents:\n"
                                      "  tile: {kind: tile, replicate: {x: \"${k}\", y: \"${k}\"}}\n"
                                      "  noc: {kind: mesh_noc, params: {width: \"${k}\", height: \"${k}\"}}\n"
                                      "connections:\n  - tile[x,y] -> noc[x,y]\n";
    std::ofstream(d / "p.yaml") << "program: p\nsteps:\n  - compute: {on: \"tile[{k},0]\", macs: 1M}\n";
    result r = run_tessel("run -p " + (d / "plat.yaml").string() + " -g " + (d / "p.yaml").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("p.yaml:3:19: 'tile[4,0]': outside the 4 x 4 grid of 'tile'"), std::string::npos) << r.out;
    r = run_tessel("run -p " + (d / "plat.yaml").string() + " -g " + (d / "p.yaml").string() + " --set k=8");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("p.yaml:3:19: 'tile[8,0]': outside the 8 x 8 grid of 'tile'"), std::string::npos) << r.out;
    fs::remove_all(d);
}
