// `tessel graph info W`: what a workload is made of, before any platform is involved: op counts by kind,
// parameters, FLOPs, bytes, arithmetic intensity and the critical path. --json for scripts.
#include <nlohmann/json.hpp>

#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "apps/tessel/command.h"
#include "engine/workload/load.h"
#include "engine/workload/passes.h"
#include "models/core/units.h"

namespace tessel {

namespace cmd_graph {

struct graph_info_options {
    std::string workload;
    std::vector<std::string> sets;
    bool json = false;
};

graph_info_options& opts() {
    static graph_info_options o;
    return o;
}

CLI::App* info_app = nullptr;

/// --set KEY=VALUE, with or without the "workload." prefix that `tessel run` uses.
std::map<std::string, std::string> parse_sets(const std::vector<std::string>& sets) {
    std::map<std::string, std::string> m;
    for (const auto& s : sets) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) fail("--set " + s + ": expected KEY=VALUE (e.g. --set batch=8)");
        std::string key = s.substr(0, eq);
        if (key.rfind("workload.", 0) == 0) key = key.substr(9);
        const std::string value = s.substr(eq + 1);
        if (const auto [it, fresh] = m.emplace(key, value); !fresh && it->second != value)
            fail("--set " + key + " is given twice, as '" + it->second + "' and as '" + value + "'; give it once");
    }
    return m;
}

/// 25.56 M, 8.217 G: counts read at a glance.
std::string si(double v) {
    const std::pair<double, const char*> steps[] = {{1e15, " P"}, {1e12, " T"}, {1e9, " G"}, {1e6, " M"}, {1e3, " k"}};
    for (const auto& [f, name] : steps)
        if (std::fabs(v) >= f) return format_number(v / f) + name;
    return format_number(v);
}

/// Decimal byte counts ("51.11 MB"), comparable across rows.
std::string bytes_str(double v) {
    const std::string n = si(v);
    return n.back() >= 'A' && n.back() <= 'z' ? n + "B" : n + " B";
}

struct kind_total {
    int ops = 0;
    double flops = 0, bytes = 0, params = 0;
};

