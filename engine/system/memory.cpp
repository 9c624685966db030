#include "engine/system/memory.h"

#include <algorithm>
#include <map>
#include <set>

#include "engine/system/parallel_plan.h"
#include "engine/system/pipeline_schedule.h"
#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {

bool memory_report::fits() const {
    for (const auto& s : stages)
        if (s.total > capacity) return false;
    return true;
}

const stage_memory& memory_report::worst() const {
    if (stages.empty()) fail("memory report: no stages");
    return *std::max_element(stages.begin(), stages.end(),
                             [](const stage_memory& a, const stage_memory& b) { return a.total < b.total; });
}

memory_report memory_per_chip(const partition_result& p, double capacity_bytes) {
    const parallel_plan& plan = p.plan;
    memory_report r;
    r.capacity = capacity_bytes;
    r.training = p.training;
    const double dp = plan.dp;
    const int m = static_cast<int>(std::max<std::int64_t>(1, p.microbatches));
    for (int s = 0; s < plan.pp; ++s) {
        stage_memory sm;
        sm.stage = s;
        std::set<std::string> seen;  // a weight read by two chunks of one stage is held once
        std::map<int, const chunk_partition*> chunk;
        for (const auto& c : p.chunks) {
            if (c.stage != s) continue;
            chunk[c.index] = &c;
            // Per-weight shares are not kept per chunk; split the chunk's totals by its weights not yet seen.
            size_t fresh = 0;
            for (const auto& w : c.weights) fresh += seen.insert(w).second ? 1 : 0;
            const double share =
                c.weights.empty() ? 1.0 : static_cast<double>(fresh) / static_cast<double>(c.weights.size());
            sm.weights += c.weight_bytes * share;
            sm.gradients += c.grad_bytes * share;
            sm.optimizer_state += c.optimizer_bytes * share;
            sm.state += c.state_bytes * m;
        }
        if (plan.zero >= 1) sm.optimizer_state /= dp;
        if (plan.zero >= 2) sm.gradients /= dp;
        if (plan.zero >= 3) sm.weights /= dp;
        // Activations: walk the stage's schedule.
        double held = 0, peak = 0;
        int in_flight = 0;
        if (p.training) {
            for (const auto& item : stage_schedule(plan.schedule, plan.pp, plan.interleave, m, s)) {
                const auto it = chunk.find(item.chunk);
                if (it == chunk.end()) continue;
                const chunk_partition& c = *it->second;
                if (item.pass == pass_dir::forward) {
                    held += c.activation_bytes;
                    ++in_flight;
                    sm.max_in_flight = std::max(sm.max_in_flight, in_flight);
                    peak = std::max(peak, held);
                } else {
                    peak = std::max(peak, held + c.recompute_bytes);
                    held -= c.activation_bytes;
                    --in_flight;
                }
            }
        }
        sm.activations = peak;
        sm.total = sm.weights + sm.gradients + sm.optimizer_state + sm.activations + sm.state;
        sm.largest = {
            {"optimizer state", sm.optimizer_state},
            {"weights", sm.weights},
            {"gradients", sm.gradients},
            {"state (KV cache)", sm.state},
            {"activations (" + std::to_string(sm.max_in_flight) + " microbatch-chunks in flight)", sm.activations}};
        for (const auto& [index, c] : chunk)
            for (size_t k = 0; k < c->kept.size() && k < 3; ++k)
                sm.largest.push_back(
                    {"kept tensor " + c->kept[k].name + " (chunk " + std::to_string(index) + ")", c->kept[k].bytes});
        std::stable_sort(sm.largest.begin(), sm.largest.end(),
                         [](const memory_item& a, const memory_item& b) { return a.bytes > b.bytes; });
        r.stages.push_back(std::move(sm));
    }
    return r;
}

void require_fit(const memory_report& r, const parallel_plan& plan) {
    std::string msg;
    for (const auto& s : r.stages) {
        if (s.total <= r.capacity) continue;
        if (!msg.empty()) msg += "; ";
        const int chips = plan.dp * plan.tp;
        msg += "stage " + std::to_string(s.stage) + " (" + std::to_string(chips) + (chips == 1 ? " chip" : " chips") +
               ": every dp and tp rank of pipeline stage " + std::to_string(s.stage) + ") needs " +
               format_bytes(s.total) + " (" + format_number(s.total, 15) + " B) but a chip has " +
               format_bytes(r.capacity) + "; largest: ";
        for (size_t i = 0; i < s.largest.size() && i < 4; ++i)
            msg += (i ? ", " : "") + s.largest[i].what + " " + format_bytes(s.largest[i].bytes);
    }
    if (msg.empty()) return;
    if (!r.training)
        fail("parallel plan " + plan.str() + " does not fit in memory: " + msg +
             " (try more tp or pp, a smaller workload.batch, or a narrower workload.precision)");
    // What to try first: recomputation if there is none, then smaller blocks of it, then the rest.
    std::string recompute = "recompute=full or selective, ";
    if (plan.recompute != "none")
        recompute = plan.recompute_layers == 0
                        ? "recompute_layers=1 (re-create one layer at a time, not the whole chunk), "
                    : plan.recompute == "selective" ? "recompute=full, "
                                                    : "";
    fail("parallel plan " + plan.str() + " does not fit in memory: " + msg + " (try " + recompute +
         "zero=1..3, a smaller microbatch, or more tp or pp)");
}

holding_plan smallest_holding_plan(const workload_source& source, const workload_overrides& overrides, double budget) {
    plan_target target = plan_target_of(source, overrides, 1);
    std::vector<parallel_plan> plans;
    // tp beyond the heads (or 1 for a model with none) is refused by the plan rules below; 4,096 bounds the loop.
    for (int tp = 1; tp <= std::max<std::int64_t>(1, target.heads) && tp <= 4096; tp *= 2)
        for (int pp = 1; pp <= std::max<std::int64_t>(1, target.layers); ++pp) {
            parallel_plan p;
            p.tp = tp;
            p.pp = pp;
            p.microbatch = static_cast<int>(target.batch);  // one replica: the whole batch at once
            target.chips = p.chips();
            if (plan_violations(p, target).empty()) plans.push_back(p);
        }
    std::stable_sort(plans.begin(), plans.end(), [](const parallel_plan& a, const parallel_plan& b) {
        return a.chips() != b.chips() ? a.chips() < b.chips() : a.pp < b.pp;
    });
    holding_plan best;
    int graph_tp = 0;
    workload_graph graph;  // the current tp's rank graph, cut by every pp
    for (const parallel_plan& p : plans) {
        target.chips = p.chips();
        if (p.tp != graph_tp) {
            graph = source.build(rank_overrides(target, overrides, p));
            graph_tp = p.tp;
        }
        const memory_report r =
            memory_per_chip(partition(graph, source.spec(), target, p, partition_detail::memory), budget);
        double heaviest = 0;
        for (const auto& s : r.stages) heaviest = std::max(heaviest, s.weights);
        best.plan = p;
        best.stage_weights = heaviest;
        if (heaviest <= budget) {
            best.found = true;
            break;
        }
    }
    return best;
}

}  // namespace tessel
