// Statistics and traces written the same way every time: JSON tree by hierarchy, flat CSV, VCD and
// Chrome trace-event JSON with the scope filter, the time window and slice merging.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "models/core/stats.h"
#include "models/core/tracer.h"
#include "tests/support/trace_check.h"

using namespace tessel;

TEST(stats, json_tree_and_csv) {
    stats_registry reg;
    const std::vector<stat_decl> pe_stats{{"macs", "MAC", "MACs done"}, {"utilisation", "1", "busy / time"}};
    const std::vector<stat_decl> noc_stats{{"bytes", "B", "bytes moved"}};
    stat_group a("top.tile[0,1].pe", "pe", &pe_stats), b("top.noc", "mesh_noc", &noc_stats);
    a.scalar("macs") = 1024;
    a.formula("utilisation", [](double s) { return 0.5e-6 / s; });
    b.scalar("bytes") = 3.25;
    reg.add(&a);
    reg.add(&b);
    std::ostringstream js, csv;
    reg.write_json(js, 1e-6, false);
    reg.write_csv(csv, 1e-6);
    const auto j = nlohmann::json::parse(js.str());
    EXPECT_EQ(j["top"]["tile[0,1]"]["pe"]["macs"]["value"], 1024);
    EXPECT_EQ(j["top"]["tile[0,1]"]["pe"]["utilisation"]["value"], 0.5);
    EXPECT_EQ(j["top"]["noc"]["bytes"]["unit"], "B");
    EXPECT_NE(csv.str().find("\"top.tile[0,1].pe\",macs,1024,MAC,MACs done"), std::string::npos) << csv.str();
    EXPECT_EQ(exact_number(0.1), "0.1");
    EXPECT_EQ(exact_number(3), "3");
}

TEST(tracer, scope_window_merge_and_formats) {
    const std::string vcd = "tracer_test.vcd", js = "tracer_test.json";
    tracer t;
    trace_options o;
    o.vcd_path = vcd;
    o.perfetto_path = js;
    o.scopes = {"chip.a*"};
    o.from = 100;
    o.to = 1000;
    t.configure(o);
    const int a = t.track("chip.a", "chip.a.pe");
    const int b = t.track("chip.b", "chip.b.pe");
    EXPECT_GE(a, 0);
    EXPECT_EQ(b, -1) << "outside the scope filter";
    t.set_op_names({"fc1", "fc2"});
    t.slice(a, 50, 200, 0, 7);     // clipped to [100, 200)
    t.slice(a, 200, 300, 0, 7);    // same step, back to back: merged
    t.slice(a, 300, 400, 1, 8);    // another step
    t.slice(a, 2000, 3000, 1, 9);  // outside the window
    EXPECT_EQ(t.slice_count(), 2u);
    t.write();
    std::ifstream in(js);
    const auto j = nlohmann::json::parse(in);
    int slices = 0;
    for (const auto& e : j["traceEvents"])
        if (e["ph"] == "X") {
            ++slices;
            if (e["name"] == "fc1") {
                EXPECT_EQ(e["ts"].get<double>(), 100e-9);  // microseconds
                EXPECT_EQ(e["dur"].get<double>(), 200e-9);
            }
        }
    EXPECT_EQ(slices, 2);
    tessel::test::expect_no_overlapping_slices(j, "tracer unit test");
    std::ifstream v(vcd);
    std::stringstream ss;
    ss << v.rdbuf();
    const std::string text = ss.str();
    EXPECT_NE(text.find("$timescale 1fs $end"), std::string::npos);
    EXPECT_NE(text.find("$scope module chip $end"), std::string::npos);
    EXPECT_NE(text.find("#100\n1"), std::string::npos) << text;
    EXPECT_NE(text.find("#400\n0"), std::string::npos) << text;
    std::remove(vcd.c_str());
    std::remove(js.c_str());
}
