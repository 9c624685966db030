#include "engine/report/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <stdexcept>

namespace tessel {

std::string format_throughput(double per_second) {
    char buf[64];
    std::snprintf(buf, sizeof buf, per_second >= 1000 ? "%.0f" : "%.4g", per_second);
    return buf;
}

namespace {
/// Where a resource's dynamic energy is reported: memory splits into on-chip (SRAM) and off-chip (DRAM).
energy_part part_of(const resource_usage& u) {
    switch (u.cls) {
        case resource_class::compute:
            return energy_part::compute;
        case resource_class::memory:
            return u.off_chip ? energy_part::dram : energy_part::sram;
        case resource_class::network:
            return energy_part::network;
        case resource_class::sync:
            return energy_part::sync;
    }
    return energy_part::compute;
}

/// Every action a kind charges in usage() it also spends in the ledger as it serves the transaction: the two
/// sums agree up to rounding, or a kind forgot one side. The two sides add the same terms in different orders, so
/// rounding grows with their count: a CS-2 cluster's 7B pass (tens of millions of packets) differed by 2.5e-9 of
/// its 2.2 kJ. A forgotten side is a whole kind of action, far above 1e-6.
void check_ledger(const energy_ledger& ledger, const energy_ledger::parts& charged) {
    const energy_ledger::parts spent = ledger.total();
    for (size_t i = 0; i < energy_part_count; ++i) {
        const double tol = 1e-6 * std::max(std::abs(charged[i]), std::abs(spent[i])) + 1e-18;
        if (std::abs(charged[i] - spent[i]) > tol)
            throw std::logic_error(std::string("energy ledger disagrees with the components' usage on ") +
                                   energy_part_name(static_cast<energy_part>(i)) + ": " + format_number(spent[i], 12) +
                                   " J spent by op, " + format_number(charged[i], 12) + " J charged");
    }
}

/// An op's name with every numbered part of its path as N ("encoder.layer.7.output.dense" ->
/// "encoder.layer.N.output.dense"): the same op of every repeated layer.
std::string op_family(const std::string& name) {
    std::string out;
    size_t begin = 0;
    while (begin <= name.size()) {
        size_t end = name.find('.', begin);
        if (end == std::string::npos) end = name.size();
        const bool number =
            end > begin && std::all_of(name.begin() + static_cast<long>(begin), name.begin() + static_cast<long>(end),
                                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
        out += (begin ? "." : "") + (number ? std::string("N") : name.substr(begin, end - begin));
        begin = end + 1;
    }
    return out;
}

struct op_family_energy {
    std::string family;
    size_t ops = 0;
    double joules = 0;
};

/// The `n` op families (op_family) that spent the most dynamic energy, most first (ties in program order).
std::vector<op_family_energy> top_energy_ops(const run_summary::energy_report& e, size_t n) {
    std::vector<op_family_energy> v;
    std::map<std::string, size_t> index;
    for (const auto& o : e.by_op) {
        const std::string f = op_family(o.name);
        const auto [it, fresh] = index.emplace(f, v.size());
        if (fresh) v.push_back({f, 0, 0});
        v[it->second].ops += 1;
        v[it->second].joules += o.total();
    }
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.joules > b.joules; });
    if (v.size() > n) v.resize(n);
    return v;
}

bool in_ranges(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& ranges, std::uint32_t id) {
    for (const auto& [first, end] : ranges)
        if (id >= first && id < end) return true;
    return false;
}
}  // namespace

double run_summary::energy_report::dynamic() const {
    double j = 0;
    for (double d : dynamic_joules) j += d;
    return j;
}

double run_summary::energy_report::op_energy::total() const {
    double j = 0;
    for (double d : joules) j += d;
    return j;
}

