// Emit and replay: `tessel run ... --emit-program F` writes the mapped program; `tessel run -p SAME -g F`
// must give the same simulated time and byte-identical statistics, for every mapper whose programs carry all
// they need (kernels on a GPU and a TPU, tsp, rdu, bsp, mesh). A broken emitted file is a located error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/cli.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct replay_case {
    const char* platform;
    const char* workload;
};

class emit_replay : public ::testing::TestWithParam<replay_case> {};

TEST_P(emit_replay, same_time_and_statistics) {
    const replay_case c = GetParam();
    const fs::path dir = fs::temp_directory_path() / ("tessel_emit_" + std::string(c.platform) + "_" + c.workload);
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml", s1 = dir / "mapped.json", s2 = dir / "replayed.json";
    const auto mapped = run_tessel(std::string("run -p ") + c.platform + " -w " + c.workload + " --json --stats " + s1.string() +
                                   " --emit-program " + prog.string());
    ASSERT_EQ(mapped.code, 0) << mapped.out;
    // The program names its platform, so -g alone replays it.
    const auto replayed = run_tessel("run -g " + prog.string() + " --json --stats " + s2.string());
    ASSERT_EQ(replayed.code, 0) << replayed.out;
    const auto a = nlohmann::json::parse(mapped.out), b = nlohmann::json::parse(replayed.out);
    EXPECT_EQ(a["sim_time_s"].get<double>(), b["sim_time_s"].get<double>());
    EXPECT_EQ(a["steps"], b["steps"]);
    EXPECT_GT(a["sim_time_s"].get<double>(), 0.0);
    EXPECT_EQ(slurp(s1), slurp(s2)) << "statistics differ between the mapped run and its replay";
    if (std::string(c.platform) == "tpu_v4") {
        // docs/program-yaml.md quotes this run.
        const std::string quoted = "sim_time_s " + a["sim_time_s"].dump();
        EXPECT_NE(slurp("docs/program-yaml.md").find(quoted), std::string::npos) << "docs/program-yaml.md should quote " << quoted;
    }
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(every_mapper, emit_replay,
                         ::testing::Values(replay_case{"h100_sxm", "resnet50"},  // kernels (GPU): kernel payloads
                                           replay_case{"tpu_v4", "resnet50"},    // kernels (TPU)
                                           replay_case{"groqchip1", "resnet50"}, // tsp: instruction payloads, strict
                                           replay_case{"sn40l", "resnet50"},     // rdu
                                           replay_case{"gc200", "mlp"},          // bsp (ResNet-50: 5 M steps, see docs)
                                           replay_case{"mesh4x4", "mlp"}),       // mesh
                         [](const auto& info) { return std::string(info.param.platform); });

TEST(emit_replay_errors, a_bad_line_names_its_file_and_line) {
    const fs::path dir = fs::temp_directory_path() / "tessel_emit_bad";
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml";
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --emit-program " + prog.string()).code, 0);
    std::string text = slurp(prog);
    // Corrupt the first transfer step: its byte count becomes a word.
    const size_t at = text.find("\n    transfer ");
    ASSERT_NE(at, std::string::npos);
    const size_t line_no = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 2;
    const size_t end = text.find('\n', at + 1);
    std::string line = text.substr(at + 1, end - at - 1);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    ASSERT_GE(f.size(), 10u);
    f[8] = "lots";  // transfer op place unit address place unit address BYTES start
    std::string bad = "    ";
    for (size_t i = 0; i < f.size(); ++i) bad += (i ? " " : "") + f[i];
    text.replace(at + 1, end - at - 1, bad);
    std::ofstream(prog) << text;
    const auto r = run_tessel("run -g " + prog.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(prog.string() + ":" + std::to_string(line_no) + ":"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("bytes: expected a whole number, got 'lots'"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

TEST(emit_replay_errors, traffic_programs_are_their_own_file) {
    const auto r = run_tessel("run -g workloads/programs/noc_uniform.yaml --set program.measure=100 --emit-program /tmp/tessel_never.yaml");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("synthetic traffic"), std::string::npos) << r.out;
}

}  // namespace
