// A sample of a model's layers: the same step or iteration run with K and K + 1 layers per pipeline chunk, the
// model's other layers counted by the difference, since its transformer layers are alike (the embedding, the head,
// the pipeline's fill and drain are in both runs, so they are counted once). tessel serve's
// serve.simulated_layers and tessel plan's --estimate-layers both use it; the system mapper's `layers_of` and
// `holds` make a sample map as its model would (docs/systems.md, "A sample of layers").
#pragma once

#include <cstdint>
#include <string>

namespace tessel {

struct layer_sample {
    std::int64_t layers = 0;         // the model's
    std::int64_t low = 0, high = 0;  // the two runs' layers; 0: the model is simulated whole
    bool active() const { return low > 0; }
    /// Layer-differences from the low run to the model.
    double reach() const { return static_cast<double>(layers - low) / static_cast<double>(high - low); }
    /// The model's figure from the low run's and the high run's.
    double model(double at_low, double at_high) const { return at_low + reach() * (at_high - at_low); }
    /// The workload.layers value of a run (`high_run`: the larger), "" when the model is simulated whole.
    std::string value(bool high_run) const { return active() ? std::to_string(high_run ? high : low) : ""; }
};

/// The sample of `per_chunk` and `per_chunk` + 1 layers in each of `chunks` pipeline chunks (pp x interleave) of a
/// model of `layers`; inactive (the model simulated whole) when per_chunk is 0 or the model has no more layers a
/// chunk than the larger run.
layer_sample sample_layers(std::int64_t layers, std::int64_t chunks, std::int64_t per_chunk);

}  // namespace tessel
