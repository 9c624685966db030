// GroqRack (platforms/systems/groqrack.yaml) end to end, as a user runs it: a data-parallel gradient all-reduce
// over one node's C2C links costs the ring's hand-computed time; a GPT with tensor, pipeline and data
// parallelism trains on all 72 chips, each chip's static schedule placed after the transfers it waits for;
// BERT-large data parallel says precisely why it cannot fit; and ResNet training's fused residual adds keep
// their stream registers free of conflicts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

namespace {

const std::string k_rack = "-p platforms/systems/groqrack.yaml";
// A small GPT: 2 layers, hidden 256, 128 tokens, fp16 with Adam (32 MB of weights and state: fits on a chip).
const std::string k_small_gpt =
    "-w gpt2 --set workload.layers=2 --set workload.hidden=256 --set workload.heads=4 --set workload.seq=128 "
    "--set workload.context=128 --set workload.vocab=1024 --set workload.training=adam --set workload.precision=fp16";

}  // namespace

TEST(groqrack, gradient_all_reduce_over_a_node_costs_the_hand_computed_ring_time) {
    // dp = 8 on one GroqNode: the ring's 14 steps each move 1/8 of the fp16 gradients at a chip's 196 GB/s of
    // links inside the node (14 C2C links x 14 GB/s) after the node's 0.6 us latency. Nothing computes then.
    const auto j = tessel::test::run_summary(k_rack + " --set nodes=1 " + k_small_gpt +
                                             " --set workload.batch=8 --set parallel.dp=8 --set parallel.microbatch=1");
    ASSERT_TRUE(j.contains("parallel"));
    const auto& par = j["parallel"];
    EXPECT_EQ(par["simulated_chips"].get<int>(), 8);  // the rack file simulates every chip
    const double grad = par["memory"]["stages"][0]["gradients_bytes"];
    const double expected = 14 * (grad / 8 / 196e9 + 0.6e-6);
    for (const auto& chip : par["per_chip"]) {
        const double exposed = chip["exposed_communication_fraction"].get<double>() * j["sim_time_s"].get<double>();
        EXPECT_NEAR(exposed / expected, 1.0, 0.02)
            << chip["chip"] << ": " << exposed << " s, by hand " << expected << " s";
    }
}

TEST(groqrack, a_gpt_trains_with_tensor_pipeline_and_data_parallelism_on_72_chips) {
    // tp 4 inside a node, 6 pipeline stages, 3 replicas; ZeRO-1 and full recomputation to fit 220 MiB per chip.
    const auto j = tessel::test::run_summary(k_rack +
                                             " -w gpt2 --set workload.training=adam --set workload.precision=fp16 "
                                             "--set workload.seq=256 --set workload.batch=12 --set parallel.tp=4 "
                                             "--set parallel.pp=6 --set parallel.dp=3 --set parallel.microbatch=1 "
                                             "--set parallel.zero=1 --set parallel.recompute=full");
    ASSERT_TRUE(j.contains("parallel"));
    const auto& par = j["parallel"];
    EXPECT_EQ(par["chips"].get<int>(), 72);
    ASSERT_EQ(par["per_chip"].size(), 72u);
    for (const auto& chip : par["per_chip"]) EXPECT_GT(chip["compute_fraction"].get<double>(), 0.0) << chip["chip"];
    // Activations cross the global links between stages on different nodes and the node links inside one.
    EXPECT_GT(tessel::test::resource_work(j, "node[*]"), 0.0);
    EXPECT_GT(tessel::test::resource_work(j, "global"), 0.0);
    EXPECT_GE(j["sim_time_s"].get<double>(), j["physical_bound_s"].get<double>());
}

TEST(groqrack, bert_large_data_parallel_does_not_fit_and_says_why) {
    const auto r =
        tessel::test::run_tessel("run " + k_rack +
                                 " -w bert-large --set workload.training=adam "
                                 "--set workload.precision=fp16 --set workload.batch=72 --set parallel.dp=72 "
                                 "--set parallel.microbatch=1");
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.out.find("does not fit in memory"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("but a chip has 220 MiB"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("optimizer state 4.022 GB"), std::string::npos) << r.out;
}

TEST(groqrack, a_chip_schedule_that_cannot_place_a_tensor_names_the_slices_not_a_negative_shortfall) {
    // tp 6 x pp 12: the plan's per-chip estimate fits, but the chip mapper, placing the optimizer's temporaries
    // beside the embedding's Adam state, finds MEM slices too full for a tensor spread over all of them while
    // the chip as a whole still has room: it says so instead of "short by -863.7 KB".
    const auto r =
        tessel::test::run_tessel("run " + k_rack +
                                 " -w gpt2 --set workload.training=adam "
                                 "--set workload.precision=fp16 --set workload.batch=8 --set workload.seq=256 "
                                 "--set parallel.tp=6 --set parallel.pp=12 --set parallel.microbatch=1 "
                                 "--set parallel.recompute=full");
    EXPECT_NE(r.code, 0);
    EXPECT_NE(r.out.find("in every slice and the fullest has"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("short by -"), std::string::npos) << r.out;
}

TEST(groqrack, resnet_training_fuses_residual_adds_from_either_side_of_the_vxm_without_a_stream_conflict) {
    // The backward pass of a residual block adds the gradient through the shortcut in the epilogue of the
    // convolution's dx product. Successive epilogues on one plane write to either side of the VXM; a residual
    // read from the east side flows west on the band the previous epilogue's result left on, so it must come
    // after that result has passed (before the fix: "stream register 14 west ... would overwrite a vector").
    // Every chip's schedule is checked cycle by cycle when it runs.
    const auto j =
        tessel::test::run_summary(k_rack +
                                  " --set nodes=1 -w resnet --set workload.depth=18 --set workload.batch=8 "
                                  "--set workload.training=sgd --set parallel.dp=8 --set parallel.microbatch=1 "
                                  "--set parallel.zero=1");
    ASSERT_TRUE(j.contains("parallel"));
    EXPECT_EQ(j["parallel"]["chips"].get<int>(), 8);
    EXPECT_GE(j["sim_time_s"].get<double>(), j["physical_bound_s"].get<double>());
}
