// The results store: rows survive reopening, a line torn by a crash is dropped (and only that line), the latest
// row of a point wins, results.csv is rebuilt with one row per point, and two writers cannot share a folder.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/sweep/results.h"
#include "models/core/error.h"
#include "tests/support/files.h"

using namespace tessel;
using namespace tessel::sweep;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("tessel_sweep_results_" + std::to_string(getpid())) / name;
    fs::remove_all(d);
    return d;
}

using tessel::test::slurp;

row make(const std::string& key, const std::string& status, double t) {
    row r;
    r["point"] = 0;
    r["key"] = key;
    r["status"] = status;
    r["exit_code"] = status == "ok" ? 0 : 2;
    r["error"] = status == "ok" ? "" : "tessel: error: bad, \"quoted\"";
    r["params"] = {{"noc.link_bandwidth", "32B/cycle"}};
    r["metrics"] = {{"sim_time_s", t}, {"bound_by", "network"}};
    r["config_hash"] = "abc";
    r["dir"] = "points/" + key;
    return r;
}

}  // namespace

TEST(sweep_results, rows_survive_reopening_and_the_latest_wins) {
    const fs::path d = scratch("reopen");
    {
        results_store s(d.string(), true);
        s.rewrite_csv({"noc.link_bandwidth"}, {"sim_time_s", "bound_by"});
        s.append(make("k1", "ok", 0.000207269));
        s.append(make("k2", "failed", 0));
        s.append(make("k2", "ok", 0.5));
    }
    results_store s(d.string(), false);
    EXPECT_EQ(s.lines(), 3u);
    EXPECT_EQ(s.torn(), 0u);
    ASSERT_EQ(s.latest().size(), 2u);
    EXPECT_EQ(s.latest().at("k2")["status"], "ok");
    EXPECT_DOUBLE_EQ(s.latest().at("k1")["metrics"]["sim_time_s"].get<double>(), 0.000207269);
    // The appended CSV has all three lines; a rebuilt one keeps one row per point, in the order written.
    const std::string header =
        "point,key,status,exit_code,noc.link_bandwidth,sim_time_s,bound_by,config_hash,tessel_version,wall_s,host,"
        "finished,backend,slurm_job,error,dir\n";
    EXPECT_EQ(slurp(d / "results.csv"),
              header + "0,k1,ok,0,32B/cycle,0.000207269,network,abc,,,,,,,,points/k1\n" +
                  "0,k2,failed,2,32B/cycle,0.0,network,abc,,,,,,,\"tessel: error: bad, \"\"quoted\"\"\",points/k2\n" +
                  "0,k2,ok,0,32B/cycle,0.5,network,abc,,,,,,,,points/k2\n");
    results_store w(d.string(), true);
    w.rewrite_csv({"noc.link_bandwidth"}, {"sim_time_s", "bound_by"});
    EXPECT_EQ(slurp(d / "results.csv"), header + "0,k1,ok,0,32B/cycle,0.000207269,network,abc,,,,,,,,points/k1\n" +
                                            "0,k2,ok,0,32B/cycle,0.5,network,abc,,,,,,,,points/k2\n");
}

TEST(sweep_results, a_torn_last_line_is_dropped_and_truncated) {
    const fs::path d = scratch("torn");
    {
        results_store s(d.string(), true);
        s.append(make("k1", "ok", 1));
        s.append(make("k2", "ok", 2));
    }
    const std::string good = slurp(d / "results.jsonl");
    {
        std::ofstream out(d / "results.jsonl", std::ios::app | std::ios::binary);
        out << R"({"point":2,"key":"k3","status":"o)";  // a crash in the middle of a write
    }
    {
        results_store r(d.string(), false);  // a reader sees it but leaves the file alone
        EXPECT_EQ(r.torn(), 1u);
        EXPECT_EQ(r.latest().size(), 2u);
        EXPECT_NE(slurp(d / "results.jsonl"), good);
    }
    results_store s(d.string(), true);
    EXPECT_EQ(s.torn(), 1u);
    EXPECT_EQ(s.latest().size(), 2u);
    EXPECT_EQ(slurp(d / "results.jsonl"), good);
    s.append(make("k3", "ok", 3));
    EXPECT_EQ(slurp(d / "results.jsonl"), good + make("k3", "ok", 3).dump() + "\n");
}

