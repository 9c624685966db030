#include "engine/plan/advisor.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/plan/layer_estimate.h"
#include "engine/run/session.h"
#include "engine/sweep/generated_spec.h"
#include "engine/sweep/results.h"
#include "engine/system/layer_sample.h"
#include "engine/system/system_mapper.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"

namespace tessel {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

/// The parallel.* keys the search varies (axes of its sweep); the others apply to every plan as set.
const std::vector<std::string> k_searched = {"dp",         "tp",       "pp",        "microbatch",
                                             "interleave", "schedule", "recompute", "zero"};

/// One system size: the platform loaded at one value of the scale parameter.
struct system_size {
    std::string value;  // of the scale parameter ("" without one)
    std::int64_t chips = 0;
    double capacity = 0;
    bool streamed = false;
    plan_limits limits;  // the search at this size
    plan_space space;
    std::string dp_only_reason;  // why every chip a replica is not among the plans, when it is not
    size_t retried = 0;          // plans added because a larger micro-batch did not fit its chip mapper
};

/// A simulated plan's result.
struct plan_result {
    const plan_candidate* cand = nullptr;
    std::string status = "pending", error;
    double iteration_s = 0, samples_per_s = 0, mfu = 0;
    double joules = 0, watts = 0;              // energy of one iteration, average power (docs/energy.md)
    double compute = 0, comm = 0, bubble = 0;  // mean fractions per simulated chip
    double run_memory = 0;                     // the run's own worst stage (equals the estimate)
    double spilled = 0;  // activations a chip kept off chip for the backward pass, per chip and iteration
    std::string dir;
    // With --simulate-top: the plan's estimate (0: none), its MFU and its rank among the size's estimates.
    double estimate_s = 0, estimate_mfu = 0, estimate_samples_per_s = 0;
    int estimate_rank = 0;
    bool ok() const { return status == "ok"; }
    /// Estimated, not simulated whole (outside the best --simulate-top estimates).
    bool estimated_only() const { return status == "estimated"; }
};

/// The plan as the tables name it: parallel_plan::str() and the memory keys the search varies.
std::string label(const parallel_plan& p) {
    std::string s = p.str();
    if (p.schedule == "gpipe") s += " gpipe";
    if (p.recompute != "none") s += " recompute=" + p.recompute;
    if (p.zero) s += " zero=" + std::to_string(p.zero);
    return s;
}

std::string pct(double f) { return format_number(100 * f, 3) + "%"; }

}  // namespace

split_sets split_user_sets(const plan_options& o, plan_limits& limits) {
    split_sets out;
    param_context ctx;  // reads the parallel.* values with the run's own rules, so a bad one fails here
    for (const auto& s : o.sets) {
        // Named copies, not structured bindings: a lambda below captures them (C++17 cannot capture a binding).
        const auto kv = split_set(s);
        const std::string k = kv.first, v = kv.second;
        if (k.rfind("workload.", 0) == 0) {
            out.workload[k.substr(9)] = v;
            continue;
        }
        if (k == o.scale_param) throw input_error("--set " + k + ": the system parameter --scale varies; set it there");
        if (k.rfind("parallel.", 0) == 0) {
            ctx.add_override(k, v);
            const std::string key = k.substr(9);
            if (std::find(k_searched.begin(), k_searched.end(), key) != k_searched.end() && key != "schedule") {
                auto list = [&](std::vector<int>& l) {
                    if (!l.empty()) {
                        std::string why = "--set " + k;
                        why += " and --" + key;
                        why += " both restrict " + key;
                        throw input_error(why + "; give one");
                    }
                    l = parse_int_list("--set " + k, v);
                };
                if (key == "dp")
                    list(limits.dp);
                else if (key == "tp")
                    list(limits.tp);
                else if (key == "pp")
                    list(limits.pp);
                else if (key == "microbatch")
                    list(limits.microbatch);
                else if (key == "interleave")
                    list(limits.interleave);
                else if (key == "zero")
                    list(limits.zero);
                else if (key == "recompute") {
                    if (!limits.recompute.empty())
                        throw input_error("--set " + k + " and --recompute both restrict recompute; give one");
                    limits.recompute = {v};
                }
                continue;
            }
            if (key != "schedule") out.platform.emplace_back(k, v);
            continue;
        }
        out.platform.emplace_back(k, v);
    }
    // The plan's keys the search does not vary (schedule, sequence_parallel, ...) and unknown ones, through a run's
    // rules.
    param_context check;
    for (const auto& s : o.sets) {
        auto [k, v] = split_set(s);
        if (k.rfind("parallel.", 0) != 0) continue;
        const std::string key = k.substr(9);
        if (key == "schedule" || std::find(k_searched.begin(), k_searched.end(), key) == k_searched.end())
            check.add_override(k, v);
    }
    limits.base = read_parallel_plan(yaml_node(), check);
    const auto unused = check.unused_overrides();
    if (!unused.empty())
        throw input_error("--set " + unused.front() +
                          ": not a parallel plan key (tessel describe parallel lists them)");
    for (const auto& r : limits.recompute)
        if (r != "none" && r != "selective" && r != "full")
            throw input_error("recompute '" + r + "': expected none, selective or full");
    for (const int z : limits.zero)
        if (z > 2) throw input_error("zero " + std::to_string(z) + ": the system mapper simulates ZeRO 0, 1 and 2");
    return out;
}

