// Sweep specs: axes (lists, linear, geometric and log ranges), zips, derived parameters, filters, metrics and
// point keys expand to the points we compute by hand; every kind of mistake fails with file:line:column.
#include <gtest/gtest.h>

#include "engine/sweep/metrics.h"
#include "engine/sweep/spec.h"

using namespace tessel;
using namespace tessel::sweep;

namespace {

const std::string head = "platform: mesh4x4\nworkload: mlp\n";

std::vector<std::string> values(const spec& s, const std::string& axis) {
    for (const auto& a : s.axes)
        if (a.name == axis) return a.values;
    return {};
}

/// The error message of parsing and expanding `text`, empty if it was fine.
std::string error_of(const std::string& text) {
    try {
        expand(parse_spec(text, "sw.yaml"));
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}

#define EXPECT_ERROR(text, expected)                           \
    do {                                                       \
        const std::string e_ = error_of(text);                 \
        EXPECT_NE(e_.find(expected), std::string::npos) << e_; \
    } while (0)

}  // namespace

TEST(sweep_spec, lists_and_ranges_keep_the_unit_they_were_written_in) {
    const spec s = parse_spec(head + R"Y(axes:
  noc.link_bandwidth: [16B/cycle, 32B/cycle]
  tile.sram.capacity: {from: 64KiB, to: 1MiB, factor: 2}
  workload.batch: {from: 8, to: 40, step: 16}
  hbm.channels: {from: 1, to: 100, count: 3, scale: log}
  noc.router_latency: {from: 1cycles, to: 2cycles, count: 3}
  noc.packet_bytes: {from: 100B, to: 1000B, count: 4, scale: log, integer: true}
)Y",
                              "sw.yaml");
    EXPECT_EQ(values(s, "noc.link_bandwidth"), (std::vector<std::string>{"16B/cycle", "32B/cycle"}));
    EXPECT_EQ(values(s, "tile.sram.capacity"),
              (std::vector<std::string>{"64KiB", "128KiB", "256KiB", "512KiB", "1024KiB"}));
    EXPECT_EQ(values(s, "workload.batch"), (std::vector<std::string>{"8", "24", "40"}));
    EXPECT_EQ(values(s, "hbm.channels"), (std::vector<std::string>{"1", "10", "100"}));
    EXPECT_EQ(values(s, "noc.router_latency"), (std::vector<std::string>{"1cycles", "1.5cycles", "2cycles"}));
    // 100 * 10^(i/3): 100, 215.44, 464.16, 1000, rounded to whole bytes.
    EXPECT_EQ(values(s, "noc.packet_bytes"), (std::vector<std::string>{"100B", "215B", "464B", "1000B"}));
    EXPECT_EQ(s.name, "sw");
    EXPECT_EQ(s.metrics.size(), default_metrics().size());
}

TEST(sweep_spec, cartesian_product_first_axis_outermost) {
    const expansion ex = expand(parse_spec(head + "axes:\n  a.x: [1, 2]\n  b.y: [p, q, r]\n", "sw.yaml"));
    ASSERT_EQ(ex.points.size(), 6u);
    EXPECT_EQ(ex.combinations, 6u);
    const char* expect[6][2] = {{"1", "p"}, {"1", "q"}, {"1", "r"}, {"2", "p"}, {"2", "q"}, {"2", "r"}};
    for (size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(ex.points[i].index, i);
        ASSERT_EQ(ex.points[i].params.size(), 2u);
        EXPECT_EQ(ex.points[i].params[0].value, expect[i][0]);
        EXPECT_EQ(ex.points[i].params[1].value, expect[i][1]);
        EXPECT_EQ(ex.points[i].platform, "mesh4x4");
        EXPECT_EQ(ex.points[i].workload, "mlp");
    }
}

TEST(sweep_spec, zipped_axes_advance_together) {
    const expansion ex = expand(parse_spec(head + R"Y(axes:
  a.x: [1, 2, 3]
  c.z: [u, v]
  b.y: [10, 20, 30]
zip: [[b.y, a.x]]
)Y",
                                           "sw.yaml"));
    // Groups: (a.x, b.y) zipped, then c.z: 3 x 2 points.
    ASSERT_EQ(ex.points.size(), 6u);
    for (const auto& p : ex.points) EXPECT_EQ(std::stoi(p.params[2].value), 10 * std::stoi(p.params[0].value));
    EXPECT_EQ(ex.points[1].params[1].value, "v");
    EXPECT_EQ(ex.points[2].params[0].value, "2");
    // A zipped axis may repeat a value: the points are the combinations, each once, with distinct keys.
    const expansion rep =
        expand(parse_spec(head + "axes:\n  a.x: [1, 1, 2]\n  b.y: [1, 2, 1]\nzip: [[a.x, b.y]]\n", "sw.yaml"));
    ASSERT_EQ(rep.points.size(), 3u);
    EXPECT_EQ(rep.points[1].params[0].value, "1");
    EXPECT_EQ(rep.points[1].params[1].value, "2");
    EXPECT_NE(rep.points[0].key, rep.points[1].key);
}

