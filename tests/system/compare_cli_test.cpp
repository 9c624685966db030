// `tessel compare` as a user runs it: each system's row is the best plan `tessel plan` finds for it on its own
// (same iteration time, exactly), a system that cannot train the workload is a row with the reason while the others
// are still compared, and a malformed system is one clear error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"

using namespace tessel::test;
namespace fs = std::filesystem;

namespace {

const std::string k_gpt =
    " -w gpt2 --set workload.training=adam --set workload.batch=16 --set workload.layers=4"
    " --set workload.hidden=512 --set workload.heads=8 --set workload.seq=256";

fs::path temp(const std::string& name) { return fresh_temp("tessel_compare_", name); }

}  // namespace

TEST(compare_cli, each_row_is_the_systems_best_plan_and_a_system_that_cannot_train_says_why) {
    const fs::path out = temp("cmp");
    const auto r =
        run_tessel("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1" +
                   " --system platforms/systems/dgx_a100.yaml:nodes=1,gpu.gpu.hbm.capacity=1MB --samples 1e6 -o " +
                   out.string() + " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    ASSERT_EQ(doc["systems"].size(), 2u);
    const nlohmann::json& dgx = doc["systems"][0];
    EXPECT_EQ(dgx["system"], "dgx_a100 nodes=1");
    EXPECT_EQ(dgx["chips"], 8);
    ASSERT_TRUE(dgx.contains("best")) << dgx.dump();
    // The same search on its own.
    const fs::path alone = temp("alone");
    const auto p = run_tessel("plan -p platforms/systems/dgx_a100.yaml --set nodes=1" + k_gpt + " -o " +
                              alone.string() + " --no-progress");
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
    EXPECT_NE(tiny["error"].get<std::string>().find("no parallel plan of 'gpt2' fits"), std::string::npos)
        << tiny.dump();
    EXPECT_NE(r.out.find("fastest: dgx_a100 nodes=1"), std::string::npos) << r.out;

    // The console explains itself: the failed system's row is short and aligned with the others, and one line per
    // system below the table says why its best plan wins (plan.json's lead over the runner-up), how full its
    // memory is, or the whole reason it does not train.
    const double capacity = plan["sizes"][0]["capacity_bytes"].get<double>();
    EXPECT_EQ(dgx["best"]["capacity_bytes"].get<double>(), capacity);
    const std::string lead = plan["sizes"][0]["why"][1].get<std::string>();
    ASSERT_EQ(lead.rfind("it is ", 0), 0u) << lead;
    EXPECT_EQ(dgx["best"]["why"], "wins: " + lead.substr(6));
    const std::string why_line =
        "  dgx_a100 nodes=1: " + best["plan"].get<std::string>() + " wins: " + lead.substr(6) + "; memory ";
    EXPECT_NE(r.out.find("\nwhy:\n" + why_line), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  dgx_a100 nodes=1 gpu.gpu.hbm.capacity=1MB: tessel plan: no parallel plan of 'gpt2' fits"),
              std::string::npos)
        << r.out;
    std::vector<std::string> lines;
    std::istringstream is(r.out);
    for (std::string l; std::getline(is, l);) lines.push_back(l);
    const auto header =
        std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("  system ", 0) == 0; });
    ASSERT_NE(header, lines.end()) << r.out;
    const size_t chips_end = header->find("chips") + 5;
    const std::string dgx_row = *(header + 1), failed_row = *(header + 2);
    EXPECT_EQ(dgx_row.substr(chips_end - 2, 3), " 8 ") << "aligned:\n" << *header << "\n" << dgx_row;
    EXPECT_EQ(failed_row.substr(chips_end - 2, 3), " - ") << "aligned:\n" << *header << "\n" << failed_row;
    EXPECT_NE(failed_row.find("does not train: does not fit in memory (below)"), std::string::npos) << failed_row;
    EXPECT_LT(failed_row.size(), 160u) << "a failed system's row is short; its reason is below the table";
}

