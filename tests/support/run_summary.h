// `tessel run ARGS --out DIR` as a user runs it, for tests that read what a run reports: returns the summary.json
// it wrote (null when it wrote none; a run that does not exit 0 fails the test with its output), and what one of
// its resources did.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli.h"

namespace tessel::test {

inline nlohmann::json run_summary(const std::string& args) {
    static int n = 0;
    const auto out = std::filesystem::temp_directory_path() / ("tessel_run_summary_" + std::to_string(getpid())) /
                     std::to_string(n++);
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
    const auto r = run_tessel("run " + args + " --out " + out.string());
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    std::ifstream in(out / "summary.json");
    if (!in) return {};
    return nlohmann::json::parse(in, nullptr, false);
}

/// The `work` of the resource `name` in a summary's resource table (0, and a test failure, when it has none).
inline double resource_work(const nlohmann::json& summary, const std::string& name) {
    for (const auto& r : summary["resources"])
        if (r["name"] == name) return r["work"].get<double>();
    ADD_FAILURE() << "no resource " << name;
    return 0;
}

/// The longest busy time of the resource `name` (its busiest unit), likewise.
inline double resource_busy(const nlohmann::json& summary, const std::string& name) {
    for (const auto& r : summary["resources"])
        if (r["name"] == name) return r["busy_max_s"].get<double>();
    ADD_FAILURE() << "no resource " << name;
    return 0;
}

/// `tessel run` arguments for one bf16 GEMM of m x k by k x n.
inline std::string gemm_args(int m, int n, int k) {
    return " -w gemm --set workload.precision=bf16 --set workload.m=" + std::to_string(m) +
           " --set workload.n=" + std::to_string(n) + " --set workload.k=" + std::to_string(k);
}

/// Runs `model` on `chip` and checks the run against physics and the chip's power: never faster than its physical
/// lower bound nor than its FLOPs at the peak rate, and drawing power, below the TDP.
inline void expect_within_bounds_and_tdp(const std::string& chip, const std::string& model) {
    SCOPED_TRACE(chip + " " + model);
    const nlohmann::json s = run_summary("-p " + chip + " -w " + model);
    const double t = s["sim_time_s"].get<double>();
    EXPECT_GE(t, s["physical_bound_s"].get<double>());
    EXPECT_GE(t, s["flops"].get<double>() / s["peak_flops_per_s"].get<double>());
    EXPECT_GT(s["average_power_w"].get<double>(), 0);
    EXPECT_LT(s["average_power_w"].get<double>(), s["tdp_w"].get<double>());
}

}  // namespace tessel::test
