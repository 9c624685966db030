// `tessel import model.onnx -o workload.yaml [--strict]`: turns an ONNX model into a YAML workload graph and
// reports what it found (op types, ops tessel does not know with their nodes, symbolic dimensions).
#include <fstream>
#include <iostream>

#include "apps/tessel/command.h"
#include "engine/workload/onnx_import.h"
#include "engine/workload/yaml_workload.h"
#include "models/core/output_file.h"

namespace tessel {

namespace {

struct import_options {
    std::string model;
    std::string output;
    std::vector<std::string> sets;
    bool strict = false;
};

import_options& opts() {
    static import_options o;
    return o;
}

int run_import() {
    const auto& o = opts();
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
    output_file file(o.output, "workload");
    std::ostream& out = file.stream();
    std::string comment = "Imported by tessel from " + o.model + " (" + r.report.producer + ", opset " + std::to_string(r.report.opset) + ").";
    if (!r.report.symbols.empty()) {
        comment += "\nShapes are for";
        for (const auto& [k, v] : r.report.symbols) comment += " " + k + "=" + v;
        comment += "; import again with --set NAME=VALUE (or run the .onnx directly) for other sizes.";
    }
    for (const auto& u : r.report.unknown)
        comment += "\nUnknown op " + u.op_type + " imported as generic (bytes only); set flops_per_element on it if you know it.";
    write_workload_yaml(r.graph, out, comment);
    file.commit();
    std::cout << "wrote " << o.output << "\n";
    return 0;
}

}  // namespace

TESSEL_REGISTER_COMMAND((command{
    "import", 45,
    [](CLI::App& app) {
        CLI::App* sub = app.add_subcommand("import", "Import an ONNX model as a YAML workload graph, with a report of its ops");
        sub->add_option("model", opts().model, "the .onnx file (weights may be absent)")->required();
        sub->add_option("-o,--output", opts().output, "the YAML workload to write");
        sub->add_option("--set", opts().sets, "a model parameter: KEY=VALUE (precision, a symbolic dimension such as batch)");
        sub->add_flag("--strict", opts().strict, "reject models with op types tessel does not know");
        return sub;
    },
    run_import}));

}  // namespace tessel
