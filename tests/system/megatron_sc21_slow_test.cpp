// Megatron-LM's SC21 weak-scaling table (docs/validation.md, "Systems"): the rows up to 145.6B parameters run on
// DGX A100 and their throughput, counted with the paper's formula, must stay within 10% of the published figure.
// Attention's softmax runs Megatron-LM's fused kernel, as the paper did (mapper.softmax=megatron).
// The larger rows (310B-1T, minutes each) are run by validation/systems/megatron_sc21.sh.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/support/cli.h"

namespace {

struct row {
    double params_b;
    int heads, hidden, layers, t, p, gpus, batch;
    double published_tflops;
};

}  // namespace

TEST(megatron_sc21, rows_up_to_145b_are_within_ten_percent_of_the_published_throughput) {
    const row rows[] = {
        {1.7, 24, 2304, 24, 1, 1, 32, 512, 137},       {3.6, 32, 3072, 30, 2, 1, 64, 512, 138},
        {7.5, 32, 4096, 36, 4, 1, 128, 512, 142},      {18.4, 48, 6144, 40, 8, 1, 256, 1024, 135},
        {39.1, 64, 8192, 48, 8, 2, 512, 1536, 138},    {76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140},
        {145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148},
    };
    const auto out = std::filesystem::temp_directory_path() / "tessel_megatron_sc21_test";
    for (const row& r : rows) {
        std::filesystem::remove_all(out);
        const int d = r.gpus / (r.t * r.p);
        const auto res = tessel::test::run_tessel(
            "run -p platforms/systems/dgx_a100.yaml --set nodes=" + std::to_string(r.gpus / 8) +
            " -w gpt2 --set workload.training=adam --set workload.precision=fp16 --set workload.seq=2048"
            " --set workload.context=2048 --set workload.vocab=51200 --set workload.hidden=" +
            std::to_string(r.hidden) + " --set workload.heads=" + std::to_string(r.heads) +
            " --set workload.layers=" + std::to_string(r.layers) + " --set workload.batch=" + std::to_string(r.batch) +
            " --set parallel.tp=" + std::to_string(r.t) + " --set parallel.pp=" + std::to_string(r.p) +
            " --set parallel.dp=" + std::to_string(d) +
            " --set parallel.microbatch=1 --set parallel.recompute=full --set gpu.mapper.softmax=megatron --out " +
            out.string());
        ASSERT_EQ(res.code, 0) << r.params_b << "B\n" << res.out;
        std::ifstream in(out / "summary.json");
        const auto j = nlohmann::json::parse(in);
        const double T = j["sim_time_s"].get<double>();
        // The paper's count: 96 B s l h^2 (1 + s / 6h + V / 16 l h) FLOPs per iteration, recompute included.
        const double B = r.batch, s = 2048, l = r.layers, h = r.hidden, V = 51200;
        const double F = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
        const double tflops = F / T / r.gpus / 1e12;
        std::printf("%6.1fB: %.3f s per iteration, %.1f TFLOP/s per GPU (published %.0f)\n", r.params_b, T, tflops,
                    r.published_tflops);
        EXPECT_NEAR(tflops, r.published_tflops, 0.10 * r.published_tflops) << r.params_b << "B";
        // Physics per chip: never above the tensor-core peak (312 TFLOP/s fp16 on an A100).
        EXPECT_LT(j["parallel"]["hardware_tflops_per_chip"].get<double>(), 312.0) << r.params_b << "B";
    }
    std::filesystem::remove_all(out);
}
