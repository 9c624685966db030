// tessel run: simulate a workload (or a hand-written program) on a platform and print the summary.
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "engine/plan/layer_estimate.h"
#include "engine/program/program_yaml.h"
#include "engine/run/session.h"
#include "models/core/limits.h"

namespace tessel {
namespace cmd_run {

session_options g_opt;
bool g_json = false, g_quiet = false;
int g_estimate_layers = 0;
std::vector<std::string> g_limits;

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("run", "simulate a workload or a program on a platform");
    c->add_option("-p,--platform", g_opt.platform,
                  "platform YAML file, or a bundled platform name (tessel list); a program's own platform: by default");
    c->add_option("-w,--workload", g_opt.workload, "workload: a .yaml or .onnx file, or a built-in model name");
    c->add_option("-g,--program", g_opt.program, "program YAML: steps bound to platform resources");
    c->add_option("-s,--set", g_opt.sets,
                  "override a parameter: PATH=VALUE (repeatable), e.g. noc.link_bandwidth=64B/cycle");
    c->add_option("--stats", g_opt.stats_json, "write statistics as JSON");
    c->add_option("--csv", g_opt.stats_csv, "write statistics as CSV");
    c->add_option("--vcd", g_opt.vcd, "write a VCD activity trace (GTKWave)");
    c->add_option("--trace", g_opt.trace, "write a Chrome/Perfetto trace-event JSON (ui.perfetto.dev)");
    c->add_option("--trace-scope", g_opt.trace_scopes, "only trace units whose path matches this glob (repeatable)");
    c->add_option("--trace-from", g_opt.trace_from, "trace window start, e.g. 10us");
    c->add_option("--trace-to", g_opt.trace_to, "trace window end, e.g. 20us");
    c->add_option(
        "--trace-merge", g_opt.trace_merge,
        "merge slices of one op on one unit that are less than this apart, e.g. 100ns (smaller files, coarser edges)");
    c->add_option("-o,--out", g_opt.out_dir, "write summary.json, stats.json, stats.csv and resolved.yaml into DIR");
    c->add_option("--floorplan", g_opt.floorplan,
                  "draw the grid of compute units coloured by how busy each was (.svg or .png)");
    c->add_flag("--floorplan-relative", g_opt.floorplan_relative,
                "colour the floorplan over the units' own range of busy fractions (least to most busy), not 0-100%");
    c->add_option("--emit-program", g_opt.emit_program,
                  "write the program as it runs (program YAML; replay it with -g FILE)");
    c->add_flag("--stats-per-unit", g_opt.per_unit_stats, "include per-unit arrays (per link, per PE) in stats JSON");
    c->add_flag("--no-stats{false}", g_opt.unit_stats,
                "with -o: leave out stats.json and stats.csv (a large system's are tens of MB); summary.json and "
                "resolved.yaml are written");
    c->add_option("--limit", g_limits,
                  "raise or lower a resource budget: NAME=VALUE (repeatable; modules, ops, steps, packets, "
                  "sim_seconds; docs/reliability.md)");
    c->add_option("--estimate-layers", g_estimate_layers,
                  "estimate a system's training iteration from two runs of K and K+1 layers per pipeline chunk, the "
                  "model's other layers counted by their difference (docs/systems.md, \"A sample of layers\")")
        ->check(CLI::PositiveNumber);
    c->add_flag("--json", g_json, "print the summary as JSON instead of a table");
    c->add_flag("-q,--quiet", g_quiet, "print nothing on success");
    return c;
}

/// --estimate-layers: the two samples' runs, then the estimate; what only a whole run makes is refused.
int estimate() {
    const std::vector<std::pair<bool, const char*>> whole_only = {{!g_opt.program.empty(), "--program"},
                                                                  {!g_opt.trace.empty(), "--trace"},
                                                                  {!g_opt.vcd.empty(), "--vcd"},
                                                                  {!g_opt.floorplan.empty(), "--floorplan"},
                                                                  {!g_opt.emit_program.empty(), "--emit-program"},
                                                                  {!g_opt.stats_json.empty(), "--stats"},
                                                                  {!g_opt.stats_csv.empty(), "--csv"},
                                                                  {!g_limits.empty(), "--limit"}};
    for (const auto& [given, flag] : whole_only)
        if (given)
            throw input_error(std::string(flag) +
                              " is of one whole run; --estimate-layers runs two samples of layers (at the default "
                              "budgets) and writes their summaries only: run the model whole for it");
    if (g_opt.workload.empty()) throw input_error("--estimate-layers needs a workload (-w) to take its layers from");
    layer_estimate_request r;
    r.platform = g_opt.platform;
    r.platform_name = g_opt.platform_arg;
    r.workload = g_opt.workload;
    r.sets = g_opt.sets;
    r.per_chunk = g_estimate_layers;
    r.out_dir = g_opt.out_dir;
    const nlohmann::json e = estimate_from_layers(r);
    if (g_quiet) return 0;
    if (g_json)
        std::cout << e.dump(2) << "\n";
    else
        print_layer_estimate(e, std::cout);
    return 0;
}

int run() {
    for (const auto& l : g_limits) limits().set(l);
    if (g_opt.platform.empty() && !g_opt.program.empty()) g_opt.platform = program_platform(g_opt.program);
    if (g_opt.platform.empty())
        throw input_error(g_opt.program.empty() ? "tessel run needs --platform"
                                                : "tessel run needs --platform: " + g_opt.program +
                                                      " names no platform (add 'platform: NAME' to it, or pass -p)");
    g_opt.platform_arg = g_opt.platform;
    g_opt.platform = find_platform(g_opt.platform);
    if (g_estimate_layers > 0) return estimate();
    // Never destroyed: the process ends with the run, and tearing a large platform down costs as much as a tenth
    // of its run (SystemC unregisters each of a 32-socket SN40L's 66,560 units, ports and exports one by one).
    static session* const kept = new session(g_opt);
    session& s = *kept;
    const run_summary sum = s.run();
    if (g_quiet) return 0;
    if (g_json)
        std::cout << sum.to_json().dump(2) << "\n";
    else
        sum.print(std::cout);
    if (!g_json)
        for (const auto& l : s.trace_report()) std::cout << l << "\n";
    return 0;
}

TESSEL_REGISTER_COMMAND(command{"run", 10, setup, run});

}  // namespace cmd_run

}  // namespace tessel
