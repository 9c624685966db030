#include "engine/plan/port.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "engine/plan/plan_space.h"
#include "engine/run/session.h"
#include "engine/sweep/runner.h"
#include "engine/workload/load.h"
#include "engine/workload/training.h"
#include "models/core/error.h"
#include "models/core/text.h"
#include "models/core/units.h"

namespace tessel {

namespace {

using sweep::self_exe;
using sweep::shell_quote;

/// An op type as the model names it: the ONNX type (or the YAML type) when there is one, else tessel's kind.
std::string type_of(const op_node& op) { return op.type.empty() ? op_kind_name(op.kind) : op.type; }

/// What to do about `n` ops of a type tessel does not model.
std::string replacement(const std::string& type, int n) {
    return "replace " + type + " (x" + std::to_string(n) +
           ") with ops tessel models (a decomposition in the exporting model), " +
           "or declare its cost in an imported YAML (tessel import MODEL.onnx -o W.yaml, then flops_per_element on "
           "those ops)";
}

std::string percent(double share) { return format_number(100 * share, 3) + "%"; }

/// What the model's op types cost on the platform, from the run: where each type's work ran (the unit groups of
/// its compute steps, on the matrix or the vector path), its share of the model's FLOPs and of the compute time
/// (the compute steps' durations), and the time its transfers took (what an unmodelled op costs).
struct type_row {
    int ops = 0;
    bool unmodelled = false;
    bool host = false;  // fell back to the host CPU (mapper.host_ops)
    std::set<std::string> units;
    double flops = 0, compute_s = 0, transfer_s = 0;
};

std::map<std::string, type_row> cost_by_type(const workload_graph& g, const session& s) {
    std::map<std::string, type_row> rows;
    std::map<std::string, std::string> type_of_op;
    for (const op_node& op : g.ops()) {
        type_row& r = rows[type_of(op)];
        ++r.ops;
        r.unmodelled = r.unmodelled || unmodelled(op);
        r.flops += op.cost.flops;
        type_of_op[op.name] = type_of(op);
    }
    const program& p = s.prog();
    const executor::result& res = s.result();
    const std::string prefix = s.plat().title() + ".";
    for (size_t i = 0; i < p.steps.size() && i < res.step_start.size(); ++i) {
        const step& st = p.steps[i];
        const auto t = type_of_op.find(p.op_names[st.op]);
        if (t == type_of_op.end()) continue;  // a step the mapper added (a load, a barrier) under its own name
        type_row& r = rows[t->second];
        const double d = ticks_to_seconds(res.step_end[i] - res.step_start[i]);
        if (st.kind == step_kind::compute) {
            r.compute_s += d;
            std::string unit = group_name(s.plat().comp(st.at.comp).path());
            if (unit.rfind(prefix, 0) == 0) unit = unit.substr(prefix.size());
            const work& w = p.works[st.work];
            r.units.insert(unit + (w.macs > 0 ? " (matrix)" : " (vector)"));
        } else if (st.kind == step_kind::transfer) {
            r.transfer_s += d;
        }
    }
    return rows;
}

void print_cost_by_type(const std::map<std::string, type_row>& rows, std::ostream& os) {
    double flops = 0, compute = 0;
    for (const auto& [t, r] : rows) {
        flops += r.flops;
        compute += r.compute_s;
    }
    std::vector<std::pair<std::string, const type_row*>> order;
    order.reserve(rows.size());
    for (const auto& [t, r] : rows) order.emplace_back(t, &r);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.second->compute_s > b.second->compute_s; });
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %-22s %5s  %-34s %8s  %s\n", "by type", "op type", "ops", "runs on",
                  "FLOPs", "compute time");
    os << line;
    for (const auto& [t, r] : order) {
        std::string on;
        for (const auto& u : r->units) on += (on.empty() ? "" : ", ") + u;
        if (r->host)
            on = "host CPU (fallback)";
        else if (r->unmodelled)
            on = "memory traffic only";
        else if (on.empty())
            on = r->transfer_s > 0 ? "data movement only" : "no work (a view)";
        const std::string f = flops > 0 && r->flops > 0 ? percent(r->flops / flops) : "-";
        const std::string c = compute > 0 && r->compute_s > 0 ? percent(r->compute_s / compute) : "-";
        std::snprintf(line, sizeof line, "%-10s %-22s %5d  %-34s %8s  %s\n", "", t.c_str(), r->ops, on.c_str(),
                      f.c_str(), c.c_str());
        os << line;
    }
}

