// `tessel plan` as a user runs it, on a small system where memory forces model parallelism: its ranking is the
// order of the plans simulated one by one with `tessel run`, its best plan is model parallel and beats every data-
// parallel plan, plain data parallelism fits only by paying for memory and is reported as slower, a re-run resumes
// instead of simulating again, a plan its chip mapper cannot fit is tried again at a smaller micro-batch, and bad
// input is one clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/run_summary.h"

using namespace tessel::test;
namespace fs = std::filesystem;

namespace {

// A 4-layer GPT on one DGX A100 whose GPUs have 200 MB: data parallelism alone fits only with recomputation layer by
// layer and ZeRO 2 (weights 4 B/param held whole), so the fast plans split the model.
const std::string k_system = "-p platforms/systems/dgx_a100.yaml -w gpt2";
const std::string k_sets =
    " --set workload.training=adam --set workload.batch=16 --set workload.layers=4 --set workload.hidden=512"
    " --set workload.heads=8 --set workload.seq=256 --set gpu.gpu.hbm.capacity=200MB";

fs::path temp(const std::string& name) {
    fs::path p = fs::temp_directory_path() / ("tessel_plan_" + std::to_string(getpid())) / name;
    fs::remove_all(p);
    return p;
}

std::string run_args(const nlohmann::json& p) {
    return " --set parallel.dp=" + std::to_string(p["dp"].get<int>()) +
           " --set parallel.tp=" + std::to_string(p["tp"].get<int>()) +
           " --set parallel.pp=" + std::to_string(p["pp"].get<int>()) +
           " --set parallel.microbatch=" + std::to_string(p["microbatch"].get<int>()) +
           " --set parallel.interleave=" + std::to_string(p["interleave"].get<int>()) +
           " --set parallel.schedule=" + p["schedule"].get<std::string>() +
           " --set parallel.recompute=" + p["recompute"].get<std::string>() +
           " --set parallel.zero=" + std::to_string(p["zero"].get<int>());
}

}  // namespace

TEST(plan_cli, ranks_as_individual_runs_and_model_parallelism_wins_where_memory_forces_it) {
    const fs::path out = temp("small");
    const auto r = run_tessel("plan " + k_system + k_sets + " -o " + out.string() + " --no-progress -j 2");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "plan.json"));
    ASSERT_EQ(doc["sizes"].size(), 1u);
    const nlohmann::json& size = doc["sizes"][0];
    EXPECT_EQ(size["chips"], 8);
    const nlohmann::json& plans = size["plans"];
    ASSERT_EQ(plans.size(), 20u) << "the plans that fit in 200 MB (plan_space_test covers the enumeration)";

    // Every plan simulated alone gives the iteration time the table ranks it by, exactly.
    double previous = 0;
    int rank = 0;
    for (const auto& p : plans) {
        ASSERT_EQ(p["status"], "ok") << p.dump();
        EXPECT_EQ(p["rank"], ++rank);
        const nlohmann::json s = run_summary(k_system + k_sets + run_args(p));
        EXPECT_EQ(s["sim_time_s"].get<double>(), p["iteration_s"].get<double>()) << p["plan"];
        EXPECT_EQ(s["throughput_per_s"].get<double>(), p["samples_per_s"].get<double>()) << p["plan"];
        double worst = 0;
        for (const auto& st : s["parallel"]["memory"]["stages"])
            worst = std::max(worst, st["total_bytes"].get<double>());
        EXPECT_EQ(worst, p["memory_bytes"].get<double>()) << "the planner's memory is the run's: " << p["plan"];
        EXPECT_LE(worst, 200e6);
        EXPECT_GE(p["iteration_s"].get<double>(), previous) << "ranked by iteration time";
        previous = p["iteration_s"].get<double>();
    }
    // The best plan splits the model. All-data-parallel chips fit only by paying for memory: ZeRO 2 (the weights
    // alone are 77.73 MB of the 200), and that plan is slower than the best.
    const nlohmann::json& best = plans[0];
    EXPECT_GT(best["tp"].get<int>() * best["pp"].get<int>(), 1);
    int all_dp = 0;
    for (const auto& p : plans)
        if (p["dp"] == 8) {
            ++all_dp;
            EXPECT_EQ(p["zero"], 2) << p["plan"];
            EXPECT_GT(p["rank"].get<int>(), 1) << p["plan"];
        }
    EXPECT_EQ(all_dp, 1);
    EXPECT_NE(r.out.find("plain data parallelism (dp=8 tp=1 pp=1 zero=2) is slower"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("best: " + best["plan"].get<std::string>()), std::string::npos) << r.out;
    // Its memory against the chip's: 195,679,744 B of 200 MB (by hand: 97.84%).
    EXPECT_EQ(best["memory_bytes"].get<double>(), 195679744.0);
    EXPECT_NE(r.out.find("\n  memory: the best plan fills 195.7 MB of the 200 MB per chip (97.8%)\n"),
              std::string::npos)
        << r.out;

    // Again: every plan is found in the results, nothing runs, the report is the same.
    const auto again = run_tessel("plan " + k_system + k_sets + " -o " + out.string() + " --no-progress -j 2");
    ASSERT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("20 done earlier, 0 to run"), std::string::npos) << again.out;
    EXPECT_EQ(nlohmann::json::parse(slurp(out / "plan.json"))["sizes"], doc["sizes"]);
}

