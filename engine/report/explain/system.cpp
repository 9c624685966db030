// The system mapper's explainer: per simulated chip, its time computing, in exposed communication and waiting;
// MFU and hardware FLOP/s per chip; the per-collective table; and the trace's pipeline track per chip.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/mappers/toolkit/percent.h"
#include "engine/report/explain/explainer.h"
#include "engine/system/collectives.h"
#include "engine/system/system_mapper.h"

namespace tessel {

namespace {

using collective_record = system_record::collective_record;

/// The report's `collectives` list: per distinct collective, its calls, mean time and bandwidths.
void report_collectives(const system_record& planned, const mapping& m, const executor::result& r, run_summary& s) {
    // Calls of the same shape (kind, algorithm, size, ranks) are one entry: a tensor-parallel all-reduce recurs
    // per layer (ops of their own names) and microbatch. A call lasts from its first step's start to its last step's
    // end (on the simulated ranks), so waiting for a slower peer counts; the bandwidths follow NCCL-tests.
    struct entry {
        const collective_record* rec = nullptr;  // the first call
        std::uint64_t calls = 0;
        double total = 0;
        std::set<std::uint32_t> ops;
    };
    std::map<std::tuple<int, int, std::uint64_t, int>, entry> by;
    for (const collective_record& c : planned.collectives) {
        if (c.first >= c.end) continue;
        tick start = r.step_start[c.first], end = r.step_end[c.first];
        for (std::uint32_t k = c.first; k < c.end; ++k) {
            start = std::min(start, r.step_start[k]);
            end = std::max(end, r.step_end[k]);
        }
        entry& e = by[{static_cast<int>(c.kind), static_cast<int>(c.algorithm), c.bytes, c.ranks}];
        if (!e.rec) e.rec = &c;
        e.ops.insert(c.op);
        ++e.calls;
        e.total += ticks_to_seconds(end - start);
    }
    std::vector<const entry*> order;
    order.reserve(by.size());
    for (const auto& [key, e] : by) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(), [](const entry* a, const entry* b) { return a->total > b->total; });
    nlohmann::json list = nlohmann::json::array();
    for (const entry* e : order) {
        const collective_record& c = *e->rec;
        const double mean = e->total / static_cast<double>(e->calls);
        const double algbw = mean > 0 ? static_cast<double>(c.bytes) / mean : 0.0;
        list.push_back({{"name", m.prog.op_names[c.op]},
                        {"ops", e->ops.size()},
                        {"kind", name(c.kind)},
                        {"algorithm", name(c.algorithm)},
                        {"ranks", c.ranks},
                        {"bytes", static_cast<double>(c.bytes)},
                        {"calls", e->calls},
                        {"mean_s", mean},
                        {"total_s", e->total},
                        {"algorithm_bandwidth", algbw},
                        {"bus_bandwidth", algbw * bus_bandwidth_factor(c.kind, c.ranks)}});
    }
    s.details["parallel"]["collectives"] = list;
    if (order.empty()) return;
    const nlohmann::json& top = list.front();
    auto count = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    s.notes.push_back("collectives: " + count(planned.collectives.size(), "call") + " of " +
                      count(list.size(), "kind") + "; the longest in all, '" + top["name"].get<std::string>() + "'" +
                      (top["ops"].get<size_t>() > 1 ? " and " + count(top["ops"].get<size_t>() - 1, "op") + " like it"
                                                    : std::string()) +
                      " (" + top["kind"].get<std::string>() + ", " + top["algorithm"].get<std::string>() + ", " +
                      std::to_string(top["ranks"].get<int>()) + " ranks, " + format_bytes(top["bytes"].get<double>()) +
                      "): " + std::to_string(top["calls"].get<std::uint64_t>()) + " x " +
                      format_time(top["mean_s"].get<double>()) + ", bus bandwidth " +
                      format_rate(top["bus_bandwidth"].get<double>(), "B/s"));
}

/// When a pipeline item ran on its chip: from its first step there to its last step's end (its pass and the pass's
/// collectives; with every chip simulated, the other tp ranks' steps of the item are interleaved).
std::pair<tick, tick> item_span(const system_record::pipeline_item& it, const platform::chip_group& cg,
                                const program& p, const executor::result& r) {
    const std::uint32_t lo = cg.first[static_cast<size_t>(it.chip)], hi = lo + cg.components;
    auto on_chip = [&](const endpoint& e) { return e.comp >= lo && e.comp < hi; };
    tick start = r.step_end[it.last];
    for (std::uint32_t s = it.first; s <= it.last; ++s) {
        const step& st = p.steps[s];
        if (st.kind != step_kind::delay && (on_chip(st.at) || (st.kind == step_kind::transfer && on_chip(st.to))))
            start = std::min(start, r.step_start[s]);
    }
    return {start, r.step_end[it.last]};
}

/// Adds a "pipeline" track to each simulated chip's trace process: one slice per pipeline item.
void trace_pipeline(const system_record& planned, const mapping& m, const platform& plat, const executor::result& r) {
    tracer& tr = plat.sim().trace;
    if (!tr.enabled()) return;
    const platform::chip_group& cg = *plat.find_chip_group(planned.chip_group);
    std::map<int, int> track;  // chip -> its pipeline track
    for (const system_record::pipeline_item& it : planned.items) {
        auto [at, fresh] = track.emplace(it.chip, -1);
        if (fresh) {
            const std::string chip = cg.chips[static_cast<size_t>(it.chip)]->name();
            at->second = tr.track(chip, chip + ".pipeline");
        }
        if (at->second < 0) continue;
        const auto [start, end] = item_span(it, cg, m.prog, r);
        tr.slice(at->second, start, end, it.op, it.last);
    }
}

/// A window's iteration (mapper.window): the simulated microbatches' time, and each further microbatch adds one
/// cycle of the pipeline's steady state, the longer of
///  (a) the busiest stage's time per microbatch: the mean over the window of its pipeline items (its slowest
///      simulated chip's), and
///  (b) a microbatch's round trip shared by the microbatches in flight: every stage's time per microbatch plus
///      every pipeline send of one microbatch, over the microbatches the first stage holds (in 1F1B a stage starts a
///      microbatch's backward pass only after it has been through every later stage and back, while the first
///      stage runs pp - 1 others; the interleaved schedule's warm-up holds (2 (pp - 1) + (interleave - 1) pp) /
///      interleave + 1. With sends of microsecond latency between stages of tens of microseconds this, not (a),
///      sets the pace), and
///  (c) the longest pipeline send (a boundary whose link is slower than the stages).
/// The window's fill, drain, gradient reduction and optimizer step are simulated; what the rule leaves out is any
/// change in a pass's time from one microbatch to the next (caches warmed by the one before).
void estimate_iteration(const system_record& planned, const mapping& m, const platform::chip_group& cg,
                        const executor::result& r, run_summary& s) {
    nlohmann::json& par = s.details["parallel"];
    const std::int64_t all = par.value("microbatches", std::int64_t{0});
    const std::int64_t run = par.value("microbatches_simulated", all);
    if (run <= 0 || run >= all) return;
    const std::int64_t per_stage = std::int64_t{par.value("dp", 1)} * par.value("tp", 1);
    const int pp = par.value("pp", 1), interleave = par.value("interleave", 1);
    const double in_flight = par.value("schedule", std::string()) == "interleaved_1f1b"
                                 ? (2.0 * (pp - 1) + (interleave - 1.0) * pp) / interleave + 1
                                 : pp;
    const double window_mbs = static_cast<double>(run);
    std::map<int, double> busy;  // per simulated chip: its items' time
    for (const system_record::pipeline_item& it : planned.items) {
        const auto [start, end] = item_span(it, cg, m.prog, r);
        busy[it.chip] += ticks_to_seconds(end - start);
    }
    std::map<std::int64_t, double> stage_busy;  // per stage: its slowest simulated chip's time per microbatch
    std::map<std::int64_t, int> lanes;          // per stage: its simulated chips (each sends its own share)
    for (const auto& [chip, t] : busy) {
        double& b = stage_busy[chip / per_stage];
        b = std::max(b, t / window_mbs);
        ++lanes[chip / per_stage];
    }
    double per_mb = 0, round_trip = 0;
    std::string pace;
    for (const auto& [stage, b] : stage_busy) {
        round_trip += b;
        if (b > per_mb) {
            per_mb = b;
            pace = "stage " + std::to_string(stage) + "'s pipeline items";
        }
    }
    std::vector<char> is_send(m.prog.op_names.size(), 0);
    for (size_t o = 0; o < m.prog.op_names.size(); ++o)
        is_send[o] = m.prog.op_names[o] == "pipeline.send_forward" || m.prog.op_names[o] == "pipeline.send_backward";
    const int lanes_per_stage = lanes.empty() ? 1 : lanes.begin()->second;
    double longest_send = 0;
    for (std::uint32_t i = 0; i < m.prog.size(); ++i) {
        const step& st = m.prog.steps[i];
        if (st.kind != step_kind::transfer || st.op >= is_send.size() || !is_send[st.op]) continue;
        const double t = ticks_to_seconds(r.step_end[i] - r.step_start[i]);
        round_trip += t / window_mbs / lanes_per_stage;
        longest_send = std::max(longest_send, t);
    }
    round_trip /= in_flight;
    if (round_trip > per_mb) {
        per_mb = round_trip;
        pace = "a microbatch's round trip through the stages and their sends, over the " + format_number(in_flight, 3) +
               " in flight";
    }
    if (longest_send > per_mb) {
        per_mb = longest_send;
        pace = "a pipeline send";
    }
    const double window = ticks_to_seconds(r.duration());
    const double iteration = window + static_cast<double>(all - run) * per_mb;
    // The whole iteration's model FLOPs over its estimated time (the window's MFU is over the window's FLOPs).
    const double share = window_mbs / static_cast<double>(all);
    par["estimate"] = {
        {"iteration_s", iteration},
        {"window_s", window},
        {"per_microbatch_s", per_mb},
        {"microbatches", all},
        {"microbatches_simulated", run},
        {"paced_by", pace},
        {"model_flops_utilisation", par.value("model_flops_utilisation", 0.0) * window / iteration / share}};
    s.notes.push_back("estimate: the first " + std::to_string(run) + " of " + std::to_string(all) +
                      " microbatches per pipeline simulated, " + format_time(window) + "; each further one adds " +
                      format_time(per_mb) + " (" + pace + "): about " + format_time(iteration) +
                      (par.value("training", true) ? " per iteration" : " per inference step") +
                      " (mapper.window=0 simulates it whole)");
}

void explain_system(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) {
    const system_record* planned = m.record_as<system_record>();
    if (!planned) return;
    const platform::chip_group& cg = *plat.find_chip_group(planned->chip_group);
    const program& p = m.prog;
    const double length = static_cast<double>(r.duration());
    // Per chip: time computing, time moving data while not computing, and the rest (bubble, waiting).
    struct split {
        double compute = 0, comm = 0;
        std::vector<std::pair<tick, tick>> xfer;
        bool simulated = false;
    };
    std::vector<split> chips(cg.chips.size());
    auto chip_of = [&](std::uint32_t comp) -> int {
        const auto it = std::upper_bound(cg.first.begin(), cg.first.end(), comp);
        if (it == cg.first.begin()) return -1;
        const size_t c = static_cast<size_t>(it - cg.first.begin() - 1);
        return comp < cg.first[c] + cg.components ? static_cast<int>(c) : -1;
    };
    std::vector<std::vector<std::pair<tick, tick>>> busy(cg.chips.size());
    for (std::uint32_t i = 0; i < p.size(); ++i) {
        const step& st = p.steps[i];
        const std::pair<tick, tick> iv{r.step_start[i], r.step_end[i]};
        if (st.kind == step_kind::compute) {
            const int c = chip_of(st.at.comp);
            if (c >= 0) {
                chips[static_cast<size_t>(c)].simulated = true;
                busy[static_cast<size_t>(c)].push_back(iv);
            }
        } else if (st.kind == step_kind::transfer) {
            // Communication is data crossing between chips (collectives, pipeline sends); a chip's own loads
            // and stores (an RDU's HBM to its memory units) are part of its work.
            const int a = chip_of(st.at.comp), b = chip_of(st.to.comp);
            if (a == b) continue;
            for (const int c : {a, b})
                if (c >= 0) chips[static_cast<size_t>(c)].xfer.push_back(iv);
        }
    }
    // Exposed communication: transfer time not covered by the chip's compute.
    auto merged = [](std::vector<std::pair<tick, tick>> v) {
        std::sort(v.begin(), v.end());
        std::vector<std::pair<tick, tick>> out;
        for (const auto& iv : v) {
            if (!out.empty() && iv.first <= out.back().second)
                out.back().second = std::max(out.back().second, iv.second);
            else
                out.push_back(iv);
        }
        return out;
    };
    nlohmann::json per_chip = nlohmann::json::array();
    double sum_compute = 0, sum_comm = 0;
    int n = 0;
    for (size_t c = 0; c < chips.size(); ++c) {
        split& sp = chips[c];
        if (!sp.simulated) continue;
        // Compute time is the union of the chip's compute intervals: a spatial chip runs many at once.
        const auto comp = merged(busy[c]);
        sp.compute = 0;
        for (const auto& b : comp) sp.compute += static_cast<double>(b.second - b.first);
        // Both lists are sorted and disjoint: one sweep pairs each transfer interval with the compute it meets.
        double exposed = 0;
        size_t from = 0;
        for (const auto& x : merged(sp.xfer)) {
            while (from < comp.size() && comp[from].second <= x.first) ++from;
            double covered = 0;
            for (size_t k = from; k < comp.size() && comp[k].first < x.second; ++k)
                covered += static_cast<double>(std::min(x.second, comp[k].second) - std::max(x.first, comp[k].first));
            exposed += static_cast<double>(x.second - x.first) - covered;
        }
        sp.comm = exposed;
        sum_compute += sp.compute;
        sum_comm += exposed;
        ++n;
        per_chip.push_back({{"chip", cg.chips[c]->name()},
                            {"compute_fraction", sp.compute / length},
                            {"exposed_communication_fraction", exposed / length},
                            {"idle_fraction", std::max(0.0, 1 - (sp.compute + exposed) / length)}});
    }
    nlohmann::json& par = s.details["parallel"];
    par["per_chip"] = per_chip;
    trace_pipeline(*planned, m, plat, r);
    report_collectives(*planned, m, r, s);
    const double chips_total = static_cast<double>(cg.chips.size());
    // A chip's peak is its fastest compute unit's (the tensor cores), not the sum with its other units: that is
    // the peak MFU is quoted against (Megatron-LM: 312 TFLOP/s per A100). The resource table holds the simulated
    // chips only (mapping::represented).
    double peak_simulated = 0;
    for (const resource_usage& u : s.resources)
        if (u.cls == resource_class::compute && u.work_unit == "FLOP")
            peak_simulated = std::max(peak_simulated, u.peak_rate * u.units);
    const double peak_per_chip =
        peak_simulated > 0 ? peak_simulated / par["simulated_chips"].get<double>() : s.peak_flops / chips_total;
    par["peak_flops_per_chip"] = peak_per_chip;
    const double secs = ticks_to_seconds(r.duration());
    par["iteration_s"] = secs;
    par["model_flops_utilisation"] = peak_per_chip > 0 ? s.flops / secs / (peak_per_chip * chips_total) : 0;
    par["hardware_flops_utilisation"] =
        peak_per_chip > 0 ? par["hardware_flops"].get<double>() / secs / (peak_per_chip * chips_total) : 0;
    par["model_tflops_per_chip"] = s.flops / secs / chips_total / 1e12;
    par["hardware_tflops_per_chip"] = par["hardware_flops"].get<double>() / secs / chips_total / 1e12;
    estimate_iteration(*planned, m, cg, r, s);
    if (n > 0) {
        const double c = sum_compute / n / length, x = sum_comm / n / length;
        const double rest = 1 - c - x < 1e-9 ? 0 : 1 - c - x;  // not a rounding error's 5e-15%
        s.notes.push_back("per simulated chip (mean of " + std::to_string(n) + "): compute " + fmt_percent(c) +
                          ", exposed communication " + fmt_percent(x) + ", bubble and waiting " + fmt_percent(rest) +
                          "; MFU " + fmt_percent(par["model_flops_utilisation"].get<double>()) +
                          ", hardware FLOP/s per chip " +
                          format_number(par["hardware_tflops_per_chip"].get<double>(), 3) + " TFLOP/s");
    }
}

}  // namespace

// The system's explainer does not read the chips' per-kernel records: the run does not keep them.
TESSEL_REGISTER_EXPLAINER(explainer_info{"system", explain_system, false});

}  // namespace tessel
