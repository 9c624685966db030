// `tessel sweep`: read the spec, expand and validate every point, open the results (resume), then run what is
// left on the chosen backend and print where the results are. The command-line file only parses options.
#pragma once

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/sweep/runner.h"

namespace tessel::sweep {

struct sweep_options {
    std::string spec_file;
    std::string out_dir;              // empty: out/sweeps/NAME
    std::string backend = "local";    // local | slurm
    int jobs = 0;                     // local points at a time; 0: one per core
    bool dry_run = false;             // list the points and their state, run nothing
    bool retry_failed = false;        // run failed and timed-out points again
    bool rerun_other_builds = false;  // run again the points another build of tessel finished
    bool progress_bar = true;         // the bar on a terminal (plain lines otherwise)
    std::optional<double> timeout_s;
    // Slurm settings from the command line; each replaces the spec's.
    std::optional<std::string> partition, time_limit;
    std::optional<int> cpus_per_task, points_per_task, max_parallel;
    std::vector<std::string> sbatch_args;  // appended to the spec's
    double poll_s = 2;
    std::string tessel;  // the binary points run; empty: this executable
    platform_resolver resolve_platform;
    // Parameters whose values the caller computed (tessel plan's mapper.holds, one per plan): a new value of one
    // does not load a point's platform again to validate it (an SN40L node of 32 sockets takes seconds a load).
    std::set<std::string> computed_params;
};

/// Returns the exit status: 0 when every point has a row (failed points included: they are results too),
/// 128 + signal when interrupted. Bad input throws input_error.
int run_sweep(const sweep_options& o, std::ostream& out, std::ostream& err);

}  // namespace tessel::sweep
