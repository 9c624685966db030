// The timing rules of the GPU and TPU baselines against hand-computed values, on small made-up devices whose
// numbers are easy to follow (1 GHz clock): GEMM wave quantisation, stream-K, the unaligned fallback kernel, K
// padding to the K tile, split-K; row-wise kernels' passes and element rates;
// TPU weight-stationary folds with padding to the 128 x 128 array and one
// fill/drain; the LRU write-back residency model both caches use. Components are called directly (no
// simulation).
#include <gtest/gtest.h>

#include "models/baseline/block_cache.h"
#include "models/baseline/gpu.h"
#include "models/baseline/tpu.h"
#include "tests/support/harness.h"

using namespace tessel;

namespace {

// 4 SMs of 1024 bf16 MACs per cycle; one 128x128 CTA per SM (64 KiB of shared memory holds exactly two
// 128x64 + 64x128 bf16 stages); shared memory and L2 so fast that only the tensor cores set the time.
const char* small_gpu =
    "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB, smem_bandwidth: 1048576B/cycle,"
    " max_ctas: 1}, l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
    " kernel: {tiles: 128x128, k_tile: 64, max_split_k: 1, cluster: 1, launch_overhead: 2us}, hbm: {channels: 8}}";

work gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
    work w;
    w.type = dtype::bf16;
    w.cls = op_class::gemm;
    w.batch = 1;
    w.m = m;
    w.n = n;
    w.k = k;
    w.macs = static_cast<double>(m * n * k);
    w.bytes_in = static_cast<double>(m * k * 2);
    w.bytes_weight = static_cast<double>(k * n * 2);
    w.bytes_out = static_cast<double>(m * n * 2);
    return w;
}

struct devices {
    sim_context sim;
    std::unique_ptr<gpu> g = test::make<gpu>(sim, "gpu", "g", small_gpu);
    std::unique_ptr<gpu> g_split =
        test::make<gpu>(sim, "gpu", "g_split",
                        "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB, "
                        "smem_bandwidth: 1048576B/cycle,"
                        " max_ctas: 1}, l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
                        " kernel: {tiles: 128x128, k_tile: 64, max_split_k: 4, cluster: 1}, hbm: {channels: 8}}");
    // Row-wise kernels: one CTA per SM, a 1 us dependent pass, the register softmax kernel at 0.5 elements per
    // cycle per SM and the warp kernel unbounded.
    std::unique_ptr<gpu> g_rows =
        test::make<gpu>(sim, "gpu", "g_rows",
                        "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB, max_ctas: 1},"
                        " l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
                        " kernel: {row_latency: 1us, row_rate_registers: 0.5}, hbm: {channels: 8}}");
    // One TensorCore with one 128x128 MXU, and a v4-like chip: 2 cores x 4 MXUs.
    std::unique_ptr<tpu> t1 =
        test::make<tpu>(sim, "tpu", "t1",
                        "{cores: 1, core: {mxus: 1, vector_ops_per_cycle: 1024, special_ops_per_cycle: 128},"
                        " cmem: {capacity: 0B, bandwidth: 1048576B/cycle}, hbm: {channels: 8}}");
    std::unique_ptr<tpu> t8 =
        test::make<tpu>(sim, "tpu", "t8",
                        "{cores: 2, core: {mxus: 4, vector_ops_per_cycle: 1024, special_ops_per_cycle: 128},"
                        " cmem: {capacity: 0B, bandwidth: 1048576B/cycle}, hbm: {channels: 8}}");
};

devices& dev() {
    static devices d;
    return d;
}

constexpr double us = 1e-6;

}  // namespace

TEST(gpu_timing, one_wave_of_ctas_runs_at_the_tensor_core_rate) {
    // 256x256 output = 2 x 2 CTAs of 128x128 on 4 SMs: one wave; each CTA does 128*128*640 MACs at 1024/ns.
    const auto pl = dev().g->model().plan(gemm(256, 256, 640), nullptr);
    EXPECT_NEAR(pl.compute_s, 128.0 * 128 * 640 / 1024e9, 1e-12);
    EXPECT_NEAR(pl.compute_s, 10.24 * us, 1e-12);
    EXPECT_NE(pl.text.find("4 CTAs in 1 wave"), std::string::npos) << pl.text;
}

