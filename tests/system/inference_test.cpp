// Inference steps on a system: without workload.training the system mapper runs forward passes only, by the
// parallel plan, and holds the KV cache as state. Llama-2-70B decoding 16 sequences over 2,048 cached tokens on a
// DGX H100, its memory counted by hand.
#include <gtest/gtest.h>

#include "tests/support/run_summary.h"

using namespace tessel::test;

namespace {

const std::string k_decode =
    "-p systems/dgx_h100 -w llama2-70b --set workload.seq=1 --set workload.kv_cache=2048 --set workload.batch=16"
    " --set workload.attention=fused";

// Llama-2-70B: 80 layers, hidden 8192, 64 query heads and 8 KV heads of 128, SwiGLU width 28672, vocabulary 32000.
// One of 8 tensor-parallel ranks holds, in parameters:
//   embedding and LM head, vocab-parallel: 2 x 4000 x 8192                         =    65,536,000
//   per layer: q and o 2 x 8192 x 1024, k and v 2 x 8192 x 128, gate, up and down
//   3 x 8192 x 3584, two norms 2 x 8192                                            =   106,971,136
//   80 layers                                                                      = 8,557,690,880
//   the final norm                                                                 =         8,192
// 8,623,235,072 parameters, 2 bytes each (fp16).
constexpr double k_weights_per_rank = 8'623'235'072.0 * 2;
// The KV cache per layer: keys and values, 16 sequences x 1 KV head (8 / 8) x 2049 tokens (the 2048 cached and the
// slot the step writes its own into) x 128, 2 bytes.
constexpr double k_kv_per_layer = 2.0 * 16 * 1 * 2049 * 128 * 2;

}  // namespace

TEST(inference, a_tensor_parallel_decode_step_holds_its_shard_and_the_kv_cache) {
    const auto s = run_summary(k_decode + " --set parallel.tp=8 --set parallel.microbatch=16");
    const auto& stages = s["parallel"]["memory"]["stages"];
    ASSERT_EQ(stages.size(), 1u);
    EXPECT_EQ(stages[0]["weights_bytes"].get<double>(), k_weights_per_rank);
    EXPECT_EQ(stages[0]["state_bytes"].get<double>(), 80 * k_kv_per_layer);
    EXPECT_EQ(stages[0]["gradients_bytes"].get<double>(), 0);
    EXPECT_EQ(stages[0]["optimizer_state_bytes"].get<double>(), 0);
    EXPECT_EQ(stages[0]["activations_bytes"].get<double>(), 0) << "nothing is kept for a backward pass";
    // A decode step reads every weight from HBM (3.3472 TB/s), the embedding table's 16 looked-up rows only: bound
    // by memory, and never faster than those bytes at that rate. (The cache's reads are not added: the
    // representative chip of a system run reads 1-2% fewer bytes than the same shard run on one GPU, which the L2
    // alone does not explain; the concat that copied the cache used to hide it.)
    EXPECT_EQ(s["bound_by"], "memory");
    const double embedding_table = 32000.0 / 8 * 8192 * 2;
    const double floor_s = (k_weights_per_rank - embedding_table) / 3.3472e12;
    EXPECT_GE(s["physical_bound_s"].get<double>(), floor_s);
    EXPECT_GE(s["sim_time_s"].get<double>(), s["physical_bound_s"].get<double>());
    EXPECT_EQ(s["throughput_per_s"].get<double>(), 16 / s["sim_time_s"].get<double>());
}

TEST(inference, a_pipeline_splits_the_layers_and_their_cache_between_stages) {
    // tp 4 x pp 2: each stage holds 40 layers' cache; the 16 sequences go through as 2 microbatches of 8.
    const auto s = run_summary(k_decode + " --set parallel.tp=4 --set parallel.pp=2 --set parallel.microbatch=8");
    const auto& stages = s["parallel"]["memory"]["stages"];
    ASSERT_EQ(stages.size(), 2u);
    // Per tp-4 rank a layer's cache is twice tp 8's (2 KV heads); 40 layers; both microbatches held.
    EXPECT_EQ(stages[0]["state_bytes"].get<double>(), 40 * 2 * k_kv_per_layer);
    EXPECT_EQ(stages[1]["state_bytes"].get<double>(), 40 * 2 * k_kv_per_layer);
    EXPECT_EQ(s["parallel"]["microbatches"], 2);
}

TEST(inference, replicas_each_run_their_share_of_the_batch) {
    // dp 2 x tp 4: 8 sequences a replica, 2 KV heads a rank: the same cache per chip as 16 sequences at tp 8.
    const auto s = run_summary(k_decode + " --set parallel.tp=4 --set parallel.dp=2 --set parallel.microbatch=8");
    EXPECT_EQ(s["parallel"]["memory"]["stages"][0]["state_bytes"].get<double>(), 80 * k_kv_per_layer);
    EXPECT_EQ(s["throughput_per_s"].get<double>(), 16 / s["sim_time_s"].get<double>());
}