TEST(sweep_results, complete_lines_that_are_not_rows_are_counted_and_skipped) {
    const fs::path d = scratch("bad");
    fs::create_directories(d);
    std::ofstream(d / "results.jsonl") << make("k1", "ok", 1).dump() << "\nnot json\n{\"no_key\": 1}\n"
                                       << make("k2", "ok", 2).dump() << "\n";
    results_store s(d.string(), true);
    EXPECT_EQ(s.bad(), 2u);
    EXPECT_EQ(s.latest().size(), 2u);
}

TEST(sweep_results, a_second_writer_is_refused) {
    const fs::path d = scratch("lock");
    results_store first(d.string(), true);
    try {
        results_store second(d.string(), true);
        FAIL() << "two writers";
    } catch (const input_error& e) {
        EXPECT_NE(
            std::string(e.what()).find("another tessel sweep (pid " + std::to_string(getpid()) + ") is writing to"),
            std::string::npos)
            << e.what();
    }
    results_store reader(d.string(), false);  // readers (a dry run) need no lock
    EXPECT_TRUE(reader.latest().empty());
}

TEST(sweep_results, csv_cells) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
    EXPECT_EQ(csv_cell(nullptr), "");
    EXPECT_EQ(csv_cell(row(0.1)), "0.1");
    EXPECT_EQ(csv_cell(row(16)), "16");
    EXPECT_EQ(csv_cell(row("tile[*].pe")), "tile[*].pe");
    EXPECT_EQ(csv_cell(row(true)), "true");
}

TEST(sweep_results, a_row_of_the_wrong_shape_is_unreadable_and_its_point_runs_again) {
    // Each field every reader takes as its type (driver, plan, serve): a row that breaks one is skipped.
    EXPECT_TRUE(is_row(make("k", "ok", 1)));
    auto broken = [](const char* field, const row& value) {
        row r = make("k", "ok", 1);
        r[field] = value;
        return r;
    };
    EXPECT_FALSE(is_row(broken("status", 5)));
    EXPECT_FALSE(is_row(broken("error", row::array())));
    EXPECT_FALSE(is_row(broken("point", -1)));
    EXPECT_FALSE(is_row(broken("params", {{"parallel.dp", 7}})));
    EXPECT_FALSE(is_row(broken("params", "dp=2")));
    EXPECT_FALSE(is_row(broken("metrics", 3)));
    EXPECT_FALSE(is_row(broken("dir", nullptr)));
    row no_params = make("k", "ok", 1);
    no_params.erase("params");
    EXPECT_FALSE(is_row(no_params));

    const fs::path d = scratch("shapes");
    fs::create_directories(d);
    std::ofstream(d / "results.jsonl") << make("good", "ok", 1).dump() << "\n"
                                       << broken("params", {{"parallel.dp", 7}}).dump() << "\n";
    const results_store s(d.string(), false);
    EXPECT_EQ(s.lines(), 2u);
    EXPECT_EQ(s.bad(), 1u);
    EXPECT_EQ(s.latest().count("good"), 1u);
}

TEST(sweep_results, a_summary_field_of_the_wrong_type_is_an_input_error) {
    const fs::path d = scratch("summary");
    fs::create_directories(d / "points" / "k");
    std::ofstream(d / "points" / "k" / "summary.json") << R"({"sim_time_s": "soon"})";
    auto seconds = [](const nlohmann::json& s) { return s.value("sim_time_s", 0.0); };
    try {
        read_point_summary(d.string(), make("k", "ok", 1), seconds);
        ADD_FAILURE() << "a string where a number belongs was read";
    } catch (const input_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "its summary.json does not read: a field has the wrong type (type must be number, but is string)");
    }
    fs::remove(d / "points" / "k" / "summary.json");
    try {
        read_point_summary(d.string(), make("k", "ok", 1), seconds);
        ADD_FAILURE() << "a missing summary was read";
    } catch (const input_error& e) {
        EXPECT_NE(std::string(e.what()).find("its summary.json does not read: cannot open"), std::string::npos)
            << e.what();
    }
}
