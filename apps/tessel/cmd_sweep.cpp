// tessel sweep: run a design-space sweep (a sweep YAML: axes over --set paths) on a local process pool or as a
// Slurm job array, with resumable results. tessel sweep-task (hidden) is what each Slurm array task runs.
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "apps/tessel/validators.h"
#include "engine/sweep/driver.h"
#include "engine/sweep/slurm.h"
#include "engine/sweep/spec.h"
#include "models/core/error.h"

namespace tessel {
namespace cmd_sweep {

sweep::sweep_options g_opt;
std::string g_timeout;
std::string g_partition, g_time_limit;
int g_cpus = 0, g_points_per_task = 0, g_max_parallel = -1;
bool g_no_progress = false;

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("sweep",
                                 "run a design-space sweep (docs/sweeps.md): every point a tessel run, "
                                 "locally or as a Slurm job array; re-running resumes");
    c->add_option("spec", g_opt.spec_file, "sweep YAML file")->required();
    c->add_option("-j,--jobs", g_opt.jobs, "points run at once by the local backend (default: one per core)")
        ->check(k_positive_count);
    c->add_option("-b,--backend", g_opt.backend, "local (a process pool) or slurm (a job array through sbatch)")
        ->check(CLI::IsMember({"local", "slurm"}));
    c->add_option("-o,--out", g_opt.out_dir, "results folder (default: out/sweeps/NAME)");
    c->add_flag("-n,--dry-run", g_opt.dry_run, "validate the spec and list the points with their state; run nothing");
    c->add_flag("--retry-failed", g_opt.retry_failed, "run failed and timed-out points again");
    c->add_flag("--rerun-other-builds", g_opt.rerun_other_builds,
                "run again the points another build of tessel finished (their rows' tessel_build differs)");
    c->add_option("--timeout", g_timeout,
                  "time limit per point, e.g. 30s, 10min (replaces the spec's timeout; 0: none)");
    c->add_flag("--no-progress", g_no_progress, "plain lines instead of a progress bar, even on a terminal");
    c->add_option("--partition", g_partition, "slurm: partition (replaces the spec's)");
    c->add_option("--time-limit", g_time_limit,
                  "slurm: time limit per array task, e.g. 00:30:00 (replaces the spec's)");
    c->add_option("--cpus-per-task", g_cpus, "slurm: CPUs per array task; a task runs that many points at once")
        ->check(k_positive_count);
    c->add_option("--points-per-task", g_points_per_task,
                  "slurm: points per array task (default 1, more past 1000 points)")
        ->check(k_positive_count);
    c->add_option("--max-parallel", g_max_parallel, "slurm: at most this many array tasks at once (0: no limit)")
        ->check(k_nonnegative_count);
    // One value per occurrence, so a spec file after it is not taken for a second sbatch argument.
    c->add_option("--sbatch-arg", g_opt.sbatch_args,
                  "slurm: one more sbatch argument, e.g. --sbatch-arg=--qos=short (repeatable)")
        ->allow_extra_args(false);
    c->add_option("--poll", g_opt.poll_s, "slurm: seconds between squeue polls (default 2)")->check(k_positive_seconds);
    return c;
}

int run() {
    if (const auto t = timeout_option(g_timeout)) g_opt.timeout_s = *t;
    if (!g_partition.empty()) g_opt.partition = g_partition;
    if (!g_time_limit.empty()) g_opt.time_limit = g_time_limit;
    if (g_cpus > 0) g_opt.cpus_per_task = g_cpus;
    if (g_points_per_task > 0) g_opt.points_per_task = g_points_per_task;
    if (g_max_parallel >= 0) g_opt.max_parallel = g_max_parallel;
    g_opt.progress_bar = !g_no_progress;
    g_opt.resolve_platform = find_platform;
    return sweep::run_sweep(g_opt, std::cout, std::cerr);
}

// What one Slurm array task runs: its share of the points listed in the submission's tasks.json.
std::string g_task_file;
long g_task_index = -1;

CLI::App* setup_task(CLI::App& app) {
    auto* c = app.add_subcommand("sweep-task", "");
    c->group("");  // hidden: started by the Slurm backend's job script
    c->add_option("tasks", g_task_file, "tasks.json of a Slurm submission")->required();
    c->add_option("index", g_task_index, "array task index ($SLURM_ARRAY_TASK_ID)")->required();
    return c;
}

int run_task() { return sweep::run_slurm_task(g_task_file, g_task_index, std::cout); }

TESSEL_REGISTER_COMMAND(command{"sweep", 20, setup, run});
TESSEL_REGISTER_COMMAND(command{"sweep-task", 99, setup_task, run_task});

}  // namespace cmd_sweep

}  // namespace tessel
