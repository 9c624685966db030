// What a serving run reports: latency distributions per request (time to first token, time per output token,
// end to end), throughput per chip and per user, energy per token, KV-cache use and goodput under the SLOs.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/serve/batcher.h"
#include "engine/serve/request.h"
#include "engine/serve/serve_options.h"

namespace tessel::serve {

/// Mean and nearest-rank percentiles (the smallest value with at least p% of the values at or below it).
struct distribution {
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
    static distribution of(std::vector<double> values);
    nlohmann::ordered_json to_json() const;
};

struct serve_metrics {
    std::int64_t requests = 0, output_tokens = 0, preemptions = 0;
    std::int64_t chips = 1;
    distribution ttft, tpot, e2e;  // seconds; tpot over requests with 2 or more output tokens
    double makespan_s = 0;         // first arrival to last token
    double output_tokens_per_s = 0, output_tokens_per_s_per_chip = 0;
    double tokens_per_s_per_user = 0;  // mean over requests of their decode speed, 1 / TPOT
    double energy_j = 0, average_power_w = 0, output_tokens_per_kj = 0;
    double kv_peak_bytes = 0, kv_mean_bytes = 0, kv_capacity_bytes = 0;  // per replica; mean over time
    double slo_attainment = 1, goodput_requests_per_s = 0;               // requests meeting every SLO set
    std::int64_t prefill_steps = 0, decode_steps = 0;
    std::int64_t mixed_steps = 0;  // prefill steps with decodes beside their chunks (chunked prefill)
    double mean_decode_batch = 0;

    nlohmann::ordered_json to_json() const;
};

/// The metrics of `run`, for requests `reqs` on `chips` chips in all, each KV block holding `block_bytes`.
serve_metrics measure(const std::vector<request>& reqs, const serve_run& run, const serve_options& o,
                      std::int64_t chips, double block_bytes, std::int64_t kv_blocks);

}  // namespace tessel::serve