std::vector<energy_ledger::parts> energy_weights(
    const platform& plat, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& represented,
    double traffic_scale) {
    const auto& comps = plat.sim().components();
    std::vector<energy_ledger::parts> w(comps.size(), energy_ledger::parts{1, 1, 1, 1, 1});
    std::vector<std::pair<std::uint32_t, std::uint32_t>> chips;  // [first, end) of every chip
    for (const auto& cg : plat.chip_groups())
        for (std::uint32_t f : cg.first) chips.emplace_back(f, f + cg.components);
    struct members {
        double simulated = 0, stand_ins = 0;
    };
    std::map<std::string, members> groups;
    for (const component* c : comps)
        if (c)
            (in_ranges(represented, c->id()) ? groups[group_name(c->path())].stand_ins
                                             : groups[group_name(c->path())].simulated) += 1;
    for (const component* c : comps) {
        if (!c) continue;
        const members& g = groups[group_name(c->path())];
        const double scale = g.simulated > 0 ? (g.simulated + g.stand_ins) / g.simulated : 1.0;
        energy_ledger::parts& cw = w[c->id()];
        cw.fill(scale);
        // A single-chip platform is all chip; a system's own network carried the simulated ranks' traffic.
        if (!chips.empty() && !in_ranges(chips, c->id()))
            cw[static_cast<size_t>(energy_part::network)] *= traffic_scale;
    }
    return w;
}

