// Energy follows the run's own activity: a small program on the teaching mesh with declared energies, every
// joule derived by hand, and the units and errors of energy parameters.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/trace_check.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;
using tessel::test::slurp;
using tessel::test::write_temp;

namespace {

// A MAC step, a 1 KiB send two hops east, and a 4 KiB load from HBM channel 0 into the tile beside it.
const char* program = R"(
program: energy
steps:
  - {id: mac, compute: {on: "tile[0,0]", macs: 1000, vector_ops: 100, dtype: fp16}}
  - {id: send, transfer: {from: "tile[0,0]", to: "tile[2,0]", bytes: 1KiB}, after: [mac]}
  - {id: load, transfer: {from: hbm, to: "tile[0,0]", bytes: 4KiB, from_address: 0B}}
)";

std::string energies(const std::string& mac = "2pJ") {
    return " --set tile.pe.energy.mac.fp16=" + mac +
           " --set tile.pe.energy.op=0.5pJ --set tile.pe.energy.leakage=1mW"
           " --set tile.sram.energy.read=0.5pJ/B --set tile.sram.energy.write=0.25pJ/B --set noc.energy.transfer=1pJ/B"
           " --set hbm.detail=stream --set hbm.energy.read=8pJ/bit --set hbm.energy.activate=100pJ --set "
           "hbm.energy.leakage=0W";
}

nlohmann::json run(const std::string& mac, const std::string& name) {
    const fs::path out = fs::temp_directory_path() / ("tessel_energy_test_" + std::to_string(getpid())) / name;
    fs::remove_all(out);
    const auto r = run_tessel("run -p mesh4x4 -g " + write_temp("tessel_energy_program.yaml", program) + energies(mac) +
                              " -o " + out.string() + " -q");
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(slurp(out / "summary.json"));
}

}  // namespace

TEST(energy, a_small_program_costs_exactly_what_its_actions_and_leakage_cost) {
    const auto j = run("2pJ", "base");
    const auto& e = j["energy_by_part_j"];
    const double t = j["sim_time_s"];
    const double pJ = 1e-12;
    // Compute: 1000 fp16 MACs x 2 pJ + 100 element operations x 0.5 pJ.
    EXPECT_NEAR(e["compute"].get<double>(), 2050 * pJ, 1e-6 * pJ);
    // SRAM: the send reads 1 KiB at tile[0,0] (0.5 pJ/B) and writes it at tile[2,0] (0.25 pJ/B); the load writes
    // 4 KiB at tile[0,0]: 512 + 256 + 1024 pJ.
    EXPECT_NEAR(e["sram"].get<double>(), 1792 * pJ, 1e-6 * pJ);
    // Network, 1 pJ per byte per link crossed, headers included: the send is 4 packets of 256 + 16 B (1088 B) over
    // the injection link, two east links and the ejection link; the load comes from all 4 channels, 1 KiB each
    // (256 B interleave), channel c on router (0,c) and c hops north of tile[0,0]: (2 + 3 + 4 + 5) x 1088 B.
    const double network = (4 + 14) * 1088;
    EXPECT_NEAR(e["network"].get<double>(), network * pJ, 1e-6 * pJ);
    // DRAM: 4096 B x 8 pJ/bit, plus 4 row activations (a stream opens each 1 KiB row once) x 100 pJ.
    EXPECT_NEAR(e["dram"].get<double>(), (4096 * 64 + 4 * 100) * pJ, 1e-6 * pJ);
    // Static: 16 PEs leaking 1 mW each for the whole run.
    EXPECT_NEAR(e["static"].get<double>(), 16 * 1e-3 * t, 1e-9 * 16e-3 * t);
    const double total = (2050 + 1792 + network + 4096 * 64 + 400) * pJ + 16e-3 * t;
    EXPECT_NEAR(j["energy_j"].get<double>(), total, 1e-9 * total);
    EXPECT_NEAR(j["average_power_w"].get<double>(), total / t, 1e-9 * total / t);
}

TEST(energy, doubling_an_energy_doubles_only_its_part) {
    const auto a = run("2pJ", "a");
    const auto b = run("4pJ", "b");
    EXPECT_NEAR(b["energy_by_part_j"]["compute"].get<double>(), (4000 + 50) * 1e-12, 1e-18);
    EXPECT_EQ(a["energy_by_part_j"]["dram"], b["energy_by_part_j"]["dram"]);
    EXPECT_EQ(a["sim_time_s"], b["sim_time_s"]);  // energy never changes timing
}

TEST(energy, bad_energy_parameters_are_clear_errors) {
    struct bad {
        std::string set, expect;
    };
    for (const bad& c : std::vector<bad>{
             {"tile.pe.energy.op=0.5", "needs a unit"},
             {"tile.pe.energy.op=0.5pj", "did you mean 'pJ'"},
             {"tile.pe.energy.leakage=3pJ", "expected a power"},
             {"tile.sram.energy.read=2pJ", "expected an energy per size"},
             {"tile.pe.energy.op=-1pJ", "must not be negative"},
             {"'tile.pe.energy.mac={fp16: 1pJ}'",
              "a table is set one entry at a time, e.g. --set tile.pe.energy.mac.fp16="},
         }) {
        const auto r = run_tessel("run -p mesh4x4 -w mlp --set " + c.set);
        EXPECT_EQ(r.code, 2) << c.set << "\n" << r.out;
        EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.set << "\n" << r.out;
    }
    // A data type that ran with no energy declared for it is named, not charged as zero.
    const std::string one_pe = write_temp("tessel_energy_one_pe.yaml", R"(
platform: one_pe
clock: 1GHz
components:
  pe:
    kind: pe
    params: {energy: {mac: {fp32: 1pJ}}}
)");
    const std::string step = write_temp("tessel_energy_step.yaml", R"(
program: one_step
steps:
  - {id: mac, compute: {on: pe, macs: 1000, dtype: fp16}}
)");
    const auto r = run_tessel("run -p " + one_pe + " -g " + step);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("has no fp16 entry"), std::string::npos) << r.out;
}