TEST(compare_cli, a_system_whose_every_plan_fails_in_its_chip_mapper_says_why) {
    // ResNet-50 at 32 images per IPU (the micro-batch fixed, so the search does not try smaller ones): the plan's
    // estimate fits (weights stream from the IPU's DRAM), but the BSP mapper finds the activations too large for
    // the tiles, where they must stay (activations=tiles; by default they would go to streaming memory). The row
    // gives the chip mapper's reason, not only where the plans are.
    const fs::path out = temp("ipu");
    const auto r = run_tessel(
        "compare -w resnet50 --set workload.training=sgd --set workload.batch=256"
        " --system platforms/systems/ipu_pod16.yaml:machines=2,parallel.microbatch=32,ipu.mapper.activations=tiles"
        " -o " +
        out.string() + " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    ASSERT_EQ(doc["systems"].size(), 1u);
    const std::string error = doc["systems"][0]["error"].get<std::string>();
    EXPECT_NE(error.find("no plan finished; 2 of 2 (dp=8 tp=1 pp=1 microbatch=32, ...): workload does not fit: op "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("plan.json)"), std::string::npos) << error;
    EXPECT_EQ(error.find("tessel: error:"), std::string::npos) << error;
}

TEST(compare_cli, simulate_top_compares_the_best_of_each_systems_best_estimates) {
    // Each system's plans estimated from a window of their microbatches, its 2 best estimates simulated whole: the
    // row is the best of those, here the best of every plan simulated whole (the first test's).
    const fs::path out = temp("estimated");
    const auto r = run_tessel("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1 -o " +
                              out.string() + " --no-progress --simulate-top 2");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    const fs::path alone = temp("alone_whole");
    const auto p = run_tessel("plan -p platforms/systems/dgx_a100.yaml --set nodes=1" + k_gpt + " -o " +
                              alone.string() + " --no-progress");
    ASSERT_EQ(p.code, 0) << p.out;
    const nlohmann::json whole = nlohmann::json::parse(slurp(alone / "plan.json"));
    const nlohmann::json& best = whole["sizes"][0]["plans"][0];
    ASSERT_TRUE(doc["systems"][0].contains("best")) << doc.dump();
    EXPECT_EQ(doc["systems"][0]["best"]["plan"], best["plan"]);
    EXPECT_EQ(doc["systems"][0]["best"]["iteration_s"].get<double>(), best["iteration_s"].get<double>());
    const nlohmann::json plans =
        nlohmann::json::parse(slurp(doc["systems"][0]["plan_json"].get<std::string>()))["sizes"][0]["plans"];
    EXPECT_EQ(std::count_if(plans.begin(), plans.end(), [](const auto& x) { return x["status"] == "ok"; }), 2);
    EXPECT_TESSEL_ERROR(
        "compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1 --serve --simulate-top 2",
        "--simulate-top is a training comparison's");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1 --estimate-layers 1",
                        "add --simulate-top N");
}

TEST(compare_cli, bad_input_is_one_clear_error) {
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes",
                        "expected PARAM=VALUE after ':'");
    EXPECT_TESSEL_ERROR(
        "compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml --system platforms/systems/dgx_a100.yaml",
        "is given twice");
    for (const char* samples : {"nan", "inf", "0"})
        EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml --samples " + samples,
                            "expected a number above 0 and at most 1e30, got '" + std::string(samples) + "'");
    // A malformed --system is exit 2 before any plan runs, not a "does not train" row among the others.
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes=1,nodes=2",
                        "'nodes' is given twice");
    EXPECT_TESSEL_ERROR(
        "compare" + k_gpt + " --system platforms/systems/dgx_h100.yaml --system platforms/systems/nothere.yaml",
        "--system 'nothere': cannot open platform 'platforms/systems/nothere.yaml'");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodez=1",
                        "--system 'dgx_a100 nodez=1': 'nodez' is not a parameter of");
}

