// The GPU baseline against real H100 measurements (validation/gpu/h100_microbenchmarks.jsonl), through the same
// calibrator `tessel calibrate` uses:
//  - the shipped (fitted) H100 platform meets the error bounds of the calibration set: large square bf16 GEMMs
//    within 10 %, memory-bound copies and elementwise kernels within 15 %;
//  - physics, not a lookup table: from neutral fractions (100 % of peak, no CTA latency) a fit on every other
//    GEMM shape predicts the GEMM shapes it never saw;
//  - the A100 platform is slower than the H100 by the ratio of their peak tensor rates on a compute-bound GEMM
//    and by the ratio of their DRAM bandwidths on a large copy (both published figures);
//  - the A100 (no measurements of its own) holds the H100's current value of every fitted parameter it takes;
//  - the same measurement simulates to the same time every time; bad measurement files and bad fit options are
//    input errors naming the line; the fitted platform writer puts values in place.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "engine/calibrate/calibrate.h"
#include "models/baseline/gpu.h"
#include "tests/support/harness.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

const char* measurements_file = "validation/gpu/h100_microbenchmarks.jsonl";

// Both platforms are built before the first simulation (SystemC elaborates once per process).
struct fixture {
    calibrator h100{"platforms/gpu/h100_sxm.yaml"};
    calibrator a100{"platforms/gpu/a100_sxm.yaml"};
    measurement_set set = load_measurements(measurements_file);
};

fixture& fx() {
    static fixture f;
    return f;
}

double err_pct(double sim, double meas) { return 100 * (sim - meas) / meas; }

/// Saves a calibrator's tunables and puts them back when the scope ends.
struct keep_tunables {
    calibrator& c;
    std::vector<double> saved;
    explicit keep_tunables(calibrator& cal) : c(cal) {
        for (auto& t : c.tunables()) saved.push_back(t.get());
    }
    ~keep_tunables() {
        for (size_t i = 0; i < saved.size(); ++i) c.tunables()[i].set(saved[i]);
    }
};

tunable& find(calibrator& c, const std::string& name) {
    for (auto& t : c.tunables())
        if (t.name == name) return t;
    throw std::logic_error("no tunable " + name);
}

const measurement& find_measurement(const std::string& label) {
    for (const auto& m : fx().set.items)
        if (m.label == label) return m;
    throw std::logic_error("no measurement " + label);
}

fs::path scratch(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("tessel_calibration_test_" + std::to_string(getpid()));
    fs::create_directories(d);
    return d / name;
}

/// Measurement rows written to a scratch file and read back the way `tessel calibrate` reads them.
measurement_set measured_rows(const std::string& name, const std::vector<nlohmann::json>& rows) {
    const fs::path p = scratch(name);
    {
        std::ofstream out(p);
        for (const auto& r : rows) out << r.dump() << "\n";
    }
    return load_measurements(p.string());
}

}  // namespace

