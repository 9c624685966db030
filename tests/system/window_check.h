// The system mapper's window (mapper.window) against the whole iteration: a run that simulates the first
// microbatches of each pipeline and extrapolates must give the whole run's iteration time within a stated
// tolerance, by the rule it states (window + each further microbatch's time), from fewer steps.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/run_summary.h"

namespace tessel::test {

/// Runs `args` whole and with mapper.window=1; the window simulates `window` of `microbatches` microbatches and
/// its estimate is within `tolerance` (relative) of the whole iteration. Returns the estimate's error.
inline double check_window(const std::string& args, int microbatches, int window, double tolerance) {
    const nlohmann::json whole = run_summary(args);
    const nlohmann::json part = run_summary(args + " --set mapper.window=1");
    if (whole.is_null() || part.is_null()) {
        ADD_FAILURE() << "a run failed: " << args;
        return 0;
    }
    EXPECT_EQ(whole["parallel"]["microbatches"].get<int>(), microbatches) << args;
    EXPECT_EQ(whole["parallel"]["microbatches_simulated"].get<int>(), microbatches) << args;
    EXPECT_FALSE(whole["parallel"].contains("estimate")) << "the whole iteration is not an estimate";
    const nlohmann::json& est = part["parallel"]["estimate"];
    EXPECT_EQ(est["microbatches"].get<int>(), microbatches) << args;
    EXPECT_EQ(est["microbatches_simulated"].get<int>(), window) << args;
    // The stated rule: the window as simulated, then each further microbatch at the pace it measured.
    EXPECT_EQ(est["window_s"].get<double>(), part["sim_time_s"].get<double>());
    EXPECT_NEAR(est["iteration_s"].get<double>(),
                est["window_s"].get<double>() + (microbatches - window) * est["per_microbatch_s"].get<double>(),
                1e-12 * est["iteration_s"].get<double>());
    EXPECT_LT(part["steps"].get<double>(), whole["steps"].get<double>()) << "a window simulates fewer steps";
    // A window's own figures are the window's: its samples and FLOPs are its microbatches' share.
    EXPECT_NEAR(part["throughput_per_s"].get<double>() * part["sim_time_s"].get<double>() * microbatches / window,
                whole["throughput_per_s"].get<double>() * whole["sim_time_s"].get<double>(),
                1e-9 * whole["throughput_per_s"].get<double>() * whole["sim_time_s"].get<double>());
    const double error = est["iteration_s"].get<double>() / whole["sim_time_s"].get<double>() - 1;
    EXPECT_LE(std::abs(error), tolerance)
        << args << ": estimate " << est["iteration_s"] << " s, whole " << whole["sim_time_s"] << " s";
    return error;
}

}  // namespace tessel::test