TEST(compare_cli, equal_power_sizes_each_system_to_the_largest_that_its_declared_tdp_allows) {
    // Hand-computed sizes for 12 kW: a DGX A100 node declares 8 x 400 W + 3.3 kW = 6.5 kW (one node; two are 13 kW), a
    // DGX H100 node 8 x 700 W + 4.6 kW = 10.2 kW, a TPU v4 192 W per chip on a 4 x 4 torus whose chips come in
    // sixteens: 48 (9.216 kW; 49 to 62 are refused, 64 are 12.288 kW). --max-plans 1 stops before simulating: the
    // sizing is what is checked here.
    const fs::path out = temp("power");
    const auto r = run_tessel(
        "compare" + k_gpt + " --power 12kW --max-plans 1 --system platforms/systems/dgx_a100.yaml:nodes" +
        " --system platforms/systems/dgx_h100.yaml:nodes --system "
        "platforms/systems/tpu_v4_pod.yaml:chips,torus_x=4,torus_y=4" +
        " --system platforms/systems/dgx_h100.yaml:nodes,parallel.tp=1 -o " + out.string() + " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "compare.json"));
    EXPECT_EQ(doc["power_budget_w"].get<double>(), 12000);
    ASSERT_EQ(doc["systems"].size(), 4u);
    EXPECT_EQ(doc["systems"][0]["system"], "dgx_a100 nodes=1");
    EXPECT_DOUBLE_EQ(doc["systems"][0]["tdp_w"].get<double>(), 6500);
    EXPECT_EQ(doc["systems"][1]["system"], "dgx_h100 nodes=1");
    EXPECT_DOUBLE_EQ(doc["systems"][1]["tdp_w"].get<double>(), 10200);
    EXPECT_EQ(doc["systems"][2]["system"], "tpu_v4_pod torus_x=4 torus_y=4 chips=48");
    EXPECT_DOUBLE_EQ(doc["systems"][2]["tdp_w"].get<double>(), 48 * 192);
    // A search restriction (parallel.*) is the plan's, not the platform's: it sizes like the system without it.
    EXPECT_EQ(doc["systems"][3]["system"], "dgx_h100 parallel.tp=1 nodes=1");
    EXPECT_NE(r.out.find("each as large as its TDP allows within 12 kW"), std::string::npos) << r.out;
    // At 13 kW exactly, two DGX A100 nodes fit (the budget is inclusive).
    const auto two = run_tessel("compare" + k_gpt +
                                " --power 13kW --max-plans 1 --system platforms/systems/dgx_a100.yaml:nodes -o " +
                                temp("power13").string() + " --no-progress --json");
    ASSERT_EQ(two.code, 0) << two.out;
    EXPECT_NE(two.out.find("\"system\": \"dgx_a100 nodes=2\""), std::string::npos) << two.out;
}

TEST(compare_cli, equal_power_needs_a_parameter_to_size_a_declared_tdp_and_a_budget_one_system_fits) {
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 20kW --system platforms/systems/dgx_a100.yaml:nodes=1",
                        "with --power, name the parameter to size the system by, without a value");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --system platforms/systems/dgx_a100.yaml:nodes",
                        "(a parameter without a value is the one --power sizes)");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 20kW --system platforms/systems/sn40l_node.yaml:sockets",
                        "sn40l_node declares no TDP");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 20kW --system platforms/systems/ipu_pod64.yaml:machines,ipu=bow",
                        "ipu_pod64 ipu=bow declares no TDP");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 5kW --system platforms/systems/dgx_h100.yaml:nodes",
                        "the smallest dgx_h100 (nodes=1) already draws 10.2 kW");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 20kg --system platforms/systems/dgx_h100.yaml:nodes",
                        "--power: ");
    EXPECT_TESSEL_ERROR("compare" + k_gpt + " --power 20kW --system platforms/systems/dgx_h100.yaml:gpus",
                        "'gpus' is not a parameter of");
}
