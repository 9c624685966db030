// `tessel plan`: the parallelism advisor. Given a system (a platform with `chips:` and the system mapper) and a
// training workload, it enumerates the parallel plans that fit in memory (plan_space.h), simulates each as its own
// `tessel run` through the sweep engine (local processes or a Slurm job array, resumable: a re-run skips finished
// plans), and ranks them by iteration time (or energy per iteration, or energy-delay product: --rank). The report
// gives, per plan, iteration time, samples/s, MFU, memory per chip and the per-chip split of the iteration (compute,
// exposed communication, bubble and waiting); the best plan and what it wins by against the runner-up and against plain
// data parallelism; and the best throughput at each data-parallel degree, which says where data parallelism stops
// paying. With `scale` (a system parameter and its values, e.g. nodes=1,2,4) it does this at every system size and adds
// the Pareto front of throughput against chips. Everything it prints is also in plan.json in the output folder (and on
// stdout with --json).
//
// With `simulate_top` N it first estimates every plan: each is simulated for a window of its microbatches (the
// first pp of them, with the pipeline's fill and drain, the gradient reduction and the optimizer step) and its
// iteration extrapolated by the busiest stage's time per microbatch (engine/system/system_mapper.h, `window`), in
// its own sweep (estimates/ in the output folder, resumable). The N best estimates are then simulated whole; the
// report ranks those, lists the others by their estimate, and says how far estimate and simulation differ.
//
// What it does not do: search the schedule (1F1B, or interleaved 1F1B with 2 chunks; GPipe only when asked),
// sequence parallelism or the collective algorithm (set them with --set and they apply to every plan).
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/plan/plan_space.h"
#include "engine/sweep/driver.h"

namespace tessel {

struct plan_options {
    std::string platform, workload;  // as the user named them (a file, or a bundled name)
    std::vector<std::string>
        sets;  // --set PATH=VALUE: platform, workload and parallel.* (a fixed value restricts that dimension)
    std::string scale_param;  // a system parameter to vary ("nodes"), or empty
    std::vector<std::string> scale_values;
    plan_limits limits;         // from --dp/--tp/... lists (parallel.* sets are folded in)
    std::string out_dir;        // empty: out/plans/PLATFORM-WORKLOAD
    int top = 20;               // rows of the ranked table per system size
    size_t max_plans = 256;     // refuse to simulate more than this many (narrow the search instead)
    bool dry_run = false;       // enumerate and check memory, simulate nothing
    bool json = false;          // plan.json on stdout instead of the tables
    std::string rank = "time";  // time (iteration time), energy (joules per iteration) or edp (their product)
    /// 0: simulate every plan whole. N: estimate every plan from a window of its microbatches (the system mapper's
    /// `window`: one pipeline's worth simulated, the rest extrapolated), then simulate the N best estimates whole.
    int simulate_top = 0;
    /// With simulate_top: 0 estimates each plan with every layer; K runs it with K layers per pipeline chunk and
    /// with K + 1 and counts the model's other layers by their difference (the layers are alike), where the
    /// model has more than K + 1 a chunk.
    int estimate_layers = 0;
    sweep::sweep_options sweep;  // backend, jobs, timeout, Slurm settings, progress bar, tessel binary
};

/// What the user set with --set: platform sets (parallel.* keys the search does not vary among them) and workload
/// overrides.
struct split_sets {
    std::vector<std::pair<std::string, std::string>> platform;
    std::map<std::string, std::string> workload;
};
/// Splits `o.sets`, folding the searched parallel.* keys into `limits` (a fixed value restricts that dimension) and
/// reading the others with a run's rules, so a bad value or an unknown key is an input_error here.
split_sets split_user_sets(const plan_options& o, plan_limits& limits);

/// "1,2,4" as whole numbers; an input_error naming `key` otherwise.
std::vector<int> parse_int_list(const std::string& key, const std::string& text);

/// Returns the exit status: 0 when every plan has a result (failed plans are reported), 128 + signal when
/// interrupted (finished plans are kept). Bad input throws input_error.
int run_plan(const plan_options& o, std::ostream& out, std::ostream& err);

/// Whether a plan's error is the simulator refusing it on its own budgets (models/core/limits.h: "over the limit of"):
/// a limit of tessel, not the hardware's verdict.
inline bool simulator_limit(const std::string& error) { return error.find("over the limit of") != std::string::npos; }

/// Whether a chip mapper could not place one op although the chip's memory holds it ("a limit of tessel's mapper",
/// the RDU's): not the hardware's verdict either, but a smaller micro-batch may get past it.
inline bool mapper_limit(const std::string& error) { return error.find("a limit of tessel's") != std::string::npos; }

}  // namespace tessel
