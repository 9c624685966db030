// Collective calibration, DGX H100 (platforms/systems/dgx_h100.yaml, 2 nodes): nccl-tests' all-reduce bus
// bandwidth at 8 GiB against published figures:
//  - inside a node, ring: ~370 GB/s (sjeaugey, NVIDIA/nccl-tests issue 212; NVIDIA/nccl issue 1442);
//  - across nodes, 8 NDR NICs per node: 8 x 46-48 GB/s per NIC (AddyLaddy, NVIDIA/nccl-tests issues 290 and 267),
//    which the intra-node NVLink ring (~370) caps: ~370 GB/s.
// NVLink SHARP (NVLS, ~480 GB/s inside a node) reduces in the switch; tessel does not model in-switch reduction,
// so the H100 all-reduce is the ring (docs/collectives.md).
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/nccl_bench.h"
#include "tests/support/nccl_rings.h"

using namespace tessel;

namespace {

constexpr std::uint64_t k_bytes = std::uint64_t{8} << 30;

test::nccl_bench& bench() {
    static test::nccl_bench b(TESSEL_SOURCE_DIR "/platforms/systems/dgx_h100.yaml", {{"nodes", "2"}});
    return b;
}

}  // namespace

TEST(nccl_dgx_h100, intra_node_ring_all_reduce_bus_bandwidth_is_within_10_percent_of_370_gbps) {
    const double busbw = bench().ring_all_reduce(0, 8, k_bytes);
    std::printf("DGX H100, 8 GPUs, ring all-reduce of 8 GiB: bus bandwidth %.1f GB/s (NCCL ring: ~370)\n", busbw / 1e9);
    EXPECT_NEAR(busbw, 370e9, 0.10 * 370e9);
}

TEST(nccl_dgx_h100, inter_node_all_reduce_bus_bandwidth_is_within_10_percent_of_370_gbps) {
    const auto calls = test::nccl_channel_rings(bench().gpus(0, 16), 8, 2, k_bytes);
    const double busbw = bench().bus_bandwidth(calls, collective_kind::all_reduce, k_bytes, 16);
    std::printf("DGX H100, 2 nodes x 8 GPUs, 8-channel ring all-reduce of 8 GiB: bus bandwidth %.1f GB/s (~370)\n",
                busbw / 1e9);
    EXPECT_NEAR(busbw, 370e9, 0.10 * 370e9);
}
