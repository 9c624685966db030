// AMD Instinct (MI300X, MI250X) and the newer TPUs (v5e, v5p, v6e) as platforms of the `gpu` and `tpu` kinds
// (issue 48): their numbers worked out by hand from the platform files, and the physical bounds (never faster
// than the work at the peak rate, nor the bytes at the memory's bandwidth; power below the TDP).
#include <gtest/gtest.h>

#include "tests/support/doc_runs.h"
#include "tests/support/run_summary.h"

using namespace tessel::test;

TEST(mi300x, a_large_gemm_runs_at_its_matrix_core_rate_times_the_measured_fraction) {
    const nlohmann::json s = run_summary("-p gpu/mi300x" + gemm_args(8192, 8192, 8192));
    EXPECT_EQ(s["bound_by"], "compute");
    // platforms/gpu/mi300x.yaml: 304 CUs x 1024 bf16 MACs per cycle at 2.1 GHz = 6.537e14 MAC/s (1307.4 TFLOPS),
    // tensor_efficiency 0.514 (measured MAMF): 8192^3 MACs / (6.537e14 x 0.514) = 1.63612 ms of matrix-core work.
    const double expected = 8192.0 * 8192.0 * 8192.0 / (304.0 * 1024 * 2.1e9 * 0.514);
    EXPECT_NEAR(expected, 1.63612e-3, 1e-8);
    EXPECT_NEAR(resource_busy(s, "gpu.tensor"), expected, expected * 1e-9);
    // Never faster than the FLOPs at the peak, nor than the matrix cores' busy time plus one launch (2 us).
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 8192 * 8192 * 8192 / 1307.4e12);
    EXPECT_GE(s["sim_time_s"].get<double>(), expected + 2e-6);
    EXPECT_LT(s["sim_time_s"].get<double>(), expected * 1.05);
}

TEST(mi300x, a_matrix_vector_product_streams_at_the_hbm_rate) {
    // 1 x 8192 x 8192 bf16: 128 MiB of weights, read once from 8 HBM3 stacks of 1024 pins at 5.2 Gb/s
    // = 5.3248 TB/s: 134217728 B / 5.3248e12 B/s = 25.2 us; the hbm model's row and refresh losses add a little.
    const nlohmann::json s = run_summary("-p gpu/mi300x" + gemm_args(1, 8192, 8192));
    EXPECT_EQ(s["bound_by"], "memory");
    const double bytes = resource_work(s, "gpu.hbm");
    EXPECT_GT(bytes, 0.99 * 8192 * 8192 * 2);
    const double at_peak = bytes / 5.3248e12;
    EXPECT_GE(resource_busy(s, "gpu.hbm"), at_peak);
    EXPECT_LT(resource_busy(s, "gpu.hbm"), at_peak * 1.01);
    EXPECT_GE(s["sim_time_s"].get<double>(), at_peak + 2e-6);  // and one launch
    EXPECT_LT(s["sim_time_s"].get<double>(), at_peak * 1.3);
}

TEST(mi250x, one_gcd_runs_a_gemm_at_half_a_package_rate) {
    const nlohmann::json s = run_summary("-p gpu/mi250x" + gemm_args(4096, 4096, 4096));
    // platforms/gpu/mi250x.yaml: 110 CUs x 512 bf16 MACs per cycle at 1.7 GHz = 9.5744e13 MAC/s (191.5 TFLOPS, half
    // the package's 383), x 0.514: 4096^3 / 4.92124e13 = 1.39638 ms.
    const double expected = 4096.0 * 4096.0 * 4096.0 / (110.0 * 512 * 1.7e9 * 0.514);
    EXPECT_NEAR(expected, 1.39638e-3, 1e-8);
    EXPECT_NEAR(resource_busy(s, "gpu.tensor"), expected, expected * 1e-9);
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 4096 * 4096 * 4096 / 191.5e12);
}

TEST(tpu_v5e, a_matmul_folds_onto_its_four_mxus) {
    // 1024^3 bf16 on 4 MXUs of 128 x 128 (platforms/tpu/tpu_v5e.yaml) at 1.5 GHz: 8 x 8 = 64 weight folds, 16 per
    // MXU, each streaming the 1024 rows; one fill and drain of 128 + 128 - 2: 16 x 1024 + 254 = 16638 cycles =
    // 11.092 us; plus the 500 ns per operation.
    const nlohmann::json s = run_summary("-p tpu/tpu_v5e" + gemm_args(1024, 1024, 1024));
    EXPECT_NEAR(resource_busy(s, "tpu.mxu"), 16638 / 1.5e9, 1e-12);
    EXPECT_NEAR(s["sim_time_s"].get<double>(), 16638 / 1.5e9 + 500e-9, 1e-12);
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 1024 * 1024 * 1024 / 197e12);
}

TEST(tpu_v5p_v6e, folds_follow_the_array_size_and_the_mxu_count) {
    // v5p: 8 MXUs of 128 x 128 at 1.75 GHz: 64 folds / 8 = 8 x 1024 + 254 = 8446 cycles = 4.8263 us.
    const nlohmann::json p = run_summary("-p tpu/tpu_v5p" + gemm_args(1024, 1024, 1024));
    EXPECT_NEAR(resource_busy(p, "tpu.mxu"), 8446 / 1.75e9, 1e-12);
    // v6e: 4 MXUs of 256 x 256 at 1.75 GHz: 4 x 4 = 16 folds / 4 = 4 x 1024 + 510 = 4606 cycles = 2.632 us. The
    // 6 MiB of operands from HBM at 2 stacks x 1024 pins x 6.4 Gb/s = 1.6384 TB/s take 3.84 us: memory bound.
    const nlohmann::json e = run_summary("-p tpu/tpu_v6e" + gemm_args(1024, 1024, 1024));
    EXPECT_NEAR(resource_busy(e, "tpu.mxu"), 4606 / 1.75e9, 1e-12);
    EXPECT_GE(e["sim_time_s"].get<double>(), 6.0 * 1024 * 1024 / 1.6384e12 + 500e-9);
}

TEST(spectrum_chips, the_bundled_models_run_within_their_physical_bounds_and_below_the_tdp) {
    // ResNet-50, BERT-large, GPT-2 and one Llama-2-7B decode step (issue 48's list) on every new chip.
    for (const char* chip : {"gpu/mi300x", "gpu/mi250x", "tpu/tpu_v5e", "tpu/tpu_v5p", "tpu/tpu_v6e"})
        for (const char* model : {"resnet50", "bert-large", "gpt2", "llama2-7b --set workload.mode=decode"})
            expect_within_bounds_and_tdp(chip, model);
}

// The pages of these chips quote real runs; they are re-run here, beside the numbers they explain (so the docs
// test leaves them out: tests/support/doc_runs.h, checked_by_its_own_test).
TEST(spectrum_docs, the_amd_page_prints_what_it_quotes) {
    EXPECT_GE(check_quoted_runs("docs/platforms/amd_instinct.md", false), 9u);
}

TEST(spectrum_docs, the_tpu_page_prints_what_it_quotes) {
    EXPECT_GE(check_quoted_runs("docs/platforms/tpu.md", false), 6u);
}
