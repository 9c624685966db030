// The system mapper end to end (`tessel run` on platforms/systems/dgx_a100.yaml, as a user runs it): the
// symmetric fast path (one representative chip per pipeline stage) and the fully expanded run (every chip)
// give the same iteration time; a data-parallel iteration's exposed gradient all-reduce is the ring's
// hand-computed time on the NVSwitch; no run beats the chips' peak rate; and the plan's mistakes are errors.
#include <gtest/gtest.h>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

#include <nlohmann/json.hpp>

#include <string>

namespace {

using tessel::test::run_tessel;

// A small GPT (8 layers, hidden 1024, seq 512): every plan below is valid for it and runs in well under a second.
const std::string k_gpt_inference =
    "-w gpt2 --set workload.layers=8 --set workload.hidden=1024 "
    "--set workload.heads=16 --set workload.vocab=8192 --set workload.context=512 --set workload.seq=512 "
    "--set workload.batch=16";
const std::string k_gpt = k_gpt_inference + " --set workload.training=adam";
const std::string k_dgx = "-p platforms/systems/dgx_a100.yaml";

nlohmann::json run_json(const std::string& args) { return tessel::test::run_summary(args); }

std::string plan(int dp, int tp, int pp, const std::string& more = "", int microbatch = 2) {
    return " --set parallel.dp=" + std::to_string(dp) + " --set parallel.tp=" + std::to_string(tp) +
           " --set parallel.pp=" + std::to_string(pp) + " --set parallel.microbatch=" + std::to_string(microbatch) +
           " " + more;
}

}  // namespace

TEST(system_mapper, symmetric_fast_path_and_every_chip_simulated_give_the_same_iteration_time) {
    const char* plans[] = {
        "--set parallel.dp=2 --set parallel.tp=2 --set parallel.pp=2 --set parallel.microbatch=2",
        "--set parallel.dp=4 --set parallel.tp=2 --set parallel.pp=1 --set parallel.microbatch=2",
        "--set parallel.dp=2 --set parallel.tp=1 --set parallel.pp=4 --set parallel.microbatch=1 --set "
        "parallel.schedule=gpipe",
        "--set parallel.dp=1 --set parallel.tp=2 --set parallel.pp=4 --set parallel.microbatch=1 "
        "--set parallel.schedule=interleaved_1f1b --set parallel.interleave=2",
        "--set parallel.dp=2 --set parallel.tp=4 --set parallel.pp=1 --set parallel.microbatch=2 "
        "--set parallel.sequence_parallel=true",
        "--set parallel.dp=8 --set parallel.tp=1 --set parallel.pp=1 --set parallel.microbatch=2 --set parallel.zero=1",
    };
    for (const char* p : plans) {
        const auto fast = run_json(k_dgx + " " + k_gpt + " " + p);
        const auto full = run_json(k_dgx + " " + k_gpt + " " + p + " --set mapper.symmetric=false");
        ASSERT_TRUE(fast.contains("parallel")) << p;
        ASSERT_TRUE(full.contains("parallel")) << p;
        EXPECT_TRUE(fast["parallel"]["symmetric"].get<bool>());
        EXPECT_EQ(full["parallel"]["simulated_chips"].get<int>(), 8) << p;
        EXPECT_LT(fast["parallel"]["simulated_chips"].get<int>(), 8) << p;
        const double a = fast["sim_time_s"], b = full["sim_time_s"];
        // The two differ only by the representative's own receive traffic at its memory, not simulated.
        EXPECT_NEAR(a / b, 1.0, 1e-3) << p << ": symmetric " << a << " s, every chip " << b << " s";
    }
}