namespace {

/// Loads the system at one scale value and reads its chips and memory per chip.
system_size load_size(const plan_options& o, const std::string& platform_file, const split_sets& sets,
                      const std::string& value) {
    sim_context sim;
    param_context ctx;
    for (const auto& [k, v] : sets.platform) ctx.add_override(k, v);
    if (!o.scale_param.empty()) ctx.add_override(o.scale_param, value);
    const std::unique_ptr<platform> plat = platform::load(platform_file, ctx, sim);
    if (!plat->is_system())
        throw input_error("tessel plan needs a system (a platform with chips: and mapper: {impl: system}); '" +
                          o.platform + "' is a single chip: try platforms/systems/*.yaml");
    const std::unique_ptr<mapper> m = create_mapper(*plat, ctx);
    const auto* sm = dynamic_cast<const system_mapper*>(m.get());
    if (!sm) throw input_error("tessel plan needs the system mapper (mapper: {impl: system}) on '" + o.platform + "'");
    const auto unused = ctx.unused_overrides();
    if (!unused.empty()) throw input_error("--set " + unused.front() + ": no such parameter on '" + o.platform + "'");
    system_size s;
    s.value = value;
    s.chips = static_cast<std::int64_t>(sm->chips(*plat).chips.size());
    s.streamed = sm->streams_weights();
    s.capacity = s.streamed ? 0 : static_cast<double>(sm->chip_capacity(*plat));
    return s;
}

json plan_json(const parallel_plan& p) {
    return {{"plan", label(p)},
            {"dp", p.dp},
            {"tp", p.tp},
            {"pp", p.pp},
            {"microbatch", p.microbatch},
            {"interleave", p.interleave},
            {"schedule", p.schedule},
            {"recompute", p.recompute},
            {"zero", p.zero}};
}

/// Which candidates a sweep simulates (all of them, or the best estimates).
using plan_filter = std::function<bool(const system_size&, const plan_candidate&)>;

/// The layers of a plan's estimate runs (--estimate-layers K): a layer sample of K and K + 1 per pipeline chunk
/// (pp x interleave chunks, engine/system/layer_sample.h), or one run of the model's layers where it has no more
/// than K + 1 a chunk.
layer_sample estimate_sample(const plan_options& o, const system_size& s, const parallel_plan& p) {
    return sample_layers(s.space.target.layers, std::int64_t{p.pp} * p.interleave, o.estimate_layers);
}

std::vector<std::int64_t> estimate_runs(const plan_options& o, const system_size& s, const parallel_plan& p) {
    const layer_sample ls = estimate_sample(o, s, p);
    if (!ls.active()) return {s.space.target.layers};
    return {ls.low, ls.high};
}

/// The parameters an estimate run of `run_layers` layers adds to its plan's (in the sweep's axes order): the
/// layers, the model they sample (mapper.layers_of: the chip programs' form chosen as for it) and what a chip of
/// the model holds (mapper.holds: the chip mapper's on-chip decisions made as for it). Empty without
/// --estimate-layers.
std::vector<std::pair<std::string, std::string>> estimate_params(const plan_options& o, const system_size& s,
                                                                 const plan_candidate& c, std::int64_t run_layers) {
    if (o.estimate_layers <= 0) return {};
    const bool sample = run_layers != s.space.target.layers;
    return {{"workload.layers", std::to_string(run_layers)},
            {"mapper.layers_of", std::to_string(sample ? s.space.target.layers : 0)},
            {"mapper.holds", std::to_string(sample ? static_cast<std::int64_t>(std::ceil(c.held_bytes)) : 0) + "B"}};
}

/// The sweep that simulates the candidates `keep` takes: one zipped axis group over the plan keys (and the scale
/// parameter); `window` > 0 simulates that window of each plan's microbatches (mapper.window) for an estimate.
std::string sweep_yaml(const plan_options& o, const std::string& platform_file, const std::string& workload,
                       const split_sets& sets, const std::vector<system_size>& sizes, const plan_filter& keep,
                       int window) {
    std::vector<std::string> names;
    if (!o.scale_param.empty()) names.push_back(o.scale_param);
    for (const auto& k : k_searched) names.push_back("parallel." + k);
    const bool samples = window > 0 && o.estimate_layers > 0;
    if (samples)
        for (const char* k : {"workload.layers", "mapper.layers_of", "mapper.holds"}) names.emplace_back(k);
    std::map<std::string, std::vector<std::string>> values;
    for (const auto& s : sizes)
        for (const auto& c : s.space.candidates) {
            if (!keep(s, c)) continue;
            const parallel_plan& p = c.plan;
            for (const std::int64_t run_layers : samples ? estimate_runs(o, s, p) : std::vector<std::int64_t>{0}) {
                if (!o.scale_param.empty()) values[o.scale_param].push_back(s.value);
                values["parallel.dp"].push_back(std::to_string(p.dp));
                values["parallel.tp"].push_back(std::to_string(p.tp));
                values["parallel.pp"].push_back(std::to_string(p.pp));
                values["parallel.microbatch"].push_back(std::to_string(p.microbatch));
                values["parallel.interleave"].push_back(std::to_string(p.interleave));
                values["parallel.schedule"].push_back(p.schedule);
                values["parallel.recompute"].push_back(p.recompute);
                values["parallel.zero"].push_back(std::to_string(p.zero));
                if (samples)
                    for (const auto& [k, v] : estimate_params(o, s, c, run_layers)) values[k].push_back(v);
            }
        }
    sweep::generated_spec g;
    g.comment = window > 0 ? "written by tessel plan --simulate-top: every candidate plan is a point, simulated for a "
                             "window of its microbatches (its estimate)"
                           : "written by tessel plan: every candidate plan is a point (re-run with tessel sweep, or "
                             "tessel plan again)";
    g.name = window > 0 ? "plan-estimates" : "plan";
    g.platform = platform_file;
    g.workload = workload;
    g.platform_sets = sets.platform;
    if (window > 0) g.platform_sets.emplace_back("mapper.window", std::to_string(window));
    g.stats = window == 0;  // an estimate's units' statistics are of a window (and a sample) only
    g.workload_sets = sets.workload;
    if (samples) g.workload_sets.erase("layers");  // an axis
    for (const auto& n : names) g.axes.emplace_back(n, values[n]);
    return g.yaml();
}

double mean_of(const json& per_chip, const char* key) {
    if (!per_chip.is_array() || per_chip.empty()) return 0;
    double s = 0;
    for (const auto& c : per_chip) s += c.value(key, 0.0);
    return s / static_cast<double>(per_chip.size());
}

void read_result(plan_result& r, const sweep::row& row, const std::string& out_dir) {
    r.status = row.value("status", "failed");
    r.error = row.value("error", "");
    r.dir = row.value("dir", "");
    if (!r.ok()) return;
    try {
        sweep::read_point_summary(out_dir, row, [&r](const json& s) {
            r.iteration_s = s.value("sim_time_s", 0.0);
            r.samples_per_s = s.value("throughput_per_s", 0.0);
            r.joules = s.value("energy_j", 0.0);
            r.watts = s.value("average_power_w", 0.0);
            const json& par = s.contains("parallel") ? s["parallel"] : json::object();
            r.mfu = par.value("model_flops_utilisation", 0.0);
            r.compute = mean_of(par.value("per_chip", json::array()), "compute_fraction");
            r.comm = mean_of(par.value("per_chip", json::array()), "exposed_communication_fraction");
            r.bubble = mean_of(par.value("per_chip", json::array()), "idle_fraction");
            r.spilled = par.value("spilled_activation_bytes", 0.0);
            if (par.contains("memory") && par["memory"].contains("stages"))
                for (const auto& st : par["memory"]["stages"])
                    r.run_memory = std::max(r.run_memory, st.value("total_bytes", 0.0));
        });
    } catch (const input_error& e) {
        r.status = "failed";
        r.error = e.message();
    }
}

/// A plan's estimate from its window's run: the extrapolated iteration (the whole one when the window held every
/// microbatch) and the MFU over it. With a layer sample (`higher`: the run with a layer more per chunk), the model's
/// iteration is `sample`.model() of the two runs (engine/system/layer_sample.h).
void read_estimate(plan_result& r, const sweep::row& row, const sweep::row* higher, const layer_sample& sample,
                   const std::string& out_dir) {
    auto read = [&](const sweep::row& x) { return sweep::read_point_summary(out_dir, x, iteration_of); };
    r.status = row.value("status", "failed");
    r.error = row.value("error", "");
    if (r.ok() && higher) {
        r.status = higher->value("status", "failed");
        r.error = higher->value("error", "");
    }
    if (!r.ok()) return;
    r.status = "estimated";
    try {
        iteration_figures e = read(row);
        if (higher) {
            const iteration_figures hi = read(*higher);
            if (hi.seconds < e.seconds)
                throw input_error("its estimate took less time with a layer more per pipeline chunk (" +
                                  format_time(hi.seconds) + " against " + format_time(e.seconds) +
                                  "), so its layers cannot be counted from the difference (--estimate-layers 0 "
                                  "estimates it with every layer)");
            e.seconds = sample.model(e.seconds, hi.seconds);
            e.flop_seconds = sample.model(e.flop_seconds, hi.flop_seconds);
        }
        r.estimate_s = e.seconds;
        if (e.seconds > 0) {
            r.estimate_mfu = e.flop_seconds / e.seconds;
            r.estimate_samples_per_s = e.samples / e.seconds;
        }
    } catch (const input_error& e) {
        r.status = "failed";
        r.error = e.message();
    }
}

/// "1.31x faster than X: 2.1 ms less exposed communication (5% vs 12%), for 0.4 ms more bubble (...)": what the
/// winner saves, largest first, then what it pays; the parts of the iteration that differ by under 1% are left out.
std::string wins_by(const plan_result& a, const plan_result& b) {
    const double frac_a[3] = {a.compute, a.comm, a.bubble}, frac_b[3] = {b.compute, b.comm, b.bubble};
    const char* names[3] = {"compute", "exposed communication", "bubble and waiting"};
    std::vector<std::pair<double, int>> saves, pays;
    for (int i = 0; i < 3; ++i) {
        const double delta = frac_b[i] * b.iteration_s - frac_a[i] * a.iteration_s;
        if (std::abs(delta) < 0.01 * a.iteration_s) continue;
        (delta > 0 ? saves : pays).emplace_back(std::abs(delta), i);
    }
    std::sort(saves.rbegin(), saves.rend());
    std::sort(pays.rbegin(), pays.rend());
    auto part = [&](const std::pair<double, int>& d, const char* more_less) {
        return format_time(d.first) + " " + more_less + " " + names[d.second] + " (" + pct(frac_a[d.second]) +
               " of its iteration vs " + pct(frac_b[d.second]) + ")";
    };
    std::string s = format_number(b.iteration_s / a.iteration_s, 3) + "x faster than " + label(b.cand->plan) + ": ";
    for (size_t i = 0; i < saves.size(); ++i) s += (i ? ", " : "") + part(saves[i], "less");
    for (size_t i = 0; i < pays.size(); ++i)
        s += std::string(i ? ", " : saves.empty() ? "" : ", for ") + part(pays[i], "more");
    if (saves.empty() && pays.empty()) s += "the same split of the iteration, within 1%";
    return s;
}

struct size_report {
    const system_size* size = nullptr;
    std::string estimates;             // with --simulate-top: how far the estimates were from the whole simulations
    std::vector<plan_result> results;  // ranked: ok by iteration time, then the rest
    std::vector<std::string> why;      // the best plan's case, in sentences
    std::vector<std::pair<int, std::string>> by_dp;  // dp, "x samples/s (plan)" or why none
    int dp_pays_to = 0;                              // the data-parallel degree with the highest throughput
};

/// What a plan is ranked by (smaller is better): its iteration time, its energy per iteration, or their product.
double rank_key(const plan_result& x, const std::string& rank) {
    if (rank == "energy") return x.joules;
    if (rank == "edp") return x.joules * x.iteration_s;
    return x.iteration_s;
}

size_report rank_size(const system_size& s, std::vector<plan_result> results, const std::string& rank) {
    size_report r;
    r.size = &s;
    // Simulated plans by the rank's key, then plans only estimated by their estimate, then the rest.
    auto order = [](const plan_result& x) { return x.ok() ? 0 : x.estimated_only() ? 1 : 2; };
    std::stable_sort(results.begin(), results.end(), [&](const plan_result& a, const plan_result& b) {
        if (order(a) != order(b)) return order(a) < order(b);
        if (a.ok() && rank_key(a, rank) != rank_key(b, rank)) return rank_key(a, rank) < rank_key(b, rank);
        if (a.ok() && a.iteration_s != b.iteration_s) return a.iteration_s < b.iteration_s;
        if (a.estimated_only()) return a.estimate_s < b.estimate_s;
        return false;
    });
    r.results = std::move(results);
    if (r.results.empty() || !r.results.front().ok()) return r;
    const plan_result& best = r.results.front();
    r.why.push_back("best: " + label(best.cand->plan) + ", " + format_time(best.iteration_s) + " per iteration, " +
                    format_number(best.samples_per_s, 4) + " samples/s, MFU " + pct(best.mfu));
    if (rank != "time")
        r.why.push_back("ranked by " + std::string(rank == "energy" ? "energy per iteration" : "energy-delay product") +
                        ": it uses " + format_energy(best.joules) + " per iteration at " + format_power(best.watts) +
                        (r.results.size() > 1 && r.results[1].ok()
                             ? ", the runner-up " + format_energy(r.results[1].joules) + " in " +
                                   format_time(r.results[1].iteration_s)
                             : std::string()));
    else if (r.results.size() > 1 && r.results[1].ok())
        r.why.push_back("it is " + wins_by(best, r.results[1]));
    // Plain data parallelism: every chip a replica.
    const plan_result* dp_only = nullptr;
    for (const auto& x : r.results)
        if (x.ok() && x.cand->plan.tp == 1 && x.cand->plan.pp == 1 && (!dp_only)) dp_only = &x;
    if (best.cand->plan.tp == 1 && best.cand->plan.pp == 1) {
        r.why.emplace_back("plain data parallelism wins: no model parallelism is needed to fit or to go faster");
    } else if (dp_only && r.results.size() > 1 && dp_only == &r.results[1]) {
        r.why.emplace_back("the runner-up is plain data parallelism");
    } else if (dp_only) {
        r.why.push_back("plain data parallelism (" + label(dp_only->cand->plan) + ") is slower: the best plan is " +
                        wins_by(best, *dp_only));
    } else {
        const plan_candidate* miss = nullptr;
        for (const auto& c : s.space.rejected)
            if (c.plan.tp == 1 && c.plan.pp == 1) miss = &c;
        if (miss)
            r.why.push_back("plain data parallelism (dp=" + std::to_string(miss->plan.dp) +
                            ") does not fit even at microbatch " + std::to_string(miss->plan.microbatch) + " with " +
                            miss->plan.recompute + " recomputation and ZeRO " + std::to_string(miss->plan.zero) +
                            ": it " + miss->rejected + " (" + miss->memory_largest + ")");
        else if (!s.dp_only_reason.empty())
            r.why.push_back("plain data parallelism (dp=" + std::to_string(s.chips) + ") " + s.dp_only_reason);
    }
    // Best throughput at each data-parallel degree (by its estimate where no plan of that degree was simulated).
    std::map<int, const plan_result*> best_at;
    for (const auto& x : r.results)
        if ((x.ok() || x.estimated_only()) && !best_at.count(x.cand->plan.dp)) best_at[x.cand->plan.dp] = &x;
    auto throughput = [](const plan_result* x) { return x->ok() ? x->samples_per_s : x->estimate_samples_per_s; };
    std::map<int, const plan_candidate*> missing;
    for (const auto& c : s.space.rejected)
        if (!best_at.count(c.plan.dp) && !missing.count(c.plan.dp)) missing[c.plan.dp] = &c;
    double top = 0;
    for (const auto& [dp, x] : best_at)
        if (throughput(x) > top) top = throughput(x), r.dp_pays_to = dp;
    std::map<int, std::string> lines;
    for (const auto& [dp, x] : best_at)
        lines[dp] = format_number(throughput(x), 4) + " samples/s" + (x->ok() ? "" : " estimated") + " (" +
                    label(x->cand->plan) + ")";
    for (const auto& [dp, c] : missing) lines[dp] = "does not fit (" + c->rejected + ")";
    for (const auto& [dp, l] : lines) r.by_dp.emplace_back(dp, l);
    return r;
}

/// How far a plan's estimate is from its whole simulation (a rounding error's 1e-16 is none).
double estimate_error(const plan_result& x) {
    const double err = x.estimate_s / x.iteration_s - 1;
    return std::abs(err) < 1e-9 ? 0.0 : err;
}

/// Numbers each estimated plan by its estimate (1: the fastest estimate).
void rank_estimates(std::vector<plan_result>& results) {
    std::vector<plan_result*> by;
    for (auto& x : results)
        if (x.estimate_s > 0) by.push_back(&x);
    std::stable_sort(by.begin(), by.end(), [](auto* a, auto* b) { return a->estimate_s < b->estimate_s; });
    for (size_t k = 0; k < by.size(); ++k) by[k]->estimate_rank = static_cast<int>(k + 1);
}

/// How far the estimates of the plans simulated whole were from their simulations, and where the estimates ranked
/// the simulated best (`results` ranked, best first).
std::string estimate_accuracy(const std::vector<plan_result>& results) {
    double sum = 0, worst = 0;
    const plan_result* worst_plan = nullptr;
    int n = 0;
    for (const auto& x : results) {
        if (!x.ok() || x.estimate_s <= 0) continue;
        const double err = estimate_error(x);
        sum += std::abs(err);
        ++n;
        if (!worst_plan || std::abs(err) > std::abs(worst)) worst = err, worst_plan = &x;
    }
    if (n == 0) return "";
    const plan_result& best = results.front();
    // An estimate this far off (a layer sample whose data fits a faster memory than the model's does) says the
    // ranking of the plans only estimated cannot be trusted either.
    const double trusted = 0.05;
    return "estimates: " + std::to_string(n) + " of the best estimates simulated whole, off by " + pct(sum / n) +
           " on average, at most " + (worst >= 0 ? "+" : "") + pct(worst) + " (" + label(worst_plan->cand->plan) +
           "); the simulated best was the estimate's #" + std::to_string(best.estimate_rank) +
           (std::abs(worst) > trusted ? "; more than " + pct(trusted) +
                                            " off: the plans only estimated may rank wrongly (simulate more whole, "
                                            "--simulate-top, or estimate with every layer, --estimate-layers 0)"
                                      : "");
}

/// "21 plans simulated, 4 do not fit" ("1 plan simulated, 1 does not fit").
std::string plan_counts(const plan_space& space, const std::string& done) {
    const size_t n = space.candidates.size(), rejected = space.rejected.size();
    return std::to_string(n) + (n == 1 ? " plan " : " plans ") + done + ", " + std::to_string(rejected) +
           (rejected == 1 ? " does not fit" : " do not fit");
}

void print_size(std::ostream& out, const plan_options& o, const size_report& r) {
    const system_size& s = *r.size;
    out << (o.scale_param.empty() ? "" : o.scale_param + "=" + s.value + ": ") << s.chips << " chips"
        << (s.capacity > 0 ? ", " + format_bytes(s.capacity) + " per chip" : ", weights streamed") << "; ";
    if (o.simulate_top > 0) {
        const auto whole = std::count_if(r.results.begin(), r.results.end(),
                                         [](const plan_result& x) { return x.estimate_s > 0 && !x.estimated_only(); });
        out << plan_counts(s.space, "estimated") << "; the best " << whole << " simulated whole";
    } else {
        out << plan_counts(s.space, "simulated");
    }
    if (s.retried > 0)
        out << " (" << s.retried
            << " of them added at a smaller micro-batch: the chip mapper found the larger one too big for the "
               "chip's on-chip memory"
            << (s.streamed && o.simulate_top > 0 ? ", or its streamed pass's window for the steps budget" : "") << ")";
    out << "\n";
    if (r.results.empty()) {
        out << "  no plan fits" << (s.space.first_violation.empty() ? "" : " (" + s.space.first_violation + ")")
            << "\n";
        return;
    }
    std::vector<std::vector<std::string>> rows = {
        {"rank", "plan", "iteration", "samples/s", "MFU", "memory/chip", "compute", "exposed comm", "bubble"}};
    int rank = 0;
    for (const auto& x : r.results) {
        if (rank >= o.top) break;
        ++rank;
        if (x.ok())
            rows.push_back({std::to_string(rank), label(x.cand->plan), format_time(x.iteration_s),
                            format_number(x.samples_per_s, 4), pct(x.mfu),
                            s.streamed ? "streamed" : format_bytes(x.cand->memory_bytes), pct(x.compute), pct(x.comm),
                            pct(x.bubble)});
        else if (x.estimated_only())
            rows.push_back({"-", label(x.cand->plan), "not simulated whole", "", "",
                            s.streamed ? "streamed" : format_bytes(x.cand->memory_bytes), "", "", ""});
        else
            rows.push_back({"-", label(x.cand->plan), x.status + ": " + x.error, "", "",
                            s.streamed ? "streamed" : format_bytes(x.cand->memory_bytes), "", "", ""});
        if (o.simulate_top > 0) {  // the estimate, and against a whole simulation its error
            std::string e = x.estimate_s > 0 ? format_time(x.estimate_s) : "";
            if (x.ok() && x.estimate_s > 0) {
                const double err = estimate_error(x);
                e += std::string(" (") + (err >= 0 ? "+" : "") + pct(err) + ")";
            }
            rows.back().push_back(e);
        }
        if (o.rank != "time") {  // ranked by energy: its columns beside the time's
            rows.back().push_back(x.ok() ? format_energy(x.joules) : "");
            rows.back().push_back(x.ok() ? format_power(x.watts) : "");
        }
    }
    if (o.simulate_top > 0) rows.front().push_back("estimate");
    if (o.rank != "time") {
        rows.front().push_back("energy");
        rows.front().push_back("power");
    }
    std::vector<size_t> w(rows.front().size(), 0);
    for (const auto& row : rows)
        for (size_t c = 0; c < row.size(); ++c)
            if (!(row[2].size() > 40 && c == 2)) w[c] = std::max(w[c], row[c].size());
    for (const auto& row : rows) {
        std::string line = " ";
        for (size_t c = 0; c < row.size(); ++c) {
            const bool right = c == 0 || c >= 2;
            const std::string pad(w[c] > row[c].size() ? w[c] - row[c].size() : 0, ' ');
            line += " " + (right ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : ""));
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out << line << "\n";
    }
    if (r.results.size() > static_cast<size_t>(o.top))
        out << "  ... and " << r.results.size() - o.top << " more in plan.json\n";
    for (const auto& w2 : r.why) out << "  " << w2 << "\n";
    if (!r.estimates.empty()) out << "  " << r.estimates << "\n";
    if (r.results.front().ok() && s.capacity > 0) {
        const double used = r.results.front().cand->memory_bytes;
        out << "  memory: the best plan fills " << format_bytes(used) << " of the " << format_bytes(s.capacity)
            << " per chip (" << pct(used / s.capacity) << ")\n";
    }
    // Plans the simulator's own budgets refused (models/core/limits.h) are a limit of tessel, not the hardware's.
    const auto limited = std::count_if(r.results.begin(), r.results.end(),
                                       [](const plan_result& x) { return simulator_limit(x.error); });
    if (limited > 0)
        out << "  not simulated: " << limited << " of " << r.results.size()
            << " plans need more than the simulator's budgets (--limit raises them; a limit of tessel, not the "
               "hardware's verdict)\n";
    if (!r.by_dp.empty()) {
        out << "  best by data-parallel degree:";
        for (size_t i = 0; i < r.by_dp.size(); ++i)
            out << (i ? "; " : " ") << "dp=" << r.by_dp[i].first << " " << r.by_dp[i].second;
        out << "\n  data parallelism pays up to dp=" << r.dp_pays_to;
        const auto more =
            std::find_if(r.by_dp.begin(), r.by_dp.end(), [&](const auto& x) { return x.first > r.dp_pays_to; });
        if (more != r.by_dp.end()) out << "; beyond it (dp=" << more->first << ") " << more->second;
        out << "\n";
    }
}

json size_json(const plan_options& o, const size_report& r) {
    const system_size& s = *r.size;
    json j = {{"chips", s.chips},
              {"capacity_bytes", s.capacity},
              {"weights_streamed", s.streamed},
              {"retried_smaller_microbatch", s.retried}};
    if (!o.scale_param.empty()) j["scale"] = {{"param", o.scale_param}, {"value", s.value}};
    json plans = json::array();
    int rank = 0;
    for (const auto& x : r.results) {
        json p = plan_json(x.cand->plan);
        p["rank"] = x.ok() ? ++rank : 0;
        p["status"] = x.status;
        p["memory_bytes"] = x.cand->memory_bytes;
        if (x.ok()) {
            p["iteration_s"] = x.iteration_s;
            p["samples_per_s"] = x.samples_per_s;
            p["model_flops_utilisation"] = x.mfu;
            p["compute_fraction"] = x.compute;
            p["exposed_communication_fraction"] = x.comm;
            p["bubble_fraction"] = x.bubble;
            p["energy_j"] = x.joules;
            p["average_power_w"] = x.watts;
            p["samples_per_j"] = x.joules > 0 ? x.samples_per_s * x.iteration_s / x.joules : 0.0;
        } else if (!x.estimated_only()) {
            p["error"] = x.error;
        }
        if (x.estimate_s > 0) {
            p["estimate_s"] = x.estimate_s;
            p["estimate_rank"] = x.estimate_rank;
            p["estimate_model_flops_utilisation"] = x.estimate_mfu;
            if (x.ok()) p["estimate_error"] = estimate_error(x);
        }
        p["dir"] = x.dir;
        plans.push_back(p);
    }
    j["plans"] = plans;
    json rej = json::array();
    for (const auto& c : s.space.rejected) {
        json p = plan_json(c.plan);
        p["memory_bytes"] = c.memory_bytes;
        p["reason"] = c.rejected;
        p["largest"] = c.memory_largest;
        rej.push_back(p);
    }
    j["rejected"] = rej;
    if (!r.results.empty() && r.results.front().ok()) j["best"] = label(r.results.front().cand->plan);
    j["why"] = r.why;
    json dps = json::array();
    for (const auto& [dp, l] : r.by_dp) dps.push_back({{"dp", dp}, {"best", l}});
    j["by_dp"] = dps;
    j["data_parallel_pays_up_to"] = r.dp_pays_to;
    if (!r.estimates.empty()) j["estimates"] = r.estimates;
    return j;
}

}  // namespace

