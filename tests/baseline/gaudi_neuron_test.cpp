// Intel Gaudi (the `gaudi` kind) and AWS Trainium / Inferentia2 (the `neuron` kind), issue 48: their timing
// worked out by hand from the platform files, and the physical bounds (never faster than the work at the peak
// rate, nor the bytes at the memory's bandwidth; power below the TDP).
#include <gtest/gtest.h>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

using namespace tessel::test;

namespace {

/// One elementwise op on a rows x cols bf16 tensor, as a workload file.
std::string unary_workload(const std::string& op, int rows, int cols) {
    return write_temp("unary_" + op + ".yaml",
                      "workload: unary\nparameters: {precision: bf16}\ntensors:\n  x: {shape: [" +
                          std::to_string(rows) + ", " + std::to_string(cols) +
                          "], role: input}\nops:\n  - {name: y, op: " + op + ", inputs: [x]}\n");
}

}  // namespace

TEST(gaudi2, a_gemm_runs_as_output_tiles_over_its_two_mmes) {
    // 1024^3 bf16 on 2 MMEs of 256 x 256 at 1.65 GHz (platforms/gaudi/gaudi2.yaml): 4 x 4 = 16 output tiles, 8 per
    // MME, each max(K = 1024, 256 rows to drain) cycles, one fill and drain of 256 + 256 - 2: 8 x 1024 + 510 = 8702
    // cycles = 5.27394 us at full rate, 5.44266 us at the measured MAMF fraction 0.969; plus 500 ns per operation. The
    // 4 MiB of operands from 6 HBM2e stacks (2.4576 TB/s) take 1.7 us, under the MMEs' time.
    const nlohmann::json s = run_summary("-p gaudi/gaudi2" + gemm_args(1024, 1024, 1024));
    EXPECT_NEAR(resource_busy(s, "gaudi.mme"), 8702 / 1.65e9 / 0.969, 1e-12);
    EXPECT_NEAR(s["sim_time_s"].get<double>(), 8702 / 1.65e9 / 0.969 + 500e-9, 1e-12);
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 1024 * 1024 * 1024 / 432e12);
}

TEST(gaudi3, eight_mmes_take_a_quarter_of_the_tiles_each) {
    // 4096^3 bf16 on 8 MMEs at 1.6 GHz: 16 x 16 = 256 tiles, 32 per MME: 32 x 4096 + 510 = 131582 cycles = 82.239 us
    // at full rate, 110.983 us at the measured MAMF fraction 0.741.
    const nlohmann::json s = run_summary("-p gaudi/gaudi3" + gemm_args(4096, 4096, 4096));
    EXPECT_NEAR(resource_busy(s, "gaudi.mme"), 131582 / 1.6e9 / 0.741, 1e-12);
    EXPECT_EQ(s["bound_by"], "compute");
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 4096 * 4096 * 4096 / 1677.7e12);
}

TEST(gaudi2, an_elementwise_op_runs_on_the_tpcs) {
    // exp of 4096 x 4096 bf16 (16777216 elements) on 24 TPCs at 1.65 GHz: one operation per element at 128 bf16
    // lanes (5.0688e12 per second) plus one transcendental at 16 per TPC per cycle (6.336e11 per second):
    // 3.30990 us + 26.47919 us = 29.78909 us; the 32 MiB read from HBM take 13.65 us: the TPCs bound it.
    const nlohmann::json s = run_summary("-p gaudi/gaudi2 -w " + unary_workload("exp", 4096, 4096));
    const double n = 4096.0 * 4096;
    const double tpc = n / (24 * 128 * 1.65e9) + n / (24 * 16 * 1.65e9);
    EXPECT_NEAR(tpc, 29.78909e-6, 1e-11);
    EXPECT_NEAR(resource_busy(s, "gaudi.tpc"), tpc, 1e-12);
    EXPECT_NEAR(s["sim_time_s"].get<double>(), tpc + 500e-9, 1e-12);
    EXPECT_EQ(resource_busy(s, "gaudi.mme"), 0);
}

TEST(trn1, a_matmul_folds_onto_the_tensor_engines_and_leaves_through_psum) {
    // 1024^3 bf16 on 2 NeuronCores (platforms/neuron/trn1.yaml): 8 x 8 = 64 stationary tiles of 128 x 128, 32 per
    // core; each streams the 1024 moving rows in 2 PSUM-bank chunks of 512 (each max(512, 128) cycles): 32 x 1024 +
    // 254 fill and drain = 33022 cycles at 2.8 GHz = 11.79357 us. Every one of the 1024 x 1024 results leaves PSUM
    // through a vector engine: 1048576 operations at 2 x 2054 per cycle at 1.12 GHz = 0.22791 us, beside it.
    const nlohmann::json s = run_summary("-p neuron/trn1" + gemm_args(1024, 1024, 1024));
    EXPECT_NEAR(resource_busy(s, "neuron.tensor"), 33022 / 2.8e9, 1e-12);
    EXPECT_NEAR(resource_work(s, "neuron.vector"), 1024.0 * 1024, 1e-6);
    EXPECT_NEAR(resource_busy(s, "neuron.vector"), 1024.0 * 1024 / (2 * 2054 * 1.12e9), 1e-12);
    EXPECT_NEAR(s["sim_time_s"].get<double>(), 33022 / 2.8e9 + 500e-9, 1e-12);
    EXPECT_GT(s["sim_time_s"].get<double>(), 2.0 * 1024 * 1024 * 1024 / 190e12);
}

