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
        // The item runs from its first step on this chip to its last step's end (its pass and the pass's
        // collectives; with every chip simulated, the other tp ranks' steps of the item are interleaved).
        const std::uint32_t lo = cg.first[static_cast<size_t>(it.chip)], hi = lo + cg.components;
        auto on_chip = [&](const endpoint& e) { return e.comp >= lo && e.comp < hi; };
        tick start = r.step_end[it.last], end = r.step_end[it.last];
        for (std::uint32_t s = it.first; s <= it.last; ++s) {
            const step& st = m.prog.steps[s];
            if (st.kind != step_kind::delay && (on_chip(st.at) || (st.kind == step_kind::transfer && on_chip(st.to))))
                start = std::min(start, r.step_start[s]);
        }
        tr.slice(at->second, start, end, it.op, it.last);
    }
}

void explain_system(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) {
    const system_record* planned = m.record_as<system_record>();
    if (!planned) return;
    const platform::chip_group& cg = *plat.find_chip_group(planned->chip_group);
    const program& p = m.prog;
    const double T = static_cast<double>(r.duration());
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
                            {"compute_fraction", sp.compute / T},
                            {"exposed_communication_fraction", exposed / T},
                            {"idle_fraction", std::max(0.0, 1 - (sp.compute + exposed) / T)}});
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
    if (n > 0) {
        const double c = sum_compute / n / T, x = sum_comm / n / T;
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