int run_info() {
    const auto& o = opts();
    const workload_graph g = load_workload(o.workload, parse_sets(o.sets));
    const op_cost t = g.total();
    std::map<std::string, kind_total> kinds;
    std::map<std::string, int> types;
    std::map<std::string, int> phases;
    for (const auto& op : g.ops()) {
        auto& k = kinds[op_kind_name(op.kind)];
        ++k.ops;
        k.flops += op.cost.flops;
        k.bytes += op.cost.bytes_read() + op.cost.bytes_written();
        k.params += op.cost.params;
        ++types[op.kind == op_kind::generic || op.kind == op_kind::shape_only
                    ? std::string(op_kind_name(op.kind)) + ":" + op.type
                    : op.type];
        ++phases[op.phase == op_phase::forward ? "forward" : op.phase == op_phase::backward ? "backward" : "optimizer"];
    }
    const double params = g.parameter_count();
    double param_bytes = 0;
    for (const auto& tensor : g.tensors())
        if (tensor.role == tensor_role::weight && tensor.alias_of < 0)
            param_bytes += static_cast<double>(tensor.bytes());
    const auto cp = critical_path(g);
    const double moved = t.bytes_read() + t.bytes_written();

    if (o.json) {
        nlohmann::json j;
        j["workload"] = g.name;
        j["parameters"] = g.parameters;
        j["ops"] = g.ops().size();
        j["tensors"] = g.tensors().size();
        for (const auto& [k, v] : kinds) j["ops_by_kind"][k] = {{"ops", v.ops}, {"flops", v.flops}, {"bytes", v.bytes}};
        j["ops_by_type"] = types;
        j["ops_by_phase"] = phases;
        j["parameter_count"] = params;
        j["parameter_bytes"] = param_bytes;
        j["macs"] = t.macs;
        j["flops"] = t.flops;
        j["bytes_read_activations"] = t.bytes_in;
        j["bytes_read_weights"] = t.bytes_weight;
        j["bytes_written"] = t.bytes_out;
        j["arithmetic_intensity"] = moved > 0 ? t.flops / moved : 0;
        std::vector<std::string> path;
        for (int v : cp.ops) path.push_back(g.op(v).name);
        j["critical_path"] = {{"ops", cp.ops.size()},
                              {"flops", cp.weight},
                              {"share_of_flops", t.flops > 0 ? cp.weight / t.flops : 0},
                              {"names", path}};
        j["notes"] = g.notes;
        // Names come from user files and may not be valid UTF-8: replace bad bytes instead of failing.
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }
    std::ostringstream params_line;
    for (const auto& [k, v] : g.parameters) params_line << (params_line.tellp() > 0 ? ", " : "") << k << "=" << v;
    std::cout << "workload " << g.name << " (" << params_line.str() << ")\n";
    std::cout << "  ops:         " << g.ops().size() << " in " << g.tensors().size() << " tensors";
    if (phases.size() > 1)
        for (const auto& [p, n] : phases) std::cout << ", " << p << " " << n;
    std::cout << "\n";
    std::cout << "  parameters:  " << si(params) << " (" << bytes_str(param_bytes) << ")\n";
    std::cout << "  FLOPs:       " << si(t.flops) << " (" << si(t.macs) << " MACs, 2 FLOPs each)\n";
    std::cout << "  bytes:       read " << bytes_str(t.bytes_read()) << " (activations " << bytes_str(t.bytes_in)
              << ", weights " << bytes_str(t.bytes_weight) << "), written " << bytes_str(t.bytes_out) << "\n";
    std::cout << "  intensity:   " << format_number(moved > 0 ? t.flops / moved : 0)
              << " FLOP/B (FLOPs per byte read or written, no reuse across ops)\n";
    std::cout << "  critical path: " << cp.ops.size() << " ops, " << si(cp.weight) << " FLOPs ("
              << format_number(t.flops > 0 ? 100 * cp.weight / t.flops : 0, 3) << "% of all)";
    if (!cp.ops.empty()) {
        std::cout << ": " << g.op(cp.ops.front()).name;
        if (cp.ops.size() > 2) std::cout << " -> ... (" << cp.ops.size() - 2 << " ops) ...";
        if (cp.ops.size() > 1) std::cout << " -> " << g.op(cp.ops.back()).name;
    }
    std::cout << "\n\n";
    std::cout << "  " << std::left << std::setw(14) << "kind" << std::right << std::setw(7) << "ops" << std::setw(14)
              << "FLOPs" << std::setw(8) << "share" << std::setw(14) << "bytes"
              << "\n";
    for (const auto& [k, v] : kinds)
        std::cout << "  " << std::left << std::setw(14) << k << std::right << std::setw(7) << v.ops << std::setw(14)
                  << si(v.flops) << std::setw(7) << format_number(t.flops > 0 ? 100 * v.flops / t.flops : 0, 3) << "%"
                  << std::setw(14) << bytes_str(v.bytes) << "\n";
    std::cout << "\n  op types:";
    for (const auto& [k, v] : types) std::cout << " " << k << " " << v << ";";
    std::cout << "\n";
    for (const auto& n : g.notes) std::cout << "  note: " << n << "\n";
    return 0;
}

TESSEL_REGISTER_COMMAND((command{
    "graph", 40,
    [](CLI::App& app) {
        CLI::App* graph = app.add_subcommand("graph", "Inspect workload graphs");
        graph->require_subcommand(1);
        info_app = graph->add_subcommand(
            "info", "Op counts by kind, parameters, FLOPs, bytes, arithmetic intensity, critical path");
        info_app->add_option("workload", opts().workload, "a .yaml or .onnx file, or a built-in workload name")
            ->required();
        info_app->add_option("--set", opts().sets,
                             "override a workload parameter: KEY=VALUE (batch, seq, precision, ...)");
        info_app->add_flag("--json", opts().json, "print JSON for scripts");
        return graph;
    },
    [] { return info_app && info_app->parsed() ? run_info() : 2; }}));

}  // namespace cmd_graph

}  // namespace tessel
