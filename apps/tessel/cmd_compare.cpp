// tessel compare: one training workload across systems, each at the best parallel plan `tessel plan` finds
// (engine/plan/compare.h).
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "apps/tessel/validators.h"
#include "engine/plan/compare.h"
#include "engine/serve/serve_compare.h"
#include "engine/sweep/spec.h"
#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {
namespace cmd_compare {

compare_options g_opt;
std::string g_timeout, g_power;
bool g_no_progress = false, g_serve = false;
int g_max_plans = 256;
std::string g_users = "1,4,16,64";
CLI::App* g_app = nullptr;

CLI::App* setup(CLI::App& app) {
    auto* c = g_app = app.add_subcommand("compare",
                                         "one training workload across systems, each at its best parallel plan "
                                         "(docs/accelerator-war.md)");
    c->add_option("-w,--workload", g_opt.workload,
                  "training workload: gpt2, bert, llama or a generator file; with --serve a decoder with a KV cache "
                  "(llama3-70b)")
        ->required();
    c->add_option("--system", g_opt.systems,
                  "PLATFORM[:PARAM=VALUE,...], e.g. platforms/systems/dgx_h100.yaml:nodes=1 (repeatable)")
        ->required()
        ->allow_extra_args(false);
    c->add_option("--set", g_opt.sets, "PATH=VALUE for every system: workload.* and parallel.*")
        ->allow_extra_args(false);
    c->add_option("--samples", g_opt.samples, "samples to train on, for a days column (e.g. 3e8)")
        ->check(k_positive_amount);
    c->add_option(
        "--power", g_power,
        "equal power: size each system to this TDP budget (e.g. 20kW); each --system then names the parameter "
        "to size without a value (platforms/systems/dgx_h100.yaml:nodes)");
    c->add_option("-o,--out", g_opt.out_dir,
                  "results folder (default: out/compare/WORKLOAD, with --serve out/compare/WORKLOAD-serve); "
                  "re-running resumes");
    c->add_flag("--serve", g_serve,
                "compare serving instead (docs/serving.md): each system's tp x pp plans served as closed loops of "
                "--users users, judged by serve.slo_ttft and serve.slo_tpot; the Pareto front over every system");
    c->add_option("--users", g_users, "with --serve: closed-loop users (and batch caps) per plan (default 1,4,16,64)");
    c->add_flag("--json", g_opt.json, "print compare.json instead of the table");
    c->add_option("--rank", g_opt.plan.rank,
                  "pick each system's best plan by time (default), energy or edp (tessel plan --rank)")
        ->check(CLI::IsMember({"time", "energy", "edp"}));
    c->add_option("--max-plans", g_max_plans, "per system, refuse to simulate more plans than this (default 256)")
        ->check(k_positive_count);
    c->add_option("--simulate-top", g_opt.plan.simulate_top,
                  "per system, estimate every plan from a window of its microbatches and simulate only the N best "
                  "estimates whole (tessel plan --simulate-top)")
        ->check(k_positive_count);
    c->add_option("--estimate-layers", g_opt.plan.estimate_layers,
                  "with --simulate-top: estimate from runs of K and K+1 layers per pipeline chunk (tessel plan "
                  "--estimate-layers)")
        ->check(k_nonnegative_count);
    c->add_option("-j,--jobs", g_opt.plan.sweep.jobs, "plans simulated at once (default: one per core)")
        ->check(k_positive_count);
    c->add_option("-b,--backend", g_opt.plan.sweep.backend,
                  "local (a process pool) or slurm (a job array through sbatch)")
        ->check(CLI::IsMember({"local", "slurm"}));
    c->add_option("--timeout", g_timeout, "time limit per plan, e.g. 30s, 10min");
    c->add_flag("--no-progress", g_no_progress, "plain lines instead of a progress bar, even on a terminal");
    c->add_flag("--rerun-other-builds", g_opt.plan.sweep.rerun_other_builds,
                "simulate again the plans another build of tessel finished");
    return c;
}

/// tessel compare --serve (engine/serve/serve_compare.h): the search's sweep settings, the systems and sets as given.
int run_serve_compare(CLI::App& c) {
    for (const char* training : {"--samples", "--rank", "--max-plans", "--simulate-top", "--estimate-layers"})
        if (c.count(training) > 0)
            throw input_error(std::string(training) +
                              " is a training comparison's; tessel compare --serve ranks "
                              "each system's serving plans by tokens/s per chip within the "
                              "objectives");
    if (c.count("--users") > 0 && !g_serve) throw input_error("--users is for tessel compare --serve");
    serve::serve_compare_options o;
    o.systems = g_opt.systems;
    o.workload = g_opt.workload;
    o.sets = g_opt.sets;
    o.power_watts = g_opt.power_watts;
    o.out_dir = g_opt.out_dir;
    o.json = g_opt.json;
    o.sweep = g_opt.plan.sweep;
    for (const int n : parse_int_list("--users", g_users)) o.users.push_back(n);
    return serve::run_serve_compare(o, std::cout, std::cerr);
}

int run() {
    if (const auto t = timeout_option(g_timeout)) g_opt.plan.sweep.timeout_s = *t;
    if (!g_power.empty()) {
        quantity q;
        try {
            q = parse_quantity(g_power);
        } catch (const input_error& e) {
            throw input_error("--power: " + e.message());
        }
        if (q.dim != dimension::power || q.value <= 0)
            throw input_error("--power: expected a power such as 20kW, got '" + g_power + "'");
        g_opt.power_watts = q.value;
    }
    g_opt.plan.max_plans = static_cast<size_t>(g_max_plans);
    g_opt.plan.sweep.progress_bar = !g_no_progress;
    g_opt.plan.sweep.resolve_platform = find_platform;
    if (g_serve || g_app->count("--users") > 0) return run_serve_compare(*g_app);
    // A usage error, not one system's: refused before any system runs.
    if (g_opt.plan.estimate_layers > 0 && g_opt.plan.simulate_top == 0)
        throw input_error("--estimate-layers says how --simulate-top estimates each plan; add --simulate-top N");
    return run_compare(g_opt, std::cout, std::cerr);
}

TESSEL_REGISTER_COMMAND(command{"compare", 26, setup, run});

}  // namespace cmd_compare

}  // namespace tessel