/// The op types a run's "host fallback: erf x12, floor x1 run on ..." note names (the kernels mapper's
/// mapper.host_ops), with the list as the note writes it; empty when nothing fell back.
std::pair<std::set<std::string>, std::string> host_fallback(const std::vector<std::string>& notes) {
    for (const auto& n : notes) {
        if (n.rfind("host fallback: ", 0) != 0) continue;
        const std::string list = n.substr(15, n.find(" run on") - 15);
        std::set<std::string> types;
        for (size_t at = 0; at < list.size();) {
            const size_t end = std::min(list.find(", ", at), list.size());
            types.insert(list.substr(at, list.rfind(" x", end) - at));
            at = end + 2;
        }
        return {types, list};
    }
    return {};
}

/// The bytes a chip must hold for the model whatever the schedule: its weights and state (KV caches, statistics).
double resident_bytes(const workload_graph& g) {
    double b = 0;
    for (const auto& t : g.tensors())
        if ((t.role == tensor_role::weight || t.role == tensor_role::state) && t.alias_of < 0)
            b += static_cast<double>(t.bytes());
    return b;
}

/// The memory that holds a model on the chip: the largest memory's capacity (the system mapper's rule).
double model_memory(const platform& plat) {
    std::uint64_t c = 0;
    for (std::uint32_t id = 0; id < plat.component_count(); ++id)
        if (plat.comp(id).has_role(component::role::memory)) c = std::max(c, plat.comp(id).capacity_bytes());
    return static_cast<double>(c);
}

/// A variant of the run, simulated as `tessel run --json` in a process of its own (SystemC elaborates once per
/// process): its simulated time and throughput, or the first line of its error.
struct variant {
    bool ok = false;
    double seconds = 0, throughput = 0;
    std::string error;
};

variant run_variant(const port_options& o, const std::vector<std::string>& sets) {
    std::string cmd =
        shell_quote(self_exe()) + " run --json -p " + shell_quote(o.platform) + " -w " + shell_quote(o.model);
    for (const auto& s : sets) cmd += " --set " + shell_quote(s);
    cmd += " 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
        const int status = pclose(p);
        variant v;
        if (status == 0) {
            try {
                const auto j = nlohmann::json::parse(out);
                v.ok = true;
                v.seconds = j.value("sim_time_s", 0.0);
                v.throughput = j.value("throughput_per_s", 0.0);
                return v;
            } catch (const std::exception&) {
            }
        }
        v.error = out.substr(0, out.find('\n'));
        if (v.error.rfind("tessel: error: ", 0) == 0) v.error = v.error.substr(15);
        return v;
    }
    return {false, 0, 0, "cannot start " + self_exe()};
}

/// The user's --sets with `set` ("workload.batch=8") in place of theirs for that key.
std::vector<std::string> with(const port_options& o, const std::string& set) {
    const std::string key = set.substr(0, set.find('=') + 1);
    std::vector<std::string> s;
    for (const auto& x : o.sets)
        if (x.rfind(key, 0) != 0) s.push_back(x);  // the variant's value replaces the user's
    s.push_back(set);
    return s;
}

std::string effect(const variant& v, double base_throughput) {
    if (!v.ok) return "does not run (" + v.error + ")";
    return format_throughput(v.throughput) + " samples/s, " + format_number(v.throughput / base_throughput, 3) + "x";
}