TEST(gpu_timing, a_partial_wave_costs_a_whole_wave) {
    // 384 or 257 rows: 3 x 2 = 6 CTAs on 4 SMs, two waves: twice the one-wave time although the work is 1.5x
    // (or barely more than) the 256-row product's.
    for (std::int64_t m : {384, 257}) {
        const auto pl = dev().g->model().plan(gemm(m, 256, 640), nullptr);
        EXPECT_NEAR(pl.compute_s, 20.48 * us, 1e-12) << m;
        EXPECT_NE(pl.text.find("6 CTAs in 2 waves"), std::string::npos) << pl.text;
    }
}

TEST(gpu_timing, a_persistent_stream_k_kernel_shares_a_partial_wave_out) {
    // The same 6 CTAs on 4 SMs as above, with a stream-K kernel: 1.5 waves of work (15.36 us), plus the fix-up
    // of the tiles shared along K: each of the 4 SMs' FP32 partial tile (128 x 128 x 4 B) written and read
    // through its quarter of L2 (1 MiB per ns in all).
    sim_context sim;
    auto g = test::make<gpu>(
        sim, "gpu", "g_stream_k",
        "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB,"
        " smem_bandwidth: 1048576B/cycle, max_ctas: 1}, l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
        " kernel: {tiles: 128x128, k_tile: 64, max_split_k: 1, cluster: 1, stream_k: true}, hbm: {channels: 8}}");
    const auto pl = g->model().plan(gemm(384, 256, 640), nullptr);
    const double fixup = 2.0 * 128 * 128 * 4 / (1048576.0 * 1e9 / 4);
    EXPECT_NEAR(pl.compute_s, 15.36 * us + fixup, 1e-12);
    EXPECT_NE(pl.text.find("1.5 waves (stream-K)"), std::string::npos) << pl.text;
    // A whole number of waves has nothing to share: 4 CTAs in one wave as before.
    EXPECT_NEAR(g->model().plan(gemm(256, 256, 640), nullptr).compute_s, 10.24 * us, 1e-12);
}

TEST(gpu_timing, an_unaligned_leading_dimension_runs_the_fallback_kernel) {
    // N = 250 bf16 = 500 B: rows aligned to 4 bytes, not 16. The fallback kernel runs at half the tensor
    // rate (fallback_efficiency 0.5: 512 MACs/ns) and loads 2 B per cycle per byte of width: 8 B/ns per SM,
    // which feeds a 128x128 tile 8 * 128*128 / (256 * 2 B) = 256 MACs/ns: that limit sets the time.
    sim_context sim;
    auto g = test::make<gpu>(
        sim, "gpu", "g_fallback",
        "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB,"
        " smem_bandwidth: 1048576B/cycle, max_ctas: 1}, l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
        " kernel: {tiles: 128x128, k_tile: 64, max_split_k: 1, cluster: 1, fallback_efficiency: 0.5,"
        " narrow_load: 2}, hbm: {channels: 8}}");
    const auto pl = g->model().plan(gemm(256, 250, 640), nullptr);
    EXPECT_NEAR(pl.compute_s, 128.0 * 128 * 640 / 256e9, 1e-12);
    EXPECT_NE(pl.text.find("fallback kernel (4-byte aligned operands)"), std::string::npos) << pl.text;
    // Without the load limit the fallback's tensor rate sets it; an aligned N = 256 runs the normal kernel.
    auto g2 = test::make<gpu>(
        sim, "gpu", "g_fallback2",
        "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB,"
        " smem_bandwidth: 1048576B/cycle, max_ctas: 1}, l2: {capacity: 1MiB, bandwidth: 1048576B/cycle},"
        " kernel: {tiles: 128x128, k_tile: 64, max_split_k: 1, cluster: 1, fallback_efficiency: 0.5},"
        " hbm: {channels: 8}}");
    EXPECT_NEAR(g2->model().plan(gemm(256, 250, 640), nullptr).compute_s, 128.0 * 128 * 640 / 512e9, 1e-12);
    const auto aligned = g2->model().plan(gemm(256, 256, 640), nullptr);
    EXPECT_NEAR(aligned.compute_s, 10.24 * us, 1e-12);
    EXPECT_EQ(aligned.text.find("fallback"), std::string::npos) << aligned.text;
}

