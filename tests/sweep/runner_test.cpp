// Running points: a point's row has the metrics of its own `tessel run` (equal to a direct run of the same
// parameters), failures, crashes and timeouts are recorded with their reason, and no more than N run at once.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/sweep/runner.h"
#include "models/core/error.h"

using namespace tessel;
using namespace tessel::sweep;
namespace fs = std::filesystem;

namespace {

std::string bin() {
    const char* b = std::getenv("TESSEL_BIN");
    return fs::absolute(b ? b : "build/bin/tessel").string();
}

fs::path scratch(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("tessel_sweep_runner_" + std::to_string(getpid())) / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string capture(const std::string& cmd) {
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    if (!p) return out;
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    pclose(p);
    return out;
}

job shell_job(const fs::path& out, size_t index, const std::string& script) {
    job j;
    j.index = index;
    j.key = "k" + std::to_string(index);
    j.dir = (out / "points" / j.key).string();
    j.rel_dir = "points/" + j.key;
    j.params = {{"i", std::to_string(index)}};
    j.argv = {"/bin/sh", "-c", script};
    return j;
}

std::map<std::string, row> run_all(const std::vector<job>& jobs, int parallel, const run_settings& rs) {
    std::map<std::string, row> rows;
    local_pool pool;
    EXPECT_TRUE(pool.run(jobs, parallel, rs, [&](const job& j, const row& r) { rows[j.key] = r; }));
    return rows;
}

}  // namespace

TEST(sweep_runner, a_point_gives_the_metrics_of_a_direct_run) {
    const fs::path out = scratch("real");
    const spec s = parse_spec(R"Y(platform: mesh4x4
workload: mlp
axes:
  noc.link_bandwidth: [64B/cycle]
  workload.batch: [16]
metrics: [sim_time_s, throughput_per_s, bound_by, resources.noc.utilisation_max, {name: us, expr: "sim_time_s * 1e6"}]
)Y",
                              "sw.yaml");
    const point p = expand(s).points.at(0);
    const job j =
        make_job(s, p, out.string(), bin(), [](const std::string& n) { return "platforms/teaching/" + n + ".yaml"; });
    const std::string plat = fs::absolute("platforms/teaching/mesh4x4.yaml").lexically_normal().string();
    EXPECT_EQ(j.argv, (std::vector<std::string>{bin(), "run", "-p", plat, "-w", "mlp", "--set",
                                                "noc.link_bandwidth=64B/cycle", "--set", "workload.batch=16", "--out",
                                                (out / "points" / p.key).string(), "-q"}));
    run_settings rs;
    rs.tessel = bin();
    rs.metrics = s.metrics;
    const auto rows = run_all({j}, 1, rs);
    const row& r = rows.at(p.key);
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["exit_code"], 0);
    EXPECT_EQ(r["params"]["workload.batch"], "16");

    const nlohmann::json direct = nlohmann::json::parse(capture(
        bin() + " run -p " + plat + " -w mlp --set noc.link_bandwidth=64B/cycle --set workload.batch=16 --json"));
    EXPECT_EQ(r["metrics"]["sim_time_s"].get<double>(), direct["sim_time_s"].get<double>());
    EXPECT_EQ(r["metrics"]["throughput_per_s"].get<double>(), direct["throughput_per_s"].get<double>());
    EXPECT_EQ(r["metrics"]["bound_by"].get<std::string>(), direct["bound_by"].get<std::string>());
    double noc = -1;
    for (const auto& res : direct["resources"])
        if (res["name"] == "noc") noc = res["utilisation_max"].get<double>();
    EXPECT_EQ(r["metrics"]["resources.noc.utilisation_max"].get<double>(), noc);
    EXPECT_DOUBLE_EQ(r["metrics"]["us"].get<double>(), direct["sim_time_s"].get<double>() * 1e6);
    EXPECT_EQ(r["config_hash"].get<std::string>().size(), 16u);
    EXPECT_EQ(r["tessel_version"], TESSEL_VERSION);
    EXPECT_TRUE(fs::exists(out / "points" / p.key / "resolved.yaml"));
    EXPECT_TRUE(fs::exists(out / "points" / p.key / "command.txt"));
}

