// tessel serve: an LLM served token by token on a chip or system (engine/serve/serve.h, docs/serving.md).
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "apps/tessel/validators.h"
#include "engine/plan/advisor.h"
#include "engine/serve/serve.h"
#include "engine/serve/serve_options.h"
#include "engine/sweep/spec.h"
#include "models/core/error.h"

namespace tessel {
namespace cmd_serve {

serve::serve_cli g_opt;
std::string g_timeout, g_curve;
bool g_no_progress = false;

std::string settings_help() {
    std::string s = "serving settings (--set serve.KEY=VALUE):";
    for (const auto& x : serve::serve_settings())
        s += "\n  " + x.key + " (default " + (x.default_value.empty() ? "none" : x.default_value) + "): " + x.doc;
    return s;
}

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("serve",
                                 "serve an LLM token by token: requests, batching, KV cache; time to first token, "
                                 "time per output token, tokens/s per user and per chip (docs/serving.md)");
    c->footer(settings_help());
    c->add_option("-p,--platform", g_opt.platform, "chip or system platform (a YAML file or a bundled name)")
        ->required();
    c->add_option("-w,--workload", g_opt.workload, "a decoder with a KV cache: llama2-7b, llama3-8b, llama2-70b, ...")
        ->required();
    c->add_option("-s,--set", g_opt.sets,
                  "PATH=VALUE: serve.* (below), workload.*, parallel.tp/pp and platform parameters");
    c->add_option("-o,--out", g_opt.out_dir,
                  "results folder (default: out/serve/PLATFORM-WORKLOAD); the simulated steps are kept there and "
                  "re-used");
    c->add_flag("--json", g_opt.json, "print summary.json (with --curve: curve.json) instead of the report");
    c->add_option("--curve", g_curve,
                  "serve a closed loop of N users at a batch cap of N for each N given (e.g. 1,2,4,8,16,32,64): "
                  "time to first token, time per output token, tokens/s per user against tokens/s per chip");
    c->add_option("-j,--jobs", g_opt.sweep.jobs, "steps simulated at once (default: one per core)")
        ->check(k_positive_count);
    c->add_option("-b,--backend", g_opt.sweep.backend, "local (a process pool) or slurm (a job array through sbatch)")
        ->check(CLI::IsMember({"local", "slurm"}));
    c->add_option("--timeout", g_timeout, "time limit per simulated step, e.g. 30s, 10min");
    c->add_flag("--no-progress", g_no_progress, "plain lines instead of a progress bar, even on a terminal");
    c->add_flag("--retry-failed", g_opt.sweep.retry_failed, "simulate failed and timed-out steps again");
    return c;
}

int run() {
    if (const auto t = timeout_option(g_timeout)) g_opt.sweep.timeout_s = *t;
    if (!g_curve.empty())
        for (const int n : parse_int_list("--curve", g_curve)) g_opt.curve.push_back(n);
    g_opt.sweep.progress_bar = !g_no_progress;
    g_opt.sweep.resolve_platform = find_platform;
    return serve::run_serve(g_opt, std::cout, std::cerr);
}

TESSEL_REGISTER_COMMAND(command{"serve", 27, setup, run});

}  // namespace cmd_serve

}  // namespace tessel