// A tree has a root, so its ranks differ: on the default (symmetric) path the mapper simulates every chip and
// says why, giving exactly the run `symmetric: false` gives (it used to refuse to lower the tree).
TEST(system_mapper, a_tree_all_reduce_on_the_default_path_simulates_every_chip) {
    const std::string run = k_dgx + " " + k_gpt + plan(8, 1, 1) + " --set mapper.algorithm=tree";
    const auto by_default = run_json(run);
    const auto full = run_json(run + " --set mapper.symmetric=false");
    EXPECT_FALSE(by_default["parallel"]["symmetric"].get<bool>());
    EXPECT_EQ(by_default["parallel"]["simulated_chips"].get<int>(), 8);
    EXPECT_EQ(by_default["sim_time_s"].get<double>(), full["sim_time_s"].get<double>());
    EXPECT_NE(by_default["notes"].dump().find("every chip simulated (the tree algorithm has a root"), std::string::npos)
        << by_default["notes"].dump();
}

TEST(system_mapper, data_parallel_gradient_all_reduce_costs_the_hand_computed_ring_time) {
    // dp = 8 on one node: after the backward pass every GPU all-reduces its fp16 gradients (2 bytes per
    // weight) in a ring: 2 (n - 1) = 14 steps, each moving 1/8 of them at 240 GB/s (the NVSwitch port's
    // effective rate) after one NVSwitch latency of 3.4 us. Nothing computes meanwhile, so all of it is exposed.
    const auto j = run_json(k_dgx + " " + k_gpt + plan(8, 1, 1));
    ASSERT_TRUE(j.contains("parallel"));
    const auto& par = j["parallel"];
    const double grad_bytes = par["memory"]["stages"][0]["gradients_bytes"];
    const double step = grad_bytes / 8 / 240e9 + 3.4e-6;
    const double expected = 14 * step;
    const double exposed =
        par["per_chip"][0]["exposed_communication_fraction"].get<double>() * j["sim_time_s"].get<double>();
    EXPECT_NEAR(exposed / expected, 1.0, 0.02)
        << "exposed " << exposed << " s, hand-computed " << expected << " s (" << grad_bytes << " gradient bytes)";
}

TEST(system_mapper, no_iteration_beats_the_peak_rate_of_its_chips_and_the_report_adds_up) {
    for (const std::string& p : {plan(2, 2, 2), plan(8, 1, 1), plan(1, 4, 2)}) {
        const auto j = run_json(k_dgx + " " + k_gpt + p);
        ASSERT_TRUE(j.contains("parallel")) << p;
        const auto& par = j["parallel"];
        const double T = j["sim_time_s"];
        // A100 dense fp16 tensor rate: 108 SMs x 1024 MACs x 2 x 1.41 GHz = 311.9 TFLOP/s per chip.
        const double peak = 108.0 * 1024 * 2 * 1.41e9;
        const double per_chip_flops = par["hardware_flops"].get<double>() / par["chips"].get<double>();
        EXPECT_GE(T, per_chip_flops / peak) << p;
        // Without recomputation the chips do the model's work, plus what tensor parallelism replicates (norms,
        // residual adds, biases on every rank) and the padded vocabulary: a few percent at most here.
        EXPECT_GT(par["hardware_flops"].get<double>(), j["flops"].get<double>() * 0.999) << p;
        EXPECT_LT(par["hardware_flops"].get<double>(), j["flops"].get<double>() * 1.05) << p;
        EXPECT_LE(par["model_flops_utilisation"].get<double>(), par["hardware_flops_utilisation"].get<double>()) << p;
        EXPECT_NEAR(par["iteration_s"].get<double>(), T, 1e-12);
        for (const auto& c : par["per_chip"]) {
            const double sum = c["compute_fraction"].get<double>() + c["exposed_communication_fraction"].get<double>() +
                               c["idle_fraction"].get<double>();
            EXPECT_NEAR(sum, 1.0, 1e-9) << p << " " << c["chip"];
        }
        // Every stage fits in the A100's 80 GB.
        for (const auto& s : par["memory"]["stages"]) EXPECT_LE(s["total_bytes"].get<double>(), 80e9) << p;
    }
}