TEST(sweep_runner, stats_false_leaves_the_statistics_files_out_and_the_summary_in) {
    const fs::path out = scratch("no_stats");
    auto job_of = [&](const std::string& stats_line) {
        const spec s =
            parse_spec("platform: mesh4x4\nworkload: mlp\naxes:\n  workload.batch: [16]\n" + stats_line, "sw.yaml");
        return make_job(s, expand(s).points.at(0), (out / stats_line.substr(0, 5)).string(), bin(),
                        [](const std::string& n) { return "platforms/teaching/" + n + ".yaml"; });
    };
    const job lean = job_of("stats: false\n"), full = job_of("");
    EXPECT_EQ(lean.argv.back(), "--no-stats");
    EXPECT_EQ(full.argv.back(), "-q");
    run_settings rs;
    rs.tessel = bin();
    const auto rows = run_all({lean, full}, 2, rs);
    for (const auto& [key, r] : rows) EXPECT_EQ(r["status"], "ok") << key;
    EXPECT_TRUE(fs::exists(fs::path(lean.dir) / "summary.json"));
    EXPECT_TRUE(fs::exists(fs::path(lean.dir) / "resolved.yaml"));
    EXPECT_FALSE(fs::exists(fs::path(lean.dir) / "stats.json"));
    EXPECT_FALSE(fs::exists(fs::path(lean.dir) / "stats.csv"));
    EXPECT_TRUE(fs::exists(fs::path(full.dir) / "stats.json"));
    EXPECT_TRUE(fs::exists(fs::path(full.dir) / "stats.csv"));
}

TEST(sweep_runner, failures_crashes_and_timeouts_are_recorded) {
    const fs::path out = scratch("fail");
    const std::string ok_dir = (out / "points" / "k0").string();
    std::vector<job> jobs = {
        shell_job(out, 0,
                  "echo '{\"sim_time_s\": 0.5, \"config_hash\": \"00ff\", \"tessel_version\": \"9\"}' > " + ok_dir +
                      "/summary.json"),
        shell_job(out, 1, "echo 'tessel: error: sw.yaml:3:4: no such thing' >&2; exit 2"),
        shell_job(out, 2, "echo working; kill -SEGV $$"),
        shell_job(out, 3, "sleep 20"),
        shell_job(out, 4, "exit 0"),
    };
    run_settings rs;
    rs.timeout_s = 0.5;
    rs.metrics = {metric{"sim_time_s", "sim_time_s", std::nullopt, {}}};
    const auto t0 = std::chrono::steady_clock::now();
    const auto rows = run_all(jobs, 5, rs);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
    ASSERT_EQ(rows.size(), 5u);
    EXPECT_EQ(rows.at("k0")["status"], "ok");
    EXPECT_EQ(rows.at("k0")["metrics"]["sim_time_s"], 0.5);
    EXPECT_EQ(rows.at("k0")["config_hash"], "00ff");
    EXPECT_EQ(rows.at("k1")["status"], "failed");
    EXPECT_EQ(rows.at("k1")["exit_code"], 2);
    EXPECT_EQ(rows.at("k1")["error"], "tessel: error: sw.yaml:3:4: no such thing");
    EXPECT_TRUE(rows.at("k1")["metrics"]["sim_time_s"].is_null());
    EXPECT_EQ(rows.at("k2")["status"], "failed");
    EXPECT_EQ(rows.at("k2")["exit_code"], 128 + 11);
    EXPECT_EQ(rows.at("k2")["error"], "killed by signal 11 (Segmentation fault): working");
    EXPECT_EQ(rows.at("k3")["status"], "timeout");
    EXPECT_EQ(rows.at("k3")["error"], "no result within the time limit (0.5s); the run was killed");
    EXPECT_EQ(rows.at("k4")["status"], "failed");
    EXPECT_EQ(rows.at("k4")["error"], "the run exited 0 but wrote no readable summary.json");
}