TEST(gpu_timing, k_is_padded_to_the_k_tile) {
    // K = 600 runs ten 64-deep stages like K = 640; K = 641 needs an eleventh (704).
    EXPECT_NEAR(dev().g->model().plan(gemm(256, 256, 600), nullptr).compute_s, 10.24 * us, 1e-12);
    EXPECT_NEAR(dev().g->model().plan(gemm(256, 256, 641), nullptr).compute_s, 128.0 * 128 * 704 / 1024e9, 1e-12);
}

TEST(gpu_timing, split_k_spreads_a_deep_product_over_idle_sms) {
    // One 128x128 output tile with K = 4096: split 4 ways, each of 4 CTAs does K = 1024 (16.384 us) instead of
    // one CTA doing all of K (65.536 us); the partial sums cost a second (reduction) kernel.
    const auto pl = dev().g_split->model().plan(gemm(128, 128, 4096), nullptr);
    EXPECT_NEAR(pl.compute_s, 128.0 * 128 * 1024 / 1024e9, 1e-12);
    EXPECT_EQ(pl.kernels, 2);
    EXPECT_NE(pl.text.find("split-K 4"), std::string::npos) << pl.text;
    // Reduction: 4 fp32 partial tiles read and the bf16 result written, at the L2 rate (1 MiB per ns).
    EXPECT_NEAR(pl.extra_s, (4.0 * 128 * 128 * 4 + 128.0 * 128 * 2) / (1048576.0 * 1e9), 1e-15);
    // Without split-K the same product takes the single CTA's full K.
    EXPECT_NEAR(dev().g->model().plan(gemm(128, 128, 4096), nullptr).compute_s, 65.536 * us, 1e-12);
}

namespace {
// 64 bf16 rows of 4096, two passes over each: the row-wise tests' kernel.
work row_work() {
    work w;
    w.type = dtype::bf16;
    w.bytes_in = w.bytes_out = 64.0 * 4096 * 2;
    return w;
}

kernel_desc row_kernel_of(row_kernel kind) {
    kernel_desc d;
    d.rows = 64;
    d.cols = 4096;
    d.passes = 2;
    d.row_kind = kind;
    return d;
}
}  // namespace

TEST(gpu_timing, a_softmax_kernel_is_bounded_by_its_element_rate_and_its_row_passes) {
    const work w = row_work();
    kernel_desc d = row_kernel_of(row_kernel::registers);
    // 1024 threads per row and one CTA per SM: 16 waves of 4 rows, 2 dependent passes of 1 us each.
    const auto pl = dev().g_rows->model().plan(w, &d);
    EXPECT_NEAR(pl.row_s, 16 * 2 * us, 1e-12);
    // 0.5 elements per cycle on each of 4 SMs at 1 GHz: 262,144 elements take 131.072 us.
    EXPECT_NEAR(pl.compute_s, 64.0 * 4096 / (0.5 * 4 * 1e9), 1e-12);
    EXPECT_NE(pl.text.find("row-wise (row in registers), 64 rows of 4096 in 16 waves x 2 passes"), std::string::npos)
        << pl.text;
    // The warp kernel (no rate given) runs 4 rows per CTA: 64 rows in 4 waves of one pass, no element bound.
    d.row_kind = row_kernel::warp;
    d.passes = 1;
    const auto warp = dev().g_rows->model().plan(w, &d);
    EXPECT_NEAR(warp.row_s, 4 * us, 1e-12);
    EXPECT_EQ(warp.compute_s, 0);
}

