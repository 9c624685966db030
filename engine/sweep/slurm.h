// The Slurm backend: the points to run become one job array (sbatch), each array task runs its share of points
// with `tessel run` through the same local_pool as the local backend and leaves one row file per point; the
// runner follows the job with squeue, merges the row files into the results as they appear, and when the job
// has left the queue records every point without a row as failed, naming its task's state (sacct, where the
// cluster keeps accounting) and its log. Interrupting the runner leaves the job running: running the same
// sweep again attaches to it instead of submitting its points twice.
//
// Files, under the results folder: slurm/N/ for the N-th submission, with tasks.json (the points and how to
// run them), job.sh, logs/TASK.out and rows/KEY.json; slurm/active names the job being followed.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/sweep/results.h"
#include "engine/sweep/runner.h"

namespace tessel::sweep {

struct slurm_settings {
    slurm_options options;
    double poll_s = 2;       // how often squeue is asked
    std::string sweep_name;  // the job's name: tessel-NAME
};

/// Runs `jobs` through Slurm, merging rows into `store` (and calling `on_row`) as they arrive. Returns false
/// when interrupted by SIGINT, SIGTERM or SIGHUP. Throws input_error when Slurm refuses the job.
bool run_slurm(const std::vector<job>& jobs, const run_settings& rs, const slurm_settings& ss, results_store& store,
               const local_pool::done_fn& on_row, const local_pool::tick_fn& tick, std::ostream& log);

/// The body of one array task: `tessel sweep-task TASKS.json INDEX`. Runs the task's points (as many at a time
/// as Slurm gave it CPUs) and writes their rows. Returns the process exit status.
int run_slurm_task(const std::string& path, long index, std::ostream& log);

/// Runs a command and captures its stdout and stderr; returns its exit status (127: could not run it).
int run_capture(const std::vector<std::string>& argv, std::string& output);

}  // namespace tessel::sweep
