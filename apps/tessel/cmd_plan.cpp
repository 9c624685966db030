// tessel plan: the parallelism advisor (engine/plan/advisor.h): every parallel plan of a training workload that
// fits a system, simulated as a sweep and ranked, with the best plan and why it wins.
#include <iostream>
#include <sstream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "apps/tessel/validators.h"
#include "engine/plan/advisor.h"
#include "engine/serve/serve_search.h"
#include "engine/sweep/spec.h"
#include "models/core/error.h"

namespace tessel {
namespace cmd_plan {

plan_options g_opt;
std::string g_scale, g_timeout;
std::string g_dp, g_tp, g_pp, g_mb, g_il, g_zero, g_recompute;
bool g_no_progress = false, g_serve = false;
int g_max_plans = 256;
std::string g_users = "1,4,16,64";

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
    return out;
}

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("plan",
                                 "rank the parallel plans (dp x tp x pp x microbatch x interleave x recompute x "
                                 "zero) of a training workload on a system by simulating each (docs/parallelism.md)");
    c->add_option("-p,--platform", g_opt.platform, "system platform (platforms/systems/*.yaml)")->required();
    c->add_option("-w,--workload", g_opt.workload, "training workload: gpt2, bert, llama or a generator file")
        ->required();
    c->add_option("--set", g_opt.sets, "PATH=VALUE: platform, workload.* and parallel.* (a parallel.* value fixes it)")
        ->allow_extra_args(false);
    c->add_option("--scale", g_scale,
                  "vary a system parameter: PARAM=V1,V2,... (e.g. nodes=1,2,4); adds the Pareto front");
    c->add_option("--dp", g_dp, "data-parallel degrees to consider, e.g. 1,2,4 (default: every split of the chips)");
    c->add_option("--tp", g_tp, "tensor-parallel degrees to consider");
    c->add_option("--pp", g_pp, "pipeline stages to consider");
    c->add_option("--microbatch", g_mb, "microbatch sizes to consider (default: powers of two dividing batch/dp)");
    c->add_option("--interleave", g_il, "model chunks per stage to consider (default: 1, and 2 with pp > 1)");
    c->add_option("--zero", g_zero,
                  "ZeRO levels to consider (default: 0 and 1 with dp > 1, 2 where nothing else fits)");
    c->add_option("--recompute", g_recompute,
                  "recomputation to consider: none,selective,full (default: the cheapest that fits)");
    c->add_option("-o,--out", g_opt.out_dir,
                  "results folder (default: out/plans/PLATFORM-WORKLOAD); re-running resumes");
    c->add_option("--rank", g_opt.rank,
                  "rank plans by time (iteration time, the default), energy (joules per iteration) or "
                  "edp (energy x time); energy adds energy and power columns")
        ->check(CLI::IsMember({"time", "energy", "edp"}));
    c->add_option("--top", g_opt.top, "rows of the ranked table per system size (default 20)")->check(k_positive_count);
    c->add_option("--simulate-top", g_opt.simulate_top,
                  "estimate every plan from a window of its microbatches, then simulate only the N best estimates "
                  "whole (default: simulate every plan whole)")
        ->check(k_positive_count);
    c->add_option("--estimate-layers", g_opt.estimate_layers,
                  "with --simulate-top: estimate each plan from runs of K and K+1 layers per pipeline chunk, the "
                  "other layers counted by their difference (default 0: every layer)")
        ->check(k_nonnegative_count);
    c->add_option("--max-plans", g_max_plans, "refuse to simulate more plans than this (default 256)")
        ->check(k_positive_count);
    c->add_flag("--serve", g_serve,
                "search serving plans instead (docs/serving.md): each tp x pp of a decoder with a KV cache served "
                "as closed loops of --users users, judged by serve.slo_ttft and serve.slo_tpot");
    c->add_option("--users", g_users, "with --serve: closed-loop users (and batch caps) per plan (default 1,4,16,64)");
    c->add_flag("-n,--dry-run", g_opt.dry_run, "list the plans and their memory per chip; simulate nothing");
    c->add_flag("--json", g_opt.json, "print plan.json (every plan, the best, the reasons) instead of the tables");
    c->add_option("-j,--jobs", g_opt.sweep.jobs, "plans simulated at once (default: one per core)")
        ->check(k_positive_count);
    c->add_option("-b,--backend", g_opt.sweep.backend, "local (a process pool) or slurm (a job array through sbatch)")
        ->check(CLI::IsMember({"local", "slurm"}));
    c->add_option("--timeout", g_timeout, "time limit per plan, e.g. 30s, 10min");
    c->add_flag("--no-progress", g_no_progress, "plain lines instead of a progress bar, even on a terminal");
    c->add_flag("--retry-failed", g_opt.sweep.retry_failed, "simulate failed and timed-out plans again");
    c->add_flag("--rerun-other-builds", g_opt.sweep.rerun_other_builds,
                "simulate again the plans another build of tessel finished");
    return c;
}