/// The system file bundled for this chip (platforms/systems/*.yaml whose chips are built from it), or "".
std::string system_of(const std::string& chip_file) {
    const std::filesystem::path chip(chip_file);
    const std::string stem = chip.parent_path().filename().string() + "/" + chip.stem().string();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("platforms/systems", ec)) {
        std::ifstream in(e.path());
        for (std::string l; std::getline(in, l);)
            if (l.find("platform: " + stem) != std::string::npos) return e.path().stem().string();
    }
    return "";
}

/// Whether the workload is a language model's step that `tessel serve` runs token by token (it has a decode mode).
bool serves_tokens(const workload_graph& g) { return g.parameters.count("mode") > 0; }

/// How many chips the model needs, and the split that fits with the fewest model-parallel ways: a training
/// workload by tessel plan's own memory rules (plan_space.h), at 2, 4, 8, ... chips; otherwise its weights and
/// state over the chip's memory.
std::vector<std::string> parallel_plan_needed(const port_options& o, const workload_graph& g, const platform& chip,
                                              const std::map<std::string, std::string>& overrides, double capacity) {
    std::vector<std::string> lines;
    const double resident = resident_bytes(g);
    const std::string sys = system_of(chip.file());
    if (!is_training_step(g)) {
        // Inference: tessel plan ranks training steps only, so the advice is the split to run or serve.
        const double chips = std::ceil(resident / capacity);
        lines.push_back("weights and state " + format_bytes(resident) + " against " + format_bytes(capacity) +
                        " per chip: at least " + format_number(chips, 6) +
                        " chips (more for activations, and for a served model's KV cache)");
        const std::string on = sys.empty() ? "a system of these chips" : sys;
        const std::string cmd = std::string(serves_tokens(g) ? "tessel serve" : "tessel run") + " -p " +
                                (sys.empty() ? "SYSTEM" : sys) + " -w " + o.model;
        lines.push_back("split its forward pass over " + on + " by tensor and pipeline parallelism: " + cmd +
                        " --set parallel.tp=T --set parallel.pp=P, T x P at least " + format_number(chips, 6) +
                        (serves_tokens(g) ? " (docs/serving.md)" : " (docs/systems.md)"));
        return lines;
    }
    for (std::int64_t chips = 2; chips <= 4096; chips *= 2) {
        const plan_space space = enumerate_plans(o.model, overrides, chips, capacity, {});
        if (space.candidates.empty()) continue;
        const plan_candidate* best = &space.candidates.front();
        for (const auto& c : space.candidates) {
            const int ways = c.plan.tp * c.plan.pp, best_ways = best->plan.tp * best->plan.pp;
            if (ways < best_ways || (ways == best_ways && c.memory_bytes < best->memory_bytes)) best = &c;
        }
        const parallel_plan& p = best->plan;
        lines.push_back("the smallest split that fits is on " + std::to_string(chips) + " chips: tp " +
                        std::to_string(p.tp) + " x pp " + std::to_string(p.pp) + " x dp " + std::to_string(p.dp) +
                        ", microbatch " + std::to_string(p.microbatch) + ", ZeRO " + std::to_string(p.zero) +
                        ", recompute " + p.recompute + ": " + format_bytes(best->memory_bytes) + " of " +
                        format_bytes(capacity) + " per chip (" + std::to_string(space.candidates.size()) +
                        " plans fit)");
        if (!sys.empty()) {
            std::string cmd = "tessel plan -p " + sys + " -w " + o.model;
            for (const auto& set : o.sets)
                if (set.rfind("workload.", 0) == 0) cmd += " --set " + set;
            lines.push_back("rank the plans by simulation on " + sys + ": " + cmd.append(" (docs/plan.md)"));
        }
        return lines;
    }
    lines.push_back("no split of up to 4096 chips fits " + format_bytes(capacity) + " per chip");
    return lines;
}

