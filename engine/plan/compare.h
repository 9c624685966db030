// `tessel compare`: one training workload across systems, each at its best parallel plan. For every system (a
// system platform with its size parameters, "platforms/systems/dgx_h100.yaml:nodes=2") it runs the parallelism
// advisor (advisor.h) in a folder of its own, and reports side by side the chips, the best plan, its iteration
// time, samples/s for the system and per chip, MFU, and the days a given number of samples would take at that
// rate (a time-to-train proxy). A system that cannot train the workload (it does not fit, its mapper refuses the
// plan) is a row with the reason, and the others are still compared. Everything is also in compare.json.
//
// At equal power (--power): each system names one parameter without a value (dgx_h100.yaml:nodes), and compare
// sets it to the largest value whose declared TDP fits the budget before searching its plans.
//
// With energy (docs/energy.md): each system's average power and samples per joule beside its speed; --rank energy or
// edp picks each system's best plan by energy instead of time.
//
// Left out: convergence (samples to a target accuracy differ with
// batch size; the days column assumes the same number of samples everywhere).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "engine/plan/advisor.h"
#include "engine/sweep/system_spec.h"

namespace tessel {

struct compare_options {
    std::vector<std::string> systems;  // PLATFORM[:PARAM=VALUE[,PARAM=VALUE...]]
    std::string workload;
    std::vector<std::string> sets;  // for every system: workload.* and parallel.* (as in tessel plan)
    double samples = 0;             // for the days column; 0: no column
    double power_watts = 0;         // equal power: each system sized to this TDP budget; 0: as given
    std::string out_dir;            // empty: out/compare/WORKLOAD
    bool json = false;
    plan_options plan;  // search limits, sweep backend and jobs, shared by every system
};

/// Returns 0 when every system has a result (a system that cannot train is a result), 128 + signal when
/// interrupted. Bad input (an unknown option, a malformed system) throws input_error.
int run_compare(const compare_options& o, std::ostream& out, std::ostream& err);

}  // namespace tessel
