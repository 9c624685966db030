// `tessel import model.onnx -o workload.yaml [--strict]`: turns an ONNX model into a YAML workload graph and
// reports what it found (op types, ops tessel does not know with their nodes, symbolic dimensions).
// `tessel import --scalesim topology.csv [--config scale.cfg] -o workload.yaml`: a SCALE-Sim topology as a
// workload, and the settings of the one-PE systolic platform that match its configuration.
#include <filesystem>
#include <iostream>

#include "apps/tessel/command.h"
#include "engine/workload/onnx_import.h"
#include "engine/workload/onnx_symbolic.h"
#include "engine/workload/scalesim_config.h"
#include "engine/workload/scalesim_topology.h"
#include "engine/workload/yaml_workload.h"
#include "models/core/limits.h"
#include "models/core/output_file.h"

namespace tessel {

namespace cmd_import {

struct import_options {
    std::string model;
    std::string scalesim, config;
    std::string output;
    std::vector<std::string> sets;
    bool strict = false;
};

/// The imported workload's file; its folder is made as `run --out` makes its own.
output_file workload_file(const std::string& path) {
    const std::filesystem::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);  // else the write says why
    return output_file(path, "workload");
}

import_options& opts() {
    static import_options o;
    return o;
}

int run_scalesim_import() {
    const auto& o = opts();
    // Both inputs are read and checked before anything is written.
    const std::string yaml = scalesim_topology_yaml(o.scalesim);
    const std::string settings = o.config.empty() ? std::string() : scalesim_settings(o.config);
    if (!o.output.empty()) {
        output_file file = workload_file(o.output);
        file.stream() << yaml;
        file.commit();
        std::cout << "wrote " << o.output << "\n";
    } else {
        std::cout << yaml;
    }
    if (!o.config.empty())
        std::cout << "run it as SCALE-Sim configures the array:\n  tessel run -p systolic -w "
                  << (o.output.empty() ? o.scalesim : o.output) << settings << "\n";
    return 0;
}

int run_import() {
    const auto& o = opts();
    if (!o.scalesim.empty()) {
        if (!o.model.empty()) throw input_error("give an ONNX model or --scalesim TOPOLOGY, not both");
        return run_scalesim_import();
    }
    if (!o.config.empty())
        throw input_error("--config is a SCALE-Sim configuration: it goes with --scalesim TOPOLOGY.csv");
    if (o.model.empty())
        throw input_error(
            "nothing to import: give an ONNX model (tessel import MODEL.onnx) or --scalesim TOPOLOGY.csv");
    onnx_import_options io;
    io.strict = o.strict;
    for (const auto& s : o.sets) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos || eq == 0) fail("--set " + s + ": expected KEY=VALUE (e.g. --set batch=8)");
        std::string key = s.substr(0, eq);
        if (key.rfind("workload.", 0) == 0) key = key.substr(9);
        io.overrides[key] = s.substr(eq + 1);
    }
    const onnx_import_result r = import_onnx(o.model, io);
    std::cout << format_import_report(r.report);
    if (o.output.empty()) return 0;
    output_file file = workload_file(o.output);
    std::ostream& out = file.stream();
    const onnx_yaml yaml = onnx_workload_yaml(o.model, io, r);
    std::string comment = "Imported by tessel from " + o.model + " (" + r.report.producer + ", opset " +
                          std::to_string(r.report.opset) + ").";
    std::string symbols;
    for (const auto& [k, v] : r.report.symbols) symbols.append(" ").append(k).append("=").append(v);
    if (!symbols.empty() && yaml.fixed_why.empty()) {
        comment += "\nSizes follow the parameters" + symbols + " (--set workload.NAME=VALUE).";
    } else if (!symbols.empty()) {
        comment += "\nShapes are for" + symbols + " (" + yaml.fixed_why + "); import again with --set NAME=VALUE " +
                   "(or run the .onnx directly) for other sizes.";
        std::cout << "  note: shapes fixed at" << symbols << ": " << yaml.fixed_why << "\n";
    }
    if (!r.report.static_shapes.empty()) comment += "\nFixed sizes: " + r.report.static_shapes + ".";
    for (const auto& u : r.report.unknown)
        comment += "\nUnknown op " + u.op_type +
                   " imported as generic (bytes only); set flops_per_element on it if you know it.";
    out << yaml_comment(comment) << yaml.text;
    file.commit();
    std::cout << "wrote " << o.output << "\n";
    return 0;
}

TESSEL_REGISTER_COMMAND((command{
    "import", 45,
    [](CLI::App& app) {
        CLI::App* sub =
            app.add_subcommand("import", "Import an ONNX model as a YAML workload graph, with a report of its ops");
        sub->add_option("model", opts().model, "the .onnx file (weights may be absent)");
        sub->add_option("--scalesim", opts().scalesim,
                        "a SCALE-Sim topology .csv (conv or GEMM layers) instead of an ONNX model");
        sub->add_option("--config", opts().config,
                        "with --scalesim: its .cfg, to print the matching systolic platform settings");
        sub->add_option("-o,--output", opts().output, "the YAML workload to write");
        sub->add_option("--set", opts().sets,
                        "a model parameter: KEY=VALUE (precision, a symbolic dimension such as batch)");
        sub->add_flag("--strict", opts().strict, "reject models with op types tessel does not know");
        return sub;
    },
    run_import}));

}  // namespace cmd_import

}  // namespace tessel