/// tessel plan --serve: the serving plans of a system (engine/serve/serve_search.h).
int run_serve_search() {
    for (const auto& [given, name] : std::vector<std::pair<bool, const char*>>{{!g_scale.empty(), "--scale"},
                                                                               {!g_dp.empty(), "--dp"},
                                                                               {!g_mb.empty(), "--microbatch"},
                                                                               {!g_il.empty(), "--interleave"},
                                                                               {!g_zero.empty(), "--zero"},
                                                                               {!g_recompute.empty(), "--recompute"}})
        if (given)
            throw input_error(std::string(name) +
                              " is a training plan's; tessel plan --serve searches tp and pp (--tp, --pp), the "
                              "replicas filling the system");
    serve::serve_search_options o;
    o.base.platform = g_opt.platform;
    o.base.workload = g_opt.workload;
    o.base.sets = g_opt.sets;
    o.base.out_dir = g_opt.out_dir;
    o.base.json = g_opt.json;
    o.base.sweep = g_opt.sweep;
    if (!g_tp.empty()) o.tp = parse_int_list("--tp", g_tp);
    if (!g_pp.empty()) o.pp = parse_int_list("--pp", g_pp);
    for (const int n : parse_int_list("--users", g_users)) o.users.push_back(n);
    o.dry_run = g_opt.dry_run;
    return serve::run_serve_search(o, std::cout, std::cerr);
}

int run() {
    if (const auto t = timeout_option(g_timeout)) g_opt.sweep.timeout_s = *t;
    g_opt.sweep.progress_bar = !g_no_progress;
    g_opt.sweep.resolve_platform = find_platform;
    if (g_serve) return run_serve_search();
    if (!g_scale.empty()) {
        const auto eq = g_scale.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == g_scale.size())
            throw input_error("--scale: expected PARAM=V1,V2,... (e.g. nodes=1,2,4), got '" + g_scale + "'");
        g_opt.scale_param = g_scale.substr(0, eq);
        g_opt.scale_values = split_commas(g_scale.substr(eq + 1));
    }
    if (!g_dp.empty()) g_opt.limits.dp = parse_int_list("--dp", g_dp);
    if (!g_tp.empty()) g_opt.limits.tp = parse_int_list("--tp", g_tp);
    if (!g_pp.empty()) g_opt.limits.pp = parse_int_list("--pp", g_pp);
    if (!g_mb.empty()) g_opt.limits.microbatch = parse_int_list("--microbatch", g_mb);
    if (!g_il.empty()) g_opt.limits.interleave = parse_int_list("--interleave", g_il);
    if (!g_zero.empty()) g_opt.limits.zero = parse_int_list("--zero", g_zero);
    if (!g_recompute.empty()) g_opt.limits.recompute = split_commas(g_recompute);
    g_opt.max_plans = static_cast<size_t>(g_max_plans);
    return run_plan(g_opt, std::cout, std::cerr);
}

TESSEL_REGISTER_COMMAND(command{"plan", 25, setup, run});

}  // namespace cmd_plan

}  // namespace tessel
