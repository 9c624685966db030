// The TPU v4 pod (platforms/systems/tpu_v4_pod.yaml) end to end: the 3D torus netlist builds for any slice, the
// data-parallel gradient all-reduce runs as rings along each torus dimension in both directions (XLA's torus
// all-reduce) and costs the hand-computed time, the symmetric fast path equals simulating every chip, and a GPT
// with tensor, pipeline and data parallelism runs on it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

namespace {

using tessel::test::run_tessel;

nlohmann::json run_json(const std::string& args) {
    return tessel::test::run_summary("-p platforms/systems/tpu_v4_pod.yaml " + args);
}

const std::string k_bert_dp16 =
    "--set chips=16 -w bert-large --set workload.training=adam --set workload.batch=64 --set parallel.dp=16 "
    "--set parallel.microbatch=4";

}  // namespace

TEST(tpu_pod, data_parallel_all_reduce_is_the_hand_computed_torus_time) {
    // BERT-large's gradients: 335,141,888 parameters (`tessel graph info bert-large`: 335.1 M) in fp16,
    // 670,283,776 B, all-reduced over a 4 x 4 torus: reduce-scatter along x (4 ranks), then along y on the quarter
    // each rank owns, all-gather back. Each ring step moves a quarter of what that dimension reduces, half each
    // way round at 45 GB/s per direction, so the bandwidth term is 2 x [(3/4) B + (3/4)(B/4)] / (2 x 45 GB/s);
    // each of the 2 x (3 + 3) steps adds 1 us of link latency.
    const auto j = run_json(k_bert_dp16);
    ASSERT_TRUE(j.contains("parallel"));
    const double grad_bytes = 670283776.0;
    EXPECT_EQ(j["parallel"]["memory"]["stages"][0]["gradients_bytes"].get<double>(), grad_bytes);
    const double expect = 2 * (0.75 * grad_bytes + 0.75 * grad_bytes / 4) / (2 * 45e9) + 12 * 1e-6;
    const double exposed = j["parallel"]["per_chip"][0]["exposed_communication_fraction"].get<double>() *
                           j["parallel"]["iteration_s"].get<double>();
    EXPECT_NEAR(exposed, expect, 0.03 * expect) << "exposed " << exposed << " s vs " << expect << " s";
    // Never faster than the links allow.
    EXPECT_GE(exposed, 2 * (0.75 * grad_bytes + 0.75 * grad_bytes / 4) / (2 * 45e9));
}

TEST(tpu_pod, the_symmetric_fast_path_equals_every_chip_simulated) {
    for (const std::string& plan :
         {std::string("--set parallel.dp=16"), std::string("--set parallel.dp=4 --set parallel.tp=4")}) {
        const std::string args =
            "--set chips=16 -w gpt2 --set workload.layers=4 --set workload.training=adam --set workload.batch=64 "
            "--set parallel.microbatch=4 " +
            plan;
        const auto fast = run_json(args);
        const auto full = run_json(args + " --set mapper.symmetric=false");
        ASSERT_TRUE(fast.contains("parallel") && full.contains("parallel")) << plan;
        EXPECT_EQ(full["parallel"]["simulated_chips"].get<int>(), 16);
        EXPECT_NEAR(fast["sim_time_s"].get<double>(), full["sim_time_s"].get<double>(),
                    1e-6 * full["sim_time_s"].get<double>())
            << plan;
    }
}

TEST(tpu_pod, slices_build_up_to_a_full_pod_and_run_model_parallel_gpt) {
    // 4096 chips as 16 x 16 x 16: builds and runs a data-parallel step.
    const auto pod = run_json(
        "--set chips=4096 --set torus_x=16 --set torus_y=16 -w bert-large --set workload.training=adam "
        "--set workload.batch=16384 --set parallel.dp=4096 --set parallel.microbatch=4");
    ASSERT_TRUE(pod.contains("parallel"));
    EXPECT_EQ(pod["parallel"]["chips"].get<int>(), 4096);
    // tensor parallel inside x rings, pipeline stages along z, data parallel across y and x.
    const auto gpt = run_json(
        "-w gpt2 --set workload.training=adam --set workload.precision=bf16 --set workload.batch=64 "
        "--set parallel.dp=4 --set parallel.tp=4 --set parallel.pp=4 --set parallel.microbatch=4");
    ASSERT_TRUE(gpt.contains("parallel"));
    EXPECT_GT(gpt["parallel"]["model_flops_utilisation"].get<double>(), 0);
    // A torus that does not match the chips is an error naming both.
    const auto bad = run_tessel(
        "run -p platforms/systems/tpu_v4_pod.yaml --set chips=64 --set mapper.torus=4x4x2 -w bert-large "
        "--set workload.training=adam --set workload.batch=64 --set parallel.dp=64");
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_NE(bad.out.find("mapper.torus 4x4x2 has 32 places but chip group 'tpu' has 64 chips"), std::string::npos)
        << bad.out;
}
