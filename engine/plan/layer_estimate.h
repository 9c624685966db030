// A training iteration estimated from a sample of its model's layers (tessel run --estimate-layers K): the same
// run with K and with K + 1 layers per pipeline chunk (mapper.sample_layers), both mapped as the whole model would
// be, the model's other layers counted by the difference (engine/system/layer_sample.h, docs/systems.md "A sample
// of layers"). The two samples run at once, as their own processes (SystemC elaborates once per process).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tessel {

/// What a run's summary says of the iteration it stands for: its time (a window's extrapolation where it ran one,
/// mapper.window), its model FLOPs over the peak rate (MFU x time), the samples it trains, and its energy where the
/// run is the whole iteration (a window's is of the window only).
struct iteration_figures {
    double seconds = 0, flop_seconds = 0, samples = 0;
    std::optional<double> joules;
};
iteration_figures iteration_of(const nlohmann::json& summary);

struct layer_estimate_request {
    std::string platform;           // the platform file
    std::string platform_name;      // as the user named it
    std::string workload;           // a file or a built-in name
    std::vector<std::string> sets;  // --set PATH=VALUE, as given
    int per_chunk = 1;              // K: the samples have K and K + 1 layers per pipeline chunk
    std::string out_dir;            // the estimate's summary.json and the samples' folders; empty: none kept
    int jobs = 2;                   // samples run at once
};

/// Runs the two samples and returns the estimate (its summary.json). A sample that fails is an input_error that
/// names it and says why.
nlohmann::json estimate_from_layers(const layer_estimate_request& r);

/// The estimate as a short table: the iteration, throughput, MFU and energy, then the samples and the rule.
void print_layer_estimate(const nlohmann::json& e, std::ostream& out);

}  // namespace tessel