TEST(trn1, a_short_moving_stream_still_waits_for_the_weight_load) {
    // 100 x 1024 x 1024: each of the 32 folds per core streams 100 rows, one chunk of max(100, 128) = 128 cycles:
    // 32 x 128 + 254 = 4350 cycles = 1.55357 us.
    const nlohmann::json s = run_summary("-p neuron/trn1" + gemm_args(100, 1024, 1024));
    EXPECT_NEAR(resource_busy(s, "neuron.tensor"), 4350 / 2.8e9, 1e-12);
}

TEST(trn2, fp8_streams_two_moving_rows_per_cycle) {
    // 1024^3 fp8 on 8 NeuronCore-v3 at 2.4 GHz: 64 folds, 8 per core, each 2 chunks of max(512 / 2, 128) = 256
    // cycles: 8 x 512 + 254 = 4350 cycles = 1.8125 us.
    const nlohmann::json s = run_summary(
        "-p neuron/trn2 -w gemm --set workload.precision=fp8 --set workload.m=1024 --set workload.n=1024 "
        "--set workload.k=1024");
    EXPECT_NEAR(resource_busy(s, "neuron.tensor"), 4350 / 2.4e9, 1e-12);
}

TEST(neuron, a_transcendental_runs_on_the_scalar_engines) {
    // exp of 2048 x 2048 bf16 on inf2: 4194304 transcendentals on 2 scalar engines of 2071 per cycle at 1.4 GHz =
    // 0.72329 us, the element operation on the vector engines (2 x 2054 at 1.12 GHz) 0.91159 us; the 8 MiB read
    // from 2 HBM2e stacks (819.2 GB/s) take 10.24 us: memory bound.
    const nlohmann::json s = run_summary("-p neuron/inf2 -w " + unary_workload("exp", 2048, 2048));
    const double n = 2048.0 * 2048;
    EXPECT_NEAR(resource_busy(s, "neuron.scalar"), n / (2 * 2071 * 1.4e9), 1e-12);
    EXPECT_NEAR(resource_busy(s, "neuron.vector"), n / (2 * 2054 * 1.12e9), 1e-12);
    EXPECT_EQ(s["bound_by"], "memory");
    EXPECT_GE(s["sim_time_s"].get<double>(), n * 2 / 819.2e9);
}

TEST(gaudi_neuron, the_bundled_models_run_within_their_physical_bounds_and_below_the_tdp) {
    // ResNet-50, BERT-large, GPT-2 and one Llama-2-7B decode step (issue 48's list) on every new chip.
    for (const char* chip : {"gaudi/gaudi2", "gaudi/gaudi3", "neuron/trn1", "neuron/trn2", "neuron/inf2"})
        for (const char* model : {"resnet50", "bert-large", "gpt2", "llama2-7b --set workload.mode=decode"})
            expect_within_bounds_and_tdp(chip, model);
}

TEST(gaudi_neuron, an_op_the_compiler_does_not_take_runs_on_the_host) {
    // exp of 2048 x 2048 bf16 on inf2 with exp on the host (platforms/neuron/inf2.yaml `host:`): 8 MiB over a
    // 32 GB/s link and 8 MiB back = 0.524288 ms; 2 x 4194304 FLOPs (the element operation and the exponential) at
    // 512 per cycle x 3 GHz = 5.461 us; 20 us of dispatch.
    const std::string w = unary_workload("exp", 2048, 2048);
    const nlohmann::json s = run_summary("-p neuron/inf2 -w " + w + " --set mapper.host_ops=exp");
    const double bytes = 2048.0 * 2048 * 2;
    const double expected = 20e-6 + 2 * bytes / 32e9 + 2 * 2048.0 * 2048 / (512 * 3e9);
    EXPECT_NEAR(s["sim_time_s"].get<double>(), expected, 1e-11);
    EXPECT_NEAR(resource_work(s, "neuron.host_link"), 2 * bytes, 1e-6);
    EXPECT_EQ(resource_busy(s, "neuron.scalar"), 0);
    // A device without a host says so.
    const cli_result r = run_tessel("run -p gpu/h100_sxm -w " + w + " --set mapper.host_ops=exp");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("mapper.host_ops"), std::string::npos) << r.out;
}

TEST(gaudi_neuron, port_names_the_fallback_and_measures_it) {
    const cli_result r = run_tessel("port -p inf2 bert-large --set mapper.host_ops=gelu");
    EXPECT_NE(r.out.find("gelu                      24  host CPU (fallback)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("with them on the device: "), std::string::npos) << r.out;
}
