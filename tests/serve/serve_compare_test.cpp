// `tessel compare --serve` as a user runs it: each system's row is its own `tessel plan --serve` (its best point
// and every point, read back from its folder; a system's own parallel.tp restricts its search), the front is marked
// over every system's points by its definition, a system that cannot hold the model is a row with the reason, equal
// power sizes each system by its TDP, and the training comparison's knobs are refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/files.h"

using namespace tessel::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path temp(const std::string& name) { return fresh_temp("tessel_serve_compare_", name); }

// A 2-layer Llama-3-8B with short requests keeps every step short.
const std::string k_model =
    " -w llama3-8b --set workload.layers=2 --set serve.prompt_tokens=64 --set serve.output_tokens=8 --users 1,8"
    " --no-progress";

bool beaten_by_any(const json& x, const json& systems) {
    for (const auto& s : systems)
        for (const auto& y : s["points"])
            if (y["tokens_per_s_per_user"] > x["tokens_per_s_per_user"] &&
                y["output_tokens_per_s_per_chip"] > x["output_tokens_per_s_per_chip"])
                return true;
    return false;
}

}  // namespace

TEST(serve_compare, each_system_is_its_own_search_and_the_front_spans_them_all) {
    const fs::path out = temp("systems");
    const auto r =
        run_tessel("compare --serve" + k_model +
                   " --system platforms/systems/dgx_h100.yaml --system platforms/systems/mi300x_node.yaml:parallel.tp=4"
                   " --system platforms/systems/groqrack.yaml:nodes=1 --set serve.slo_tpot=1s -o " +
                   out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const json doc = json::parse(slurp(out / "compare_serve.json"));
    ASSERT_EQ(doc["systems"].size(), 3u);
    int on_front = 0;
    for (const auto& s : doc["systems"]) {
        const std::string name = s["system"].get<std::string>();
        if (name.rfind("groqrack", 0) == 0) {
            // 8 GroqChips cannot hold 2 layers' weights and the LM head: a row with the reason, not an abort.
            EXPECT_FALSE(s.contains("best")) << s;
            EXPECT_NE(s["error"].get<std::string>().find("does not fit"), std::string::npos) << s;
            EXPECT_TRUE(s["points"].empty());
            continue;
        }
        // The row is the system's plan --serve, read back: its best point and every plan's points.
        const json search = json::parse(slurp(s["plan_serve_json"].get<std::string>()));
        EXPECT_EQ(s["chips"], 8);
        EXPECT_EQ(s["best"]["output_tokens_per_s_per_chip"], search["best"]["output_tokens_per_s_per_chip"]);
        EXPECT_EQ(s["best"]["plan"], search["best"]["plan"]);
        std::size_t points = 0;
        for (const auto& p : search["plans"]) points += p["points"].size();
        EXPECT_EQ(s["points"].size(), points);
        // The DGX's every tp (1, 2, 4, 8); the MI300X node's search restricted by its own parallel.tp.
        const bool restricted = name == "mi300x_node parallel.tp=4";
        EXPECT_EQ(points, restricted ? 2u : 8u) << name;
        if (restricted) {
            EXPECT_EQ(s["points"][0]["plan"], "tp=4 pp=1 dp=2");
        }
        for (const auto& x : s["points"]) {
            EXPECT_EQ(x["front"].get<bool>(), !beaten_by_any(x, doc["systems"])) << x;
            on_front += x["front"].get<bool>();
        }
    }
    EXPECT_GT(on_front, 0);
    // The report names the leader by tokens/s per chip within the objectives and says why the rack has no row.
    const auto text = run_tessel("compare --serve" + k_model +
                                 " --system platforms/systems/dgx_h100.yaml"
                                 " --system platforms/systems/mi300x_node.yaml:parallel.tp=4"
                                 " --system platforms/systems/groqrack.yaml:nodes=1 --set serve.slo_tpot=1s -o " +
                                 out.string());
    ASSERT_EQ(text.code, 0) << text.out;
    for (const char* line : {"most tokens/s per chip within the objectives: ", "fastest for one user",
                             "does not serve: does not fit in memory (below)", "groqrack nodes=1: does not fit"})
        EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
}

TEST(serve_compare, equal_power_sizes_each_system_by_its_tdp) {
    // 12 kW holds one DGX H100 (10.2 kW declared) and one 8-card Gaudi 3 node (7.2 kW), not two of either.
    const fs::path out = temp("power");
    const auto r = run_tessel("compare --serve" + k_model +
                              " --power 12kW --system platforms/systems/dgx_h100.yaml:nodes"
                              " --system platforms/systems/hls_gaudi3.yaml:nodes --json -o " +
                              out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const json doc = json::parse(slurp(out / "compare_serve.json"));
    EXPECT_DOUBLE_EQ(doc["power_budget_w"].get<double>(), 12000.0);
    ASSERT_EQ(doc["systems"].size(), 2u);
    EXPECT_EQ(doc["systems"][0]["system"], "dgx_h100 nodes=1");
    EXPECT_DOUBLE_EQ(doc["systems"][0]["tdp_w"].get<double>(), 10200.0);
    EXPECT_EQ(doc["systems"][1]["system"], "hls_gaudi3 nodes=1");
    EXPECT_DOUBLE_EQ(doc["systems"][1]["tdp_w"].get<double>(), 7200.0);
    for (const auto& s : doc["systems"]) EXPECT_EQ(s["chips"], 8);
}

TEST(serve_compare, a_training_comparisons_knobs_are_refused) {
    const fs::path out = temp("bad");
    for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
             {" --samples 3e8", "--samples is a training comparison's"},
             {" --rank energy", "--rank is a training comparison's"},
             {" --set parallel.tp=2", "searches the plans itself"},
             {" --system platforms/systems/dgx_h100.yaml", "is given twice"},
             {" --system platforms/systems/dgx_h100.yaml:gpus=4", "'gpus' is not a parameter"}}) {
        std::string command = "compare --serve" + k_model + " --system platforms/systems/dgx_h100.yaml";
        command += args + " -o " + out.string();
        const auto r = run_tessel(command);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
        EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
    }
    const auto r = run_tessel("compare -w gpt2 --users 4 --system platforms/systems/dgx_h100.yaml -o " + out.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("--users is for tessel compare --serve"), std::string::npos) << r.out;
}
