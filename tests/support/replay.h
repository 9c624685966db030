// Emit and replay as a user would: `tessel run -p P -w W --emit-program F` then `tessel run -g F` must give the
// same simulated time, the same step count and byte-identical statistics.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace tessel::test {

struct replay_case {
    const char* platform;
    const char* workload;
    const char* name = nullptr;  // the case's name when a platform has several (default: the platform)
    const char* sets = "";       // --set options of the mapped run only (workload and mapper; a replay has neither)
    bool per_unit = false;       // compare the per-unit arrays too (per PE, per link: slow on large platforms)
};

/// Maps the case's workload on its platform, replays the emitted program and checks both runs agree; returns
/// the mapped run's JSON summary (empty on failure).
inline nlohmann::json expect_same_replay(const replay_case& c) {
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("tessel_emit_" + std::string(c.name ? c.name : c.platform) + "_" + c.workload);
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml", s1 = dir / "mapped.json", s2 = dir / "replayed.json";
    const std::string stats = std::string(c.per_unit ? " --stats-per-unit" : "") + " --stats ";
    const auto mapped = run_tessel(std::string("run -p ") + c.platform + " -w " + c.workload + " " + c.sets +
                                   " --json" + stats + s1.string() + " --emit-program " + prog.string());
    EXPECT_EQ(mapped.code, 0) << mapped.out;
    if (mapped.code != 0) return {};
    // The program names its platform, so -g alone replays it.
    const auto replayed = run_tessel("run -g " + prog.string() + " --json" + stats + s2.string());
    EXPECT_EQ(replayed.code, 0) << replayed.out;
    if (replayed.code != 0) return {};
    const auto a = nlohmann::json::parse(mapped.out), b = nlohmann::json::parse(replayed.out);
    EXPECT_EQ(a["sim_time_s"].get<double>(), b["sim_time_s"].get<double>());
    EXPECT_EQ(a["steps"], b["steps"]);
    EXPECT_GT(a["sim_time_s"].get<double>(), 0.0);
    EXPECT_EQ(slurp(s1), slurp(s2)) << "statistics differ between the mapped run and its replay";
    fs::remove_all(dir);
    return a;
}

}  // namespace tessel::test
