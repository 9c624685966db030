// A sample of k and k + 1 layers per pipeline chunk, the model's other layers counted by the difference (what
// `tessel plan --estimate-layers` estimates from), against the whole model on a GPU system (1F1B, interleaved,
// tensor parallel), a TPU pod and a GroqRack. The IPU, RDU and wafer cases are layer_sample_slow_test.cpp (their
// chip mappers take seconds per run). Measured errors (2026-12-07): GPU -0.010% (tp x pp), -0.33% (interleaved),
// +1.09% (data parallel alone: a layer of the 12 costs 4.48 ms, of the first two 4.56), TPU +0.001%, GroqRack
// -0.086%. The GPT here has 2048-wide layers: a sample of narrower ones fits a GPU's L2 and runs each layer faster
// than the model does (GPT-2 small: 1.58 ms a layer from one and two layers, 1.65 ms from six to twelve).
#include "tests/system/layer_sample_check.h"

using tessel::test::check_layer_sample;

namespace {

const std::string k_dgx =
    "-p platforms/systems/dgx_h100.yaml -w gpt2 --set workload.training=adam --set workload.batch=32 "
    "--set workload.hidden=2048 --set workload.heads=16 ";
const std::string k_small =
    "-w gpt2 --set workload.hidden=256 --set workload.heads=4 --set workload.seq=128 --set workload.vocab=1024 "
    "--set workload.training=adam ";

}  // namespace

TEST(layer_sample, gpu_plans_count_their_layers_within_one_and_a_half_percent) {
    // 12 layers from 2 and 4 (pp 2), from 4 and 8 (pp 2 x interleave 2).
    check_layer_sample(
        k_dgx + "--set parallel.dp=2 --set parallel.pp=2 --set parallel.tp=2 --set parallel.microbatch=2", 12, 2, 1,
        0.015);
    check_layer_sample(k_dgx +
                           "--set parallel.dp=4 --set parallel.pp=2 --set parallel.interleave=2 "
                           "--set parallel.schedule=interleaved_1f1b --set parallel.microbatch=1",
                       12, 4, 1, 0.015);
    // One stage, data parallel: the gradient all-reduce grows with the layers too.
    check_layer_sample(k_dgx + "--set parallel.dp=8 --set parallel.microbatch=1", 12, 1, 1, 0.015);
}

TEST(layer_sample, a_tpu_pod_and_a_groqrack_count_their_layers_within_half_a_percent) {
    check_layer_sample("-p platforms/systems/tpu_v4_pod.yaml --set chips=16 " + k_small +
                           "--set workload.batch=64 --set parallel.dp=4 --set parallel.tp=2 --set parallel.pp=2 "
                           "--set parallel.microbatch=2",
                       8, 2, 1, 0.005);
    check_layer_sample("-p platforms/systems/groqrack.yaml --set nodes=2 " + k_small +
                           "--set workload.context=128 --set workload.precision=fp16 --set workload.batch=32 "
                           "--set parallel.dp=8 --set parallel.pp=2 --set parallel.microbatch=1",
                       8, 2, 1, 0.005);
}

namespace {

/// `tessel run ARGS --estimate-layers 1` as a user runs it: its summary.json (the estimate).
nlohmann::json estimate_of(const std::string& args) { return tessel::test::run_summary(args + " --estimate-layers 1"); }

}  // namespace