TEST(plan_cli, scale_gives_a_pareto_front_over_system_sizes) {
    const fs::path out = temp("scale");
    const auto r = run_tessel("plan " + k_system +
                              " --set workload.training=adam --set workload.batch=16 --set workload.layers=4"
                              " --set workload.hidden=512 --set workload.heads=8 --set workload.seq=256"
                              " --scale nodes=1,2 --tp 1 --pp 1 --json -o " +
                              out.string() + " --no-progress -j 2");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "plan.json"));
    ASSERT_EQ(doc["sizes"].size(), 2u);
    EXPECT_EQ(doc["sizes"][0]["chips"], 8);
    EXPECT_EQ(doc["sizes"][1]["chips"], 16);
    // The front keeps a size only when it beats every smaller one.
    double fastest = 0;
    for (const auto& f : doc["pareto"]) {
        EXPECT_GT(f["samples_per_s"].get<double>(), fastest);
        fastest = f["samples_per_s"].get<double>();
    }
    for (const auto& s : doc["sizes"]) {
        const double best = s["plans"][0]["samples_per_s"].get<double>();
        EXPECT_LE(best, fastest);
    }
}

TEST(plan_cli, a_plan_its_chip_mapper_cannot_fit_is_simulated_again_at_half_the_micro_batch) {
    // ResNet-50 on 8 IPUs at 32 images each: the estimate fits (weights stream from the IPU's DRAM), but the BSP
    // mapper finds 32 images' activations (and 16's) too large for the tiles: they run only with the activations
    // the backward pass reads in streaming memory, gigabytes over the gateway. The search halves the micro-batch
    // until a plan keeps them on the tiles (8: 4 accumulated per iteration), and ranks it first, far ahead.
    const fs::path out = temp("retry");
    const auto r = run_tessel(
        "plan -p platforms/systems/ipu_pod16.yaml --set machines=2 -w resnet50 --set workload.training=sgd"
        " --set workload.batch=256 -o " +
        out.string() + " --no-progress");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("6 plans simulated, 0 do not fit (4 of them added at a smaller micro-batch"),
              std::string::npos)
        << r.out;
    const nlohmann::json doc = nlohmann::json::parse(slurp(out / "plan.json"));
    const nlohmann::json& size = doc["sizes"][0];
    EXPECT_EQ(size["retried_smaller_microbatch"].get<int>(), 4);
    ASSERT_EQ(size["plans"].size(), 6u);
    const nlohmann::json& best = size["plans"][0];
    EXPECT_EQ(best["status"], "ok");
    EXPECT_EQ(best["microbatch"].get<int>(), 8);
    int off_chip = 0;
    for (const auto& p : size["plans"])
        if (p["microbatch"].get<int>() > 8) {
            ++off_chip;
            EXPECT_EQ(p["status"], "ok") << p.dump();
            EXPECT_GT(p["iteration_s"].get<double>(), 5 * best["iteration_s"].get<double>()) << p.dump();
        }
    EXPECT_EQ(off_chip, 4);
    // A re-run resumes: nothing is simulated again and the ranking is the same.
    const auto again = run_tessel(
        "plan -p platforms/systems/ipu_pod16.yaml --set machines=2 -w resnet50 --set workload.training=sgd"
        " --set workload.batch=256 -o " +
        out.string() + " --no-progress --json");
    ASSERT_EQ(again.code, 0) << again.out;
    const nlohmann::json doc2 = nlohmann::json::parse(slurp(out / "plan.json"));
    EXPECT_EQ(doc2["sizes"][0]["plans"][0]["plan"], best["plan"]);
    EXPECT_EQ(doc2["sizes"][0]["plans"][0]["iteration_s"].get<double>(), best["iteration_s"].get<double>());
}