TEST(calibration, the_measurements_are_the_published_calibration_set) {
    const auto& s = fx().set;
    EXPECT_EQ(s.device.value("name", std::string()), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(s.device.value("sms", 0), 132);
    std::map<std::string, int> kinds;
    for (const auto& m : s.items) ++kinds[m.kind];
    EXPECT_EQ(kinds["gemm"], 30);  // 17 bf16, 13 fp32
    EXPECT_EQ(kinds["copy"], 7);
    EXPECT_EQ(kinds["elementwise"], 8);
    EXPECT_EQ(kinds["rowwise"], 4);
    EXPECT_EQ(kinds["sdpa"], 2);
}

TEST(calibration, shipped_h100_meets_the_error_bounds) {
    auto& f = fx();
    int big = 0, memory = 0;
    double sum = 0;
    for (const auto& m : f.set.items) {
        const double sim = f.h100.simulate(m);
        const double e = err_pct(sim, m.seconds);
        sum += std::fabs(e);
        const auto& r = m.row;
        if (m.kind == "gemm" && r.value("dtype", std::string()) == "bfloat16" && r.value("M", 0) == r.value("N", 0) &&
            r.value("N", 0) == r.value("K", 0) && r.value("M", 0) >= 2048) {
            ++big;
            EXPECT_LT(std::fabs(e), 10) << m.label << ": simulated " << sim << " s, measured " << m.seconds << " s";
        }
        if (m.memory_bound()) {
            ++memory;
            EXPECT_LT(std::fabs(e), 15) << m.label << ": simulated " << sim << " s, measured " << m.seconds << " s";
        }
        // Nothing in the set is off by more than a factor of two.
        EXPECT_LT(std::fabs(e), 100) << m.label;
    }
    EXPECT_EQ(big, 3);     // 2048, 4096, 8192
    EXPECT_EQ(memory, 9);  // 5 copies of 16 MiB and more, 4 elementwise kernels of 16 M and 128 M elements
    EXPECT_LT(sum / static_cast<double>(f.set.items.size()), 12) << "MAPE over the calibration set";
}

TEST(calibration, a_rate_limit_that_binds_nowhere_at_its_start_is_still_fitted) {
    // A limit moves only the kernels it binds. Started at the top of its range (16 elements per cycle per SM),
    // layer norm's Welford rate binds no measured row, nor does the value the fit probes next to it (16 / 1.3);
    // the fit must still find the rows a lower value binds (the measured kernels sustain 1.4-2.4) instead of
    // leaving it where it started.
    auto& f = fx();
    keep_tunables keep(f.h100);
    tunable& rate = find(f.h100, "kernel.row_rate_welford");
    rate.set(rate.upper);
    const measurement_set ops = load_measurements("validation/gpu/h100_operators.jsonl");
    std::vector<size_t> norms;
    for (size_t i = 0; i < ops.items.size(); ++i)
        if (ops.items[i].kernel_class() == "rowwise layernorm") norms.push_back(i);
    f.h100.fit(ops.items, norms, nullptr, {"kernel.row_rate_welford"});
    EXPECT_GT(rate.get(), 1.4);
    EXPECT_LT(rate.get(), 2.4);
}

TEST(calibration, a_fit_on_half_the_gemm_shapes_predicts_the_other_half) {
    auto& f = fx();
    keep_tunables keep(f.h100);
    // Neutral start: the tensor cores and FP32 lanes at their published peaks, no CTA latency.
    find(f.h100, "kernel.tensor_efficiency").set(1.0);
    find(f.h100, "kernel.simt_efficiency").set(1.0);
    find(f.h100, "kernel.cta_latency").set(find(f.h100, "kernel.cta_latency").lower);
    find(f.h100, "kernel.launch_overhead").set(find(f.h100, "kernel.launch_overhead").lower);
    std::vector<size_t> fit_set, held;
    std::map<std::string, int> seen;
    const auto& ms = f.set.items;
    for (size_t i = 0; i < ms.size(); ++i)
        if (ms[i].kind == "gemm")
            (seen[ms[i].row.value("dtype", std::string())]++ % 2 == 0 ? fit_set : held).push_back(i);
    ASSERT_EQ(fit_set.size(), 16u);
    ASSERT_EQ(held.size(), 14u);
    std::vector<double> before(ms.size());
    for (size_t i : held) before[i] = f.h100.simulate(ms[i]);
    const double held_before = mape(ms, before, held);
    f.h100.fit(ms, fit_set, nullptr,
               {"kernel.launch_overhead", "kernel.tensor_efficiency", "kernel.simt_efficiency", "kernel.cta_latency"});
    const std::vector<double> sim = f.h100.simulate_all(ms);
    const double fitted = mape(ms, sim, fit_set), held_out = mape(ms, sim, held);
    RecordProperty("fit_mape_pct", std::to_string(fitted));
    RecordProperty("held_out_mape_pct", std::to_string(held_out));
    std::printf("GEMM fit on %zu shapes: MAPE %.1f%%; %zu held-out shapes: MAPE %.1f%% (%.1f%% before the fit)\n",
                fit_set.size(), fitted, held.size(), held_out, held_before);
    EXPECT_LT(fitted, 10);
    EXPECT_LT(held_out, 12);
    EXPECT_LT(held_out, held_before / 2);
    // The fitted numbers are physical: a GEMM main loop sustains most of the tensor-core peak, a kernel's fixed
    // cost is a microsecond or two.
    const double eff = find(f.h100, "kernel.tensor_efficiency").get();
    EXPECT_GT(eff, 0.6);
    EXPECT_LT(eff, 0.95);
    const double launch = find(f.h100, "kernel.launch_overhead").get();
    EXPECT_GT(launch, 0.5e-6);
    EXPECT_LT(launch, 4e-6);
    // The held-out large square bf16 GEMMs (2048^3, 8192^3) stay within the 10 % bound.
    for (size_t i : held) {
        const auto& r = ms[i].row;
        if (r.value("dtype", std::string()) == "bfloat16" && r.value("M", 0) == r.value("N", 0) &&
            r.value("N", 0) == r.value("K", 0) && r.value("M", 0) >= 2048) {
            EXPECT_LT(std::fabs(err_pct(sim[i], ms[i].seconds)), 10) << ms[i].label << " (held out)";
        }
    }
}

TEST(calibration, a100_is_slower_by_the_ratio_of_peak_rates_and_bandwidths) {
    auto& f = fx();
    auto& h = dynamic_cast<gpu&>(f.h100.device());
    auto& a = dynamic_cast<gpu&>(f.a100.device());
    // The platforms carry the published peaks: 989.4 and 312 TFLOPS dense bf16, 3.35 and 2.039 TB/s.
    EXPECT_NEAR(2 * h.model().tensor_peak(dtype::bf16), 989.4e12, 0.002 * 989.4e12);
    EXPECT_NEAR(2 * a.model().tensor_peak(dtype::bf16), 312e12, 0.002 * 312e12);
    EXPECT_NEAR(h.memory().peak_bytes_per_second(), 3.35e12, 0.002 * 3.35e12);
    EXPECT_NEAR(a.memory().peak_bytes_per_second(), 2.039e12, 0.002 * 2.039e12);
    const double compute_ratio = 989.4 / 312, bandwidth_ratio = 3.35 / 2.039;
    // A compute-bound GEMM: the ratio of tensor-core peaks.
    const auto& g = find_measurement("gemm bf16 8192x8192x8192");
    const double rg = f.a100.simulate(g) / f.h100.simulate(g);
    EXPECT_NEAR(rg, compute_ratio, 0.1 * compute_ratio) << "A100/H100 on " << g.label;
    // A copy too large for either L2: the ratio of DRAM bandwidths.
    const auto& c = find_measurement("copy 256 MiB");
    const double rc = f.a100.simulate(c) / f.h100.simulate(c);
    EXPECT_NEAR(rc, bandwidth_ratio, 0.1 * bandwidth_ratio) << "A100/H100 on " << c.label;
    // Everything in between lies between the two ratios, or below the bandwidth ratio where fixed costs
    // (launch overhead, CTA latency), identical on both platforms, dominate; never above the compute ratio.
    for (const auto& m : f.set.items) {
        const double r = f.a100.simulate(m) / f.h100.simulate(m);
        EXPECT_GT(r, 1.0) << m.label;
        EXPECT_LT(r, 1.1 * compute_ratio) << m.label;
    }
}

TEST(calibration, a100_takes_the_h100s_current_fitted_values) {
    // Every `(fit)` value of the H100's gpu.kernel and gpu.tlb must be the A100's too, unless the A100 says it
    // leaves it out (Hopper-only kernel features). A refit of the H100 that forgets the A100 fails here.
    const std::set<std::string> hopper_only = {"stream_k", "fallback_efficiency", "narrow_load", "attention_overlap"};
    const YAML::Node h = YAML::LoadFile("platforms/gpu/h100_sxm.yaml")["components"]["gpu"]["params"];
    const YAML::Node a = YAML::LoadFile("platforms/gpu/a100_sxm.yaml")["components"]["gpu"]["params"];
    std::ifstream text("platforms/gpu/h100_sxm.yaml");
    const std::regex block(R"(^      (kernel|tlb):\s*(#.*)?$)"), fitted(R"(^        (\w+): [^#]*# \(fit\))");
    std::string line, in_block;
    int checked = 0;
    while (std::getline(text, line)) {
        std::smatch m;
        if (std::regex_match(line, m, block)) {
            in_block = m[1];
            continue;
        }
        if (!line.empty() && line.find_first_not_of(' ') <= 6 && line.find_first_not_of(' ') != std::string::npos)
            in_block.clear();
        if (in_block.empty() || !std::regex_search(line, m, fitted) || hopper_only.count(m[1])) continue;
        const std::string key = m[1];
        ASSERT_TRUE(a[in_block][key]) << "the A100 lacks gpu." << in_block << "." << key;
        EXPECT_EQ(a[in_block][key].as<std::string>(), h[in_block][key].as<std::string>())
            << "gpu." << in_block << "." << key;
        ++checked;
    }
    EXPECT_GE(checked, 13);  // tlb.miss_cost, 7 kernel fractions and latencies, 5 row rates
    for (const auto& k : hopper_only) EXPECT_FALSE(a["kernel"][k]) << k << " describes Hopper kernels";
}

TEST(calibration, the_same_measurement_simulates_to_the_same_time) {
    auto& f = fx();
    for (const char* label : {"gemm bf16 4096x4096x4096", "copy 64 MiB", "rowwise softmax bf16 16384x4096",
                              "sdpa bf16 1x32x2048x128 causal"}) {
        const auto& m = find_measurement(label);
        const double a = f.h100.simulate(m);
        const double b = f.h100.simulate(m);
        // The DRAM model keeps its bank and refresh state between runs: a DRAM-bound kernel may move by
        // about 1 % from one replay to the next, never more than 2 %.
        EXPECT_NEAR(a, b, 2e-2 * a) << label;
    }
}

TEST(calibration, bad_measurement_files_are_input_errors_naming_the_line) {
    const fs::path p = scratch("bad.jsonl");
    auto expect_error = [&](const std::string& text, const std::string& needle) {
        std::ofstream(p) << text;
        try {
            load_measurements(p.string());
            ADD_FAILURE() << "no error for: " << text;
        } catch (const input_error& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    const std::string dev = "{\"kind\": \"device\", \"name\": \"x\"}\n";
    expect_error(dev + "{\"kind\": \"gemm\", \"dtype\": \"bfloat16\", \"M\": 4, \"N\": 4, \"sec\": 1e-6}\n",
                 ":2: a 'gemm' row needs a number 'K'");
    expect_error(dev + "not json\n", ":2: not a JSON object");
    expect_error(dev + "{\"kind\": \"copy\", \"bytes_read\": 4, \"bytes_written\": 4, \"sec\": 0}\n",
                 ":2: the row needs a positive 'sec'");
    expect_error(dev + "{\"kind\": \"winograd\", \"sec\": 1e-6}\n", ":2: unknown kind 'winograd'");
    expect_error(
        dev +
            "{\"kind\": \"conv\", \"dtype\": \"bfloat16\", \"N\": 1, \"C\": 3, \"H\": 8, \"W\": 8, \"K\": 4, \"R\": 3,"
            " \"S\": 3, \"stride\": 1, \"layout\": \"nchw\", \"sec\": 1e-6}\n",
        "must be channels-last");
    expect_error(dev +
                     "{\"kind\": \"sdpa\", \"dtype\": \"bfloat16\", \"B\": 1, \"H\": 1, \"S\": 8, \"Sq\": 9, \"D\": 64,"
                     " \"sec\": 1e-6}\n",
                 "'Sq' (queries) must not exceed 'S'");
    expect_error(dev + "{\"kind\": \"copy\", \"bytes_read\": 8, \"bytes_written\": 8, \"holdout\": 1, \"sec\": 1e-6}\n",
                 "'holdout' must be true or false");
    expect_error(dev, "hold no kernel rows");
    EXPECT_THROW(load_measurements(scratch("missing.jsonl").string()), input_error);
    auto& f = fx();
    EXPECT_THROW(f.h100.fit(f.set.items, {0}, nullptr, {"kernel.no_such_thing"}), input_error);
}

TEST(calibration, the_fitted_platform_keeps_its_comments_and_replaces_the_old_provenance) {
    const std::string text =
        "# header\nplatform: x\ncomponents:\n  gpu:\n    kind: gpu\n    params:\n      kernel:\n"
        "        launch_overhead: 1us     # (fit) per kernel\n        tiles: 128x128\n";
    const std::string once = write_fitted_platform(
        text, "gpu",
        {{"kernel.launch_overhead", "1480ns"}, {"kernel.tensor_efficiency", "0.77"}, {"tlb.miss_cost", "145ns"}},
        {"fitted to a.jsonl"});
    EXPECT_NE(once.find("        launch_overhead: 1480ns # (fit) per kernel\n"), std::string::npos) << once;
    EXPECT_NE(once.find("        tensor_efficiency: 0.77\n"), std::string::npos) << once;
    EXPECT_NE(once.find("      tlb:\n        miss_cost: 145ns\n"), std::string::npos) << once;
    EXPECT_NE(once.find("        tiles: 128x128\n"), std::string::npos) << once;
    EXPECT_NE(once.find("#   fitted to a.jsonl\n"), std::string::npos) << once;
    const std::string twice =
        write_fitted_platform(once, "gpu", {{"kernel.launch_overhead", "2us"}}, {"fitted to b.jsonl"});
    EXPECT_EQ(twice.find("a.jsonl"), std::string::npos) << twice;
    EXPECT_NE(twice.find("launch_overhead: 2us # (fit) per kernel"), std::string::npos) << twice;
    EXPECT_NE(twice.find("# header"), std::string::npos);
}

TEST(calibration, each_softmax_row_length_runs_the_kernel_pytorch_picks) {
    // ATen's host_softmax: one warp per row up to 1024 elements; a 1024-thread CTA per row beyond, holding
    // the row in registers while each thread holds fewer than 10 elements (up to 9216), in shared memory while
    // it fits 48 KiB with the reduction's 128 B and is whole 16-byte vectors, else reading it once per pass.
    auto& f = fx();
    const std::vector<std::pair<std::int64_t, std::string>> cases = {
        {1024, "(warp per row)"},         {1025, "(row in registers)"},  {9216, "(row in registers)"},
        {9224, "(row in shared memory)"}, {9217, "(row read per pass)"}, {24512, "(row in shared memory)"},
        {24520, "(row read per pass)"},   {65536, "(row read per pass)"}};
    const auto rows = measured_rows("softmax_rows.jsonl", [&] {
        std::vector<nlohmann::json> out;
        for (const auto& c : cases)
            out.push_back({{"kind", "rowwise"},
                           {"op", "softmax"},
                           {"rows", 64},
                           {"cols", c.first},
                           {"dtype", "bfloat16"},
                           {"sec", 1e-5}});
        return out;
    }());
    for (size_t i = 0; i < cases.size(); ++i) {
        f.h100.simulate(rows.items[i]);
        EXPECT_NE(f.h100.last_record().plan.find("row-wise " + cases[i].second), std::string::npos)
            << cases[i].first << ": " << f.h100.last_record().plan;
    }
}

TEST(calibration, layer_norm_runs_welfords_statistics_and_rms_norm_does_not) {
    auto& f = fx();
    const auto rows = measured_rows(
        "norm_rows.jsonl",
        {{{"kind", "rowwise"}, {"op", "layernorm"}, {"rows", 64}, {"cols", 1024}, {"dtype", "bfloat16"}, {"sec", 1e-5}},
         {{"kind", "rowwise"}, {"op", "rmsnorm"}, {"rows", 64}, {"cols", 1024}, {"dtype", "bfloat16"}, {"sec", 1e-5}}});
    f.h100.simulate(rows.items[0]);
    EXPECT_NE(f.h100.last_record().plan.find("row-wise (Welford), 64 rows"), std::string::npos)
        << f.h100.last_record().plan;
    f.h100.simulate(rows.items[1]);
    EXPECT_NE(f.h100.last_record().plan.find("row-wise (sum of squares), 64 rows"), std::string::npos)
        << f.h100.last_record().plan;
}

TEST(calibration, an_implicit_gemm_convolution_does_not_split_k) {
    // cuDNN's fprop kernels for a 3x3 window run one kernel (h100_operators.jsonl: 1x512x7x7, K = 4608, 49
    // output rows): no split-K and no reduction kernel, where a GEMM of the same M, N, K splits K to fill the SMs.
    auto& f = fx();
    const auto rows =
        measured_rows("conv_rows.jsonl",
                      {{{"kind", "conv"},
                        {"N", 1},
                        {"C", 512},
                        {"H", 7},
                        {"W", 7},
                        {"K", 512},
                        {"R", 3},
                        {"S", 3},
                        {"stride", 1},
                        {"pad", 1},
                        {"layout", "nhwc"},
                        {"dtype", "bfloat16"},
                        {"sec", 1e-5}},
                       {{"kind", "gemm"}, {"M", 49}, {"N", 512}, {"K", 4608}, {"dtype", "bfloat16"}, {"sec", 1e-5}}});
    f.h100.simulate(rows.items[0]);
    EXPECT_EQ(f.h100.last_record().plan.find("split-K"), std::string::npos) << f.h100.last_record().plan;
    f.h100.simulate(rows.items[1]);
    EXPECT_NE(f.h100.last_record().plan.find("split-K"), std::string::npos) << f.h100.last_record().plan;
}

TEST(calibration, shipped_h100_fits_both_sets_within_ten_percent) {
    // Issue 15's bar: the rows the fit uses (both files, held-out rows excluded) within 10 % mean absolute
    // error, and the 30 rows it never sees (docs/validation.md lists them) within 10 % too.
    auto& f = fx();
    const measurement_set both =
        load_measurements(std::vector<std::string>{measurements_file, "validation/gpu/h100_operators.jsonl"});
    std::vector<size_t> fitted, held;
    for (size_t i = 0; i < both.items.size(); ++i) (both.items[i].holdout ? held : fitted).push_back(i);
    ASSERT_EQ(fitted.size(), 119u);
    ASSERT_EQ(held.size(), 30u);
    const std::vector<double> sim = f.h100.simulate_all(both.items);
    EXPECT_LT(mape(both.items, sim, fitted), 10);
    EXPECT_LT(mape(both.items, sim, held), 10);
}

TEST(calibration, shipped_h100_meets_the_bounds_on_the_operator_set) {
    // validation/gpu/h100_operators.jsonl: unaligned and split-K GEMMs, wave quantisation, long rows, attention
    // shapes (decode among them) and ResNet-50's convolutions, measured on the same kind of H100 in the same
    // way; every third row of each kind is held out of the fit (its "holdout" field). The bounds are the
    // ones this model meets today (docs/validation.md lists what remains over 20 %).
    auto& f = fx();
    const measurement_set ops = load_measurements("validation/gpu/h100_operators.jsonl");
    ASSERT_EQ(ops.items.size(), 98u);
    std::map<std::string, std::vector<size_t>> cls;
    std::vector<size_t> held, all;
    for (size_t i = 0; i < ops.items.size(); ++i) {
        cls[ops.items[i].kernel_class()].push_back(i);
        all.push_back(i);
        if (ops.items[i].holdout) held.push_back(i);
    }
    EXPECT_EQ(held.size(), 30u);
    const std::vector<double> sim = f.h100.simulate_all(ops.items);
    EXPECT_LT(mape(ops.items, sim, all), 15);
    EXPECT_LT(mape(ops.items, sim, held), 15);
    // Before this set, unaligned bf16 GEMMs were 65-82 % too fast and one-query attention up to 3.6x too slow.
    EXPECT_LT(mape(ops.items, sim, cls["gemm bf16 unaligned"]), 10);
    EXPECT_LT(mape(ops.items, sim, cls["gemm bf16"]), 10);
    EXPECT_LT(mape(ops.items, sim, cls["sdpa"]), 15);
    EXPECT_LT(mape(ops.items, sim, cls["sdpa decode"]), 20);
    // Issue 15's bar: no kernel class over 20 % (softmax was 29 % with one row model for PyTorch's four
    // kernels, convolutions 21 % while cuDNN's implicit-GEMM kernels were allowed split-K).
    for (const auto& [name, rows] : cls) EXPECT_LT(mape(ops.items, sim, rows), 20) << name;
    EXPECT_LT(mape(ops.items, sim, cls["rowwise softmax"]), 10);
    EXPECT_LT(mape(ops.items, sim, cls["rowwise layernorm"]), 15);  // 33 % before Welford's element rate
    // RMS norm (all held out): 23 % with a row's passes added to its DRAM time, 15.8 % with 1024-thread rows.
    EXPECT_LT(mape(ops.items, sim, cls["rowwise rmsnorm"]), 10);
    for (size_t i : all) EXPECT_LT(std::fabs(err_pct(sim[i], ops.items[i].seconds)), 70) << ops.items[i].label;
}
