// The kernels mapper's explainer: each kernel's time, plan and bound (from the device's per-kernel records), the
// time by bound and by op class, per layer (repeated blocks by their common stem) and the longest kernels.
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "engine/mappers/kernel_mapper.h"
#include "engine/report/explain/explainer.h"

namespace tessel {

namespace {

void explain_kernels(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) {
    const kernel_mapping_record* device = m.record_as<kernel_mapping_record>();
    if (!device) return;
    const kernel_device* dev = plat.comp(device->device).kernels();
    std::unordered_map<std::uint64_t, const kernel_record*> by_step;
    for (const auto& rec : dev->records()) by_step[rec.step] = &rec;
    nlohmann::json ks = nlohmann::json::array();
    std::map<std::string, double> by_bound, by_class;
    std::vector<std::pair<std::string, double>> layers;  // in first-seen order
    std::unordered_map<std::string, size_t> layer_index;
    std::vector<std::pair<double, std::string>> longest;
    const nlohmann::json& planned = m.details.contains("kernels") ? m.details["kernels"] : nlohmann::json::array();
    for (const auto& k : planned) {
        const std::uint64_t step = k["step"].get<std::uint64_t>();
        const auto it = by_step.find(step);
        if (it == by_step.end()) continue;
        const kernel_record& rec = *it->second;
        const double t = ticks_to_seconds(r.step_end[step] - r.step_start[step]);
        nlohmann::json e = k;
        e["time_s"] = t;
        e["plan"] = rec.plan;
        e["bound"] = rec.bound;
        e["compute_s"] = rec.compute_s;
        e["cache_s"] = rec.cache_s;
        e["dram_s"] = rec.dram_s;
        e["overhead_s"] = rec.overhead_s;
        e["dram_bytes"] = rec.dram_bytes;
        e["cache_hit_bytes"] = rec.hit_bytes;
        ks.push_back(e);
        by_bound[rec.bound] += t;
        by_class[k["class"].get<std::string>()] += t;
        const std::string layer = layer_of(k["name"].get<std::string>());
        const auto li = layer_index.find(layer);
        if (li == layer_index.end()) {
            layer_index[layer] = layers.size();
            layers.emplace_back(layer, t);
        } else {
            layers[li->second].second += t;
        }
        longest.emplace_back(t, k["name"].get<std::string>() + " (" + rec.plan + ", " + rec.bound + " bound)");
    }
    s.details["kernels"] = ks;
    nlohmann::json lj = nlohmann::json::array();
    for (const auto& [name, t] : layers) lj.push_back({{"layer", name}, {"time_s", t}});
    s.details["layers"] = lj;
    s.details["time_by_bound"] = by_bound;
    s.details["time_by_class"] = by_class;
    const double total = ticks_to_seconds(r.duration());
    auto pct = [&](double t) { return format_number(total > 0 ? 100 * t / total : 0, 3) + "%"; };
    std::string line = "time by what bounds each kernel:";
    for (const auto& [b, t] : by_bound) line += " " + b + " " + pct(t);
    s.notes.push_back(line);
    // The run is bound by what bounds most of its kernel time: compute (the SM or MXU pipes), memory (DRAM or the
    // on-chip cache) or latency (launch overheads and dependent row passes). A resource's busy time cannot say
    // it: a launch-bound batch-1 run keeps no unit busy, and every kernel occupies the SMs however it is bound.
    std::map<std::string, double> by_kind;
    for (const auto& [b, t] : by_bound)
        by_kind[b == "compute" ? "compute" : (b == "dram" || b == "cache") ? "memory" : "latency"] += t;
    double most = 0;
    for (const auto& [k, t] : by_kind)
        if (t > most) most = t, s.bound_by = k;
    line = "time by op class:";
    for (const auto& [c, t] : by_class) line += " " + c + " " + pct(t);
    s.notes.push_back(line);
    // Layers: repeated blocks ("h.0" .. "h.11") summarised by their common stem.
    std::map<std::string, std::vector<double>> stems;
    std::vector<std::string> stem_order;
    for (const auto& [name, t] : layers) {
        const size_t dot = name.rfind('.');
        const bool numbered = dot != std::string::npos && dot + 1 < name.size() &&
                              std::all_of(name.begin() + static_cast<long>(dot) + 1, name.end(),
                                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
        const std::string stem = numbered ? name.substr(0, dot) + ".N" : name;
        if (!stems.count(stem)) stem_order.push_back(stem);
        stems[stem].push_back(t);
    }
    for (const auto& stem : stem_order) {
        const auto& v = stems[stem];
        double sum = 0, lo = v.front(), hi = v.front();
        for (double x : v) {
            sum += x;
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        if (v.size() == 1)
            s.notes.push_back("layer " + stem + ": " + format_time(sum) + " (" + pct(sum) + ")");
        else
            s.notes.push_back("layer " + stem + ": " + std::to_string(v.size()) + " layers, " +
                              format_time(sum / static_cast<double>(v.size())) + " each (" + format_time(lo) + " to " +
                              format_time(hi) + "), " + pct(sum) + " in all");
    }
    std::stable_sort(longest.begin(), longest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < longest.size() && i < 5; ++i)
        s.notes.push_back("kernel " + format_time(longest[i].first) + ": " + longest[i].second);
}

}  // namespace

TESSEL_REGISTER_EXPLAINER(explainer_info{"kernels", explain_kernels});

}  // namespace tessel