TEST(plan_cli, simulate_top_estimates_every_plan_and_simulates_the_best_estimates_whole) {
    // The 20 plans of the first test, each estimated from a window of its microbatches (one per pipeline stage),
    // the 3 best estimates simulated whole: the best of those is the best of simulating all 20 whole.
    const fs::path whole_dir = temp("whole"), est_dir = temp("estimated");
    const auto whole = run_tessel("plan " + k_system + k_sets + " -o " + whole_dir.string() + " --no-progress -j 2");
    ASSERT_EQ(whole.code, 0) << whole.out;
    const auto r =
        run_tessel("plan " + k_system + k_sets + " -o " + est_dir.string() + " --no-progress -j 2 --simulate-top 3");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("20 plans estimated, 4 do not fit; the best 3 simulated whole"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("estimates: 3 of the best estimates simulated whole"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(est_dir / "estimates" / "results.jsonl")) << "the estimates are a sweep of their own";
    const nlohmann::json all = nlohmann::json::parse(slurp(whole_dir / "plan.json"))["sizes"][0]["plans"];
    const nlohmann::json plans = nlohmann::json::parse(slurp(est_dir / "plan.json"))["sizes"][0]["plans"];
    ASSERT_EQ(plans.size(), 20u);
    std::map<std::string, double> simulated;  // every plan simulated whole, by label
    for (const auto& p : all) simulated[p["plan"].get<std::string>()] = p["iteration_s"].get<double>();
    int whole_runs = 0;
    for (size_t k = 0; k < plans.size(); ++k) {
        const auto& p = plans[k];
        ASSERT_GT(p["estimate_s"].get<double>(), 0) << p.dump();
        const double truth = simulated.at(p["plan"].get<std::string>());
        // Every estimate within 2% of the plan simulated whole (the largest here is a 2-stage interleaved plan).
        EXPECT_NEAR(p["estimate_s"].get<double>(), truth, 0.02 * truth) << p["plan"];
        if (p["status"] == "ok") {
            ++whole_runs;
            EXPECT_EQ(p["rank"].get<int>(), whole_runs);
            EXPECT_LE(p["estimate_rank"].get<int>(), 3) << "the best estimates are the ones simulated whole";
            EXPECT_EQ(p["iteration_s"].get<double>(), truth) << "simulated whole, as the full search does";
            EXPECT_NEAR(p["estimate_error"].get<double>(), p["estimate_s"].get<double>() / truth - 1, 1e-9);
        } else {
            EXPECT_EQ(p["status"], "estimated") << p.dump();
            EXPECT_FALSE(p.contains("iteration_s"));
            EXPECT_GT(p["estimate_rank"].get<int>(), 3);
        }
    }
    EXPECT_EQ(whole_runs, 3);
    EXPECT_EQ(plans[0]["plan"], all[0]["plan"]) << "the simulated best is the full search's best";
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --simulate-top 3 --rank energy -n",
                        "--simulate-top ranks the plans by their estimated iteration time");
}

