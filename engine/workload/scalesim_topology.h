// SCALE-Sim topology files as workloads: the layer lists SCALE-Sim v2 runs (scalesim-project/scale-sim-v2,
// topology_utils.py), so a course's SCALE-Sim exercises run on tessel unchanged. Two formats, told apart by the
// header: convolutions ("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
// Num Filter, Strides,") and matrix products ("Layer, M, N, K,"). Every layer reads its own input, as SCALE-Sim
// runs them one by one.
#pragma once

#include <string>

namespace tessel {

/// The topology at `path` as the text of a YAML workload: one conv2d or matmul op per layer with the GEMM shape
/// SCALE-Sim gives it (its output size is ceil((ifmap - filter + stride) / stride), so a stride that does not
/// divide evenly pads the bottom and right edges by what that needs). A layer whose name contains "DP" is
/// depthwise (one group per channel), as in SCALE-Sim. Throws input_error with file:line:column for a bad row.
std::string scalesim_topology_yaml(const std::string& path);

}  // namespace tessel