std::vector<int> parse_int_list(const std::string& key, const std::string& text) {
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            size_t used = 0;
            const long v = std::stol(item, &used);
            if (used != item.size() || v < 0 || v > (1 << 24)) throw std::invalid_argument(item);
            out.push_back(static_cast<int>(v));
        } catch (const std::exception&) {
            std::string why = key + ": expected whole numbers separated by commas, got '";
            why += text;
            throw input_error(why + "'");
        }
    }
    if (out.empty()) throw input_error(key + ": expected whole numbers separated by commas, got '" + text + "'");
    return out;
}

namespace {

/// One system size at scale value `v`: its plans, with the limits the search used there.
system_size plan_size(const plan_options& o, const std::string& platform_file, const std::string& workload,
                      const split_sets& sets, const plan_limits& limits, const std::string& v) {
    system_size s = load_size(o, platform_file, sets, v);
    plan_limits l = limits;
    if (s.streamed) {  // a weight-streaming cluster is data parallel only (engine/system/weight_streaming.h)
        l.tp = {1};
        l.pp = {1};
        l.zero = {0};  // no chip holds weights or optimizer state: nothing for ZeRO to shard
    }
    s.space = enumerate_plans(workload, sets.workload, s.chips, s.capacity, l);
    s.limits = l;
    auto excludes = [](const std::vector<int>& list, int value) {
        return !list.empty() && std::find(list.begin(), list.end(), value) == list.end();
    };
    if (excludes(l.tp, 1) || excludes(l.pp, 1) || excludes(l.dp, static_cast<int>(s.chips))) {
        s.dp_only_reason = "is outside the search (--dp, --tp or --pp leave it out)";
    } else {
        parallel_plan dp_only = l.base;
        dp_only.dp = static_cast<int>(s.chips);
        const auto broken = plan_violations(dp_only, s.space.target);
        if (!broken.empty()) s.dp_only_reason = "is not a valid plan: " + broken.front();
    }
    if (!s.space.training)
        throw input_error(
            "tessel plan searches training plans: set workload.training (e.g. --set workload.training=adam)");
    return s;
}

/// Why no plan fits, from the smallest rejected plan or the first rule broken (of the last size that has one).
std::string why_none_fits(const std::vector<system_size>& sizes) {
    std::string why;
    for (const auto& s : sizes) {
        const plan_candidate* least = nullptr;
        for (const auto& c : s.space.rejected)
            if (!least || c.memory_bytes < least->memory_bytes) least = &c;
        if (least)
            why = "the smallest, " + label(least->plan) + ", " + least->rejected + " (" + least->memory_largest + ")";
        else if (!s.space.first_violation.empty())
            why = "the rules refuse every combination, e.g. " + s.space.first_violation;
    }
    return why;
}

/// A plan's key among the sweep's results: its parameters as the sweep records them.
std::string plan_id(const plan_options& o, const system_size& s, const parallel_plan& p) {
    std::string id;
    if (!o.scale_param.empty()) id.append(o.scale_param).append("=").append(s.value).append(" ");
    id += "parallel.dp=" + std::to_string(p.dp) + " parallel.tp=" + std::to_string(p.tp) +
          " parallel.pp=" + std::to_string(p.pp) + " parallel.microbatch=" + std::to_string(p.microbatch) +
          " parallel.interleave=" + std::to_string(p.interleave) + " parallel.schedule=" + p.schedule +
          " parallel.recompute=" + p.recompute + " parallel.zero=" + std::to_string(p.zero) + " ";
    return id;
}

/// The id of a plan's estimate run of `run_layers` layers: its plan's and estimate_params'.
std::string estimate_id(const plan_options& o, const system_size& s, const plan_candidate& c, std::int64_t run_layers) {
    std::string id = plan_id(o, s, c.plan);
    for (const auto& [k, v] : estimate_params(o, s, c, run_layers)) id.append(k).append("=").append(v).append(" ");
    return id;
}

/// Results by plan (and scale value), from the sweep's record.
std::map<std::string, sweep::row> read_plan_rows(const std::string& out_dir) {
    std::map<std::string, sweep::row> rows;
    const sweep::results_store store(out_dir, false);
    for (const auto& [key, row] : store.latest()) {
        std::string id;
        for (const auto& [k, v] : row["params"].items()) id += k + "=" + v.get<std::string>() + " ";
        rows[id] = row;
    }
    return rows;
}

/// Whether the chip mapper found plan `row` too big for the chip's on-chip memory: it failed with "does not fit"
/// (every chip mapper's capacity error says so: BSP, TSP, RDU, wafer, the system's own check, or the RDU's "a limit
/// of tessel's mapper" for one op it cannot place), or it ran only by
/// keeping activations off chip (an IPU's streaming memory), which a smaller micro-batch may not need.
bool too_big_for_the_chip(const sweep::row& row, const std::string& out_dir, bool streamed_window) {
    if (row.value("status", "") == "failed") {
        const std::string e = row.value("error", "");
        // (Or a chip mapper that could not place one op: a smaller micro-batch shrinks it too. A window of a
        // streamed iteration is one pass, whose program grows with its micro-batch (the wafer cuts its activations
        // into more pieces): one over the steps budget may be under it at a smaller micro-batch.)
        return e.find("does not fit") != std::string::npos || mapper_limit(e) ||
               (streamed_window && simulator_limit(e));
    }
    plan_result r;
    read_result(r, row, out_dir);
    return r.ok() && r.spilled > 0;
}

/// Adds, for each single-stage plan a chip mapper found too big, the next smaller micro-batch that the rules
/// allow; returns how many plans were added.
size_t add_smaller_microbatches(const plan_options& o, const std::string& workload, const split_sets& sets,
                                const std::map<std::string, sweep::row>& rows, std::vector<system_size>& sizes,
                                const std::string& out_dir, bool window) {
    auto id_of = [&o](const system_size& s, const parallel_plan& p) { return plan_id(o, s, p); };
    size_t added = 0;
    for (auto& s : sizes) {
        std::vector<plan_candidate> more;
        for (const auto& c : s.space.candidates) {
            const parallel_plan& p = c.plan;
            if (p.pp != 1 || p.microbatch <= 1) continue;
            // Other failures are not retried. (An estimate may be two runs, of a layer sample.)
            bool too_big = false;
            for (const std::int64_t run_layers : window ? estimate_runs(o, s, p) : std::vector<std::int64_t>{0}) {
                const auto it = rows.find(window ? estimate_id(o, s, c, run_layers) : id_of(s, p));
                too_big |= it != rows.end() && too_big_for_the_chip(it->second, out_dir, s.streamed && window);
            }
            if (!too_big) continue;
            // The next smaller micro-batch the rules allow, with its estimate: the same search restricted to it.
            for (int mb = p.microbatch / 2; mb >= 1; mb /= 2) {
                parallel_plan q = p;
                q.microbatch = mb;
                const std::string id = id_of(s, q);
                bool known = false;
                for (const auto& d : s.space.candidates) known |= id_of(s, d.plan) == id;
                for (const auto& d : more) known |= id_of(s, d.plan) == id;
                if (known) break;
                plan_limits one = s.limits;
                one.dp = {q.dp};
                one.tp = {q.tp};
                one.pp = {1};
                one.microbatch = {mb};
                one.interleave = {q.interleave};
                one.zero = {q.zero};
                one.recompute = {q.recompute};
                bool found = false;
                for (auto& d : enumerate_plans(workload, sets.workload, s.chips, s.capacity, one).candidates)
                    if (id_of(s, d.plan) == id) {
                        more.push_back(std::move(d));
                        found = true;
                    }
                if (found) break;
            }
        }
        added += more.size();
        s.retried += more.size();
        for (auto& d : more) s.space.candidates.push_back(std::move(d));
    }
    return added;
}

/// Pareto front of throughput against chips: a size's best plan is on it when no size with at most as many
/// chips is as fast.
json pareto_front(const std::vector<size_report>& reports) {
    json front = json::array();
    double fastest = 0;
    std::vector<const size_report*> by_chips;
    by_chips.reserve(reports.size());
    for (const auto& r : reports) by_chips.push_back(&r);
    std::stable_sort(by_chips.begin(), by_chips.end(),
                     [](auto* a, auto* b) { return a->size->chips < b->size->chips; });
    for (const size_report* r : by_chips) {
        if (r->results.empty() || !r->results.front().ok()) continue;
        const plan_result& b = r->results.front();
        if (b.samples_per_s <= fastest) continue;
        fastest = b.samples_per_s;
        front.push_back({{"chips", r->size->chips},
                         {"plan", label(b.cand->plan)},
                         {"samples_per_s", b.samples_per_s},
                         {"samples_per_s_per_chip", b.samples_per_s / static_cast<double>(r->size->chips)}});
    }
    return front;
}

/// The console report: per size, the plans (or, dry, what would be simulated), then the Pareto front.
void print_plan_report(std::ostream& out, const plan_options& o, const std::vector<size_report>& reports,
                       const json& front, const std::string& out_dir) {
    out << "tessel plan: " << o.workload << " on " << o.platform << "\n";
    for (const auto& r : reports) {
        if (o.dry_run) {
            const system_size& s = *r.size;
            out << (o.scale_param.empty() ? "" : o.scale_param + "=" + s.value + ": ") << s.chips << " chips; "
                << plan_counts(s.space, "to simulate") << "\n";
            for (const auto& c : s.space.candidates)
                out << "  " << label(c.plan) << "  "
                    << (s.streamed ? "weights streamed" : format_bytes(c.memory_bytes) + " per chip") << "\n";
            for (const auto& c : s.space.rejected)
                out << "  " << label(c.plan) << "  does not fit: " << c.rejected << "\n";
            continue;
        }
        print_size(out, o, r);
    }
    if (!o.dry_run && front.size() > 1) {
        out << "pareto front (chips: best samples/s, per chip):";
        for (size_t i = 0; i < front.size(); ++i)
            out << (i ? "; " : " ") << front[i]["chips"].get<std::int64_t>() << ": "
                << format_number(front[i]["samples_per_s"].get<double>(), 4) << " ("
                << format_number(front[i]["samples_per_s_per_chip"].get<double>(), 4) << ")";
        out << "\n";
    }
    out << "plans: " << out_dir << "/plan.json (plot: scripts/plot_plan.py " << out_dir << "/plan.json)\n";
}

}  // namespace