TEST(layer_sample, tessel_run_estimate_layers_applies_the_rule_to_its_two_samples) {
    // 12 layers on a 2-stage pipeline: samples of 2 and 4 layers (mapper.sample_layers 1 and 2), by hand here.
    const std::string plan =
        k_dgx + "--set parallel.dp=2 --set parallel.pp=2 --set parallel.tp=2 --set parallel.microbatch=2 ";
    const nlohmann::json lo = tessel::test::run_summary(plan + "--set workload.layers=2 --set mapper.layers_of=12");
    const nlohmann::json hi = tessel::test::run_summary(plan + "--set workload.layers=4 --set mapper.layers_of=12");
    const nlohmann::json e = estimate_of(plan + "--set workload.layers=12");
    ASSERT_FALSE(lo.is_null() || hi.is_null() || e.is_null());
    const double t_lo = lo["sim_time_s"].get<double>(), t_hi = hi["sim_time_s"].get<double>();
    const double t = t_lo + (12.0 - 2) / (4 - 2) * (t_hi - t_lo);
    EXPECT_NEAR(e["sim_time_s"].get<double>(), t, 1e-12 * t);
    const double j_lo = lo["energy_j"].get<double>(), j_hi = hi["energy_j"].get<double>();
    const double j = j_lo + 5 * (j_hi - j_lo);
    EXPECT_NEAR(e["energy_j"].get<double>(), j, 1e-12 * j);
    EXPECT_NEAR(e["average_power_w"].get<double>(), j / t, 1e-9 * j / t);
    EXPECT_DOUBLE_EQ(e["samples"].get<double>(), 32);  // the iteration's: both samples train the whole batch
    EXPECT_NEAR(e["throughput_per_s"].get<double>(), 32 / t, 1e-9 * 32 / t);
    const auto mfu = [](const nlohmann::json& s) {
        return s["parallel"]["model_flops_utilisation"].get<double>() * s["sim_time_s"].get<double>();
    };
    const double flop_s = mfu(lo) + 5 * (mfu(hi) - mfu(lo));
    EXPECT_NEAR(e["model_flops_utilisation"].get<double>(), flop_s / t, 1e-9);
    const nlohmann::json& est = e["estimate"];
    EXPECT_EQ(est["model_layers"], 12);
    EXPECT_EQ(est["chunks"], 2);
    EXPECT_EQ(est["whole"], false);
    EXPECT_EQ(est["runs"][0]["layers"], 2);
    EXPECT_EQ(est["runs"][1]["layers"], 4);
    EXPECT_EQ(e["parallel"]["pp"], 2);
}

TEST(layer_sample, tessel_run_estimate_layers_runs_a_model_of_few_layers_whole) {
    // 2 layers on 2 stages: one a chunk, so the first sample is the model itself.
    const std::string plan = k_dgx +
                             "--set parallel.dp=2 --set parallel.pp=2 --set parallel.tp=2 "
                             "--set parallel.microbatch=2 --set workload.layers=2";
    const nlohmann::json whole = tessel::test::run_summary(plan);
    const nlohmann::json e = estimate_of(plan);
    ASSERT_FALSE(whole.is_null() || e.is_null());
    EXPECT_EQ(e["estimate"]["whole"], true);
    EXPECT_DOUBLE_EQ(e["sim_time_s"].get<double>(), whole["sim_time_s"].get<double>());
    EXPECT_DOUBLE_EQ(e["energy_j"].get<double>(), whole["energy_j"].get<double>());
}

TEST(layer_sample, a_sample_fits_only_where_its_model_does) {
    // A 13B GPT's one layer fits a TPU v5e's 16 GB; the model (58 GB a chip at dp=32) does not, and the sample
    // says so with the model's figures, before anything is built.
    const std::string args =
        "run -p platforms/systems/tpu_v5e_pod.yaml --set chips=32 --set parallel.dp=32 --set parallel.zero=2 -w gpt2 "
        "--set workload.hidden=5120 --set workload.heads=40 --set workload.layers=40 --set workload.seq=2048 "
        "--set workload.context=2048 --set workload.batch=256 --set workload.training=adam";
    const auto r = tessel::test::run_tessel(args + " --set mapper.sample_layers=1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("does not fit in memory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("needs 58.42 GB"), std::string::npos) << r.out;
    const auto e = tessel::test::run_tessel(args + " --estimate-layers 1");
    EXPECT_EQ(e.code, 2) << e.out;
    EXPECT_NE(e.out.find("the sample of 1 layer per pipeline chunk"), std::string::npos) << e.out;
    EXPECT_NE(e.out.find("needs 58.42 GB"), std::string::npos) << e.out;
}

TEST(layer_sample, tessel_run_estimate_layers_refuses_what_only_a_whole_run_makes) {
    const std::string plan = "run " + k_dgx + "--set parallel.dp=8 --estimate-layers 1";
    for (const char* flag : {"--trace /tmp/t.json", "--vcd /tmp/t.vcd", "--limit steps=1e6"}) {
        const auto r = tessel::test::run_tessel(plan + " " + flag);
        EXPECT_EQ(r.code, 2) << flag << "\n" << r.out;
        EXPECT_NE(r.out.find("is of one whole run"), std::string::npos) << r.out;
    }
    // A chip is no system: the samples ask a system's plan for its pipeline chunks.
    const auto r = tessel::test::run_tessel("run -p gpu/h100_sxm -w gpt2 --set workload.layers=4 --estimate-layers 1");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("not a system"), std::string::npos) << r.out;
    // The samples set the layers they run and the model they sample themselves.
    const auto s = tessel::test::run_tessel(plan + " --set mapper.layers_of=12");
    EXPECT_EQ(s.code, 2) << s.out;
    EXPECT_NE(s.out.find("--estimate-layers sets it for each sample"), std::string::npos) << s.out;
}