TEST(system_mapper, pipeline_bubble_shrinks_with_more_microbatches) {
    // pp = 4 with 1F1B: the ideal bubble is (pp - 1) / m; with m = 2 the stages idle far more than with m = 8.
    const auto few = run_json(k_dgx + " " + k_gpt + plan(2, 1, 4, "", 4));
    const auto many = run_json(k_dgx + " " + k_gpt + plan(2, 1, 4, "", 1));
    ASSERT_TRUE(few.contains("parallel"));
    ASSERT_TRUE(many.contains("parallel"));
    EXPECT_DOUBLE_EQ(few["parallel"]["ideal_bubble"].get<double>(), 3.0 / 2);
    EXPECT_DOUBLE_EQ(many["parallel"]["ideal_bubble"].get<double>(), 3.0 / 8);
    auto idle = [](const nlohmann::json& j) {
        double s = 0;
        for (const auto& c : j["parallel"]["per_chip"]) s += c["idle_fraction"].get<double>();
        return s / static_cast<double>(j["parallel"]["per_chip"].size());
    };
    EXPECT_GT(idle(few), idle(many) + 0.1);
}

TEST(system_mapper, mistakes_in_the_plan_or_the_run_are_clear_errors) {
    struct bad {
        std::string args, says;
    };
    const bad cases[] = {
        {k_dgx + " " + k_gpt + plan(4, 4, 1), "dp x tp x pp = 4 x 4 x 1 = 16, but the system has 8 chips"},
        {k_dgx + " " + k_gpt + plan(8, 1, 1) + " --set parallel.zero=3", "zero = 3"},
        {k_dgx + " " + k_gpt + plan(8, 1, 1) + " --set parallel.overlap_grad_reduce=true", "overlap_grad_reduce"},
        {k_dgx + " " + k_gpt + plan(2, 2, 2) + " --set parallel.bogus=1", "bogus"},
        {k_dgx + " " + k_gpt + plan(8, 1, 1) + " --set mapper.algorithm=butterfly", "butterfly"},
        {"-p platforms/teaching/ring8_ddr4.yaml " + k_gpt + " --set mapper.impl=system", "needs a system"},
        {k_dgx +
             " -w gpt2 --set workload.training=adam --set workload.layers=96 --set workload.hidden=12288 "
             "--set workload.heads=96 --set workload.seq=2048 --set workload.context=2048 --set workload.batch=8" +
             plan(8, 1, 1, "", 1),
         "does not fit in memory"},
    };
    for (const auto& c : cases) {
        const auto r = run_tessel("run " + c.args);
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
        EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
    }
}

TEST(system_mapper, full_recomputation_adds_one_forward_pass_to_the_hardware_flops) {
    // Backward costs twice the forward (2 of the 3 products per matmul), so re-running the forward before each
    // backward turns 3 units of work into 4: hardware / model FLOPs = 4/3, less the optimizer's small share.
    const auto j = run_json(k_dgx + " " + k_gpt + plan(2, 2, 2, "--set parallel.recompute=full"));
    ASSERT_TRUE(j.contains("parallel"));
    const double ratio = j["parallel"]["hardware_flops"].get<double>() / j["flops"].get<double>();
    EXPECT_GT(ratio, 1.28);
    EXPECT_LT(ratio, 4.0 / 3 + 0.02);
}

TEST(system_mapper, recomputing_layer_by_layer_fits_where_the_whole_chunk_does_not) {
    // 4 replicas of 2-way tensor parallelism on a 4-layer GPT, microbatches of 4, in 200 MB GPUs: re-creating the
    // whole chunk's activations at once (recompute_layers 0) does not fit; one layer at a time (the default) does. The
    // re-run forward is the same work either way (less the last residual add of each layer, whose output is kept).
    const std::string small =
        " -w gpt2 --set workload.training=adam --set workload.batch=16 --set workload.layers=4"
        " --set workload.hidden=512 --set workload.heads=8 --set workload.seq=256";
    const std::string full = plan(4, 2, 1, "--set parallel.zero=1 --set parallel.recompute=full", 4);
    const std::string args = k_dgx + small + " --set gpu.gpu.hbm.capacity=200MB" + full;
    const auto whole = run_tessel("run " + args + " --set parallel.recompute_layers=0");
    EXPECT_EQ(whole.code, 2) << whole.out;
    EXPECT_NE(whole.out.find("does not fit in memory"), std::string::npos) << whole.out;
    EXPECT_NE(whole.out.find("try recompute_layers=1"), std::string::npos) << whole.out;
    const auto j = run_json(args);
    EXPECT_LE(j["parallel"]["memory"]["stages"][0]["total_bytes"].get<double>(), 200e6);
    const auto at_once = run_json(k_dgx + small + full + " --set parallel.recompute_layers=0");  // 80 GB GPUs
    EXPECT_GT(at_once["parallel"]["memory"]["stages"][0]["total_bytes"].get<double>(), 200e6);
    EXPECT_NEAR(j["parallel"]["hardware_flops"].get<double>(), at_once["parallel"]["hardware_flops"].get<double>(),
                0.01 * j["flops"].get<double>());
}

