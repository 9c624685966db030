#include "engine/system/layer_sample.h"

namespace tessel {

layer_sample sample_layers(std::int64_t layers, std::int64_t chunks, std::int64_t per_chunk) {
    layer_sample ls;
    ls.layers = layers;
    // Fewer than the model has, and a layer more to measure: else the model itself is the sample.
    if (per_chunk > 0 && chunks * (per_chunk + 1) < layers) {
        ls.low = chunks * per_chunk;
        ls.high = ls.low + chunks;
    }
    return ls;
}

}  // namespace tessel
