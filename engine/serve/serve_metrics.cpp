#include "engine/serve/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tessel::serve {

distribution distribution::of(std::vector<double> v) {
    distribution d;
    if (v.empty()) return d;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (const double x : v) sum += x;
    d.mean = sum / static_cast<double>(v.size());
    auto rank = [&](double p) {
        const auto k = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
        return v[std::max<std::size_t>(k, 1) - 1];
    };
    d.p50 = rank(50);
    d.p90 = rank(90);
    d.p99 = rank(99);
    return d;
}

nlohmann::ordered_json distribution::to_json() const {
    return {{"mean", mean}, {"p50", p50}, {"p90", p90}, {"p99", p99}};
}

serve_metrics measure(const std::vector<request>& reqs, const serve_run& run, const serve_options& o,
                      std::int64_t chips, double block_bytes, std::int64_t kv_blocks) {
    serve_metrics m;
    m.chips = chips;
    std::vector<double> ttft, tpot, e2e;
    double first_arrival = std::numeric_limits<double>::infinity(), last = 0, speed = 0;
    std::int64_t met = 0, with_tpot = 0;
    for (const request& r : reqs) {
        const outcome& x = run.outcomes[static_cast<std::size_t>(r.id)];
        const double arrival = run.arrivals[static_cast<std::size_t>(r.id)];
        ++m.requests;
        m.output_tokens += r.output_tokens;
        m.preemptions += x.preemptions;
        first_arrival = std::min(first_arrival, arrival);
        last = std::max(last, x.finish_s);
        ttft.push_back(x.first_token_s - arrival);
        e2e.push_back(x.finish_s - arrival);
        double per_token = 0;
        if (r.output_tokens > 1) {
            per_token = (x.finish_s - x.first_token_s) / static_cast<double>(r.output_tokens - 1);
            tpot.push_back(per_token);
            speed += 1 / per_token;
            ++with_tpot;
        }
        const bool ok = (o.slo_ttft_s <= 0 || ttft.back() <= o.slo_ttft_s) &&
                        (o.slo_tpot_s <= 0 || r.output_tokens <= 1 || per_token <= o.slo_tpot_s);
        met += ok ? 1 : 0;
    }
    m.ttft = distribution::of(ttft);
    m.tpot = distribution::of(tpot);
    m.e2e = distribution::of(e2e);
    m.makespan_s = last - first_arrival;
    if (m.makespan_s > 0) {
        m.output_tokens_per_s = static_cast<double>(m.output_tokens) / m.makespan_s;
        m.goodput_requests_per_s = static_cast<double>(met) / m.makespan_s;
    }
    m.output_tokens_per_s_per_chip = m.output_tokens_per_s / static_cast<double>(chips);
    m.tokens_per_s_per_user = with_tpot ? speed / static_cast<double>(with_tpot) : 0;
    m.slo_attainment = m.requests ? static_cast<double>(met) / static_cast<double>(m.requests) : 1;

    // Energy: the steps' (every chip of the replica) and the replicas' idle draw between steps.
    m.energy_j = run.idle_joules;
    std::int64_t decode_seqs = 0;
    // KV use per replica over time: each step's blocks held from its start to the replica's next step.
    std::map<int, std::vector<const step_record*>> by_replica;
    for (const step_record& s : run.steps) {
        m.energy_j += s.energy_j;
        (s.prefill ? m.prefill_steps : m.decode_steps)++;
        if (s.decodes > 0) ++m.mixed_steps;
        if (!s.prefill) decode_seqs += s.batch;
        by_replica[s.replica].push_back(&s);
        m.kv_peak_bytes = std::max(m.kv_peak_bytes, static_cast<double>(s.kv_blocks) * block_bytes);
    }
    double area = 0, span = 0;
    for (const auto& [rep, steps] : by_replica)
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const double until = i + 1 < steps.size() ? steps[i + 1]->start_s : steps[i]->end_s;
            area += static_cast<double>(steps[i]->kv_blocks) * block_bytes * (until - steps[i]->start_s);
            span += until - steps[i]->start_s;
        }
    m.kv_mean_bytes = span > 0 ? area / span : 0;
    m.kv_capacity_bytes = static_cast<double>(kv_blocks) * block_bytes;
    m.mean_decode_batch = m.decode_steps ? static_cast<double>(decode_seqs) / static_cast<double>(m.decode_steps) : 0;
    if (m.makespan_s > 0) m.average_power_w = m.energy_j / m.makespan_s;
    if (m.energy_j > 0) m.output_tokens_per_kj = static_cast<double>(m.output_tokens) / (m.energy_j / 1000);
    return m;
}

nlohmann::ordered_json serve_metrics::to_json() const {
    return {{"requests", requests},
            {"output_tokens", output_tokens},
            {"chips", chips},
            {"ttft_s", ttft.to_json()},
            {"tpot_s", tpot.to_json()},
            {"e2e_s", e2e.to_json()},
            {"makespan_s", makespan_s},
            {"output_tokens_per_s", output_tokens_per_s},
            {"output_tokens_per_s_per_chip", output_tokens_per_s_per_chip},
            {"tokens_per_s_per_user", tokens_per_s_per_user},
            {"energy_j", energy_j},
            {"average_power_w", average_power_w},
            {"output_tokens_per_kj", output_tokens_per_kj},
            {"kv_peak_bytes", kv_peak_bytes},
            {"kv_mean_bytes", kv_mean_bytes},
            {"kv_capacity_bytes", kv_capacity_bytes},
            {"slo_attainment", slo_attainment},
            {"goodput_requests_per_s", goodput_requests_per_s},
            {"preemptions", preemptions},
            {"prefill_steps", prefill_steps},
            {"decode_steps", decode_steps},
            {"mixed_steps", mixed_steps},
            {"mean_decode_batch", mean_decode_batch}};
}

}  // namespace tessel::serve