int run_plan(const plan_options& o, std::ostream& out, std::ostream& err) {
    if (o.platform.empty()) throw input_error("tessel plan: no platform given (-p platforms/systems/NAME.yaml)");
    if (o.workload.empty()) throw input_error("tessel plan: no workload given (-w gpt2, bert, llama or a file)");
    if (!o.scale_param.empty() && o.scale_values.empty()) throw input_error("--scale " + o.scale_param + ": no values");
    if (o.simulate_top > 0 && o.rank != "time")
        throw input_error("--simulate-top ranks the plans by their estimated iteration time; --rank " + o.rank +
                          " needs every plan simulated whole (leave --simulate-top out)");
    if (o.estimate_layers > 0 && o.simulate_top == 0)
        throw input_error("--estimate-layers says how --simulate-top estimates each plan; add --simulate-top N");
    plan_limits limits = o.limits;
    const split_sets sets = split_user_sets(o, limits);
    const std::string platform_file = o.sweep.resolve_platform ? o.sweep.resolve_platform(o.platform) : o.platform;
    const std::string workload = sweep::absolute_if_file(o.workload);

    std::vector<system_size> sizes;
    const std::vector<std::string> values = o.scale_param.empty() ? std::vector<std::string>{""} : o.scale_values;
    size_t total = 0;
    for (const auto& v : values) {
        system_size s = plan_size(o, platform_file, workload, sets, limits, v);
        total += s.space.candidates.size();
        sizes.push_back(std::move(s));
    }
    if (total == 0) {
        const std::string why = why_none_fits(sizes);
        throw input_error("tessel plan: no parallel plan of '" + o.workload + "' fits on '" + o.platform + "'" +
                          (why.empty() ? "" : ": " + why));
    }
    if (o.estimate_layers > 0)
        for (const auto& s : sizes)
            if (s.space.target.layers == 0)
                throw input_error("--estimate-layers: workload '" + o.workload +
                                  "' has no layers parameter, so its plans are estimated with the whole model "
                                  "(leave --estimate-layers out)");
    if (total > o.max_plans)
        throw input_error(
            "tessel plan: " + std::to_string(total) + " plans fit, more than --max-plans " +
            std::to_string(o.max_plans) +
            "; narrow the search (--tp 1,2,4,8, --pp, --microbatch, --interleave 1) or raise --max-plans");

    const std::string out_dir = o.out_dir.empty() ? "out/plans/" + fs::path(platform_file).stem().string() + "-" +
                                                        fs::path(o.workload).stem().string()
                                                  : o.out_dir;
    fs::create_directories(out_dir);
    const plan_filter every = [](const system_size&, const plan_candidate&) { return true; };
    auto id_of = [&o](const system_size& s, const parallel_plan& p) { return plan_id(o, s, p); };

    // Simulates the plans `keep` takes as a sweep in `dir` (resumable) and returns its rows by plan. With one stage,
    // the search keeps the largest micro-batch its memory estimate fits. A chip mapper may still find it does not
    // fit (the estimate counts a chip's largest memory; an IPU's activations live in its tiles' SRAM): such a plan
    // is simulated again at the next smaller micro-batch (gradient accumulation), round after round, until one fits
    // or one sequence per micro-batch does not either (`retry`).
    int status = 0;
    auto simulate = [&](const std::string& dir, const plan_filter& keep, int window, bool retry) {
        fs::create_directories(dir);
        const std::string spec_file = dir + "/plan_sweep.yaml";
        write_file_atomic(spec_file, sweep_yaml(o, platform_file, workload, sets, sizes, keep, window), "plan sweep",
                          true);
        std::map<std::string, sweep::row> rows;
        while (!o.dry_run) {
            sweep::sweep_options so = o.sweep;
            so.spec_file = spec_file;
            so.out_dir = dir;
            so.computed_params = {"mapper.holds"};  // a value per plan, each from the plan's own sizing
            std::ostringstream sweep_out;
            status = sweep::run_sweep(so, sweep_out, err);
            err << sweep_out.str();
            rows = read_plan_rows(dir);
            if (!retry || status >= 128 || !limits.microbatch.empty()) break;  // a micro-batch the user fixed stays
            const size_t added = add_smaller_microbatches(o, workload, sets, rows, sizes, dir, window > 0);
            if (added == 0) break;
            err << "tessel plan: " << added << " plan" << (added == 1 ? "" : "s")
                << " did not fit the chip's on-chip memory"
                << (window > 0 ? " (or, a streamed pass, the steps budget)" : "") << "; simulating "
                << (added == 1 ? "it" : "them") << " again at a smaller micro-batch\n";
            write_file_atomic(spec_file, sweep_yaml(o, platform_file, workload, sets, sizes, keep, window),
                              "plan sweep", true);
        }
        if (o.dry_run) rows = read_plan_rows(dir);
        return rows;
    };

    // Estimates first (--simulate-top): every plan for a window of its microbatches, then the best whole.
    std::map<std::string, sweep::row> estimates;
    std::set<std::string> chosen;  // plans (by id) simulated whole
    const std::string estimates_dir = out_dir + "/estimates";
    // Plan c's estimate from its runs' rows, if it has them.
    auto estimate_of = [&](plan_result& r, const system_size& s, const plan_candidate& c) {
        const std::vector<std::int64_t> runs = estimate_runs(o, s, c.plan);
        const auto low = estimates.find(estimate_id(o, s, c, runs.front()));
        if (low == estimates.end()) return false;
        const layer_sample sample = estimate_sample(o, s, c.plan);
        if (!sample.active()) {
            read_estimate(r, low->second, nullptr, sample, estimates_dir);
            return true;
        }
        const auto high = estimates.find(estimate_id(o, s, c, runs.back()));
        if (high == estimates.end()) return false;
        read_estimate(r, low->second, &high->second, sample, estimates_dir);
        return true;
    };
    if (o.simulate_top > 0 && !o.dry_run) {
        estimates = simulate(estimates_dir, every, 1, true);
        for (const auto& s : sizes) {
            std::vector<std::pair<double, std::string>> ranked;
            for (const auto& c : s.space.candidates) {
                plan_result e;
                if (!estimate_of(e, s, c)) continue;
                if (e.estimated_only()) ranked.emplace_back(e.estimate_s, id_of(s, c.plan));
            }
            std::stable_sort(ranked.begin(), ranked.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
            for (size_t k = 0; k < ranked.size() && k < static_cast<size_t>(o.simulate_top); ++k)
                chosen.insert(ranked[k].second);
        }
    }
    const plan_filter whole = o.simulate_top > 0 ? plan_filter([&](const system_size& s, const plan_candidate& c) {
        return chosen.count(id_of(s, c.plan)) > 0;
    })
                                                 : every;
    std::map<std::string, sweep::row> rows;
    if (status < 128 && (o.simulate_top == 0 || !chosen.empty()))
        rows = simulate(out_dir, whole, 0, o.simulate_top == 0);

    std::vector<size_report> reports;
    for (const auto& s : sizes) {
        std::vector<plan_result> results;
        for (const auto& c : s.space.candidates) {
            plan_result r;
            r.cand = &c;
            const std::string id = id_of(s, c.plan);
            if (o.simulate_top > 0) {
                estimate_of(r, s, c);
                if (!chosen.count(id)) {
                    results.push_back(std::move(r));
                    continue;
                }
            }
            const auto it = rows.find(id);
            if (it != rows.end()) read_result(r, it->second, out_dir);
            results.push_back(std::move(r));
        }
        if (o.simulate_top > 0) rank_estimates(results);
        reports.push_back(rank_size(s, std::move(results), o.rank));
        if (o.simulate_top > 0) reports.back().estimates = estimate_accuracy(reports.back().results);
    }

    json doc = {{"platform", o.platform}, {"workload", o.workload}, {"sets", o.sets}, {"out_dir", out_dir}};
    json js = json::array();
    for (const auto& r : reports) js.push_back(size_json(o, r));
    doc["sizes"] = js;
    const json front = pareto_front(reports);
    doc["pareto"] = front;
    write_file_atomic(out_dir + "/plan.json", doc.dump(2) + "\n", "plan report", true);

    if (o.json) {
        out << doc.dump(2) << "\n";
        return status;
    }
    print_plan_report(out, o, reports, front, out_dir);
    return status;
}

}  // namespace tessel
