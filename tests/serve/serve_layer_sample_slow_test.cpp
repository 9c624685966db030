// `tessel serve --set serve.simulated_layers=N` against simulating every layer, on a GPU, a GPU system's pipeline
// and an SN40L node (engine/system/layer_sample.h). A slow test, left out of the sanitizer pass (70 s of it,
// 2026-12-07): six whole serve runs; the sample's code runs there in tests/system/layer_sample_test.cpp.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/files.h"

using namespace tessel::test;
namespace fs = std::filesystem;

namespace {

fs::path temp(const std::string& name) { return fresh_temp("tessel_serve_sample_", name); }

}  // namespace

TEST(serve_layer_sample, steps_simulated_with_fewer_layers_add_the_rest_at_one_layers_time) {
    // serve.simulated_layers=N: each step runs with N and N+1 layers a stage; the rest add their difference. On
    // the kernel model (one chip, and a pipeline of 2 stages) and on the RDU's spatial mapper, a lone request's
    // times match simulating every layer within 0.5%.
    const std::string rdu_model =
        " -p platforms/systems/sn40l_node.yaml --set sockets=8 --set parallel.tp=8 -w llama3-8b --set "
        "workload.layers=6 --set workload.hidden=1024 --set workload.heads=8 --set workload.ffn=2816 --set "
        "workload.vocab=8192";
    const std::array<std::array<std::string, 3>, 3> cases = {{
        {" -p gpu/h100_sxm -w llama3-8b --set workload.layers=8", "2", "2 and 3 of its 8 layers"},
        {" -p systems/dgx_h100 -w llama3-8b --set workload.layers=8 --set parallel.tp=4 --set parallel.pp=2", "1",
         "2 and 4 of its 8 layers"},
        {rdu_model, "2", "2 and 3 of its 6 layers"},
    }};
    int i = 0;
    for (const auto& [model, layers, line] : cases) {
        const std::string run = "serve" + model +
                                " --set serve.requests=1 --set serve.max_batch=1 --set serve.prompt_tokens=64"
                                " --set serve.output_tokens=4 --no-progress -o ";
        const fs::path whole = temp("whole" + std::to_string(i)), sampled = temp("sampled" + std::to_string(i++));
        const auto w = run_tessel(run + whole.string());
        std::string sampled_run = run + sampled.string();
        sampled_run += " --set serve.simulated_layers=";
        sampled_run += layers;
        const auto f = run_tessel(sampled_run);
        ASSERT_EQ(w.code, 0) << w.out;
        ASSERT_EQ(f.code, 0) << f.out;
        EXPECT_NE(f.out.find("(each with " + line + ")"), std::string::npos) << f.out;
        const nlohmann::json a = nlohmann::json::parse(slurp(whole / "summary.json"));
        const nlohmann::json b = nlohmann::json::parse(slurp(sampled / "summary.json"));
        for (const char* k : {"ttft_s", "e2e_s"}) {
            const double x = a[k]["mean"].get<double>(), y = b[k]["mean"].get<double>();
            EXPECT_NEAR(y, x, 5e-3 * x) << model << " " << k;
        }
        EXPECT_FALSE(a.contains("simulated_layers"));
        EXPECT_EQ(b["simulated_layers"]["model"], model == rdu_model ? 6 : 8);
    }
    fs::remove_all(temp("").parent_path());
}