/// The --set overrides of the model's parameters (workload.NAME=VALUE), by NAME.
std::map<std::string, std::string> model_overrides(const port_options& o) {
    std::map<std::string, std::string> overrides;
    for (const auto& s : o.sets) {
        const auto [k, v] = split_set(s);
        if (k.rfind("workload.", 0) == 0) overrides[k.substr(9)] = v;
    }
    return overrides;
}

/// The model's precision parameter (fp16 when it names none).
std::string precision_of(const workload_graph& g) {
    return g.parameters.count("precision") ? g.parameters.at("precision") : std::string("fp16");
}

/// Prints the model's op types, the ones tessel does not model (their bytes only, no arithmetic), and its size;
/// returns the op types tessel does not model, with their op counts.
std::map<std::string, int> print_model(const workload_graph& g, const std::string& prec, std::ostream& os) {
    std::map<std::string, int> types, unknown;
    for (const op_node& op : g.ops()) {
        types[type_of(op)] += 1;
        if (unmodelled(op)) unknown[type_of(op)] += 1;
    }
    os << "ops        " << g.ops().size() << " ops of " << types.size() << " types:";
    for (const auto& [t, n] : types) os << " " << t << (n > 1 ? " x" + std::to_string(n) : "");
    os << "\n";
    if (unknown.empty()) {
        os << "support    every op type is modelled on every platform\n";
    } else {
        os << "support    " << unknown.size() << " op type(s) tessel does not model, run as memory traffic only:";
        for (const auto& [t, n] : unknown) os << " " << t << " x" << n;
        os << "\n";
    }
    const auto total = g.total();
    os << "model      " << format_number(g.parameter_count() / 1e6, 4) << " M parameters, "
       << format_number(total.flops / 1e9, 4) << " GFLOP per run, precision " << prec << "\n";
    return unknown;
}

/// Each op's span in the run's schedule (its first step's start to its last step's end) in seconds, with the op's
/// name, in op order; ops that took no time are left out.
std::vector<std::pair<double, std::string>> op_spans(const session& s) {
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
        if (span[op].second > span[op].first)
            by_time.emplace_back(ticks_to_seconds(span[op].second - span[op].first), p.op_names[op]);
    return by_time;
}

