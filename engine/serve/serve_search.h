// `tessel plan --serve`: a system's serving plans searched. Each parallel plan (tp x pp, the replicas filling the
// system) is served as a closed loop of N users at a batch cap of N for each N asked (tessel serve --curve, its
// steps simulated and kept in a folder of its own); a point meets the service-level objectives when at least 90% of
// its requests met both (DistServe's attainment target; serve.slo_ttft, serve.slo_tpot). The report ranks the
// points, names the plan and batch cap that make the most tokens per second per chip within the objectives, and
// marks the Pareto front of tokens/s per user against tokens/s per chip over every plan (docs/serving.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/serve/serve.h"
#include "engine/serve/serve_options.h"

namespace tessel::serve {

// DistServe (Zhong et al., OSDI 2024) sizes a system for 90% of requests meeting both latency objectives.
constexpr double k_attainment = 0.9;

/// "TTFT 200 ms, TPOT 25 ms for 90% of requests", or "none (...)" when no objective is set.
std::string objectives(const serve_options& so);

struct serve_search_options {
    serve_cli base;                   // platform, workload, --set, output folder, how steps are simulated
    std::vector<int> tp, pp;          // degrees to consider (empty: tp every power of two the chips allow, pp 1)
    std::vector<std::int64_t> users;  // closed-loop users (= batch caps) per plan
    bool dry_run = false;             // list the plans only
};

/// Returns the exit status (0, or 128 + signal when interrupted while simulating steps; finished steps are kept).
int run_serve_search(const serve_search_options& o, std::ostream& out, std::ostream& err);

}  // namespace tessel::serve
