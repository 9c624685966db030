// The smaller models of Korthikanti et al. 2022's Table 3 (22B on 8 A100s, 175B on 64, interleaved with m = 3), as
// they ran: each simulates a whole training iteration with sequence parallelism and selective recomputation, and
// with full recomputation, and the memory it reports per chip fits in 80 GB. The 530B and 1T configurations are
// accepted by the memory model in activation_memory_test.cpp (their runs take 20 to 70 s each).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli.h"

TEST(activation_memory, paper_configurations_simulate_and_fit) {
    struct row {
        const char* name;
        int heads, hidden, layers, pp, batch, microbatch, interleave;
    };
    const auto out = std::filesystem::temp_directory_path() / "tessel_activation_memory_test";
    for (const row& r : {row{"22B", 64, 6144, 48, 1, 4, 4, 1}, row{"175B", 96, 12288, 96, 8, 64, 1, 3}})
        for (const std::string recompute : {"selective", "full"}) {
            std::filesystem::remove_all(out);
            std::string args = "run -p platforms/systems/dgx_a100.yaml -w gpt2 --set workload.training=adam";
            args += " --set workload.precision=fp16 --set workload.seq=2048 --set workload.context=2048";
            args += " --set workload.vocab=51200 --set workload.dropout=0.1 --set workload.attention_dropout=0.1";
            args += " --set nodes=" + std::to_string(r.pp);
            args += " --set workload.hidden=" + std::to_string(r.hidden);
            args += " --set workload.heads=" + std::to_string(r.heads);
            args += " --set workload.layers=" + std::to_string(r.layers);
            args += " --set workload.batch=" + std::to_string(r.batch);
            args += " --set parallel.tp=8 --set parallel.dp=1 --set parallel.pp=" + std::to_string(r.pp);
            args += " --set parallel.microbatch=" + std::to_string(r.microbatch);
            args += " --set parallel.recompute=" + recompute;
            args += " --set parallel.sequence_parallel=";
            args += recompute == "selective" ? "true" : "false";
            if (r.interleave > 1)
                args += " --set parallel.schedule=interleaved_1f1b --set parallel.interleave=" +
                        std::to_string(r.interleave);
            args += " -o " + out.string();
            const auto res = tessel::test::run_tessel(args);
            ASSERT_EQ(res.code, 0) << r.name << " " << recompute << "\n" << res.out;
            std::ifstream in(out / "summary.json");
            const auto s = nlohmann::json::parse(in);
            EXPECT_GT(s["sim_time_s"].get<double>(), 0) << r.name;
            const nlohmann::json stages = s["parallel"]["memory"]["stages"];
            ASSERT_EQ(stages.size(), static_cast<size_t>(r.pp)) << r.name;
            for (const auto& stage : stages) EXPECT_LT(stage["total_bytes"].get<double>(), 80e9) << r.name;
        }
    std::filesystem::remove_all(out);
}