/// Prints the five ops with the longest spans (op_spans), with their share of the run.
void print_longest_ops(std::vector<std::pair<double, std::string>> by_time, double sim_seconds, std::ostream& os) {
    std::stable_sort(by_time.begin(), by_time.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    os << "time       longest ops (first step to last, share of the run):";
    for (size_t k = 0; k < by_time.size() && k < 5; ++k)
        os << (k ? "," : "") << " " << by_time[k].second << " "
           << format_number(100 * by_time[k].first / sim_seconds, 3) << "%";
    os << "\n";
}

/// Prints how much of the chip's memory the model's weights and state take, and the run's notes worth reading.
void print_fit_and_notes(const workload_graph& g, const platform& plat, const run_summary& sum, std::ostream& os) {
    const double capacity = model_memory(plat), resident = resident_bytes(g);
    if (capacity > 0)
        os << "fit        yes: weights and state " << format_bytes(resident) << " of " << format_bytes(capacity) << " ("
           << percent(resident / capacity) << ")\n";
    for (const auto& n : sum.notes)
        // Warnings, fallbacks, and data types the chip substitutes ("fp16 ops run in bf16").
        if (n.rfind("warning:", 0) == 0 || n.find("fallback") != std::string::npos ||
            n.find("instead") != std::string::npos || n.find(" ops run in ") != std::string::npos)
            os << "note       " << n << "\n";
}

/// Ops the device's compiler does not take ran on the host: their share of the run, and the run measured with
/// them on the device.
std::string host_fallback_suggestion(const port_options& o, const workload_graph& g,
                                     const std::map<std::string, double>& span_of,
                                     const std::set<std::string>& host_types, const std::string& host_list,
                                     const run_summary& sum) {
    double spans = 0;
    for (const op_node& op : g.ops())
        if (span_of.count(op.name) && host_types.count(type_of(op))) spans += span_of.at(op.name);
    return "the ops that fall back to the host (" + host_list + ") take " + percent(spans / sum.sim_seconds) +
           " of the run; with them on the device: " +
           effect(run_variant(o, with(o, "mapper.host_ops=none")), sum.throughput()) +
           " (replace them with ops the compiler takes, or write a custom kernel)";
}

/// Far from peak: what a larger batch and fusion would do, measured.
std::string far_from_peak_suggestion(const port_options& o, const workload_graph& g, const run_summary& sum) {
    std::string tried;
    const auto batch = g.parameters.find("batch");
    if (batch != g.parameters.end()) {
        const std::string b8 = std::to_string(8 * std::max<long long>(1, std::atoll(batch->second.c_str())));
        tried += "; at batch " + b8 + ": " + effect(run_variant(o, with(o, "workload.batch=" + b8)), sum.throughput());
    }
    const auto fuse = g.parameters.find("fuse");
    if (fuse != g.parameters.end() && fuse->second == "false")
        tried += "; fused: " + effect(run_variant(o, with(o, "workload.fuse=true")), sum.throughput());
    return "the run reaches under 5% of peak (bound by " + sum.bound_by +
           "): a larger batch (--set workload.batch=N) or fusion (--set workload.fuse=true) usually helps first" +
           tried;
}

/// An op tessel does not model costs its traffic only: how much of the run the `n` ops of type `t` span (a lower
/// bound on their real cost).
std::string unmodelled_suggestion(const workload_graph& g, const std::string& t, int n,
                                  const std::map<std::string, double>& span_of, double sim_seconds) {
    double spans = 0;
    for (const op_node& op : g.ops())
        if (type_of(op) == t && span_of.count(op.name)) spans += span_of.at(op.name);
    return replacement(t, n) + "; as memory traffic alone it spans " + percent(spans / sim_seconds) +
           " of the run, a lower bound on its real cost";
}

/// Runs the model in session `s` and prints what the run shows: its time, the cost by op type, the longest ops,
/// the fit and the notes; adds what to change to `suggestions`. `by_type` holds the cost by op type once known.
void report_run(const port_options& o, const workload_graph& g, session& s, const std::map<std::string, int>& unknown,
                std::map<std::string, type_row>& by_type, std::vector<std::string>& suggestions, std::ostream& os) {
    const run_summary sum = s.run();
    os << "runs       yes: " << format_time(sum.sim_seconds) << " per run, " << format_throughput(sum.throughput())
       << " samples/s, " << format_number(sum.peak_flops > 0 ? 100 * sum.achieved_flops() / sum.peak_flops : 0, 3)
       << "% of peak, bound by " << sum.bound_by << "\n";
    by_type = cost_by_type(g, s);
    const auto [host_types, host_list] = host_fallback(sum.notes);
    for (const auto& t : host_types)
        if (by_type.count(t)) by_type[t].host = true;
    print_cost_by_type(by_type, os);
    // Where the time goes: each op's span in the schedule (first step's start to last step's end).
    const std::vector<std::pair<double, std::string>> by_time = op_spans(s);
    std::map<std::string, double> span_of;  // op name -> seconds
    for (const auto& [secs, name] : by_time) span_of[name] = secs;
    print_longest_ops(by_time, sum.sim_seconds, os);
    print_fit_and_notes(g, s.plat(), sum, os);
    if (!host_types.empty()) suggestions.push_back(host_fallback_suggestion(o, g, span_of, host_types, host_list, sum));
    if (sum.peak_flops > 0 && sum.achieved_flops() / sum.peak_flops < 0.05 && sum.throughput() > 0)
        suggestions.push_back(far_from_peak_suggestion(o, g, sum));
    for (const auto& [t, n] : unknown) suggestions.push_back(unmodelled_suggestion(g, t, n, span_of, sum.sim_seconds));
}

/// A model that does not fit one chip: prints the split over a system it needs (when the failed run `run` loaded
/// the platform) and adds what to change to `suggestions`.
void report_no_fit(const port_options& o, const workload_graph& g, const session* run,
                   const std::map<std::string, std::string>& overrides, std::vector<std::string>& suggestions,
                   std::ostream& os) {
    suggestions.emplace_back(std::string("the model does not fit one chip: split it over a system (") +
                             (is_training_step(g) ? "tessel plan, docs/plan.md" : "a parallel plan, as above") +
                             "), or lower its precision or size");
    const double capacity = run && run->loaded() ? model_memory(run->plat()) : 0;
    if (capacity > 0) {
        const auto lines = parallel_plan_needed(o, g, run->plat(), overrides, capacity);
        for (size_t i = 0; i < lines.size(); ++i) os << (i ? "fit        " : "fit        no: ") << lines[i] << "\n";
    }
}

/// The chip lacks the model's data type (`prec`): measure which data types the chip does run.
std::string data_type_suggestion(const port_options& o, const std::string& prec) {
    std::string runs;
    for (const char* dt : {"bf16", "fp16", "int8", "fp32"}) {
        if (prec == dt) continue;
        const variant v = run_variant(o, with(o, std::string("workload.precision=") + dt));
        if (v.ok) runs += std::string(runs.empty() ? "" : ", ") + dt + " " + format_time(v.seconds) + " per run";
    }
    return "the chip lacks the model's data type: try --set workload.precision=fp16, bf16 or int8" +
           (runs.empty() ? std::string(" (none of them runs either)") : "; measured: " + runs);
}

/// A run that failed in mapping with message `m` is the blocker: prints it, and adds what a model that does not fit
/// or a data type the chip lacks needs to `suggestions`. `run` is the session that failed (null if never made).
void report_blocker(const port_options& o, const workload_graph& g, const session* run,
                    const std::map<std::string, std::string>& overrides, const std::string& prec, const std::string& m,
                    std::vector<std::string>& suggestions, std::ostream& os) {
    os << "runs       no: " << m << "\n";
    const bool no_fit = m.find("fit") != std::string::npos || m.find("capacity") != std::string::npos ||
                        m.find("memory") != std::string::npos;
    if (no_fit) report_no_fit(o, g, run, overrides, suggestions, os);
    if (m.find("cannot compute in") != std::string::npos || m.find("rate for") != std::string::npos ||
        m.find("workload.precision") != std::string::npos)
        suggestions.push_back(data_type_suggestion(o, prec));
}

}  // namespace