TEST(gpu_timing, a_norm_kernel_streams_its_rows_one_load_latency_at_a_time) {
    const work w = row_work();
    kernel_desc d = row_kernel_of(row_kernel::norm);
    // 128 threads of 4 elements: 8 loads a thread per pass, 1 us each. One row per SM (max_ctas 1) on 4 SMs:
    // 16 rounds of rows, 2 passes: 256 us, which the DRAM traffic overlaps rather than adds to.
    const auto pl = dev().g_rows->model().plan(w, &d);
    EXPECT_NEAR(pl.row_s, 2 * 8 * 16 * us, 1e-12);
    EXPECT_TRUE(pl.row_streams);
    EXPECT_EQ(pl.compute_s, 0);  // RMS norm has no element rate
    EXPECT_NE(pl.text.find("row-wise (sum of squares), 64 rows of 4096, 1 per SM, 2 passes x 8 loads a thread"),
              std::string::npos)
        << pl.text;
    // Two rows on four SMs: one round; a row shorter than 128 x 4 elements still waits one latency per pass.
    d.rows = 2;
    EXPECT_NEAR(dev().g_rows->model().plan(w, &d).row_s, 2 * 8 * us, 1e-12);
    d.cols = 256;
    EXPECT_NEAR(dev().g_rows->model().plan(w, &d).row_s, 2 * 1 * us, 1e-12);
    // Layer norm's Welford kernel walks its rows the same way.
    d.row_kind = row_kernel::welford;
    EXPECT_NEAR(dev().g_rows->model().plan(w, &d).row_s, 2 * 1 * us, 1e-12);
    // The softmax kernels still add their passes to the DRAM time.
    d.row_kind = row_kernel::registers;
    EXPECT_FALSE(dev().g_rows->model().plan(w, &d).row_streams);
}

TEST(gpu_timing, a_matrix_vector_product_is_a_streaming_kernel) {
    const auto pl = dev().g->model().plan(gemm(1, 4096, 4096), nullptr);
    EXPECT_EQ(pl.tensor_macs, 0);
    EXPECT_NE(pl.text.find("matrix-vector"), std::string::npos) << pl.text;
}

TEST(gpu_timing, bad_tiles_are_an_input_error) {
    sim_context sim;
    EXPECT_THROW(test::make<gpu>(sim, "gpu", "bad_tiles",
                                 "{sms: 4, sm: {tensor_macs_per_cycle: {bf16: 1024}, fp32_lanes: 128, smem: 64KiB},"
                                 " l2: {capacity: 1MiB, bandwidth: 1024B/cycle}, kernel: {tiles: 128by128}}"),
                 input_error);
}

TEST(tpu_timing, folds_are_padded_to_the_array_and_fill_and_drain_once) {
    const auto& tm = dev().t1->model();
    // K = 200 -> 2 folds of 128 rows, N = 300 -> 3 of 128 columns: 6 weight folds. M = 100 rows, padded to
    // 104 (8 sublanes), stream through each fold; a fold cannot be shorter than the 128 cycles the next fold's
    // weights take to shift in: 6 x 128, plus one fill and drain of 128 + 128 - 2 cycles.
    EXPECT_DOUBLE_EQ(tm.mxu_cycles(1, 100, 300, 200), 6 * 128 + 254);
    // 1000 rows through one fold: 1000 + 254.
    EXPECT_DOUBLE_EQ(tm.mxu_cycles(1, 1000, 128, 128), 1000 + 254);
    // Padding: K = 129 costs what K = 256 costs.
    EXPECT_DOUBLE_EQ(tm.mxu_cycles(1, 1000, 128, 129), tm.mxu_cycles(1, 1000, 128, 256));
    EXPECT_DOUBLE_EQ(tm.mxu_cycles(1, 1000, 128, 129), 2 * 1000 + 254);
    // A matrix-vector product still pays a full fold per weight tile.
    EXPECT_DOUBLE_EQ(tm.mxu_cycles(1, 1, 128, 128), 128 + 254);
}