TEST(energy, no_platform_draws_more_than_its_tdp_and_a_run_that_would_says_so) {
    // Heavy work on every chip whose power is calibrated quickly: dense training on the GPUs and the TPU, the
    // GroqChip's ResNet-50; average power stays within the documented margin above the TDP (docs/energy.md).
    for (const std::string run : {"-p h100_sxm -w gpt2 --set workload.training=adam --set workload.batch=8",
                                  "-p a100_sxm -w gpt2 --set workload.training=adam --set workload.batch=8",
                                  "-p tpu_v4 -w gpt2 --set workload.training=adam --set workload.batch=8",
                                  "-p h100_sxm -w llama2-7b --set workload.mode=decode", "-p groqchip1 -w resnet50"}) {
        const auto r = run_tessel("run " + run + " --json");
        ASSERT_EQ(r.code, 0) << run << "\n" << r.out;
        const auto j = nlohmann::json::parse(r.out);
        const double tdp = j["tdp_w"], watts = j["average_power_w"];
        EXPECT_GT(tdp, 0) << run;
        EXPECT_LE(watts, tdp * 1.15) << run;
        EXPECT_GT(watts, 0.3 * tdp) << run << ": a chip at work draws well above its idle power";
    }
    // Five times the fitted active power puts the H100 far above its 700 W: the summary says so.
    const auto r = run_tessel(
        "run -p h100_sxm -w bert-large --set workload.training=adam --set workload.batch=32 "
        "--set gpu.energy.active=800W");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("is above the platform's TDP of 700 W"), std::string::npos) << r.out;
}

TEST(energy, each_op_is_charged_exactly_its_own_actions) {
    // The same program's energy by op (stats.json, energy_by_op), derived by hand as in the first test.
    const fs::path out = fs::temp_directory_path() / ("tessel_energy_test_" + std::to_string(getpid())) / "by_op";
    fs::remove_all(out);
    const auto r = run_tessel("run -p mesh4x4 -g " + write_temp("tessel_energy_program.yaml", program) + energies() +
                              " -o " + out.string() + " --trace " + (out / "trace.json").string() + " -q");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto stats = nlohmann::json::parse(slurp(out / "stats.json"));
    const auto& ops = stats["energy_by_op"];
    const double pJ = 1e-12;
    auto j = [&](const char* op, const char* part) { return ops[op][part]["value"].get<double>() / pJ; };
    EXPECT_NEAR(j("mac", "compute"), 2050, 1e-6);
    EXPECT_EQ(j("mac", "network"), 0);
    // The send: 1 KiB read at tile[0,0] and written at tile[2,0]; 4 packets of 1088 B over 4 links.
    EXPECT_NEAR(j("send", "sram"), 512 + 256, 1e-6);
    EXPECT_NEAR(j("send", "network"), 4 * 1088, 1e-6);
    // The load: 4 KiB written at tile[0,0], over 14 links in all, and from DRAM with its 4 row activations.
    EXPECT_NEAR(j("load", "sram"), 1024, 1e-6);
    EXPECT_NEAR(j("load", "network"), 14 * 1088, 1e-6);
    EXPECT_NEAR(j("load", "dram"), 4096 * 64 + 400, 1e-6);
    EXPECT_NEAR(j("load", "total"), 1024 + 14 * 1088 + 4096 * 64 + 400, 1e-6);
    EXPECT_EQ(ops["load"]["dram"]["unit"], "J");

    // The run's own statistics: energy and power, the same numbers as the summary.
    const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
    const auto& run = stats["run"];
    EXPECT_EQ(run["energy"]["value"].get<double>(), summary["energy_j"].get<double>());
    EXPECT_EQ(run["energy_dram"]["value"].get<double>(), summary["energy_by_part_j"]["dram"].get<double>());
    EXPECT_EQ(run["average_power"]["unit"], "W");
    // Every component reports its own energy: the HBM spent the DRAM part (its leakage is 0 here).
    EXPECT_NEAR(stats["mesh4x4"]["hbm"]["energy"]["value"].get<double>() / pJ, 4096 * 64 + 400, 1e-6);
    const std::string csv = slurp(out / "stats.csv");
    EXPECT_NE(csv.find("energy_by_op:load,dram,"), std::string::npos) << csv;

    // Peak power: no window draws less than the average, and none more than the whole run's dynamic energy
    // in one window plus the static power.
    const double peak = summary["peak_power_w"], window = summary["peak_window_s"], avg = summary["average_power_w"];
    const double dynamic = summary["energy_j"].get<double>() - summary["energy_by_part_j"]["static"].get<double>();
    const double static_w = summary["energy_by_part_j"]["static"].get<double>() / summary["sim_time_s"].get<double>();
    EXPECT_GE(peak, avg * (1 - 1e-9));
    EXPECT_LE(peak, dynamic / window + static_w + 1e-9);
    EXPECT_GT(window, 0);

    // The trace carries the power timeline as a counter whose samples integrate to the run's energy.
    const auto trace = nlohmann::json::parse(slurp(out / "trace.json"));
    tessel::test::expect_no_overlapping_slices(trace, "energy program");
    double joules = 0;
    size_t samples = 0;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "C" && e["name"] == "power (W)") {
            joules += (e["args"]["value"].get<double>() - static_w) * window;
            ++samples;
        }
    EXPECT_GT(samples, 1u);
    EXPECT_NEAR(joules, dynamic, 1e-4 * dynamic);
}
