// A system's Perfetto trace: one process per chip (its units as tracks), the switches and links as processes of
// their own, and a "pipeline" track per simulated chip whose slices are the pipeline items in the order of the
// schedule, never overlapping, so a 1F1B schedule can be read off the timeline.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/trace_check.h"

namespace fs = std::filesystem;

using tessel::test::run_tessel;

TEST(system_trace, one_process_per_chip_and_a_pipeline_track_showing_1f1b) {
    const fs::path path = fs::temp_directory_path() / ("tessel_system_trace_" + std::to_string(getpid()) + ".json");
    const auto r = run_tessel(
        "run -p platforms/systems/dgx_a100.yaml -w gpt2 --set workload.training=adam --set workload.layers=4 "
        "--set workload.batch=8 --set parallel.tp=2 --set parallel.pp=4 --set parallel.microbatch=1 --trace " +
        path.string());
    ASSERT_EQ(r.code, 0) << r.out;
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    fs::remove(path);
    ASSERT_TRUE(j.contains("traceEvents"));
    tessel::test::expect_no_overlapping_slices(j, "dgx_a100 tp2 pp4");
    std::map<int, std::string> process;
    std::map<std::pair<int, int>, std::string> thread;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] != "M") continue;
        if (e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
        if (e["name"] == "thread_name")
            thread[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"].get<std::string>();
    }
    std::set<std::string> names;
    for (const auto& [pid, name] : process) names.insert(name);
    for (int g = 0; g < 8; ++g) EXPECT_TRUE(names.count("dgx_a100.gpu[" + std::to_string(g) + "]")) << g;
    EXPECT_TRUE(names.count("dgx_a100.nvswitch[0]"));
    for (const auto& n : names)
        EXPECT_EQ(n.find("gpu[0].gpu"), std::string::npos) << "a unit of a chip is its own process: " << n;

    // Stage 0 (gpu[0]) and the last stage (gpu[6]) with 8 microbatches on 4 stages: 1F1B's warm-up of 4 forwards,
    // then one backward per forward, then the cool-down; the last stage alternates from the start.
    auto items = [&](const std::string& chip) {
        std::vector<std::pair<double, std::string>> v;
        std::vector<std::pair<double, double>> spans;
        for (const auto& e : j["traceEvents"]) {
            if (e["ph"] != "X") continue;
            const int pid = e["pid"].get<int>();
            if (process[pid] != chip || thread[{pid, e["tid"].get<int>()}] != "pipeline") continue;
            v.push_back({e["ts"].get<double>(), e["name"].get<std::string>()});
            spans.push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
        }
        std::sort(v.begin(), v.end());
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i)
            EXPECT_LE(spans[i - 1].second, spans[i].first + 1e-6) << chip << " items overlap";
        std::string order;
        for (const auto& [t, name] : v)
            order += (order.empty() ? "" : " ") + std::string(1, name[0]) + name.substr(name.rfind(' ') + 1);
        return order;
    };
    EXPECT_EQ(items("dgx_a100.gpu[0]"), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
    EXPECT_EQ(items("dgx_a100.gpu[6]"), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
}
