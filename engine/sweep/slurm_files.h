// What the Slurm backend reads back: the task file it wrote for its workers (tasks.json), and what Slurm's
// commands print (sbatch's job id, sacct's and squeue's states). Each is read as untrusted text: a task file edited
// or cut short, or a command that prints something unexpected (a wrapper's banner, a controller's error), is an
// input_error saying what and where, never an internal error, a division by zero or a path outside the folder.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/sweep/runner.h"

namespace tessel::sweep {

/// One submission's points and how its array tasks run them (tasks.json).
struct task_file {
    std::string sweep;
    run_settings run;
    std::size_t points_per_task = 1;
    int cpus_per_task = 1;
    std::string rows;  // the folder each point's row file goes to
    std::vector<job> jobs;

    /// The points of array task `index` (none past the last task).
    std::vector<job> task(long index) const;
};

/// tasks.json's text for `t`.
std::string task_file_json(const task_file& t);
/// The task file at `path`; input_error naming the file and the field when it is not one tessel sweep wrote.
task_file read_task_file(const std::string& path);

/// `s` without the whitespace around it (a command's output in a message).
std::string trim(std::string s);

/// The job id `sbatch --parsable` printed ("JOBID" or "JOBID;CLUSTER", possibly after warnings); input_error
/// quoting the output when there is none.
std::string sbatch_job_id(const std::string& output);
/// Array task states ("123_4" -> "FAILED (exit 1:0)") from `sacct -n -P -X -o JobID,State,ExitCode`.
std::map<std::string, std::string> sacct_states(const std::string& output);
/// Array task states ("123_4" -> "PENDING (Resources)") from `squeue -h -o %i|%T|%r`.
std::map<std::string, std::string> squeue_states(const std::string& output);
/// Whether `squeue -h -o %T` lists a state in which a task has yet to finish.
bool squeue_active(const std::string& output);

}  // namespace tessel::sweep
