#include "engine/report/port.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "engine/run/session.h"
#include "engine/workload/load.h"
#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {

namespace {

/// An op type as the model names it: the ONNX type (or the YAML type) when there is one, else tessel's kind.
std::string type_of(const op_node& op) { return op.type.empty() ? op_kind_name(op.kind) : op.type; }

}  // namespace

int port_report(const port_options& o, std::ostream& os) {
    std::map<std::string, std::string> overrides;
    for (const auto& s : o.sets) {
        const auto [k, v] = split_set(s);
        if (k.rfind("workload.", 0) == 0) overrides[k.substr(9)] = v;
    }
    const workload_graph g = load_workload(o.model, overrides);
    int blockers = 0;
    os << "tessel port: " << o.model << " on " << o.platform_arg << "\n";

    // Op types, and the ones tessel does not model (their bytes only, no arithmetic).
    std::map<std::string, int> types, unmodelled;
    for (const op_node& op : g.ops()) {
        types[type_of(op)] += 1;
        if (op.kind == op_kind::generic && op.cost.flops == 0) unmodelled[type_of(op)] += 1;
    }
    os << "ops        " << g.ops().size() << " ops of " << types.size() << " types:";
    for (const auto& [t, n] : types) os << " " << t << (n > 1 ? " x" + std::to_string(n) : "");
    os << "\n";
    if (unmodelled.empty()) {
        os << "support    every op type is modelled on every platform\n";
    } else {
        os << "support    " << unmodelled.size() << " op type(s) tessel does not model, run as memory traffic only:";
        for (const auto& [t, n] : unmodelled) os << " " << t << " x" << n;
        os << "\n";
    }
    const auto total = g.total();
    const auto prec = g.parameters.count("precision") ? g.parameters.at("precision") : std::string("fp16");
    os << "model      " << format_number(total.params / 1e6, 4) << " M parameters, " << format_number(total.flops / 1e9, 4)
       << " GFLOP per run, precision " << prec << "\n";

    // Map and simulate it as tessel run would.
    session_options so;
    so.platform = o.platform;
    so.platform_arg = o.platform_arg;
    so.workload = o.model;
    so.sets = o.sets;
    std::vector<std::string> suggestions;
    try {
        session s(so);
        const run_summary sum = s.run();
        os << "runs       yes: " << format_time(sum.sim_seconds) << " per run, " << format_number(sum.throughput(), 4)
           << " samples/s, " << format_number(sum.peak_flops > 0 ? 100 * sum.achieved_flops() / sum.peak_flops : 0, 3)
           << "% of peak, bound by " << sum.bound_by << "\n";
        // Where the time goes: each op's span in the schedule (first step's start to last step's end).
        const program& p = s.prog();
        const executor::result& r = s.result();
        std::vector<std::pair<tick, tick>> span(p.op_names.size(), {max_tick, 0});
        for (size_t i = 0; i < p.steps.size() && i < r.step_start.size(); ++i) {
            auto& [a, b] = span[p.steps[i].op];
            a = std::min(a, r.step_start[i]);
            b = std::max(b, r.step_end[i]);
        }
        std::vector<std::pair<double, std::string>> by_time;
        for (size_t op = 0; op < span.size(); ++op)
            if (span[op].second > span[op].first) by_time.push_back({ticks_to_seconds(span[op].second - span[op].first), p.op_names[op]});
        std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        os << "time       longest ops (first step to last, share of the run):";
        for (size_t k = 0; k < by_time.size() && k < 5; ++k)
            os << (k ? "," : "") << " " << by_time[k].second << " " << format_number(100 * by_time[k].first / sum.sim_seconds, 3) << "%";
        os << "\n";
        for (const auto& n : sum.notes)
            if (n.rfind("warning:", 0) == 0 || n.find("fallback") != std::string::npos || n.find("instead") != std::string::npos)
                os << "note       " << n << "\n";
        if (sum.peak_flops > 0 && sum.achieved_flops() / sum.peak_flops < 0.05)
            suggestions.push_back("the run reaches under 5% of peak (bound by " + sum.bound_by +
                                  "): a larger batch (--set workload.batch=N) or fusion (--set workload.fuse=true) usually helps first");
    } catch (const input_error& e) {
        ++blockers;
        os << "runs       no: " << e.what() << "\n";
        const std::string m = e.what();
        if (m.find("fit") != std::string::npos || m.find("capacity") != std::string::npos || m.find("memory") != std::string::npos)
            suggestions.push_back("the model does not fit one chip: split it over a system with tessel plan (docs/plan.md), or "
                                  "lower its precision or size");
        if (m.find("cannot compute in") != std::string::npos || m.find("rate for") != std::string::npos)
            suggestions.push_back("the chip lacks the model's data type: try --set workload.precision=fp16, bf16 or int8");
    }
    for (const auto& [t, n] : unmodelled)
        suggestions.push_back("replace " + t + " (x" + std::to_string(n) +
                              ") with ops tessel models (a decomposition in the exporting model), or declare its cost in an "
                              "imported YAML (tessel import MODEL.onnx -o W.yaml, then flops_per_element on those ops)");
    if (!unmodelled.empty()) ++blockers;
    if (suggestions.empty()) os << "suggest    nothing: the model runs as it is\n";
    for (const auto& sgt : suggestions) os << "suggest    " << sgt << "\n";
    return blockers;
}

}  // namespace tessel
