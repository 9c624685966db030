// Training graphs: from a forward graph, the backward pass (gradients of activations and weights, in reverse
// order, summed where a tensor feeds several ops) and one optimizer step per parameter tensor. Matrix
// products and convolutions get their two gradient GEMMs each, so a matmul-dominated model costs about 3x
// its forward FLOPs. Other ops get a "<type>_grad" op reading the output gradient and the forward tensors
// it needs (costs in the op catalog).
#pragma once

#include <string>
#include <vector>

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

/// Whether `g` is a training step: expand_training names its optimizer in the graph's `training` parameter.
bool is_training_step(const workload_graph& g);

/// A forward tensor a backward op needs, as PyTorch's autograd saves it for that op.
struct saved_tensor {
    int tensor = -1;
    bool mask_only = false;  // only a 1-byte-per-element mask of its size (dropout's, named by its output)
};

/// What backward op `op` of the training graph `g` needs kept from the forward pass: the forward tensors among its
/// inputs that autograd saves (Korthikanti et al. 2022, Section 4.1, count activations the same way). A
/// "<type>_grad" op lists its forward op's inputs (they give the gradients' shapes and its bytes), but autograd
/// keeps only what the gradient formula reads: nothing for add and sub, the output for softmax, relu, sigmoid,
/// tanh, exp and sqrt (returned even though the op does not list it), the condition for where, a mask for dropout,
/// for mul and div each operand another one's gradient needs, and every input otherwise (gelu, silu, the norms,
/// unknown ops). Every other backward op (the matrix products' gradient GEMMs, convolutions, embeddings, the loss,
/// collectives) needs exactly what it reads.
std::vector<saved_tensor> saved_for_backward(const workload_graph& g, const op_node& op);

}  // namespace tessel
