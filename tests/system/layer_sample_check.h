// A layer sample against the whole model: the same plan run with k and k + 1 layers per pipeline chunk, the model's
// other layers counted by the difference (each adds the same time: `tessel plan --estimate-layers`,
// serve.simulated_layers), must give the whole run's iteration within a stated tolerance, from fewer steps. The
// samples run as the model would be mapped (mapper.layers_of: the chip programs' form chosen as for the model).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <string>

#include "tests/support/run_summary.h"

namespace tessel::test {

/// Runs `args` with `layers` layers whole, and with k and k + 1 per chunk of `chunks` (pp x interleave); returns
/// the sample's error against the whole iteration, which must be within `tolerance` (relative).
inline double check_layer_sample(const std::string& args, int layers, int chunks, int k, double tolerance) {
    const int low = chunks * k, high = chunks * (k + 1);
    const std::string of = " --set mapper.layers_of=" + std::to_string(layers);
    const nlohmann::json whole = run_summary(args + " --set workload.layers=" + std::to_string(layers));
    const nlohmann::json lo = run_summary(args + " --set workload.layers=" + std::to_string(low) + of);
    const nlohmann::json hi = run_summary(args + " --set workload.layers=" + std::to_string(high) + of);
    if (whole.is_null() || lo.is_null() || hi.is_null()) {
        ADD_FAILURE() << "a run failed: " << args;
        return 0;
    }
    const double t_lo = lo["sim_time_s"].get<double>(), t_hi = hi["sim_time_s"].get<double>();
    EXPECT_GT(t_hi, t_lo) << args << ": a layer more takes longer";
    const double estimate = t_lo + static_cast<double>(layers - low) / (high - low) * (t_hi - t_lo);
    EXPECT_LT(hi["steps"].get<double>(), whole["steps"].get<double>())
        << args << ": a sample simulates fewer steps than the model";
    const double error = estimate / whole["sim_time_s"].get<double>() - 1;
    std::printf("layer sample error %+.4f%%: %s\n", 100 * error, args.c_str());
    EXPECT_LE(std::abs(error), tolerance) << args << ": from " << low << " and " << high << " layers " << estimate
                                          << " s, whole " << whole["sim_time_s"] << " s";
    return error;
}

}  // namespace tessel::test
