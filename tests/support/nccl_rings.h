// NCCL's ring all-reduce across nodes: C channels, each a ring through every GPU, arranged so that channel c
// leaves each node through a different GPU (and so a different NIC on a rail-optimised fabric); the buffer is
// split evenly over the channels, which run at once. With one NIC per GPU and C = GPUs per node, every NIC sends
// and receives one channel's traffic, which is how NCCL's multi-node ring bus bandwidth reaches the sum of a node's
// NICs (NVIDIA/nccl issue 812: 8 x 24 GB/s = 192 GB/s on DGX A100).
#pragma once

#include <vector>

#include "engine/system/collectives.h"

namespace tessel::test {

/// `gpus` in node order (node k holds gpus[k * per_node .. (k + 1) * per_node)); one ring all-reduce per channel.
inline std::vector<collective_call> nccl_channel_rings(const std::vector<endpoint>& gpus, int per_node, int nodes,
                                                       std::uint64_t bytes) {
    std::vector<collective_call> calls;
    for (int c = 0; c < per_node; ++c) {
        collective_call call;
        call.kind = collective_kind::all_reduce;
        call.algorithm = collective_algorithm::ring;
        call.bytes = bytes / static_cast<std::uint64_t>(per_node);
        // In every node the channel enters at local GPU c and leaves from local GPU c - 1 (mod per_node), so the
        // hop to the next node goes from NIC c - 1 to NIC c.
        for (int k = 0; k < nodes; ++k)
            for (int i = 0; i < per_node; ++i)
                call.ranks.push_back(gpus[static_cast<size_t>(k * per_node + (c + i) % per_node)]);
        calls.push_back(call);
    }
    return calls;
}

}  // namespace tessel::test
