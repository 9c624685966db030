// Training graphs: from a forward graph, the backward pass (gradients of activations and weights, in reverse
// order, summed where a tensor feeds several ops) and one optimizer step per parameter tensor. Matrix
// products and convolutions get their two gradient GEMMs each, so a matmul-dominated model costs about 3x
// its forward FLOPs. Other ops get a "<type>_grad" op reading the output gradient and the forward tensors
// it needs (costs in the op catalog).
#pragma once

#include <string>

#include "engine/workload/graph.h"

namespace tessel {

struct training_options {
    std::string optimizer = "adam";  // sgd (with momentum) or adam
    /// With a 16-bit or narrower compute precision, keep fp32 master weights and fp32 optimizer state
    /// (mixed precision); the optimizer then computes in fp32.
    bool master_weights = true;
};

/// The forward graph `forward` (finished, unfused) with its backward and optimizer ops added. Ops are
/// tagged with their phase; gradients are tensors named "<tensor>.grad", optimizer state "<weight>.m" etc.
workload_graph expand_training(const workload_graph& forward, const training_options& options);

}  // namespace tessel
