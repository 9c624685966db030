// The wafer mappers' explainers: for wafer_pipeline and wafer_streaming, each op's measured interval against its
// plan, the slowest op and the steady state; for wafer_stencil, one solver iteration's time by phase.
#include <algorithm>
#include <map>

#include "engine/mappers/wafer_common.h"
#include "engine/mappers/wafer_stencil.h"
#include "engine/report/explain/explainer.h"

namespace tessel {

namespace {

using wafer::op_record;
using wafer::plan_report;

/// Per op its measured interval between chunks and its span, the slowest op (the pipeline's bottleneck) and, for
/// a pipeline, the steady-state throughput (the summary's headline: run_summary::steady_throughput); as notes and
/// as details["timing"].
void explain_plan(const mapping& m, const platform&, const executor::result& r, run_summary& s) {
    const plan_report* planned = m.record_as<plan_report>();
    if (!planned) return;
    const plan_report& rep = *planned;
    nlohmann::json ops = nlohmann::json::array();
    int worst = -1;
    double worst_interval = -1, worst_planned = 0;
    for (size_t i = 0; i < rep.ops.size(); ++i) {
        const op_record& o = rep.ops[i];
        if (o.chunk_done.empty()) continue;
        tick start = max_tick;
        for (std::uint32_t st : o.start_steps) start = std::min(start, r.step_start[st]);
        const tick first = r.step_end[o.chunk_done.front()], last = r.step_end[o.chunk_done.back()];
        if (start == max_tick) start = first;
        const double interval = o.chunk_done.size() > 1
                                    ? ticks_to_seconds(last - first) / static_cast<double>(o.chunk_done.size() - 1)
                                    : ticks_to_seconds(last - start);
        nlohmann::json j;
        j["op"] = o.name;
        j["kind"] = o.kind;
        j["pes"] = o.pes;
        j["chunks"] = o.chunks;
        j["start_s"] = ticks_to_seconds(start - r.start);
        j["end_s"] = ticks_to_seconds(last - r.start);
        j["interval_s"] = interval;
        j["planned_interval_s"] = o.planned_cycles / rep.clk.hz;
        j["planned_limit"] = o.limit;
        ops.push_back(j);
        if (interval > worst_interval) {
            worst_interval = interval;
            worst = static_cast<int>(i);
            worst_planned = o.planned_cycles / rep.clk.hz;
        }
    }
    s.details["timing"] = ops;
    if (worst < 0) return;
    const op_record& w = rep.ops[static_cast<size_t>(worst)];
    s.notes.push_back("slowest op: " + w.name + " (" + w.kind + ", " + std::to_string(w.pes) +
                      " PEs): " + format_time(worst_interval) + (w.chunks > 1 ? " per chunk" : "") + " (planned " +
                      format_time(worst_planned) + ", limited by " + w.limit + ")");
    if (rep.mode == "layer-pipelined" && worst_interval > 0) {
        // Full, the pipeline delivers a chunk every interval of its slowest op, and no faster than its busiest
        // unit (a link, a PE) does that unit's work for a whole batch: intervals measured while the pipeline
        // fills see less contention than a full pipeline would.
        const resource_usage* busiest = nullptr;
        for (const resource_usage& u : s.resources)
            if (!busiest || u.busy_max > busiest->busy_max) busiest = &u;
        const double per_batch = rep.chunks * worst_interval;
        const bool unit_bound = busiest && busiest->busy_max > per_batch;
        s.set_steady_throughput(rep.samples / (unit_bound ? busiest->busy_max : per_batch));
        s.details["bottleneck"] = unit_bound ? busiest->name : w.name;
        s.notes.push_back("steady state: " +
                          (unit_bound
                               ? "the busiest unit of " + busiest->name + " is busy " + format_time(busiest->busy_max) +
                                     " per batch of " + format_number(rep.samples, 3) + " samples, more than " +
                                     format_number(rep.chunks, 3) + " intervals of " + w.name + " (" +
                                     format_time(per_batch) + ")"
                               : "one chunk of " + format_number(rep.samples / rep.chunks, 3) + " samples every " +
                                     format_time(worst_interval) + " at " + w.name) +
                          "; this run, fill and drain included, took " + format_time(s.sim_seconds));
    }
}

void explain_wafer_stencil(const mapping& m, const platform&, const executor::result& r, run_summary& s) {
    const wafer_stencil_record* planned = m.record_as<wafer_stencil_record>();
    if (!planned) return;
    std::map<std::string, double> by_phase;
    for (const auto& ph : planned->phases) {
        if (ph.first >= ph.last) continue;
        tick lo = max_tick, hi = 0;
        for (std::uint32_t i = ph.first; i < ph.last; ++i) {
            lo = std::min(lo, r.step_start[i]);
            hi = std::max(hi, r.step_end[i]);
        }
        by_phase[ph.phase] += ticks_to_seconds(hi - lo);
    }
    const double total = s.sim_seconds;
    const double it = static_cast<double>(planned->iterations);
    std::string parts;
    nlohmann::json j;
    for (const auto& [phase, secs] : by_phase) {
        parts += (parts.empty() ? "" : ", ") + phase + " " + format_time(secs / it) + " (" +
                 format_number(total > 0 ? 100 * secs / total : 0, 3) + "%)";
        j[phase + "_s"] = secs / it;
    }
    j["iteration_s"] = total / it;
    j["flops_per_s"] = s.achieved_flops();
    s.details["per_iteration"] = j;
    s.notes.push_back("per iteration: " + format_time(total / it) + ": " + parts + "; " +
                      format_rate(s.achieved_flops(), "FLOP/s"));
}

}  // namespace

TESSEL_REGISTER_EXPLAINER(explainer_info{"wafer_pipeline", explain_plan});
TESSEL_REGISTER_EXPLAINER(explainer_info{"wafer_streaming", explain_plan});
TESSEL_REGISTER_EXPLAINER(explainer_info{"wafer_stencil", explain_wafer_stencil});

}  // namespace tessel