run_summary summarise(const platform& plat, const executor::result& r, const program& p, double flops, double samples,
                      const std::vector<std::pair<std::uint32_t, std::uint32_t>>& represented, double traffic_scale) {
    run_summary s;
    s.platform = plat.title();
    s.validation = plat.validation();
    s.workload = p.name;
    s.sim_seconds = ticks_to_seconds(r.duration());
    s.samples = samples;
    s.flops = flops;
    s.steps = p.steps.size();
    s.packets = r.packets;
    s.events = r.events;
    s.tdp_watts = plat.tdp_watts();
    for (const auto& cg : plat.chip_groups()) s.chips += static_cast<std::int64_t>(cg.chips.size());
    s.activations = r.activations;
    const traffic_spec& tr = p.traffic;
    const latency_histogram& h = tr.enabled() ? r.measured_latency : r.latency;
    s.latency.packets = h.count();
    s.latency.mean = ticks_to_seconds(static_cast<tick>(std::llround(h.mean_ticks())));
    s.latency.p50 = ticks_to_seconds(h.quantile_ticks(0.5));
    s.latency.p99 = ticks_to_seconds(h.quantile_ticks(0.99));
    s.latency.max = ticks_to_seconds(h.max_ticks());
    s.latency.cycle = ticks_to_seconds(tr.enabled() ? tr.cycle : plat.clock().cycles(1));
    if (tr.enabled()) {
        s.traffic_pattern = tr.pattern;
        const double window_cycles =
            static_cast<double>(tr.measure_end - tr.measure_begin) / static_cast<double>(tr.cycle);
        const double node_cycles = window_cycles * tr.nodes;
        s.offered_load = static_cast<double>(r.measured_packets * tr.packet_flits) / node_cycles;
        s.accepted_load = static_cast<double>(r.window_flits_delivered) / node_cycles;
    }

    std::vector<resource_usage> all;
    double represented_peak = 0;  // the idle stand-ins' compute still counts in the system's peak
    const std::vector<energy_ledger::parts> weight = energy_weights(plat, represented, traffic_scale);
    // A system's chip groups, then what lies outside every chip; a component's entry by its id.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> chip_of;  // [first, end) -> group, as (first, group)
    for (const auto& cg : plat.chip_groups()) {
        s.energy.by_chip_group.push_back({cg.name, static_cast<std::int64_t>(cg.chips.size()), {}, 0});
        for (std::uint32_t f : cg.first)
            chip_of.emplace_back(f, static_cast<std::uint32_t>(s.energy.by_chip_group.size() - 1));
    }
    if (!s.energy.by_chip_group.empty()) s.energy.by_chip_group.push_back({"outside chips", 0, {}, 0});
    auto group_of = [&](std::uint32_t id) -> run_summary::energy_report::chip_group_energy* {
        if (s.energy.by_chip_group.empty()) return nullptr;
        for (const auto& [first, g] : chip_of)
            if (id >= first && id < first + plat.chip_groups()[g].components) return &s.energy.by_chip_group[g];
        return &s.energy.by_chip_group.back();
    };
    for (component* c : plat.sim().components()) {
        if (!c) continue;
        std::vector<resource_usage> mine;
        c->usage(mine);
        const bool stand_in = in_ranges(represented, c->id());
        run_summary::energy_report::chip_group_energy* cg = group_of(c->id());
        for (const auto& u : mine) {
            s.energy.static_watts += u.static_watts;
            const size_t part = static_cast<size_t>(part_of(u));
            s.energy.dynamic_joules[part] += u.dynamic_joules * weight[c->id()][part];
            if (cg) {
                cg->dynamic_joules[part] += u.dynamic_joules * weight[c->id()][part];
                cg->static_watts += u.static_watts;
            }
            if (stand_in && u.cls == resource_class::compute) represented_peak += u.peak_rate * u.units;
        }
        if (!stand_in) all.insert(all.end(), mine.begin(), mine.end());
    }
    check_ledger(plat.sim().energy, s.energy.dynamic_joules);
    for (size_t op = 0; op < plat.sim().energy.by_op().size(); ++op) {
        const energy_ledger::parts& j = plat.sim().energy.by_op()[op];
        run_summary::energy_report::op_energy e{op < p.op_names.size() ? p.op_names[op] : "op " + std::to_string(op),
                                                j};
        if (e.total() != 0) s.energy.by_op.push_back(std::move(e));
    }
    s.energy.peak_window_s = ticks_to_seconds(plat.sim().energy.bin_ticks());
    s.energy.peak_watts = plat.sim().energy.peak_watts() + s.energy.static_watts;
    const std::string prefix = std::string(plat.name()) + ".";
    std::map<std::string, size_t> index;
    for (auto u : all) {
        if (u.name.rfind(prefix, 0) == 0) u.name = u.name.substr(prefix.size());
        // Physical bound, per resource: no unit finishes its work faster than at peak rate.
        const double bound = std::max(u.ideal_max, u.units > 0 ? u.ideal_seconds / u.units : 0.0);
        if (bound > s.bound_seconds && u.cls != resource_class::sync) {
            s.bound_seconds = bound;
            s.bound_resource = u.name;
        }
        const std::string g = group_name(u.name);
        const auto it = index.find(g);
        if (it == index.end()) {
            u.name = g;
            index[g] = s.resources.size();
            s.resources.push_back(u);
        } else {
            resource_usage& a = s.resources[it->second];
            a.work += u.work;
            a.units += u.units;
            a.ideal_seconds += u.ideal_seconds;
            a.ideal_max = std::max(a.ideal_max, u.ideal_max);
            a.busy_seconds += u.busy_seconds;
            a.busy_max = std::max(a.busy_max, u.busy_max);
            a.dynamic_joules += u.dynamic_joules;
            a.static_watts += u.static_watts;
        }
    }
    s.peak_flops = represented_peak;
    for (const auto& u : s.resources)
        if (u.cls == resource_class::compute) s.peak_flops += u.peak_rate * u.units;
    // A simulated time below the physical bound would mean a model ran faster than its hardware.
    if (s.sim_seconds + 1e-15 < s.bound_seconds * (1 - 1e-9))
        throw std::logic_error("physical bound violated: simulated " + format_time(s.sim_seconds) + " but " +
                               s.bound_resource + " alone needs " + format_time(s.bound_seconds) + " at peak rate");
    if (s.joules() > 0 && s.energy.static_watts == 0)
        s.notes.emplace_back(
            "energy: no static power is declared on this platform, so its joules and samples/J count "
            "dynamic energy only and do not compare with platforms that declare it (docs/energy.md)");
    if (s.tdp_watts > 0 && s.average_watts() > s.tdp_watts * (1 + run_summary::tdp_margin))
        s.notes.push_back("average power " + format_power(s.average_watts()) + " is above the platform's TDP of " +
                          format_power(s.tdp_watts) + " by more than " +
                          format_number(100 * run_summary::tdp_margin, 3) +
                          "%: a real chip would lower its clock; tessel does not model power capping");
    std::stable_sort(s.resources.begin(), s.resources.end(),
                     [](const resource_usage& a, const resource_usage& b) { return a.busy_max > b.busy_max; });
    if (!s.resources.empty() && s.resources.front().busy_max > 0)
        s.bound_by = resource_class_name(s.resources.front().cls);
    else
        s.bound_by = "latency";
    return s;
}

