// The SambaNova SN40L node (platforms/systems/sn40l_node.yaml) end to end: the data-parallel gradient all-reduce
// crosses the peer-to-peer fabric between the sockets' HBMs and costs the hand-computed ring time, a GPT runs
// with tensor, pipeline and data parallelism on a 16-socket node, and mapper.memory names a memory of the chip.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

namespace {

using tessel::test::run_tessel;

nlohmann::json run_json(const std::string& args) {
    return tessel::test::run_summary("-p platforms/systems/sn40l_node.yaml " + args);
}

const std::string k_small_gpt =
    "-w gpt2 --set workload.training=adam --set workload.precision=bf16 --set workload.layers=1 --set "
    "workload.hidden=1024 "
    "--set workload.heads=8 --set workload.seq=128 --set workload.vocab=8192 --set workload.batch=8 ";

}  // namespace

TEST(sn40l_node, data_parallel_all_reduce_is_the_hand_computed_ring_time) {
    // Parameters: wte 8192 x 1024 + wpe 1024 x 1024 (GPT-2's 1024 positions) + one layer (attention 1024 x 3072 + 3072
    // and 1024 x 1024 + 1024, MLP 1024 x 4096 + 4096 and 4096 x 1024 + 1024, two layer norms of 2 x 1024) + the final
    // layer norm = 22,035,456; bf16 gradients: 44,070,912 B. A ring over 8 sockets: 2 x 7 steps of an eighth each
    // through the fabric's 64 GB/s ports, each step 2 us of switch latency.
    const auto j = run_json(k_small_gpt + "--set parallel.dp=8");
    ASSERT_TRUE(j.contains("parallel"));
    const double grad_bytes = 44070912.0;
    EXPECT_EQ(j["parallel"]["memory"]["stages"][0]["gradients_bytes"].get<double>(), grad_bytes);
    const double wire = 2 * (7.0 / 8) * grad_bytes / 64e9;
    const double expect = wire + 14 * 2e-6;
    const double exposed = j["parallel"]["per_chip"][0]["exposed_communication_fraction"].get<double>() *
                           j["parallel"]["iteration_s"].get<double>();
    EXPECT_NEAR(exposed, expect, 0.02 * expect) << "exposed " << exposed << " s vs " << expect << " s";
    EXPECT_GE(exposed, wire);  // never faster than the ports allow
    // The report's per-collective entry: the one all-reduce, its time and NCCL-style bandwidths.
    const auto& list = j["parallel"]["collectives"];
    ASSERT_EQ(list.size(), 1u) << list;
    const auto& c = list[0];
    EXPECT_EQ(c["name"], "dp.grad_all_reduce");
    EXPECT_EQ(c["kind"], "all_reduce");
    EXPECT_EQ(c["algorithm"], "ring");
    EXPECT_EQ(c["ranks"].get<int>(), 8);
    EXPECT_EQ(c["bytes"].get<double>(), grad_bytes);
    EXPECT_EQ(c["calls"].get<int>(), 1);
    const double t = c["mean_s"].get<double>();
    EXPECT_NEAR(t, expect, 0.02 * expect);
    EXPECT_DOUBLE_EQ(c["algorithm_bandwidth"].get<double>(), grad_bytes / t);
    EXPECT_DOUBLE_EQ(c["bus_bandwidth"].get<double>(), grad_bytes / t * 2 * 7 / 8);
    EXPECT_LE(c["bus_bandwidth"].get<double>(), 64e9);  // a ring's bus bandwidth never beats a port
}

TEST(sn40l_node, gpt_runs_with_tensor_pipeline_and_data_parallelism_on_16_sockets) {
    const auto j = run_json(
        "--set sockets=16 -w gpt2 --set workload.training=adam --set workload.precision=bf16 "
        "--set workload.layers=2 --set workload.hidden=512 --set workload.heads=8 --set workload.seq=128 "
        "--set workload.vocab=8192 --set workload.batch=8 --set parallel.dp=2 --set parallel.tp=4 "
        "--set parallel.pp=2 --set parallel.microbatch=2");
    ASSERT_TRUE(j.contains("parallel"));
    EXPECT_EQ(j["parallel"]["chips"].get<int>(), 16);
    EXPECT_EQ(j["parallel"]["simulated_chips"].get<int>(), 2);
    EXPECT_GT(j["parallel"]["model_flops_utilisation"].get<double>(), 0);
    EXPECT_GT(tessel::test::resource_work(j, "p2p"), 0.0);
}

TEST(sn40l_node, mapper_memory_must_name_a_memory_of_the_chip) {
    const auto r = run_tessel("run -p platforms/systems/sn40l_node.yaml " + k_small_gpt +
                              "--set parallel.dp=8 --set mapper.memory=agcux");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("agcux"), std::string::npos) << r.out;
    const auto pcu = run_tessel("run -p platforms/systems/sn40l_node.yaml " + k_small_gpt +
                                "--set parallel.dp=8 --set mapper.memory=pcu[0,0]");
    EXPECT_EQ(pcu.code, 2) << pcu.out;
    EXPECT_NE(pcu.out.find("mapper.memory 'pcu[0,0]' is not a memory of the chips of 'rdu'"), std::string::npos)
        << pcu.out;
}
