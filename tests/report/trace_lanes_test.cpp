// Every platform's Perfetto trace has no overlapping slices on any track: a unit that serves several requests at
// once (a memory behind one port, a link with packets in flight) is split into lanes "NAME", "NAME (2)", ...
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/trace_check.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;
using tessel::test::slurp;

TEST(trace_lanes, no_track_of_any_platform_holds_overlapping_slices) {
    const fs::path dir = fs::temp_directory_path() / ("tessel_trace_lanes_" + std::to_string(getpid()));
    fs::create_directories(dir);
    size_t i = 0;
    for (const std::string run :
         {"-p mesh4x4 -w mlp", "-p ring8_ddr4 -w mlp", "-p systolic -w mlp", "-p h100_sxm -w bert-base",
          "-p tpu_v4 -w mlp", "-p groqchip1 -w mlp", "-p sn40l -w mlp", "-p gc200 -w mlp --trace-to 4us",
          "-g workloads/programs/noc_uniform.yaml --set program.rate=0.4 --set program.measure=1000"}) {
        const fs::path path = dir / ("t" + std::to_string(i++) + ".json");
        const auto r = run_tessel("run " + run + " -q --trace " + path.string());
        ASSERT_EQ(r.code, 0) << run << "\n" << r.out;
        const auto trace = nlohmann::json::parse(slurp(path));
        EXPECT_GT(tessel::test::expect_no_overlapping_slices(trace, run), 10u) << run;
    }
    // The mesh's scratchpads serve reads and writes of several packets at once: their tracks have lanes.
    const auto mesh = nlohmann::json::parse(slurp(dir / "t0.json"));
    bool lane = false;
    for (const auto& e : mesh["traceEvents"])
        if (e["ph"] == "M" && e["name"] == "thread_name" &&
            e["args"]["name"].get<std::string>().find(".sram (2)") != std::string::npos)
            lane = true;
    EXPECT_TRUE(lane);
    fs::remove_all(dir);
}
