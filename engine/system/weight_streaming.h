// Weight-streaming data parallelism: how a Cerebras cluster trains (the system mapper's `weights: streamed`).
// No chip holds the model. The weights and optimizer state live in a store (MemoryX); every chip runs whole
// layers on its share of the batch, streaming each layer's weights in through its own I/O (a fabric between the
// store and the chips broadcasts one stream to all of them, so each chip sees it at its own line rate) and its
// weight gradients back out. The fabric (SwarmX) sums the chips' gradients on the way, at line rate, and the
// store applies the optimizer to each weight as its summed gradient arrives.
//
// What is simulated, per microbatch and replica: the chip's own mapper (wafer_streaming) runs the forward and
// backward pass as one graph, so activations stay resident between them, weights stream in and gradients out
// through the chip's I/O memory (the chip memory with the largest capacity, or mapper.memory). Each op's
// gradient, once its last byte has left the chip, is written from the chip's port on the fabric into its
// reduction engine (the `in_network` group) and the engine's result goes on to the store; after the last
// microbatch the store reads and writes that weight's optimizer state (its update), queued behind the others.
// With `symmetric` (the default) one replica stands for all of them; otherwise every replica runs and the
// result leaves the first engine once every replica's contribution is in.
//
// Left out: gradient accumulation over microbatches in the store (each microbatch's gradients are forwarded,
// only the last one's trigger the update), the weight broadcast's own traffic in the fabric and the store (each
// chip's I/O carries it; the store is assumed to feed one stream at that rate), the store's compute (its update
// is timed by its bandwidth: the optimizer is memory bound).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/mappers/mapper.h"
#include "engine/system/parallel_plan.h"

namespace tessel {

/// The system's parts that weight streaming uses, found by the system mapper.
struct weight_streaming_setup {
    const platform::chip_group* chips = nullptr;
    std::uint32_t chip_memory = 0;       // the chip's I/O memory, as a component index inside a chip
    std::uint32_t fabric = 0;            // the network whose port c is chip c's I/O (SwarmX)
    std::vector<std::uint32_t> engines;  // one reduction engine per chip (switch_reducer)
    std::uint32_t store = 0;             // where the weights and optimizer state live (MemoryX)
    bool symmetric = true;
    std::int64_t window = 0;  // microbatches to simulate (the system mapper's `window`), 0: every one
};

/// One pass the trace's pipeline track shows: steps [first, last] of the program on chip `chip`.
struct streamed_item {
    int chip;
    std::uint32_t first, last, op;
};

/// Maps one training iteration of `g` by `plan` (dp only: tp = pp = 1) on `plat`, each chip's passes by
/// `chip_mapper`. Fills `items` with one item per microbatch and simulated chip.
mapping map_weight_streaming(const workload_graph& g, const platform& plat, const parallel_plan& plan,
                             mapper& chip_mapper, const weight_streaming_setup& setup,
                             std::vector<streamed_item>& items);

}  // namespace tessel
