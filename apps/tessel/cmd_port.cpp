// tessel port: the porting report of a model on a platform (engine/plan/port.h).
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "engine/plan/port.h"

namespace tessel {
namespace cmd_port {

port_options g_port;

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand(
        "port", "porting report: which ops a platform models, data type, fit, where the time goes, what to change");
    c->add_option("model", g_port.model, "the model: an .onnx, a .yaml workload, a SCALE-Sim .csv or a built-in name")
        ->required();
    c->add_option("-p,--platform", g_port.platform, "platform YAML file, or a bundled platform name (tessel list)")
        ->required();
    c->add_option("-s,--set", g_port.sets, "a parameter, as for tessel run (workload.NAME for the model's own)");
    return c;
}

int run() {
    g_port.platform_arg = g_port.platform;
    g_port.platform = find_platform(g_port.platform);
    // Blockers are findings, not errors: the report is the result (exit 0); bad input still exits 2.
    port_report(g_port, std::cout);
    return 0;
}

TESSEL_REGISTER_COMMAND(command{"port", 40, setup, run});

}  // namespace cmd_port

}  // namespace tessel
