// Neural-network layers as small op groups, for the generators: a linear layer is a weight, a matmul and an
// optional bias; a convolution block is conv2d + batchnorm. Names follow PyTorch's module paths
// ("layer1.0.conv1.weight") so a generated graph reads like the model it stands for.
#pragma once

#include <string>

#include "engine/workload/builder.h"

namespace tessel {

/// x[..., in] -> [..., out] with weight `name.weight` [in, out] and, if `bias`, `name.bias` [out].
int linear(graph_builder& b, const std::string& name, int x, std::int64_t out, bool bias);

/// conv2d (no bias) `name` followed by batchnorm `bn_name` with its scale and shift (weights) and running
/// statistics (state).
int conv_bn(graph_builder& b, const std::string& name, const std::string& bn_name, int x, std::int64_t out_channels,
            std::int64_t kernel, std::int64_t stride, std::int64_t padding, std::int64_t groups = 1);

/// Layer normalisation over the last axis with scale and shift weights.
int layer_norm(graph_builder& b, const std::string& name, int x);
/// RMS normalisation over the last axis with a scale weight.
int rms_norm(graph_builder& b, const std::string& name, int x);

}  // namespace tessel