void record_stats(const run_summary& s, stats_registry& st) {
    stat_group& run = st.run();
    run.scalar("sim_time") = s.sim_seconds;
    run.scalar("energy") = s.joules();
    for (size_t p = 0; p < energy_part_count; ++p)
        run.scalar(std::string("energy_") + energy_part_name(static_cast<energy_part>(p))) = s.energy.dynamic_joules[p];
    run.scalar("energy_static") = s.energy.static_watts * s.sim_seconds;
    run.scalar("average_power") = s.average_watts();
    run.scalar("peak_power") = s.energy.peak_watts;
    run.scalar("peak_window") = s.energy.peak_window_s;
    stat_table_rows t;
    t.name = "energy_by_op";
    for (size_t p = 0; p < energy_part_count; ++p) {
        const std::string part = energy_part_name(static_cast<energy_part>(p));
        t.columns.push_back({part, "J", "dynamic energy of the op's " + part + " actions"});
    }
    t.columns.push_back({"total", "J", "the op's dynamic energy"});
    for (const auto& o : s.energy.by_op) {
        std::vector<double> v(o.joules.begin(), o.joules.end());
        v.push_back(o.total());
        t.rows.emplace_back(o.name, std::move(v));
    }
    st.add_table(std::move(t));
}

nlohmann::json run_summary::to_json() const {
    nlohmann::json j;
    j["platform"] = platform;
    j["validation"] = validation;
    j["workload"] = workload;
    j["sim_time_s"] = sim_seconds;
    j["samples"] = samples;
    j["throughput_per_s"] = throughput();
    if (steady_throughput > 0) j["steady_throughput_per_s"] = steady_throughput;
    j["flops"] = flops;
    j["achieved_flops_per_s"] = achieved_flops();
    j["peak_flops_per_s"] = peak_flops;
    j["fraction_of_peak"] = peak_flops > 0 ? achieved_flops() / peak_flops : 0.0;
    j["physical_bound_s"] = bound_seconds;
    j["physical_bound_resource"] = bound_resource;
    j["bound_by"] = bound_by;
    j["steps"] = steps;
    j["packets"] = packets;
    j["events"] = events;
    const double cyc = latency.cycle > 0 ? latency.cycle : 1;
    j["latency_packets"] = latency.packets;
    j["latency_mean_s"] = latency.mean;
    j["latency_p50_s"] = latency.p50;
    j["latency_p99_s"] = latency.p99;
    j["latency_max_s"] = latency.max;
    j["latency_mean_cycles"] = latency.mean / cyc;
    j["latency_p50_cycles"] = latency.p50 / cyc;
    j["latency_p99_cycles"] = latency.p99 / cyc;
    j["latency_max_cycles"] = latency.max / cyc;
    j["traffic_pattern"] = traffic_pattern;
    j["offered_load"] = offered_load;
    j["accepted_load"] = accepted_load;
    nlohmann::json res = nlohmann::json::array();
    for (const auto& u : resources) {
        nlohmann::json r;
        r["name"] = u.name;
        r["kind"] = u.kind;
        r["class"] = resource_class_name(u.cls);
        r["units"] = u.units;
        r["work"] = u.work;
        r["work_unit"] = u.work_unit;
        r["busy_max_s"] = u.busy_max;
        r["utilisation_max"] = sim_seconds > 0 ? u.busy_max / sim_seconds : 0.0;
        r["utilisation_mean"] = sim_seconds > 0 && u.units > 0 ? u.busy_seconds / (u.units * sim_seconds) : 0.0;
        r["fraction_of_peak"] =
            sim_seconds > 0 && u.units > 0 && u.peak_rate > 0 ? u.work / (u.peak_rate * u.units * sim_seconds) : 0.0;
        r["energy_j"] = u.dynamic_joules + u.static_watts * sim_seconds;
        res.push_back(r);
    }
    j["resources"] = res;
    j["energy_j"] = joules();
    j["average_power_w"] = average_watts();
    j["tdp_w"] = tdp_watts;
    if (chips > 0) j["average_power_per_chip_w"] = average_watts() / static_cast<double>(chips);
    nlohmann::json by = nlohmann::json::object();
    for (size_t p = 0; p < energy_part_count; ++p)
        by[energy_part_name(static_cast<energy_part>(p))] = energy.dynamic_joules[p];
    by["static"] = energy.static_watts * sim_seconds;
    j["energy_by_part_j"] = by;
    if (!energy.by_chip_group.empty()) {
        nlohmann::json groups = nlohmann::json::array();
        for (const auto& g : energy.by_chip_group) {
            nlohmann::json e;
            e["group"] = g.name;
            e["chips"] = g.chips;
            double dynamic = 0;
            nlohmann::json parts = nlohmann::json::object();
            for (size_t p = 0; p < energy_part_count; ++p) {
                parts[energy_part_name(static_cast<energy_part>(p))] = g.dynamic_joules[p];
                dynamic += g.dynamic_joules[p];
            }
            parts["static"] = g.static_watts * sim_seconds;
            const double joules = dynamic + g.static_watts * sim_seconds;
            e["energy_by_part_j"] = parts;
            e["energy_j"] = joules;
            e["average_power_w"] = sim_seconds > 0 ? joules / sim_seconds : 0.0;
            if (g.chips > 0)
                e["average_power_per_chip_w"] =
                    sim_seconds > 0 ? joules / sim_seconds / static_cast<double>(g.chips) : 0.0;
            groups.push_back(e);
        }
        j["energy_by_chip_group"] = groups;
    }
    j["peak_power_w"] = energy.peak_watts;
    j["peak_window_s"] = energy.peak_window_s;
    nlohmann::json top = nlohmann::json::array();
    for (const auto& f : top_energy_ops(energy, 5))
        top.push_back({{"op", f.family}, {"ops", f.ops}, {"energy_j", f.joules}});
    j["top_energy_ops"] = top;
    j["samples_per_j"] = joules() > 0 ? samples / joules() : 0.0;
    if (steady_throughput > 0) j["steady_samples_per_j"] = steady_samples_per_joule();
    j["flops_per_j"] = joules() > 0 ? flops / joules() : 0.0;
    j["notes"] = notes;
    if (!details.is_null()) {
        // A system run's plan and its per-chip split are a section of their own (docs/systems.md).
        nlohmann::json m = details;
        if (m.is_object() && m.contains("parallel")) {
            j["parallel"] = m["parallel"];
            m.erase("parallel");
        }
        if (!m.empty()) j["mapping"] = m;
    }
    return j;
}

