// `tessel compare` as a user runs it: each system's row is the best plan `tessel plan` finds for it on its own
// (same iteration time, exactly), a system that cannot train the workload is a row with the reason while the others
// are still compared, and a malformed system is one clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "tests/support/cli.h"
#include "tests/support/files.h"

using namespace tessel::test;
namespace fs = std::filesystem;

namespace {

const std::string k_gpt = " -w gpt2 --set workload.training=adam --set workload.batch=16 --set workload.layers=4"
                          " --set workload.hidden=512 --set workload.heads=8 --set workload.seq=256";

fs::path temp(const std::string& name) {
    const fs::path p = fs::temp_directory_path() / ("tessel_compare_" + std::to_string(getpid())) / name;
    fs::remove_all(p);
    return p;
}

}  // namespace

TEST(compare_cli, each_row_is_the_systems_best_plan_and_a_system_that_cannot_train_says_why) {
    const fs::path out = temp("cmp");
    const auto r = run_tessel("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1" +
                              " --system platforms/systems/dgx_a100.yaml:nodes=1,gpu.gpu.hbm.capacity=1MB --samples 1e6 -o " + out.string() + " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    ASSERT_EQ(doc["systems"].size(), 2u);
    const nlohmann::json& dgx = doc["systems"][0];
    EXPECT_EQ(dgx["system"], "dgx_a100 nodes=1");
    EXPECT_EQ(dgx["chips"], 8);
    ASSERT_TRUE(dgx.contains("best")) << dgx.dump();
    // The same search on its own.
    const fs::path alone = temp("alone");
    const auto p = run_tessel("plan -p platforms/systems/dgx_a100.yaml --set nodes=1" + k_gpt + " -o " + alone.string() + " --no-progress");
    ASSERT_EQ(p.code, 0) << p.out;
    const nlohmann::json plan = nlohmann::json::parse(slurp(alone / "plan.json"));
    const nlohmann::json& best = plan["sizes"][0]["plans"][0];
    EXPECT_EQ(dgx["best"]["plan"], best["plan"]);
    EXPECT_EQ(dgx["best"]["iteration_s"].get<double>(), best["iteration_s"].get<double>());
    EXPECT_DOUBLE_EQ(dgx["best"]["samples_per_s_per_chip"].get<double>(), best["samples_per_s"].get<double>() / 8);
    EXPECT_DOUBLE_EQ(dgx["best"]["days"].get<double>(), 1e6 / best["samples_per_s"].get<double>() / 86400);
    // GPUs of 1 MB cannot hold this model under any plan.
    const nlohmann::json& tiny = doc["systems"][1];
    EXPECT_EQ(tiny["system"], "dgx_a100 nodes=1 gpu.gpu.hbm.capacity=1MB");
    EXPECT_FALSE(tiny.contains("best"));
    EXPECT_NE(tiny["error"].get<std::string>().find("no parallel plan of 'gpt2' fits"), std::string::npos) << tiny.dump();
    EXPECT_NE(r.out.find("does not train: tessel plan: no parallel plan"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fastest: dgx_a100 nodes=1"), std::string::npos) << r.out;
}

TEST(compare_cli, a_system_whose_every_plan_fails_in_its_chip_mapper_says_why) {
    // ResNet-50 at 32 images per IPU (the micro-batch fixed, so the search does not try smaller ones): the plan's
    // estimate fits (weights stream from the IPU's DRAM), but the BSP mapper finds the activations too large for
    // the tiles. The row gives the chip mapper's reason, not only where the plans are.
    const fs::path out = temp("ipu");
    const auto r = run_tessel("compare -w resnet50 --set workload.training=sgd --set workload.batch=256"
                              " --system platforms/systems/ipu_pod16.yaml:machines=2,parallel.microbatch=32 -o " + out.string() +
                              " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    ASSERT_EQ(doc["systems"].size(), 1u);
    const std::string error = doc["systems"][0]["error"].get<std::string>();
    EXPECT_NE(error.find("no plan finished; 2 of 2 (dp=8 tp=1 pp=1 microbatch=32, ...): workload does not fit: op "), std::string::npos) << error;
    EXPECT_NE(error.find("plan.json)"), std::string::npos) << error;
    EXPECT_EQ(error.find("tessel: error:"), std::string::npos) << error;
}

TEST(compare_cli, bad_input_is_one_clear_error) {
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes", "expected PARAM=VALUE after ':'");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml --system platforms/systems/dgx_a100.yaml",
                        "is given twice");
}
