// Running points: each point is its own `tessel run` process (SystemC elaborates once per process), with its
// output folder, a log of its stdout and stderr, and an optional time limit. local_pool keeps up to N of them
// running; the local backend and each Slurm array task both use it, and both turn a finished process into the
// same results row (make_row), so the two backends give identical rows for the same point.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/sweep/results.h"
#include "engine/sweep/spec.h"

namespace tessel::sweep {

/// One point ready to run.
struct job {
    size_t index = 0;
    std::string key;
    std::vector<param> params;      // the results table's parameter columns
    std::vector<std::string> argv;  // the full command: tessel run -p ... --out DIR -q
    std::string dir;                // its output folder (absolute)
    std::string rel_dir;            // the same, relative to the sweep's results folder (for the row)
};

/// What every point of a sweep shares.
struct run_settings {
    std::string tessel;    // the tessel binary the points run
    double timeout_s = 0;  // 0: no limit
    std::vector<metric> metrics;
    std::string backend = "local";  // recorded in each row
    std::string build;              // build_id(tessel), recorded in each row as tessel_build
};

/// How a point's process ended.
struct outcome {
    bool timed_out = false;
    bool exited = true;  // false: killed by a signal
    int code = 0;        // exit status, or the signal
    double wall_s = 0;
    /// What the run reported through TESSEL_ERROR_FD (its one-line error), which survives a log that could not
    /// be written (a full disk); empty when it reported nothing.
    std::string reported;
};

/// Turns a platform, workload or program as written in the spec into what `tessel run` gets: a file relative
/// to the spec's folder or to the working directory becomes absolute; anything else (a bundled platform or a
/// built-in workload name) is passed on, through `resolve_platform` for platforms.
using platform_resolver = std::function<std::string(const std::string&)>;
std::string resolve_input(const spec& s, const std::string& what, const std::string& value,
                          const platform_resolver& resolve_platform);

/// The job for a point, writing into `out_dir`/points/KEY.
job make_job(const spec& s, const point& p, const std::string& out_dir, const std::string& tessel,
             const platform_resolver& resolve_platform);

/// The results row of a finished job: status, error (the log's last error line), metrics from its summary.json.
row make_row(const job& j, const outcome& o, const run_settings& rs);

/// A row for a point that never ran to completion for a reason outside its process (a Slurm task that died).
row make_failed_row(const job& j, const std::string& error, const run_settings& rs);

class local_pool {
public:
    /// Called with each finished job and its row; called periodically (about 4 times a second) while waiting.
    using done_fn = std::function<void(const job&, const row&)>;
    using tick_fn = std::function<void()>;

    /// Runs `jobs` with at most `parallel` at a time. SIGINT, SIGTERM and SIGHUP stop it: running points are
    /// killed (they have no row and run again next time) and run() returns false. True when all finished.
    bool run(const std::vector<job>& jobs, int parallel, const run_settings& rs, const done_fn& done,
             const tick_fn& tick = {});
    /// The signal that stopped the last run(), or 0.
    int stopped_by() const { return m_signal; }

private:
    int m_signal = 0;
};

/// Quotes an argument for a POSIX shell (for command.txt and the Slurm job script).
std::string shell_quote(const std::string& s);

/// The absolute path of the running executable.
std::string self_exe();

/// The binary a sweep's points run (a plan's, a comparison's and a serving grid's too): `$TESSEL_POINT_BIN` when
/// set, else this executable. The sanitizer pass of scripts/test.sh runs the searches under the sanitizers and
/// their points, which the normal pass checks, with the normal build. input_error if it is not an executable file.
std::string point_exe();

/// A digest of the binary's bytes (16 hex digits; empty when it cannot be read): rows made by another build of
/// tessel, whose model may differ, are told apart by it when a sweep resumes.
std::string build_id(const std::string& binary);

}  // namespace tessel::sweep
