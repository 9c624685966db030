// Traces show a unit busy exactly while it serves something: VCD busy edges, the VCD `active` count and the
// Perfetto busy-over-time counters agree with the statistics the run reports (a unit that serves one request at
// a time is busy in the waveform for exactly its `busy` statistic), and --trace-merge trades edges for size.
#include <gtest/gtest.h>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/trace_check.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;
using tessel::test::slurp;

namespace {

struct vcd_track {
    double busy_s = 0;       // time with busy = 1
    double active_s = 0;     // integral of active over time
    bool consistent = true;  // active > 0 exactly when busy = 1
};

/// Per track path ("mesh4x4.tile[0,0].pe"): its busy time and active integral, read from a tessel VCD.
std::map<std::string, vcd_track> read_vcd(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> scope;
    std::map<std::string, std::pair<std::string, char>> var;  // id -> (track, 'b'usy or 'a'ctive)
    std::map<std::string, vcd_track> out;
    std::map<std::string, std::pair<bool, long>> state;  // track -> (busy, active)
    std::map<std::string, long long> since;              // track -> time of its last change
    long long t = 0;
    auto account = [&](const std::string& tr, long long now) {
        auto& s = state[tr];
        const double dt = static_cast<double>(now - since[tr]) * 1e-15;
        out[tr].busy_s += s.first ? dt : 0;
        out[tr].active_s += static_cast<double>(s.second) * dt;
        since[tr] = now;
    };
    for (std::string l; std::getline(in, l);) {
        std::istringstream w(l);
        std::string a, b, c, d, e;
        w >> a;
        if (a == "$scope") {
            w >> b >> c;
            scope.push_back(c);
        } else if (a == "$upscope") {
            scope.pop_back();
        } else if (a == "$var") {
            w >> b >> c >> d >> e;
            std::string path;
            for (const auto& s : scope) path += (path.empty() ? "" : ".") + s;
            if (e == "busy" || e == "active") var[d] = {path, e[0]};
        } else if (!a.empty() && a[0] == '#') {
            t = std::stoll(a.substr(1));
        } else if (!a.empty() && (a[0] == '0' || a[0] == '1') && var.count(a.substr(1))) {
            const std::string tr = var[a.substr(1)].first;
            account(tr, t);
            state[tr].first = a[0] == '1';
        } else if (!a.empty() && a[0] == 'b') {
            w >> b;
            const auto it = var.find(b);
            if (it == var.end() || it->second.second != 'a') continue;
            account(it->second.first, t);
            state[it->second.first].second = std::stol(a.substr(1), nullptr, 2);
        }
        // Both wires of a track change at one time stamp; check agreement once per time stamp below.
    }
    for (auto& [tr, s] : state) {
        account(tr, t);
        out[tr].consistent = out[tr].consistent && (s.first == (s.second > 0));
    }
    return out;
}

double stat(const std::string& csv, const std::string& component, const std::string& name) {
    std::istringstream in(csv);
    const std::string key = "\"" + component + "\"," + name + ",";
    for (std::string l; std::getline(in, l);)
        if (l.rfind(key, 0) == 0) return std::stod(l.substr(key.size()));
    ADD_FAILURE() << "no statistic " << component << " " << name;
    return -1;
}

/// The time average of a Perfetto counter over its samples' span.
double counter_mean(const nlohmann::json& trace, const std::string& name) {
    std::vector<std::pair<double, double>> v;
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "C" && e["name"] == name) v.push_back({e["ts"].get<double>(), e["args"]["value"].get<double>()});
    if (v.size() < 2) return -1;
    double area = 0;
    for (size_t i = 0; i + 1 < v.size(); ++i) area += v[i].second * (v[i + 1].first - v[i].first);
    return area / (v.back().first - v.front().first);
}

struct traced_run {
    fs::path dir;
    std::string out, csv;
    std::map<std::string, vcd_track> vcd;
    nlohmann::json trace;
};