TEST(tpu_timing, folds_spread_over_every_mxu_of_both_cores) {
    // 512 x 1024 x 1024: 8 x 8 = 64 folds over 8 MXUs, 8 each, 512 rows per fold: 8 x 512 + 254 cycles.
    EXPECT_DOUBLE_EQ(dev().t8->model().mxu_cycles(1, 512, 1024, 1024), 8 * 512 + 254);
    // 9 folds over 8 MXUs: one MXU does two.
    EXPECT_DOUBLE_EQ(dev().t8->model().mxu_cycles(1, 512, 384, 384), 2 * 512 + 254);
    // The operation's MXU time at 1 GHz, and its useful MACs.
    work w = gemm(512, 1024, 1024);
    const auto pl = dev().t8->model().plan(w, nullptr);
    EXPECT_NEAR(pl.mxu_s, (8 * 512 + 254) * 1e-9, 1e-15);
    EXPECT_DOUBLE_EQ(pl.mxu_macs, 512.0 * 1024 * 1024);
}

TEST(tpu_timing, fp32_products_are_an_input_error) {
    work w = gemm(128, 128, 128);
    w.type = dtype::fp32;
    EXPECT_THROW(dev().t1->model().plan(w, nullptr), input_error);
}

TEST(block_cache, keeps_what_fits_and_evicts_the_least_recently_used) {
    block_cache c(4 * 1024, 1024);  // 4 blocks of 1 KiB
    std::vector<block_cache::dram_access> dram;
    EXPECT_EQ(c.read(0, 2048, dram), 0);  // cold: two misses
    ASSERT_EQ(dram.size(), 2u);
    EXPECT_EQ(dram[0].address, 0u);
    EXPECT_EQ(dram[1].address, 1024u);
    EXPECT_FALSE(dram[0].write);
    dram.clear();
    EXPECT_EQ(c.read(0, 2048, dram), 2048);  // warm: all hits
    EXPECT_TRUE(dram.empty());
    // Writes allocate three dirty blocks (4, 5, 6); the fifth block in all pushes out block 0 (clean: no
    // write-back).
    c.write(4096, 3072, dram);
    EXPECT_TRUE(dram.empty());
    EXPECT_EQ(c.resident(0, 1024), 0);
    EXPECT_EQ(c.resident(1024, 1024), 1024);
    // Reading block 0 again evicts block 1 (clean); reading block 8 then evicts block 4, dirty: its 1 KiB is
    // written back after the miss is requested.
    c.read(0, 1024, dram);
    dram.clear();
    c.read(8192, 1024, dram);
    ASSERT_EQ(dram.size(), 2u);
    EXPECT_EQ(dram[0].address, 8192u);
    EXPECT_FALSE(dram[0].write);
    EXPECT_EQ(dram[1].address, 4096u);
    EXPECT_TRUE(dram[1].write);
    EXPECT_EQ(dram[1].bytes, 1024);
}

TEST(block_cache, a_stream_longer_than_the_cache_never_hits) {
    block_cache c(4 * 1024, 1024);
    std::vector<block_cache::dram_access> dram;
    c.read(0, 8192, dram);
    dram.clear();
    // LRU: each block was evicted before the stream came round to it again.
    EXPECT_EQ(c.read(0, 8192, dram), 0);
    EXPECT_EQ(dram.size(), 8u);
}

TEST(block_cache, a_partial_write_writes_back_only_its_bytes_and_no_cache_writes_through) {
    block_cache c(1024, 1024);
    std::vector<block_cache::dram_access> dram;
    c.write(0, 300, dram);
    c.read(1024, 1024, dram);  // evicts block 0
    ASSERT_EQ(dram.size(), 2u);
    EXPECT_TRUE(dram[1].write);
    EXPECT_EQ(dram[1].bytes, 300);
    block_cache none(0, 1024);
    dram.clear();
    EXPECT_EQ(none.read(0, 2048, dram), 0);
    none.write(0, 500, dram);
    ASSERT_EQ(dram.size(), 3u);
    EXPECT_TRUE(dram[2].write);
    EXPECT_EQ(dram[2].bytes, 500);
}