int port_report(const port_options& o, std::ostream& os) {
    const std::map<std::string, std::string> overrides = model_overrides(o);
    const workload_graph g = load_workload(o.model, overrides);
    int blockers = 0;
    os << "tessel port: " << o.model << " on " << o.platform_arg << "\n";
    const std::string prec = precision_of(g);
    const std::map<std::string, int> unknown = print_model(g, prec, os);

    // Map and simulate it as tessel run would.
    session_options so;
    so.platform = o.platform;
    so.platform_arg = o.platform_arg;
    so.workload = o.model;
    so.sets = o.sets;
    std::vector<std::string> suggestions;
    std::map<std::string, type_row> by_type;
    std::unique_ptr<session> run;
    try {
        run = std::make_unique<session>(so);
        report_run(o, g, *run, unknown, by_type, suggestions, os);
    } catch (const input_error& e) {
        ++blockers;
        report_blocker(o, g, run.get(), overrides, prec, e.what(), suggestions, os);
    }
    for (const auto& [t, n] : unknown)
        if (by_type.empty()) suggestions.push_back(replacement(t, n));
    if (!unknown.empty()) ++blockers;
    if (suggestions.empty()) os << "suggest    nothing: the model runs as it is\n";
    for (const auto& sgt : suggestions) os << "suggest    " << sgt << "\n";
    return blockers;
}

}  // namespace tessel
