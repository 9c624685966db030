// Graph passes over a finished workload graph. Topological order and cycle detection live in the graph
// itself (workload_graph::topological_order); these are the analyses and rewrites built on it.
#pragma once

#include <functional>
#include <vector>

#include "engine/workload/graph.h"

namespace tessel {

struct critical_path_result {
    std::vector<int> ops;  // from a source op to a sink op
    double weight = 0;     // sum of the ops' weights
};

/// The chain of dependent ops with the largest total weight (ties broken by the lower op index).
critical_path_result critical_path(const workload_graph& g, const std::function<double(const op_node&)>& weight);
/// critical_path weighted by FLOPs.
critical_path_result critical_path(const workload_graph& g);

/// Removes ops none of whose results reach a graph output, and the tensors only they used (weights too).
/// Returns the number of ops removed; costs are unchanged for the ops that stay.
int remove_dead_ops(workload_graph& g);

/// Fuses each elementwise op into the op producing its input when that input has no other reader, keeps
/// its shape and type, and comes from a compute op (matmul, conv2d, elementwise, norms, pooling, attention)
/// of the same phase: the intermediate tensor is no longer written and read back. Chains fuse in turn
/// (matmul + bias add + gelu). Returns the number of ops fused; costs are recomputed.
int fuse_elementwise(workload_graph& g);

}  // namespace tessel