TEST(sweep_spec, derived_parameters_and_filters) {
    const expansion ex = expand(parse_spec(head + R"Y(set:
  hbm.channels: 4
axes:
  tile.sram.capacity: [64KiB, 128KiB, 256KiB]
  workload.batch: [8, 16, 32]
derived:
  tile.sram.banks: "max(2, tile.sram.capacity / 64KiB)"
  noc.packet_bytes: {expr: "workload.batch * 16", unit: B}
filter: "workload.batch * 4KiB <= tile.sram.capacity and hbm.channels == 4"
)Y",
                                           "sw.yaml"));
    // Kept: batch*4KiB <= capacity: 64KiB: 8, 16; 128KiB: 8, 16, 32; 256KiB: all three.
    EXPECT_EQ(ex.combinations, 9u);
    EXPECT_EQ(ex.filtered_out, 1u);
    ASSERT_EQ(ex.points.size(), 8u);
    const point& p = ex.points[7];  // 256KiB, 32
    ASSERT_EQ(p.params.size(), 4u);
    EXPECT_EQ(p.params[2].name, "tile.sram.banks");
    EXPECT_EQ(p.params[2].value, "4");
    EXPECT_EQ(p.params[3].value, "512B");
    // --set order: fixed, axes, derived.
    ASSERT_EQ(p.sets.size(), 5u);
    EXPECT_EQ(p.sets[0].name, "hbm.channels");
    EXPECT_EQ(p.sets[4].name, "noc.packet_bytes");
    EXPECT_EQ(ex.points[0].params[2].value, "2");
}

TEST(sweep_spec, platform_and_workload_can_be_axes) {
    const expansion ex = expand(parse_spec(R"Y(axes:
  platform: [mesh4x4, ring8_ddr4]
  workload: [mlp, gemm]
filter: "not (platform == 'ring8_ddr4' and workload == 'gemm')"
)Y",
                                           "sw.yaml"));
    ASSERT_EQ(ex.points.size(), 3u);
    EXPECT_EQ(ex.points[2].platform, "ring8_ddr4");
    EXPECT_EQ(ex.points[2].workload, "mlp");
    EXPECT_TRUE(ex.points[2].sets.empty());
}

TEST(sweep_spec, point_keys_depend_on_values_only) {
    const std::string k = point_key("mesh4x4", "mlp", "", {{"a.x", "1"}, {"b.y", "2"}});
    EXPECT_EQ(k.size(), 16u);
    EXPECT_EQ(k, point_key("mesh4x4", "mlp", "", {{"b.y", "2"}, {"a.x", "1"}}));
    EXPECT_NE(k, point_key("mesh4x4", "mlp", "", {{"a.x", "1"}, {"b.y", "3"}}));
    EXPECT_NE(k, point_key("mesh4x4", "gemm", "", {{"a.x", "1"}, {"b.y", "2"}}));
    // Adding a value to an axis keeps the keys of the points that were there.
    const expansion a = expand(parse_spec(head + "axes:\n  a.x: [1, 2]\n", "one.yaml"));
    const expansion b = expand(parse_spec(head + "axes:\n  a.x: [0, 1, 2]\n", "other/two.yaml"));
    EXPECT_EQ(a.points[0].key, b.points[1].key);
    EXPECT_EQ(a.points[1].key, b.points[2].key);
}