TEST(plan_cli, estimate_layers_counts_the_layers_of_plans_with_more_than_two_a_chunk) {
    // The same 20 plans estimated from 1 and 2 layers per pipeline chunk where a chunk has more than 2 (the 4-layer
    // model's single-stage plans); the others are estimated with every layer, as without --estimate-layers.
    const fs::path whole_dir = temp("whole_l"), est_dir = temp("estimated_l");
    const auto whole = run_tessel("plan " + k_system + k_sets + " -o " + whole_dir.string() + " --no-progress -j 2");
    ASSERT_EQ(whole.code, 0) << whole.out;
    const auto r = run_tessel("plan " + k_system + k_sets + " -o " + est_dir.string() +
                              " --no-progress -j 2 --simulate-top 3 --estimate-layers 1");
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json all = nlohmann::json::parse(slurp(whole_dir / "plan.json"))["sizes"][0]["plans"];
    std::map<std::string, double> simulated;
    for (const auto& p : all) simulated[p["plan"].get<std::string>()] = p["iteration_s"].get<double>();
    const nlohmann::json plans = nlohmann::json::parse(slurp(est_dir / "plan.json"))["sizes"][0]["plans"];
    ASSERT_EQ(plans.size(), 20u);
    for (const auto& p : plans) {
        const double truth = simulated.at(p["plan"].get<std::string>());
        EXPECT_NEAR(p["estimate_s"].get<double>(), truth, 0.02 * truth) << p["plan"];
    }
    EXPECT_EQ(plans[0]["plan"], all[0]["plan"]) << "the simulated best is the full search's best";
    // The single-stage plans ran as two samples of 1 and 2 layers for a model of 4; the others once, whole.
    int samples = 0, whole_runs = 0;
    std::ifstream rows(est_dir / "estimates" / "results.jsonl");
    for (std::string line; std::getline(rows, line);) {
        const nlohmann::json row = nlohmann::json::parse(line);
        const auto& params = row["params"];
        const std::string layers = params["workload.layers"], pp = params["parallel.pp"];
        if (layers == "4") {
            ++whole_runs;
            EXPECT_EQ(params["mapper.layers_of"], "0");
        } else {
            ++samples;
            EXPECT_EQ(pp, "1") << "only a chunk of more than 2 layers is sampled";
            EXPECT_TRUE(layers == "1" || layers == "2") << layers;
            EXPECT_EQ(params["mapper.layers_of"], "4");
        }
    }
    EXPECT_GT(samples, 0);
    EXPECT_GT(whole_runs, 0);
    EXPECT_EQ(samples % 2, 0) << "two samples a plan";
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --estimate-layers 1 -n", "add --simulate-top N");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --simulate-top 2 --estimate-layers -1 -n",
                        "expected a whole number from 0 to 1000000, got '-1'");
    EXPECT_TESSEL_ERROR(
        "plan -p platforms/systems/ipu_pod16.yaml -w resnet50 --set workload.training=sgd "
        "--set workload.batch=256 --simulate-top 2 --estimate-layers 1 -n",
        "has no layers parameter");
}

TEST(plan_cli, bad_input_is_one_clear_error) {
    EXPECT_TESSEL_ERROR("plan -p platforms/gpu/a100_sxm.yaml -w gpt2 --set workload.training=adam",
                        "tessel plan needs a system");
    EXPECT_TESSEL_ERROR("plan " + k_system + " --set workload.batch=16 --set workload.layers=4 -n",
                        "set workload.training");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --tp 3 -n", "no parallel plan of 'gpt2' fits");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --tp 2,x -n", "--tp: expected whole numbers");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --set parallel.tp=2 --tp 2 -n", "give one");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --set parallel.bogus=1 -n", "parallel.bogus");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --set noc.bogus=1 -n", "noc.bogus");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --set gpu.gpu.hbm.capacity=1MB -n",
                        "no parallel plan of 'gpt2' fits on");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --max-plans 2 -n", "narrow the search");
    EXPECT_TESSEL_ERROR("plan " + k_system + k_sets + " --scale nodes -n", "--scale: expected PARAM=V1,V2");
}