double run_summary::steady_samples_per_joule() const {
    if (steady_throughput <= 0 || samples <= 0) return 0;
    const double per_sample = energy.dynamic() / samples + energy.static_watts / steady_throughput;
    return per_sample > 0 ? 1 / per_sample : 0;
}

void run_summary::set_steady_throughput(double samples_per_s) {
    if (bound_seconds > 0 && samples_per_s > samples / bound_seconds * (1 + 1e-9))
        throw std::logic_error("steady state of " + format_number(samples_per_s, 6) +
                               " samples/s beats the physical bound of " + format_number(samples / bound_seconds, 6) +
                               " samples/s (" + bound_resource + ")");
    steady_throughput = samples_per_s;
}

void run_summary::print(std::ostream& os, size_t top) const {
    char line[256];
    os << "platform   " << platform << "\n";
    if (!validation.empty()) os << "validation " << validation << "\n";
    os << "workload   " << workload << "\n";
    os << "simulated  " << format_time(sim_seconds) << "  (" << steps << " steps, " << packets << " packets)\n";
    if (samples > 0 && sim_seconds > 0) {
        const auto rate = format_throughput;
        if (steady_throughput > 0)
            os << "throughput " << rate(steady_throughput) << " samples/s in steady state (pipeline full); this run "
               << rate(throughput()) << " samples/s, fill and drain included (" << format_number(samples)
               << " per run)\n";
        else
            os << "throughput " << rate(throughput()) << " samples/s (" << format_number(samples) << " per run)\n";
    }
    if (flops > 0)
        os << "compute    " << format_rate(achieved_flops(), "FLOP/s") << " of " << format_rate(peak_flops, "FLOP/s")
           << " peak (" << format_number(peak_flops > 0 ? 100 * achieved_flops() / peak_flops : 0, 3) << "%)\n";
    if (latency.packets > 0) {
        const double c = latency.cycle;
        os << "latency    mean " << format_number(latency.mean / c, 4) << ", p50 " << format_number(latency.p50 / c, 4)
           << ", p99 " << format_number(latency.p99 / c, 4) << ", max " << format_number(latency.max / c, 4)
           << " cycles (mean " << format_time(latency.mean) << ") over " << latency.packets
           << (traffic_pattern.empty() ? " packets" : " measured packets") << "\n";
    }
    if (!traffic_pattern.empty())
        os << "traffic    " << traffic_pattern << ": offered " << format_number(offered_load, 4) << ", accepted "
           << format_number(accepted_load, 4) << " flits/node/cycle\n";
    if (joules() > 0) {
        // energy     1.2 J, 412 W average (59% of the 700 W TDP): compute 45%, dram 30%, static 25%; 81 samples/J
        const double total = joules();
        os << "energy     " << format_energy(total) << ", " << format_power(average_watts()) << " average";
        if (chips > 0) os << ", " << format_power(average_watts() / static_cast<double>(chips)) << " per chip";
        if (tdp_watts > 0)
            os << " (" << format_number(100 * average_watts() / tdp_watts, 3) << "% of the " << format_power(tdp_watts)
               << " TDP)";
        const char* sep = ": ";
        auto share = [&](const char* name, double j) {
            if (j <= 0) return;
            os << sep << name << " " << format_number(100 * j / total, 3) << "%";
            sep = ", ";
        };
        for (size_t p = 0; p < energy_part_count; ++p)
            share(energy_part_name(static_cast<energy_part>(p)), energy.dynamic_joules[p]);
        share("static", energy.static_watts * sim_seconds);
        if (steady_throughput > 0 && samples > 0)
            os << "; " << format_number(steady_samples_per_joule(), 4) << " samples/J in steady state, "
               << format_number(samples / total, 4) << " this run";
        else if (samples > 0)
            os << "; " << format_number(samples / total, 4) << " samples/J";
        os << "\n";
        // peak power 612 W over 2.1 us (dynamic in one window of the timeline, plus static)
        os << "peak power " << format_power(energy.peak_watts) << " over " << format_time(energy.peak_window_s)
           << (chips > 0 ? ", " + format_power(energy.peak_watts / static_cast<double>(chips)) + " per chip"
                         : std::string())
           << "\n";
        // chip power gpu 8 x 215.2 W, outside chips 28.1 W
        if (!energy.by_chip_group.empty() && sim_seconds > 0) {
            os << "chip power ";
            for (size_t k = 0; k < energy.by_chip_group.size(); ++k) {
                const auto& g = energy.by_chip_group[k];
                double j = g.static_watts * sim_seconds;
                for (double d : g.dynamic_joules) j += d;
                os << (k ? ", " : "") << g.name << " "
                   << (g.chips > 0 ? std::to_string(g.chips) + " x " +
                                         format_power(j / sim_seconds / static_cast<double>(g.chips))
                                   : format_power(j / sim_seconds));
            }
            os << "\n";
        }
        // top energy layer.N.fc1 (x24) 23%, layer.N.fc2 (x24) 18%, head 9%: dynamic energy, share of the run's joules
        const auto top_ops = top_energy_ops(energy, 3);
        if (!top_ops.empty()) {
            os << "top energy ";
            for (size_t k = 0; k < top_ops.size(); ++k)
                os << (k ? ", " : "") << top_ops[k].family
                   << (top_ops[k].ops > 1 ? " (x" + std::to_string(top_ops[k].ops) + ")" : "") << " "
                   << format_number(100 * top_ops[k].joules / total, 3) << "%";
            os << "\n";
        }
    }
    os << "bound by   " << bound_by;
    if (bound_seconds > 0)
        os << "; physical lower bound " << format_time(bound_seconds) << " (" << bound_resource << "), run is "
           << format_number(sim_seconds / bound_seconds, 3) << "x that";
    os << "\n\n";
    std::snprintf(line, sizeof line, "%-28s %-12s %-8s %8s %9s %10s\n", "busiest resources", "kind", "class", "units",
                  "max busy", "mean busy");
    os << line;
    for (size_t i = 0; i < resources.size() && i < top; ++i) {
        const auto& u = resources[i];
        const double mx = sim_seconds > 0 ? 100 * u.busy_max / sim_seconds : 0;
        const double mean = sim_seconds > 0 && u.units > 0 ? 100 * u.busy_seconds / (u.units * sim_seconds) : 0;
        std::snprintf(line, sizeof line, "%-28s %-12s %-8s %8.0f %8.1f%% %9.1f%%\n", u.name.c_str(), u.kind.c_str(),
                      resource_class_name(u.cls), u.units, mx, mean);
        os << line;
    }
    if (!notes.empty()) {
        os << "\nmapping\n";
        for (const auto& n : notes) os << "  " << n << "\n";
    }
}

}  // namespace tessel