TEST(sweep_spec, metrics_paths_formulas_and_timeout) {
    const spec s = parse_spec(head + R"Y(axes:
  workload.batch: [8]
metrics:
  - sim_time_s
  - resources.noc.utilisation_max
  - {name: pe, path: "resources.tile[*].pe.utilisation_max"}
  - {name: per_sample, expr: "sim_time_s / workload.batch"}
timeout: 2min
slurm: {partition: short, time: "00:10:00", cpus_per_task: 2, sbatch_args: [--qos=low]}
)Y",
                              "sw.yaml");
    ASSERT_EQ(s.metrics.size(), 4u);
    EXPECT_EQ(s.metrics[2].name, "pe");
    EXPECT_EQ(s.metrics[2].path, "resources.tile[*].pe.utilisation_max");
    EXPECT_TRUE(s.metrics[3].expr.has_value());
    EXPECT_DOUBLE_EQ(s.timeout_s, 120);
    EXPECT_EQ(s.slurm.partition, "short");
    EXPECT_EQ(s.slurm.cpus_per_task, 2);
    EXPECT_EQ(s.slurm.sbatch_args, std::vector<std::string>{"--qos=low"});

    const nlohmann::json summary = nlohmann::json::parse(R"({"sim_time_s": 0.002, "bound_by": "network",
        "resources": [{"name": "noc", "utilisation_max": 0.5}, {"name": "tile[*].pe", "utilisation_max": 0.25}]})");
    const auto m = collect_metrics(s.metrics, summary, {{"workload.batch", "8"}});
    EXPECT_DOUBLE_EQ(m["sim_time_s"].get<double>(), 0.002);
    EXPECT_DOUBLE_EQ(m["resources.noc.utilisation_max"].get<double>(), 0.5);
    EXPECT_DOUBLE_EQ(m["pe"].get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(m["per_sample"].get<double>(), 0.00025);
    // A run without the value: null, not an error.
    EXPECT_TRUE(
        collect_metrics(s.metrics, nlohmann::json::object(), {{"workload.batch", "8"}})["per_sample"].is_null());
}

TEST(sweep_spec, durations) {
    EXPECT_DOUBLE_EQ(parse_duration("30s"), 30);
    EXPECT_DOUBLE_EQ(parse_duration("500ms"), 0.5);
    EXPECT_DOUBLE_EQ(parse_duration("10min"), 600);
    EXPECT_DOUBLE_EQ(parse_duration("2h"), 7200);
    EXPECT_DOUBLE_EQ(parse_duration("5"), 5);
    EXPECT_THROW(parse_duration("5GHz"), input_error);
    EXPECT_THROW(parse_duration("soon"), input_error);
}

