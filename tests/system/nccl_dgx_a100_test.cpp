// Collective calibration, DGX A100 (platforms/systems/dgx_a100.yaml, 2 nodes): nccl-tests' all-reduce bus
// bandwidth at 8 GiB, simulated on the netlist, against the figures NVIDIA's NCCL maintainers publish:
//  - inside a node, 8 GPUs on NVSwitch: ~230 GB/s (sjeaugey, NVIDIA/nccl-tests issue 149, "replace 1G by 8G");
//  - across nodes, 8 HDR NICs per node: 192 GB/s (AddyLaddy, NVIDIA/nccl issue 812).
// Each must land within 10%. Nothing here is fitted: the netlist's rates are NCCL's per-link figures (240 GB/s
// per GPU on NVLink, 24 GB/s per HDR NIC) and the published bus bandwidths are separate measurements.
#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/nccl_bench.h"
#include "tests/support/nccl_rings.h"

using namespace tessel;

namespace {

constexpr std::uint64_t k_bytes = std::uint64_t{8} << 30;  // nccl-tests -e 8G

test::nccl_bench& bench() {
    static test::nccl_bench b(TESSEL_SOURCE_DIR "/platforms/systems/dgx_a100.yaml", {{"nodes", "2"}});
    return b;
}

}  // namespace

TEST(nccl_dgx_a100, intra_node_all_reduce_bus_bandwidth_is_within_10_percent_of_230_gbps) {
    const double busbw = bench().ring_all_reduce(0, 8, k_bytes);
    std::printf("DGX A100, 8 GPUs, ring all-reduce of 8 GiB: bus bandwidth %.1f GB/s (NCCL: ~230)\n", busbw / 1e9);
    EXPECT_NEAR(busbw, 230e9, 0.10 * 230e9);
    // Never above the NVLink rate the netlist gives a GPU.
    EXPECT_LE(busbw, 240e9);
}

TEST(nccl_dgx_a100, inter_node_all_reduce_bus_bandwidth_is_within_10_percent_of_192_gbps) {
    // NCCL's rings over 2 nodes: 8 channels, each a ring of all 16 GPUs that crosses between the nodes on a
    // different NIC (tests/support/nccl_rings.h), each channel carrying an eighth of the buffer.
    const auto calls = test::nccl_channel_rings(bench().gpus(0, 16), 8, 2, k_bytes);
    const double busbw = bench().bus_bandwidth(calls, collective_kind::all_reduce, k_bytes, 16);
    std::printf("DGX A100, 2 nodes x 8 GPUs, 8-channel ring all-reduce of 8 GiB: bus bandwidth %.1f GB/s (NCCL: 192)\n",
                busbw / 1e9);
    EXPECT_NEAR(busbw, 192e9, 0.10 * 192e9);
    EXPECT_LE(busbw, 8 * 24e9);  // the 8 NICs of a node
}
