// `tessel compare --serve`: one LLM served on several systems, each at its best serving plan. Every system (a
// system platform with its size parameters, or sized to a power budget: engine/sweep/system_spec.h) has its
// tp x pp plans searched as `tessel plan --serve` does (serve_search.h) in a folder of its own; the report puts side
// by side each system's best plan within the latency objectives (the most tokens/s per chip), its rates and energy,
// and the Pareto front of tokens/s per user against tokens/s per chip over every system's points: which
// architecture gives the fastest tokens to one user, and which the most tokens per chip at each speed. A system
// that cannot serve the model (it does not fit, its steps are over the simulator's budgets) is a row with the
// reason, and the others are still compared. Everything is in compare_serve.json (scripts/plot_serve_compare.py
// draws the front).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/sweep/driver.h"

namespace tessel::serve {

struct serve_compare_options {
    std::vector<std::string> systems;  // PLATFORM[:PARAM=VALUE,...] (with power: one PARAM without a value)
    std::string workload;
    std::vector<std::string> sets;    // for every system: serve.*, workload.* and platform parameters
    double power_watts = 0;           // equal power: each system sized to this TDP budget; 0: as given
    std::vector<std::int64_t> users;  // closed-loop users (= batch caps) per plan
    std::string out_dir;              // empty: out/compare/WORKLOAD-serve
    bool json = false;                // compare_serve.json on stdout instead of the report
    sweep::sweep_options sweep;       // how the step shapes are simulated
};

/// Returns 0 when every system has a row (one that cannot serve is a row), 128 + signal when interrupted while
/// simulating steps (finished steps are kept; the same command resumes). Bad input throws input_error.
int run_serve_compare(const serve_compare_options& o, std::ostream& out, std::ostream& err);

}  // namespace tessel::serve