TEST(system_mapper, nvlink_sharp_reduces_gradients_in_the_switch_at_the_hand_computed_time) {
    // dp = 8 on one DGX H100: the gradient all-reduce runs in the NVSwitches' SHARP engines (mapper.in_network:
    // nvls), in slices of at least 8 MiB (k = G / 8 MiB of them). Slice s enters its engine after slice s-1 has:
    // one NVSwitch latency (3.4 us) for its head, then the engine's 274 GB/s for its bytes; the last slice's result
    // comes back at the port's 370 GB/s after another latency. The ring instead moves 2 (n-1)/n of the buffer:
    // 14 steps of G/8 at 370 GB/s plus 3.4 us each.
    const std::string h100 = "-p platforms/systems/dgx_h100.yaml " + k_gpt + plan(8, 1, 1);
    const auto nvls = run_json(h100);
    const auto ring = run_json(h100 + " --set mapper.in_network=none");
    ASSERT_TRUE(nvls.contains("parallel"));
    ASSERT_TRUE(ring.contains("parallel"));
    auto exposed = [](const nlohmann::json& j) {
        return j["parallel"]["per_chip"][0]["exposed_communication_fraction"].get<double>() *
               j["sim_time_s"].get<double>();
    };
    const double grad = nvls["parallel"]["memory"]["stages"][0]["gradients_bytes"];
    const double k = std::floor(grad / (8 << 20)), slice = grad / k;
    const double in_switch = k * (slice / 274e9 + 3.4e-6) + slice / 370e9 + 3.4e-6;
    const double in_ring = 14 * (grad / 8 / 370e9 + 3.4e-6);
    EXPECT_NEAR(exposed(nvls) / in_switch, 1.0, 0.02) << exposed(nvls) << " s, by hand " << in_switch << " s";
    EXPECT_NEAR(exposed(ring) / in_ring, 1.0, 0.02) << exposed(ring) << " s, by hand " << in_ring << " s";
    // The representative's engine reduced its gradients once (padded to a multiple of ranks x slices x 2 bytes).
    double reduced = -1;
    for (const auto& r : nvls["resources"])
        if (r["kind"] == "switch_reducer") reduced = r["work"];
    EXPECT_GE(reduced, grad);
    EXPECT_LT(reduced, grad + 8 * k * 2);
    // A mistyped engine group, or one that is not a switch_reducer, is named with where the mapper is set.
    for (const auto& [set, says] :
         {std::pair<std::string, std::string>{"nvlz", "'nvlz' is not a component of dgx_h100 (did you mean 'nvls'?)"},
          {"hub", "'hub' is a crossbar, not an in-network reduction engine"}}) {
        const auto r = tessel::test::run_tessel("run " + h100 + " --set mapper.in_network=" + set);
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.out.find("dgx_h100.yaml:"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    }
    // Two GPUs' ring moves each buffer once at the port's 370 GB/s, faster than the 274 GB/s engine: the mapper
    // keeps the ring there, as NCCL's tuner would
    // (tp = 2 with pp = 4: only pairs reduce).
    const auto pairs = run_json("-p platforms/systems/dgx_h100.yaml " + k_gpt + plan(1, 2, 4));
    for (const auto& r : pairs["resources"]) {
        if (r["kind"] == "switch_reducer") {
            EXPECT_EQ(r["work"].get<double>(), 0.0) << r.dump();
        }
    }
}