TEST(sweep_spec, errors_name_file_line_and_column) {
    EXPECT_ERROR(head + "axes:\n  a.x: []\n", "sw.yaml:4:3: axis 'a.x' is empty");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2]\nfilter: \"a.x > (2\"\n", "sw.yaml:5:18: filter: missing ')'");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2]\nfilter: a.x > 1 and a.y < 2\n",
                 "sw.yaml:5:21: filter: unknown name 'a.y' (did you mean 'a.x'?)");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2]\nfilter: \"a.x +* 2\"\n", "sw.yaml:5:15:");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2]\nfliter: a.x > 1\n",
                 "sw.yaml:5:1: unknown key 'fliter' in sweep file (did you mean 'filter'?)");
    EXPECT_ERROR(head + "axes:\n  a.x: {from: 64, to: 8, step: 8}\n", "sw.yaml:4:3: axis 'a.x' is empty");
    EXPECT_ERROR(head + "axes:\n  a.x: {from: 8, to: 64}\n",
                 "sw.yaml:4:8: axis 'a.x': a range needs exactly one of step");
    EXPECT_ERROR(head + "axes:\n  a.x: {from: 8KiB, to: 64GHz, step: 8}\n",
                 "sw.yaml:4:25: axis 'a.x': from is a size but to is a frequency");
    EXPECT_ERROR(head + "axes:\n  a.x: {from: 8, to: 64, factor: 1}\n",
                 "sw.yaml:4:34: axis 'a.x': factor must be greater than 1");
    EXPECT_ERROR(head + "axes:\n  a.x: {from: 8, to: 64, step: 1e-9}\n", "more than 100000 values");
    EXPECT_ERROR(head + "axes:\n  a.x: 8\n", "sw.yaml:4:8: axis 'a.x': expected a list of values");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2, 1]\n", "sw.yaml:4:15: axis 'a.x': value '1' appears twice");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2, 3]\n  b.y: [1, 2]\nzip: [[a.x, b.y]]\n",
                 "sw.yaml:6:7: zipped axes advance together");
    // Zipped axes may repeat a value (tessel plan zips every plan key); a whole combination may not repeat.
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 1, 1]\n  b.y: [1, 2, 1]\nzip: [[a.x, b.y]]\n",
                 "sw.yaml:4:15: zipped axes: the combination a.x = 1, b.y = 1 appears twice");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nzip: [[a.x, b.z]]\n", "sw.yaml:5:13: zip: 'b.z' is not an axis");
    EXPECT_ERROR(head + "set:\n  a.x: 1\naxes:\n  a.x: [1]\n",
                 "sw.yaml:6:3: parameter 'a.x' is set twice in this sweep (sw.yaml:4:3)");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nfilter: a.x > 5\n",
                 "sw.yaml:5:9: the filter removes every one of the 1 combinations");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 0]\nderived:\n  b.y: \"10 / a.x + c\"\n",
                 "sw.yaml:6:20: derived 'b.y': unknown name 'c'");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, 2]\nfilter: \"a.x - 'one' > 0\"\n",
                 "sw.yaml:5:16: filter at a.x=1: expected a number, got the string \"one\"");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nmetrics: [sim_time]\n",
                 "sw.yaml:5:11: metric 'sim_time': summary.json has no value 'sim_time' (did you mean 'sim_time_s'?)");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nmetrics: [resources.noc.utilisation]\n",
                 "sw.yaml:5:11: metric 'resources.noc.utilisation': a resource has no field 'utilisation'; fields: "
                 "busy_max_s, class,");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nmetrics: [{name: m, expr: \"sim_time_s / flop\"}]\n",
                 "sw.yaml:5:41: metric 'm': unknown name 'flop'");
    EXPECT_ERROR("platform: mesh4x4\naxes:\n  a.x: [1]\n",
                 "sw.yaml:1:1: a sweep needs a workload (workload: mlp) or a program");
    EXPECT_ERROR(head + "program: p.yaml\naxes:\n  a.x: [1]\n", "give either workload or program, not both");
    EXPECT_ERROR(head + "axes:\n  workload: [gemm]\n",
                 "sw.yaml:4:3: 'workload' is both fixed (top level, sw.yaml:2:11) and an axis");
    EXPECT_ERROR(head + "axes: {}\n", "sw.yaml:3:7: axes: empty");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\ntimeout: 5GHz\n", "sw.yaml:5:10: timeout: expected a duration");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nstats: sometimes\n", "sw.yaml:5:8:");
    EXPECT_ERROR(head + "axes:\n  a.x: [1]\nslurm: {cpus: 2}\n", "sw.yaml:5:9: unknown key 'cpus' in slurm");
    EXPECT_ERROR(head + "axes:\n  'a x': [1]\n", "sw.yaml:4:3: axis 'a x': expected a parameter path");
    EXPECT_ERROR(head + "axes:\n  a.x: [1, [2]]\n",
                 "sw.yaml:4:12: axis 'a.x' value: expected a single value, got a list");
    // 500 x 1000 x 2: the expansion alone took 11 s and 920 MB before the limit came down to 100,000 points.
    EXPECT_ERROR(
        head + "axes:\n  a.x: {from: 1, to: 1000, step: 2}\n  a.y: {from: 1, to: 1000, step: 1}\n  a.z: [1, 2]\n",
        "sw.yaml:4:3: the axes make 1000000 combinations; more than 100000 is surely a mistake (split the study into "
        "several sweeps)");
    EXPECT_ERROR("platform: [mesh4x4\n", "sw.yaml:");
}

TEST(sweep_spec, missing_file) {
    try {
        load_spec("/nonexistent/sweep.yaml");
        FAIL() << "no error";
    } catch (const input_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open sweep file '/nonexistent/sweep.yaml'"), std::string::npos)
            << e.what();
    }
}

TEST(sweep_spec, summary_paths_come_from_the_summary_itself) {
    EXPECT_EQ(summary_path_error("sim_time_s"), "");
    EXPECT_EQ(summary_path_error("config_hash"), "");
    EXPECT_EQ(summary_path_error("mapping.tiles"), "");
    EXPECT_EQ(summary_path_error("resources.tile[*].pe.fraction_of_peak"), "");
    EXPECT_NE(summary_path_error("resources"), "");
    EXPECT_NE(summary_path_error("notes"), "");
    const nlohmann::json s = nlohmann::json::parse(R"({"mapping": {"tiles": 16, "ops": []}})");
    EXPECT_EQ(summary_value(s, "mapping.tiles"), 16);
    EXPECT_TRUE(summary_value(s, "mapping.nothing").is_null());
}
