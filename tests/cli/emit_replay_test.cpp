// Emit and replay: `tessel run ... --emit-program F` writes the mapped program; `tessel run -p SAME -g F`
// must give the same simulated time and byte-identical statistics (per-PE arrays too on the wafers), for every mapper
// (kernels on a GPU and a TPU, tsp, rdu, bsp, mesh, and the three wafer mappers, whose programs carry their
// spans of PEs and SRAM placements). A broken emitted file is a located error.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/replay.h"

namespace fs = std::filesystem;
using tessel::test::replay_case;
using tessel::test::run_tessel;
using tessel::test::slurp;

namespace {

class emit_replay : public ::testing::TestWithParam<replay_case> {};

TEST_P(emit_replay, same_time_and_statistics) {
    const replay_case c = GetParam();
    const auto a = tessel::test::expect_same_replay(c);
    if (std::string(c.platform) == "tpu_v4") {
        // docs/program-yaml.md quotes this run.
        const std::string quoted = "sim_time_s " + a["sim_time_s"].dump();
        EXPECT_NE(slurp("docs/program-yaml.md").find(quoted), std::string::npos)
            << "docs/program-yaml.md should quote " << quoted;
    }
}

INSTANTIATE_TEST_SUITE_P(
    every_mapper, emit_replay,
    ::testing::Values(replay_case{"h100_sxm", "resnet50"},   // kernels (GPU): kernel payloads
                      replay_case{"tpu_v4", "resnet50"},     // kernels (TPU)
                      replay_case{"groqchip1", "resnet50"},  // tsp: instruction payloads, strict
                      replay_case{"sn40l", "resnet50"},      // rdu
                      // rdu in gangs: gang payloads naming each stage's PCUs
                      replay_case{"sn40l", "mlp", "sn40l_gangs",
                                  "--set mapper.representation=coarse --set mapper.gangs=64"},
                      replay_case{"gc200", "mlp"},  // bsp, fine form (ResNet-50: emit_replay_slow_test)
                      replay_case{"gc200", "resnet50", "gc200_coarse"},  // bsp, coarse form: superstep payloads
                      replay_case{"mesh4x4", "mlp"},                     // mesh
                      // wafer_pipeline: spans and placements on 750 x 994 PEs
                      replay_case{"wse2", "resnet50"},
                      // the teaching wafer, layer-pipelined, with every PE's SRAM in the statistics
                      replay_case{"wafer16", "mlp", nullptr, "", true},
                      // wafer_streaming: spans shared by every op of a shape
                      replay_case{"wafer16", "bert", "wafer16_streaming",
                                  "--set mapper.impl=wafer_streaming --set workload.layers=1 "
                                  "--set workload.hidden=128 --set workload.heads=2 --set workload.ffn=512 "
                                  "--set workload.vocab=1000 --set workload.seq=64",
                                  true},
                      // wafer_stencil: one span, the 64^3 grid
                      replay_case{"wse1", "stencil", nullptr, "", true},
                      // kernels on the engine chips: Gaudi, and NeuronCores with ops on the host (payload flags)
                      replay_case{"gaudi2", "resnet50"},
                      replay_case{"inf2", "mlp", "inf2_host", "--set mapper.host_ops=relu"},
                      // the system mapper: a DGX A100 node training GPT-2 data-parallel (its chips' HBM parts by
                      // unit, kernel payloads shared by the chips' steps)
                      replay_case{"dgx_a100", "gpt2", "dgx_a100_dp8",
                                  "--set workload.training=adam --set workload.batch=16 --set workload.layers=2 "
                                  "--set parallel.dp=8"}),
    [](const auto& case_info) {
        return std::string(case_info.param.name ? case_info.param.name : case_info.param.platform);
    });

TEST(emit_replay_errors, a_bad_line_names_its_file_and_line) {
    const fs::path dir = fs::temp_directory_path() / "tessel_emit_bad";
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml";
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --emit-program " + prog.string()).code, 0);
    std::string text = slurp(prog);
    // Corrupt the first transfer step: its byte count becomes a word.
    const size_t at = text.find("\n    transfer ");
    ASSERT_NE(at, std::string::npos);
    const size_t line_no =
        static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 2;
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

TEST(emit_replay_errors, work_and_indices_out_of_range_are_refused_not_wrapped) {
    const fs::path dir = fs::temp_directory_path() / "tessel_emit_range";
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml";
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --emit-program " + prog.string()).code, 0);
    const std::string text = slurp(prog);
    // The first work line: macs vector_ops bytes_in bytes_weight bytes_out dtype class batch m n k.
    const size_t works = text.find("  works: |\n");
    ASSERT_NE(works, std::string::npos);
    const size_t first = text.find('\n', works) + 1, eol = text.find('\n', first);
    const std::string line = text.substr(first, eol - first);
    const std::string rest = line.substr(line.find(' ', 4));  // after the macs column
    for (const auto& [macs, says] :
         std::vector<std::pair<std::string, std::string>>{{"nan", "macs: expected a finite number, got 'nan'"},
                                                          {"inf", "macs: expected a finite number, got 'inf'"},
                                                          {"-5", "macs: expected a number not below 0, got '-5'"}}) {
        std::string edited = text;
        edited.replace(first, eol - first, std::string("    ").append(macs).append(rest));
        std::ofstream(prog) << edited;
        const auto r = run_tessel("run -g " + prog.string());
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    }
    // A unit of 2^32 + 1 used to wrap to unit 1.
    std::string edited = text;
    const size_t step = edited.find("    transfer 0 0 -1 0 1 0 0 ");
    ASSERT_NE(step, std::string::npos);
    edited.replace(step, 28, "    transfer 0 0 -1 0 1 4294967297 0 ");
    std::ofstream(prog) << edited;
    const auto r = run_tessel("run -g " + prog.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("4294967297 is out of range"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

/// The 0-based index in `text` of line `prefix` (the first line starting with it) and its 1-based line number.
std::pair<size_t, size_t> find_line(const std::string& text, const std::string& prefix) {
    const size_t at = text.find("\n" + prefix);
    if (at == std::string::npos) return {std::string::npos, 0};
    return {at + 1, static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n')) + 2};
}

void replace_line(std::string& text, size_t start, const std::string& line) {
    text.replace(start, text.find('\n', start) - start, line);
}

TEST(emit_replay_errors, a_bad_span_or_placement_names_its_line) {
    const fs::path dir = fs::temp_directory_path() / "tessel_emit_bad_wafer";
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml";
    ASSERT_EQ(run_tessel("run -p wafer16 -w mlp -q --emit-program " + prog.string()).code, 0);
    const std::string good = slurp(prog);
    // An empty span.
    std::string text = good;
    auto [span_at, span_line] = find_line(text, "    span ");
    ASSERT_NE(span_at, std::string::npos);
    replace_line(text, span_at, "    span 3 0 3 1");
    std::ofstream(prog) << text;
    auto r = run_tessel("run -g " + prog.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(prog.string() + ":" + std::to_string(span_line) + ":"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("span [3,3) x [0,1) is empty"), std::string::npos) << r.out;
    // A span past the 16 x 16 PEs: named by the first step that runs on it.
    text = good;
    replace_line(text, span_at, "    span 0 0 17 1");
    std::ofstream(prog) << text;
    r = run_tessel("run -g " + prog.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("emitted.steps: span 0 ([0,17) x [0,1)) leaves the 16 x 16 PEs of wafer16.pe"),
              std::string::npos)
        << r.out;
    // A placement of 49 KiB per PE on PEs with 48 KiB.
    text = good;
    const auto [pl_at, pl_line] = find_line(text, "  placements: |\n");
    ASSERT_NE(pl_at, std::string::npos);
    const size_t first = text.find('\n', pl_at) + 1;
    std::istringstream fields(text.substr(first, text.find('\n', first) - first));
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    ASSERT_GE(f.size(), 7u);  // place x0 y0 x1 y1 bytes what...
    replace_line(text, first,
                 "    " + f[0] + " " + f[1] + " " + f[2] + " " + f[3] + " " + f[4] + " 50176 the weights of fc1");
    std::ofstream(prog) << text;
    r = run_tessel("run -g " + prog.string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(prog.string() + ":" + std::to_string(pl_line + 1) + ":"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the weights of fc1 needs 49 KiB on PE (" + f[1] + "," + f[2] +
                         ") of wafer16.pe, which already holds 0 B of its 48 KiB (1 KiB short)"),
              std::string::npos)
        << r.out;
    fs::remove_all(dir);
}

TEST(emit_replay_errors, a_bad_gang_names_its_line) {
    const fs::path dir = fs::temp_directory_path() / "tessel_emit_bad_gang";
    fs::create_directories(dir);
    const fs::path prog = dir / "program.yaml";
    ASSERT_EQ(run_tessel("run -p sn40l -w mlp -q --set mapper.representation=coarse --set mapper.gangs=64 "
                         "--emit-program " +
                         prog.string())
                  .code,
              0);
    const std::string good = slurp(prog);
    const auto [gang_at, gang_line] = find_line(good, "    gang ");
    ASSERT_NE(gang_at, std::string::npos);
    // A member named twice, and one 100,000 components away, where there is none.
    for (const auto& [line, why] : std::vector<std::pair<std::string, std::string>>{
             {"    gang 3 26 26", "a gang names a member twice"},
             {"    gang 2 -100000", "components from sn40l.pcu[0,0] is not a unit of its kind"}}) {
        std::string text = good;
        replace_line(text, gang_at, line);
        std::ofstream(prog) << text;
        const auto r = run_tessel("run -g " + prog.string());
        EXPECT_EQ(r.code, 2) << r.out;
        EXPECT_NE(r.out.find(why), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(prog.string() + ":"), std::string::npos) << r.out;
    }
    fs::remove_all(dir);
}

TEST(emit_replay_errors, traffic_programs_are_their_own_file) {
    const auto r = run_tessel(
        "run -g workloads/programs/noc_uniform.yaml --set program.measure=100 --emit-program /tmp/tessel_never.yaml");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("synthetic traffic"), std::string::npos) << r.out;
}

}  // namespace