TEST(sweep_runner, at_most_n_points_at_once) {
    const fs::path out = scratch("parallel");
    const std::string log = (out / "events").string();
    std::vector<job> jobs;
    // Each point appends "+" when it starts and "-" when it ends; the running count never exceeds 2.
    const std::string script = std::string("echo + >> ").append(log).append("; sleep 0.2; echo - >> ").append(log);
    for (size_t i = 0; i < 6; ++i) jobs.push_back(shell_job(out, i, script));
    run_settings rs;
    const auto rows = run_all(jobs, 2, rs);
    EXPECT_EQ(rows.size(), 6u);
    std::ifstream in(log);
    int running = 0, most = 0, events = 0;
    for (std::string l; std::getline(in, l); ++events) {
        running += l == "+" ? 1 : -1;
        most = std::max(most, running);
    }
    EXPECT_EQ(events, 12);
    EXPECT_EQ(most, 2);
}

TEST(sweep_runner, shell_quoting) {
    EXPECT_EQ(shell_quote("noc.link_bandwidth=64B/cycle"), "noc.link_bandwidth=64B/cycle");
    EXPECT_EQ(shell_quote("tile[*].pe"), "'tile[*].pe'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_quote(""), "''");
}

TEST(sweep_runner, a_point_whose_log_cannot_be_written_keeps_its_reason) {
    // A full disk: the run's stdout and stderr go nowhere, but tessel also reports its error line on the pipe the
    // sweep hands it (TESSEL_ERROR_FD), so the row still says why the point failed.
    const fs::path out = scratch("full");
    const std::vector<job> jobs = {shell_job(
        out, 0, "exec >/dev/full 2>/dev/full; exec " + bin() + " run -q -p mesh4x4 -w gemm --set workload.m=0")};
    const auto rows = run_all(jobs, 1, run_settings{});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows.at("k0")["status"], "failed");
    EXPECT_EQ(rows.at("k0")["exit_code"], 2);
    EXPECT_EQ(rows.at("k0")["error"],
              capture(bin() + " run -q -p mesh4x4 -w gemm --set workload.m=0 2>&1 | tr -d '\\n'"));
    EXPECT_NE(rows.at("k0")["error"].get<std::string>().find("tessel: error: "), std::string::npos);
}

TEST(sweep_runner, points_run_the_binary_TESSEL_POINT_BIN_names_or_this_one) {
    const char* before = std::getenv("TESSEL_POINT_BIN");
    const std::string saved = before ? before : "";
    unsetenv("TESSEL_POINT_BIN");
    EXPECT_EQ(point_exe(), self_exe());
    setenv("TESSEL_POINT_BIN", bin().c_str(), 1);
    EXPECT_EQ(point_exe(), bin());
    const fs::path not_exe = scratch("point_bin") / "tessel";
    std::ofstream(not_exe) << "#!/bin/sh\n";  // a file, not executable
    setenv("TESSEL_POINT_BIN", not_exe.c_str(), 1);
    try {
        point_exe();
        ADD_FAILURE() << "a file that is not executable was taken";
    } catch (const input_error& e) {
        EXPECT_EQ(e.message(), "TESSEL_POINT_BIN='" + not_exe.string() + "' is not an executable file");
    }
    setenv("TESSEL_POINT_BIN", (scratch("point_bin") / "missing").c_str(), 1);
    EXPECT_THROW(point_exe(), input_error);
    if (before)
        setenv("TESSEL_POINT_BIN", saved.c_str(), 1);
    else
        unsetenv("TESSEL_POINT_BIN");
}
