// The command line end to end: every bundled example runs, respects the physical bound and is
// deterministic; bad input exits 2 with one clear message; describe and list work.
#include <gtest/gtest.h>

#include "tests/support/cli.h"
#include "tests/support/trace_check.h"

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include "tests/support/files.h"

namespace fs = std::filesystem;

namespace {

using result = tessel::test::cli_result;

using tessel::test::run_tessel;

using tessel::test::slurp;

fs::path scratch(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("tessel_cli_test_" + std::to_string(getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

}  // namespace

TEST(cli, every_example_runs_and_never_beats_physics) {
    struct example {
        std::string platform, what;
    };
    std::vector<example> examples;
    for (const char* w : {"workloads/gemm.yaml", "workloads/mlp.yaml"})
        examples.push_back({"-p platforms/teaching/mesh4x4.yaml", std::string("-w ") + w});
    // A program that names its platform (platform: gc2) runs there; the others on the teaching mesh.
    for (const auto& e : fs::directory_iterator("workloads/programs"))
        if (e.path().extension() == ".yaml")
            examples.push_back(
                {YAML::LoadFile(e.path().string())["platform"] ? "" : "-p platforms/teaching/mesh4x4.yaml",
                 "-g " + e.path().string()});
    ASSERT_GE(examples.size(), 5u);
    int i = 0;
    for (const auto& ex : examples) {
        const fs::path out = scratch("example" + std::to_string(i++));
        const result r = run_tessel("run " + ex.platform + " " + ex.what + " --out " + out.string());
        ASSERT_EQ(r.code, 0) << ex.what << "\n" << r.out;
        const auto j = nlohmann::json::parse(slurp(out / "summary.json"));
        const double t = j["sim_time_s"], bound = j["physical_bound_s"];
        EXPECT_GT(t, 0) << ex.what;
        EXPECT_GE(t, bound) << ex.what << ": simulated time below the largest work / peak rate";
        EXPECT_TRUE(fs::exists(out / "resolved.yaml"));
        EXPECT_TRUE(fs::exists(out / "stats.csv"));
    }
}

TEST(cli, a_pipeline_headlines_its_steady_state_beside_the_run_with_fill_and_drain) {
    // The layer-pipelined wafer: once the pipeline is full, a chunk leaves the slowest op every interval, and a
    // whole batch takes no less than the busiest unit's work for it (intervals measured while the pipeline fills
    // see less contention). So the steady state is samples / max(chunks x that interval, the busiest unit's busy
    // time), above this run's rate (which fills and drains the pipeline) and never above samples over the
    // physical bound. A run without a pipeline has no steady state.
    const fs::path out = scratch("steady");
    const result r = run_tessel("run -p wafer16 -w workloads/mlp.yaml --out " + out.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(slurp(out / "summary.json"));
    ASSERT_TRUE(j.contains("steady_throughput_per_s")) << j.dump(1);
    double interval = 0, chunks = 0, busy = 0;
    for (const auto& op : j["mapping"]["timing"])
        if (op["interval_s"].get<double>() > interval) {
            interval = op["interval_s"];
            chunks = op["chunks"];
        }
    for (const auto& u : j["resources"]) busy = std::max(busy, u["busy_max_s"].get<double>());
    ASSERT_GT(interval, 0);
    const double samples = j["samples"], steady = j["steady_throughput_per_s"];
    EXPECT_DOUBLE_EQ(steady, samples / std::max(chunks * interval, busy));
    EXPECT_GT(steady, j["throughput_per_s"].get<double>());
    EXPECT_LE(steady, samples / j["physical_bound_s"].get<double>());
    EXPECT_NE(r.out.find("samples/s in steady state (pipeline full); this run "), std::string::npos) << r.out;

    // BERT-large on the WSE-2: its slowest interval, measured while the pipeline fills, gives 4,247 samples/s,
    // which the busiest fabric link could not carry (256 us of traffic per sample): the link bounds it.
    const fs::path big = scratch("steady_bert");
    ASSERT_EQ(run_tessel("run -p wse2 -w bert-large --out " + big.string()).code, 0);
    const auto b = nlohmann::json::parse(slurp(big / "summary.json"));
    double link = 0;
    for (const auto& u : b["resources"]) link = std::max(link, u["busy_max_s"].get<double>());
    EXPECT_EQ(b["resources"][0]["name"], "fabric");
    EXPECT_DOUBLE_EQ(b["steady_throughput_per_s"].get<double>(), 1 / link);
    EXPECT_LE(b["steady_throughput_per_s"].get<double>(), 1 / b["physical_bound_s"].get<double>() * (1 + 1e-9));

    const fs::path mesh = scratch("steady_mesh");
    ASSERT_EQ(run_tessel("run -p platforms/teaching/mesh4x4.yaml -w workloads/mlp.yaml --out " + mesh.string()).code,
              0);
    EXPECT_FALSE(nlohmann::json::parse(slurp(mesh / "summary.json")).contains("steady_throughput_per_s"));
}

TEST(cli, identical_runs_give_byte_identical_outputs) {
    const fs::path a = scratch("det_a"), b = scratch("det_b");
    const std::string args = "run -p platforms/teaching/mesh4x4.yaml -w workloads/mlp.yaml ";
    ASSERT_EQ(run_tessel(args + "--out " + a.string() + " --trace " + (a / "t.json").string()).code, 0);
    ASSERT_EQ(run_tessel(args + "--out " + b.string() + " --trace " + (b / "t.json").string()).code, 0);
    for (const char* f : {"stats.json", "stats.csv", "summary.json", "resolved.yaml", "t.json"})
        EXPECT_EQ(slurp(a / f), slurp(b / f)) << f << " differs between identical runs";
    tessel::test::expect_no_overlapping_slices(nlohmann::json::parse(slurp(a / "t.json")), "mesh4x4 mlp");
}

TEST(cli, traces_are_written_and_well_formed) {
    const fs::path d = scratch("traces");
    const result r = run_tessel("run -p mesh4x4 -g workloads/programs/two_senders.yaml --vcd " +
                                (d / "t.vcd").string() + " --trace " + (d / "t.json").string());
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(slurp(d / "t.json"));
    int slices = 0;
    bool named = false;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] == "X") {
            ++slices;
            named = named || e["name"] == "from_00";
        }
    }
    EXPECT_GT(slices, 10);
    EXPECT_TRUE(named) << "slices are named by the op (step id) they belong to";
    tessel::test::expect_no_overlapping_slices(j, "two_senders");
    const std::string vcd = slurp(d / "t.vcd");
    EXPECT_NE(vcd.find("$timescale 1fs $end"), std::string::npos);
    EXPECT_NE(vcd.find("$enddefinitions $end"), std::string::npos);
    EXPECT_NE(vcd.find("$var wire 1"), std::string::npos);
    EXPECT_TRUE(fs::exists(d / "t.resolved.yaml")) << "the resolved configuration goes next to the results";
    // A scope filter keeps only what matches.
    const result s =
        run_tessel("run -p mesh4x4 -g workloads/programs/two_senders.yaml --trace-scope '*tile[3,0]*' --trace " +
                   (d / "s.json").string());
    ASSERT_EQ(s.code, 0) << s.out;
    const std::string scoped = slurp(d / "s.json");
    EXPECT_NE(scoped.find("tile[3,0]"), std::string::npos);
    EXPECT_EQ(scoped.find("tile[0,0]"), std::string::npos);
    tessel::test::expect_no_overlapping_slices(nlohmann::json::parse(scoped), "two_senders scoped");
}

TEST(cli, bad_input_exits_2_with_one_clear_message) {
    struct bad {
        std::string args, expect;
    };
    const std::vector<bad> cases = {
        {"run -p no_such_platform -w mlp", "cannot open platform 'no_such_platform'"},
        {"run -p mesh4x4 -w mlp --set noc.link_bandwith=64B/cycle",
         "--set noc.link_bandwith: no such parameter (did you mean 'noc.link_bandwidth'?)"},
        {"run -p mesh4x4 -w mlp --set noc.link_bandwidth=64GHz",
         "--set noc.link_bandwidth=64GHz: parameter 'link_bandwidth'"},
        {"run -p mesh4x4 -w mlp --set noc.link_bandwidth", "expected PATH=VALUE"},
        {"run -p mesh4x4 -g no/such/program.yaml", "cannot open 'no/such/program.yaml'"},
        {"run -p mesh4x4", "nothing to run: give --workload"},
        {"describe no_such_kind", "no component kind or mapper named 'no_such_kind'"},
        {"run -p mesh4x4 -w mlp --trace-from 10GHz", "--trace-from: expected a time"},
    };
    for (const auto& c : cases) {
        const result r = run_tessel(c.args);
        EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
        EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
        EXPECT_EQ(r.out.find("internal error"), std::string::npos) << r.out;
    }
}

TEST(cli, output_that_cannot_be_written_is_an_error) {
    // A full disk (/dev/full refuses every write): the results are lost, so the run must not exit 0. The message
    // goes to stderr (here sent after stdout, to the same full device, so only the status is seen).
    for (const char* args : {"list", "run -p mesh4x4 -w mlp --json", "run -p mesh4x4 -w mlp"})
        EXPECT_EQ(run_tessel(std::string(args) + " >/dev/full").code, 2) << args;
    // A results folder that cannot be made (a file stands where it should go): the path, exit 2.
    const fs::path d = scratch("out_is_a_file");
    std::ofstream(d / "file") << "x";
    const std::string under = (d / "file" / "results").string();
    for (const std::string& args :
         {"plan -p dgx_a100 -w gpt2 --set workload.training=adam --set workload.batch=16 --dp 8 --tp 1 --pp 1 -o " +
              under + " --no-progress",
          "compare -w gpt2 --set workload.training=adam --set workload.batch=16 --system "
          "platforms/systems/dgx_a100.yaml:nodes=1 -o " +
              under + " --no-progress"}) {
        const result r = run_tessel(args);
        EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
        EXPECT_NE(r.out.find("tessel: error: cannot use '" + under + "': Not a directory"), std::string::npos) << r.out;
    }
}

TEST(cli, program_errors_have_file_line_column) {
    const fs::path d = scratch("prog");
    std::ofstream(d / "p.yaml")
        << "program: p\nsteps:\n  - id: a\n    transfer: {from: \"tile[0,0]\", to: \"tile[9,0]\", bytes: 1KiB}\n";
    result r = run_tessel("run -p mesh4x4 -g " + (d / "p.yaml").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("p.yaml:4:39:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("outside the 4 x 4 grid of 'tile'"), std::string::npos) << r.out;
    std::ofstream(d / "q.yaml") << "program: q\nsteps:\n  - id: a\n    delay: 1us\n    after: [b]\n";
    r = run_tessel("run -p mesh4x4 -g " + (d / "q.yaml").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("q.yaml:5:13: after: no step with id 'b'"), std::string::npos) << r.out;
    std::ofstream(d / "c.yaml")
        << "program: c\nsteps:\n  - {id: a, delay: 1us, after: [b]}\n  - {id: b, delay: 1us, after: [a]}\n";
    r = run_tessel("run -p mesh4x4 -g " + (d / "c.yaml").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(
        r.out.find("c.yaml:3:5: program 'c' can never finish: its steps wait on each other in a cycle: step 0 'a' -> "
                   "step 1 'b' -> step 0 'a' (2 steps are blocked)"),
        std::string::npos)
        << r.out;
    std::ofstream(d / "u.yaml") << "program: u\nsteps:\n  - id: a\n    delay: 1 parsec\n";
    r = run_tessel("run -p mesh4x4 -g " + (d / "u.yaml").string());
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.out.find("u.yaml:4:12: delay: unknown unit 'parsec'"), std::string::npos) << r.out;
}

TEST(cli, describe_and_list) {
    const result d = run_tessel("describe mesh_noc");
    EXPECT_EQ(d.code, 0);
    EXPECT_NE(d.out.find("link_bandwidth"), std::string::npos);
    EXPECT_NE(d.out.find("32B/cycle"), std::string::npos);
    const result h = run_tessel("describe hbm");
    EXPECT_NE(h.out.find("hbm3_stack"), std::string::npos);
    const result l = run_tessel("list");
    EXPECT_EQ(l.code, 0);
    for (const char* k :
         {"pe", "sram_bank", "hbm", "mesh_noc", "ring", "crossbar", "chip_link", "barrier", "tile", "mesh"})
        EXPECT_NE(l.out.find(k), std::string::npos) << k << " missing from tessel list: a registration was dropped";
}

TEST(cli, components_doc_matches_the_code) {
    const result r = run_tessel("describe --all --markdown");
    ASSERT_EQ(r.code, 0);
    EXPECT_TRUE(slurp("docs/components.md") == r.out)
        << "docs/components.md is out of date: run  build/bin/tessel describe --all --markdown > docs/components.md";
}

TEST(cli, a_mistyped_command_is_named_with_a_suggestion) {
    const result r = run_tessel("runn -p mesh4x4 -w mlp");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("unknown command 'runn' (did you mean 'run'?)"), std::string::npos) << r.out;
}
