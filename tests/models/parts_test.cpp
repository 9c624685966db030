// Parts composed through the registry: a tile's scratchpad and a GPU's device memory are `{kind:, preset:,
// ...params}` children (component::make_part), so a platform can swap them for another registered kind, and
// the swapped part's own timing rules then decide the run. Times are checked against hand-computed bounds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;

namespace {

using tessel::test::slurp;

/// `text` with the lines from the one equal to `first` up to (not including) the next line starting with
/// `until` replaced by `with`.
std::string replace_block(const std::string& text, const std::string& first, const std::string& until,
                          const std::string& with) {
    const size_t a = text.find("\n" + first + "\n");
    EXPECT_NE(a, std::string::npos) << first;
    const size_t b = text.find("\n" + until, a + 1);
    EXPECT_NE(b, std::string::npos) << until;
    return text.substr(0, a + 1) + with + text.substr(b + 1);
}

fs::path write(const std::string& name, const std::string& text) {
    const fs::path p = fs::temp_directory_path() / name;
    std::ofstream(p) << text;
    return p;
}

double sim_time(const tessel::test::cli_result& r) { return nlohmann::json::parse(r.out)["sim_time_s"].get<double>(); }

// One compute step streaming 1 MiB of operands from tile[0,0]'s scratchpad, with next to no arithmetic: the
// scratchpad's bandwidth decides its time.
const char* const stream_program = R"(program: stream
steps:
  - {id: s, compute: {on: "tile[0,0]", vector_ops: 16, bytes: 1MiB}}
)";

TEST(parts, a_tile_scratchpad_can_be_another_memory_kind) {
    const fs::path prog = write("tessel_parts_stream.yaml", stream_program);
    // As shipped: a sram_bank of 4 banks x 32 B/cycle at 1 GHz = 128 GB/s, so 1 MiB takes at least 8.19 us.
    const auto sram = run_tessel("run -p mesh4x4 -g " + prog.string() + " --json");
    ASSERT_EQ(sram.code, 0) << sram.out;
    const double t_sram = sim_time(sram);
    EXPECT_GE(t_sram, 1048576.0 / 128e9);
    EXPECT_LT(t_sram, 1.1 * 1048576.0 / 128e9);

    // The same platform with the scratchpad swapped for one HBM2e channel: 2 pseudo-channels x 64 bit x 3.2 Gb/s
    // = 51.2 GB/s, so at least 20.5 us; its own row and refresh rules only add to that.
    const std::string base = slurp("platforms/teaching/mesh4x4.yaml");
    const std::string swapped = replace_block(base, "      sram:", "  noc:",
                                              "      sram:\n        kind: hbm\n        preset: hbm2e_stack\n"
                                              "        channels: 1\n        capacity: 1GiB\n\n");
    const fs::path plat = write("tessel_parts_mesh4x4.yaml", swapped);
    const fs::path stats_file = fs::temp_directory_path() / "tessel_parts_stats.json";
    const auto hbm =
        run_tessel("run -p " + plat.string() + " -g " + prog.string() + " --json --stats " + stats_file.string());
    ASSERT_EQ(hbm.code, 0) << hbm.out;
    const double t_hbm = sim_time(hbm);
    EXPECT_GE(t_hbm, 1048576.0 / 51.2e9);
    EXPECT_LT(t_hbm, 1.5 * 1048576.0 / 51.2e9);
    // The part reports the statistics of its new kind (an hbm counts row hits and misses).
    const auto stats = nlohmann::json::parse(slurp(stats_file));
    const auto& part = stats["mesh4x4"]["tile[0,0]"]["sram"];
    EXPECT_TRUE(part.contains("row_hits")) << part.dump();
    EXPECT_DOUBLE_EQ(part["read_bytes"]["value"].get<double>(), 1048576.0);

    // --set swaps a part's kind like any parameter; here the tile's map then holds keys the new kind lacks.
    const auto bad = run_tessel("run -p mesh4x4 -g " + prog.string() + " --set tile.sram.kind=hbm");
    EXPECT_EQ(bad.code, 2) << bad.out;
    EXPECT_NE(bad.out.find("'banks'"), std::string::npos) << bad.out;
}

TEST(parts, a_gpu_device_memory_can_be_another_memory_kind) {
    // h100_sxm with its HBM3 replaced by a (very large) banked SRAM of 64 banks x 64 B/cycle at 1.83 GHz:
    // 7.5 TB/s, more than twice the HBM's 3.35 TB/s. A DRAM-bound decode step must get faster, and no faster
    // than its bytes over the new peak allow.
    const std::string base = slurp("platforms/gpu/h100_sxm.yaml");
    const std::string swapped =
        replace_block(base, "      hbm:", "mapper:",
                      "      hbm:\n        kind: sram_bank\n        capacity: 80GiB\n"
                      "        banks: 64\n        bank_bandwidth: 64B/cycle\n        latency: 100cycles\n");
    const fs::path plat = write("tessel_parts_h100.yaml", swapped);
    const std::string w = " -w llama2-7b --set workload.layers=1 --set workload.mode=decode --json";
    const auto hbm = run_tessel("run -p h100_sxm" + w);
    ASSERT_EQ(hbm.code, 0) << hbm.out;
    const auto sram = run_tessel("run -p " + plat.string() + w);
    ASSERT_EQ(sram.code, 0) << sram.out;
    EXPECT_LT(sim_time(sram), sim_time(hbm));
    // One layer of Llama-2-7B holds 202 M fp16 weights (404 MB) that a decode step reads once.
    EXPECT_GE(sim_time(sram), 404e6 / (64 * 64 * 1.83e9));
}

TEST(parts, a_part_of_the_wrong_role_or_kind_is_a_located_error) {
    const auto unknown = run_tessel("run -p mesh4x4 -w mlp --set tile.sram.kind=sram_bnk");
    EXPECT_EQ(unknown.code, 2) << unknown.out;
    EXPECT_NE(unknown.out.find("--set tile.sram.kind=sram_bnk"), std::string::npos) << unknown.out;
    EXPECT_NE(unknown.out.find("did you mean 'sram_bank'"), std::string::npos) << unknown.out;

    const auto role = run_tessel("run -p mesh4x4 -w mlp --set tile.pe.kind=sram_bank");
    EXPECT_EQ(role.code, 2) << role.out;
    EXPECT_NE(role.out.find("not a compute component"), std::string::npos) << role.out;

    const auto preset = run_tessel("run -p h100_sxm -w mlp --set gpu.hbm.preset=hbm9");
    EXPECT_EQ(preset.code, 2) << preset.out;
    EXPECT_NE(preset.out.find("kind 'hbm' has no preset 'hbm9'"), std::string::npos) << preset.out;
}

}  // namespace