traced_run run_traced(const std::string& name, const std::string& args) {
    traced_run r;
    r.dir = fs::temp_directory_path() / ("tessel_trace_busy_" + std::to_string(getpid())) / name;
    fs::create_directories(r.dir);
    const auto res = run_tessel("run " + args + " --out " + r.dir.string() + " --vcd " + (r.dir / "t.vcd").string() +
                                " --trace " + (r.dir / "t.json").string());
    EXPECT_EQ(res.code, 0) << res.out;
    r.out = res.out;
    r.csv = slurp(r.dir / "stats.csv");
    r.vcd = read_vcd(r.dir / "t.vcd");
    r.trace = nlohmann::json::parse(slurp(r.dir / "t.json"));
    tessel::test::expect_no_overlapping_slices(r.trace, name);
    return r;
}

}  // namespace

TEST(trace_busy, a_unit_serving_one_request_at_a_time_is_busy_in_the_waveform_for_its_busy_statistic) {
    // One bank with one port: the scratchpad serves one access at a time, as the PE runs one step at a time.
    const traced_run r = run_traced("one_port", "-p mesh4x4 -w mlp --set tile.sram.banks=1");
    for (const std::string unit :
         {"mesh4x4.tile[0,0].pe", "mesh4x4.tile[2,3].pe", "mesh4x4.tile[0,0].sram", "mesh4x4.tile[3,1].sram"}) {
        const double busy = stat(r.csv, unit, "busy");
        ASSERT_TRUE(r.vcd.count(unit)) << unit;
        EXPECT_NEAR(r.vcd.at(unit).busy_s, busy, 1e-12 + 1e-9 * busy)
            << unit << ": waveform busy against the busy statistic";
        EXPECT_NEAR(r.vcd.at(unit).active_s, busy, 1e-12 + 1e-9 * busy) << unit << ": one request at a time";
        EXPECT_TRUE(r.vcd.at(unit).consistent) << unit;
    }
}

TEST(trace_busy, banked_units_and_the_busy_counters_agree_with_the_statistics) {
    const traced_run r = run_traced("banked", "-p mesh4x4 -w mlp");
    // Four banks of one port: the scratchpad is busy while any bank serves, so its waveform's busy time lies
    // between its port time over four (all banks always together) and its port time (never together).
    const double port_time = stat(r.csv, "mesh4x4.tile[0,0].sram", "busy");
    const double busy = r.vcd.at("mesh4x4.tile[0,0].sram").busy_s;
    EXPECT_GE(busy, port_time / 4 * (1 - 1e-9));
    EXPECT_LE(busy, port_time * (1 + 1e-9));
    // The busy-over-time counter of the PEs averages to their mean utilisation.
    double util = 0;
    for (int x = 0; x < 4; ++x)
        for (int y = 0; y < 4; ++y)
            util +=
                stat(r.csv, "mesh4x4.tile[" + std::to_string(x) + "," + std::to_string(y) + "].pe", "utilisation") / 16;
    EXPECT_NEAR(counter_mean(r.trace, "busy % mesh4x4.tile[*].pe"), 100 * util, 1e-6);
    // The report says what each file holds.
    EXPECT_NE(r.out.find("trace      " + (r.dir / "t.json").string() + " (Perfetto): "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" slices on 117 tracks, "), std::string::npos) << r.out;
}

TEST(trace_busy, merging_nearby_slices_makes_smaller_files_with_coarser_edges) {
    const traced_run fine = run_traced("fine", "-p mesh4x4 -w mlp");
    const traced_run coarse = run_traced("coarse", "-p mesh4x4 -w mlp --trace-merge 1us");
    EXPECT_LT(fs::file_size(coarse.dir / "t.json") * 4, fs::file_size(fine.dir / "t.json"));
    for (const std::string unit : {"mesh4x4.tile[0,0].pe", "mesh4x4.noc.link[0,0].east"})
        EXPECT_GE(coarse.vcd.at(unit).busy_s, fine.vcd.at(unit).busy_s) << unit << ": merged gaps count as busy";
    fs::remove_all(fine.dir.parent_path());
}
