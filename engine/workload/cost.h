// Cost rules: what each op costs in FLOPs (a MAC is 2), bytes read (activations and weights apart), bytes
// written and parameters, from its tensors' shapes and its attributes. Matrix products and convolutions also
// give their GEMM view (batch x M x N x K; conv2d as its implicit GEMM), which systolic and GPU timing use.
// The per-element counts are in the op catalog (op_types.cpp) and documented in docs/workload-yaml.md.
#pragma once

#include "engine/workload/graph.h"

namespace tessel {

/// The cost of one op of `g`.
op_cost compute_cost(const workload_graph& g, const op_node& op);
/// Fills every op's cost.
void compute_costs(workload_graph& g);

}  // namespace tessel
