// Collective calibration, DGX H100 (platforms/systems/dgx_h100.yaml, 2 nodes): nccl-tests' all-reduce bus
// bandwidth at 8 GiB against published figures:
//  - inside a node, ring: ~370 GB/s (sjeaugey, NVIDIA/nccl-tests issue 212; NVIDIA/nccl issue 1442);
//  - across nodes, 8 NDR NICs per node: 8 x 46-48 GB/s per NIC (AddyLaddy, NVIDIA/nccl-tests issues 290 and 267),
//    which the intra-node NVLink ring (~370) caps: ~370 GB/s.
//  - inside a node, NVLink SHARP (NVLS: the NVSwitches reduce and multicast): ~480 GB/s (sjeaugey, NVIDIA/nccl-tests
//    issue 212; "NVLink4 SHARP (H100) allreduce intra-node bus bandwidth is 480GB/s", NVIDIA/nccl issue 1374
//    quoting GTC S62129). The engines' rate is derived from it (dgx_h100.yaml), so this checks the lowering and
//    the slicing, not an independent prediction.
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

TEST(nccl_dgx_h100, intra_node_nvls_all_reduce_bus_bandwidth_is_within_10_percent_of_480_gbps) {
    const double busbw = bench().in_network_all_reduce(0, 8, k_bytes, "nvls", 16);
    std::printf("DGX H100, 8 GPUs, NVLS all-reduce of 8 GiB in 16 slices: bus bandwidth %.1f GB/s (NCCL NVLS: ~480)\n",
                busbw / 1e9);
    EXPECT_NEAR(busbw, 480e9, 0.10 * 480e9);
    // Physics: each GPU's buffer crosses its NVLink port once each way, so busbw can never beat 2(n-1)/n times
    // the port rate (1.75 x 370 GB/s), nor the engines' 274 GB/s of reduction per GPU (x 1.75 = 479.5 GB/s).
    EXPECT_LE(busbw, 1.75 * 274e9);
}

TEST(nccl_dgx_h100, inter_node_all_reduce_bus_bandwidth_is_within_10_percent_of_370_gbps) {
    const auto calls = test::nccl_channel_rings(bench().gpus(0, 16), 8, 2, k_bytes);
    const double busbw = bench().bus_bandwidth(calls, collective_kind::all_reduce, k_bytes, 16);
    std::printf("DGX H100, 2 nodes x 8 GPUs, 8-channel ring all-reduce of 8 GiB: bus bandwidth %.1f GB/s (~370)\n",
                busbw / 1e9);
    EXPECT_NEAR(busbw, 370e9, 0.10 * 370e9);
}
