// Cerebras Wafer-Scale Cluster (platforms/systems/cs2_cluster.yaml) end to end, as a user runs it: weight
// streaming data parallel, with every byte that crosses a CS-2's I/O, SwarmX and MemoryX counted by hand; one
// representative CS-2 gives the same iteration time as every CS-2 simulated; model parallelism, ZeRO and recompute
// are refused with the reason. Small wafers (60 x 64 PEs) keep the runs short; the traffic does not depend on them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

using tessel::test::resource_work;

namespace {

const std::string k_cluster = "-p platforms/systems/cs2_cluster.yaml --set cs2.width=60 --set cs2.height=64";
// workloads/mlp.yaml: four 1024 x 1024 layers with biases, fp16, Adam: 4,198,400 parameters.
const std::string k_mlp = " -w mlp --set workload.training=adam --set workload.batch=64";

}  // namespace

TEST(cs2_cluster, every_byte_through_a_cs2_swarmx_and_memoryx_matches_the_hand_count) {
    // 2 CS-2s, 32 rows each in 2 microbatches of 16.
    const auto j = tessel::test::run_summary(k_cluster + " --set systems=2" + k_mlp +
                                             " --set parallel.dp=2 --set parallel.microbatch=16");
    ASSERT_TRUE(j.contains("parallel"));
    const auto& par = j["parallel"];
    EXPECT_EQ(par["weights"], "streamed");
    EXPECT_EQ(par["microbatches"].get<int>(), 2);
    const double params = 4 * 1024.0 * 1024 + 4 * 1024;
    EXPECT_EQ(par["memory"]["weights_bytes"].get<double>(), 2 * params);           // fp16
    EXPECT_EQ(par["memory"]["optimizer_state_bytes"].get<double>(), 12 * params);  // fp32 master, two moments
    // Into a CS-2 per pass: every weight for the forward pass, the three 1024 x 1024 matrices again for the
    // backward pass's input gradients (the first layer needs none), the 16 x 1024 input and the output's gradient.
    const double row = 16 * 1024 * 2.0;
    const double in = 2 * params + 3 * 1024 * 1024 * 2.0 + 2 * row;
    // Out of it per pass: every weight's gradient (fp16) and the output.
    const double out = 2 * params + row;
    // MemoryX's update reads each weight, its gradient and its state once, after the last microbatch.
    const double update = (2 + 2 + 12) * params;
    EXPECT_EQ(par["streamed"]["in_bytes_per_pass"].get<double>(), in);
    EXPECT_EQ(par["streamed"]["out_bytes_per_pass"].get<double>(), out);
    EXPECT_EQ(par["streamed"]["update_bytes"].get<double>(), update);
    EXPECT_EQ(resource_work(j, "cs2[*].memoryx.to_wafer"), 2 * in);
    EXPECT_EQ(resource_work(j, "cs2[*].memoryx.from_wafer"), 2 * out);
    // SwarmX: each microbatch's gradients into the CS-2's reduction engine; the sums on to MemoryX, which
    // writes them and the updated state (an update writes back what it read).
    EXPECT_EQ(resource_work(j, "reduce[*]"), 2 * out);
    EXPECT_EQ(resource_work(j, "memoryx.from_wafer"), 2 * out + update);
    EXPECT_EQ(resource_work(j, "memoryx.to_wafer"), update);
    // Physics: nothing beats MemoryX's own bandwidth (150 GB/s each way) or a CS-2's I/O.
    const double t = j["sim_time_s"].get<double>();
    EXPECT_GE(t, (2 * out + update) / 150e9);
    EXPECT_GE(t, 2 * in / 150e9);
    EXPECT_GE(t, j["physical_bound_s"].get<double>());
}

TEST(cs2_cluster, one_representative_cs2_gives_the_iteration_time_of_every_cs2_simulated) {
    const std::string run = k_cluster + " --set systems=4" + k_mlp + " --set parallel.dp=4 --set parallel.microbatch=8";
    const auto sym = tessel::test::run_summary(run);
    const auto full = tessel::test::run_summary(run + " --set mapper.symmetric=false");
    ASSERT_TRUE(sym.contains("parallel") && full.contains("parallel"));
    EXPECT_EQ(sym["parallel"]["simulated_chips"].get<int>(), 1);
    EXPECT_EQ(full["parallel"]["simulated_chips"].get<int>(), 4);
    EXPECT_DOUBLE_EQ(sym["sim_time_s"].get<double>(), full["sim_time_s"].get<double>());
    // Every CS-2 streams its own copy in; SwarmX sends one sum to MemoryX.
    EXPECT_EQ(resource_work(full, "cs2[*].memoryx.to_wafer"), 4 * resource_work(sym, "cs2[*].memoryx.to_wafer"));
    EXPECT_EQ(resource_work(full, "memoryx.from_wafer"), resource_work(sym, "memoryx.from_wafer"));
}

TEST(cs2_cluster, a_slower_memoryx_lengthens_the_iteration_and_a_faster_one_cannot_beat_the_cs2s) {
    const std::string run =
        k_cluster + " --set systems=2" + k_mlp + " --set parallel.dp=2 --set parallel.microbatch=32";
    const double base = tessel::test::run_summary(run)["sim_time_s"].get<double>();
    const double slow =
        tessel::test::run_summary(run + " --set memoryx.io_bandwidth=15GB/s")["sim_time_s"].get<double>();
    const auto fast = tessel::test::run_summary(run + " --set memoryx.io_bandwidth=15TB/s");
    // At 15 GB/s the update alone (16 B per parameter read and written) takes 67.2 MB / 15 GB/s = 4.48 ms.
    EXPECT_GE(slow, 16 * (4 * 1024.0 * 1024 + 4 * 1024) / 15e9);
    EXPECT_GT(slow, base);
    EXPECT_LE(fast["sim_time_s"].get<double>(), base);
    EXPECT_GE(fast["sim_time_s"].get<double>(), resource_work(fast, "cs2[*].memoryx.to_wafer") / 150e9);
}

TEST(cs2_cluster, model_parallelism_zero_and_recompute_are_refused_with_the_reason) {
    const std::string run = "run " + k_cluster + " --set systems=4" + k_mlp + " --set parallel.microbatch=8";
    auto r = tessel::test::run_tessel(run + " --set parallel.dp=2 --set parallel.pp=2");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("is data parallel only"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("set parallel.tp=1 and parallel.pp=1 (the plan has tp=1, pp=2)"), std::string::npos) << r.out;
    r = tessel::test::run_tessel(run + " --set parallel.dp=4 --set parallel.zero=1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("parallel.zero does not apply"), std::string::npos) << r.out;
    r = tessel::test::run_tessel(run + " --set parallel.dp=4 --set parallel.recompute=full");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("recompute=full is not simulated with weight streaming"), std::string::npos) << r.out;
    r = tessel::test::run_tessel(run + " --set parallel.dp=4 --set mapper.store=swarmx");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("cs2_cluster.yaml:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("mapper.store 'swarmx' is a crossbar, not a single memory"), std::string::npos) << r.out;
}
