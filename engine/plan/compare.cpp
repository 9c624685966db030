#include "engine/plan/compare.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <utility>

#include "engine/netlist/platform.h"
#include "engine/sweep/runner.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"

namespace tessel {

namespace fs = std::filesystem;
using sweep::folder_name;
using sweep::resolve_systems;
using sweep::system_spec;
using json = nlohmann::ordered_json;

namespace {

/// Why a system has no row: every plan it simulated failed. The reason the most plans failed for (the first
/// such plan's error, "tessel: error: " dropped), so a row says what to change, not only where to look. Refusals
/// on the simulator's budgets count as one reason (each states its own step count).
std::string no_plan_finished(const json& plans, const std::string& dir) {
    struct reason {
        int plans = 0;
        std::string first_plan, error;
    };
    std::map<std::string, reason> why;  // error (or "budgets") -> its plans
    for (const json& p : plans) {
        std::string e = p.value("error", std::string());
        if (e.empty()) continue;
        const std::string prefix = "tessel: error: ";
        if (e.compare(0, prefix.size(), prefix) == 0) e = e.substr(prefix.size());
        reason& w = why[simulator_limit(e) ? std::string("budgets") : e];
        if (w.plans++ == 0) {
            w.first_plan = p.value("plan", std::string());
            w.error = e;
        }
    }
    const std::string where = " (every plan: " + dir + "/plan.json)";
    if (why.empty()) return "no plan finished" + where;
    auto most = why.begin();
    for (auto it = why.begin(); it != why.end(); ++it)
        if (it->second.plans > most->second.plans) most = it;
    const reason& m = most->second;
    return "no plan finished; " + std::to_string(m.plans) + " of " + std::to_string(plans.size()) + " (" +
           m.first_plan + (m.plans > 1 ? ", ..." : "") + "): " + m.error + where;
}

struct row {
    explicit row(system_spec s) : sys(std::move(s)) {}
    system_spec sys;
    std::int64_t chips = 0;
    json best;  // the best plan's entry of plan.json, or null
    json size;  // the system's size entry of plan.json (capacity, every plan, why the best wins), or null
    std::string error;
};

/// Why the best plan wins, from plan.json's reasons: its lead over the runner-up (else the first reason after the
/// best plan's own line).
std::string why_best(const json& size) {
    std::string first;
    for (const auto& w : size.value("why", json::array())) {
        const std::string line = w.get<std::string>();
        if (line.rfind("best: ", 0) == 0) continue;
        if (line.rfind("it is ", 0) == 0) return "wins: " + line.substr(6);
        if (first.empty()) first = line;
    }
    return first.empty() ? "the only plan that finished" : first;
}

/// "memory 62.72 GB of 80 GB per chip (78.4%)" for a system's best plan (its compare.json entry), or what bounds it
/// instead.
std::string memory_headroom(const json& best) {
    const double capacity = best.value("capacity_bytes", 0.0);
    const double used = best.value("memory_bytes", 0.0);
    if (capacity <= 0) return "weights streamed: memory does not bound the plan";
    return "memory " + format_bytes(used) + " of " + format_bytes(capacity) + " per chip (" +
           format_number(100 * used / capacity, 3) + "%)";
}

/// "4 of 30 plans need more than the simulator's budgets (...)": plans left out by tessel, not by the hardware.
std::string simulator_limited(const json& size) {
    int limited = 0, plans = 0;
    std::string first;
    for (const auto& p : size.value("plans", json::array())) {
        ++plans;
        const std::string e = p.value("error", std::string());
        if (!simulator_limit(e)) continue;
        if (limited++ == 0) first = e.substr(e.rfind("error: ") == std::string::npos ? 0 : e.rfind("error: ") + 7);
    }
    if (limited == 0) return "";
    return std::to_string(limited) + " of " + std::to_string(plans) +
           " plans were not simulated: they need more than the simulator's budgets, a limit of tessel, not the "
           "hardware's verdict (" +
           first + ")";
}

/// A failed system's row: what kind of failure, in a few words (the whole reason follows the table).
std::string short_failure(const std::string& error) {
    if (simulator_limit(error)) return "not simulated: over the simulator's budgets (below)";
    if (mapper_limit(error)) return "not simulated: a limit of its chip mapper (below)";
    if (error.find("fits on") != std::string::npos || error.find("does not fit") != std::string::npos)
        return "does not train: does not fit in memory (below)";
    return "does not train (below)";
}

}  // namespace

namespace {

/// A system's entry of compare.json: its best plan, or why none trains.
json system_entry(const compare_options& o, const row& r, bool power, const std::string& out_dir) {
    json s = {{"system", r.sys.label}, {"platform", r.sys.platform}, {"params", r.sys.sets}, {"chips", r.chips}};
    if (power) s["tdp_w"] = r.sys.tdp;
    if (!r.best.is_null()) {
        const double sps = r.best["samples_per_s"].get<double>();
        json b = {{"plan", r.best["plan"]},
                  {"iteration_s", r.best["iteration_s"]},
                  {"samples_per_s", sps},
                  {"samples_per_s_per_chip", sps / static_cast<double>(std::max<std::int64_t>(1, r.chips))},
                  {"model_flops_utilisation", r.best["model_flops_utilisation"]},
                  {"average_power_w", r.best.value("average_power_w", 0.0)},
                  {"samples_per_j", r.best.value("samples_per_j", 0.0)},
                  {"memory_bytes", r.best["memory_bytes"]}};
        if (o.samples > 0) b["days"] = o.samples / sps / 86400.0;
        b["capacity_bytes"] = r.size.value("capacity_bytes", 0.0);
        b["why"] = why_best(r.size);
        s["best"] = b;
    } else {
        s["error"] = r.error;
        // With --simulate-top, the best estimate stands where no plan was simulated whole (each one simulated
        // whole went over a budget its window did not): an estimate, marked as one, not a result.
        const json* est = nullptr;
        const json plans = r.size.is_object() ? r.size.value("plans", json::array()) : json::array();
        for (const auto& p : plans)
            if (p.value("estimate_s", 0.0) > 0 && (!est || p["estimate_s"] < (*est)["estimate_s"])) est = &p;
        if (est)
            s["best_estimate"] = {{"plan", (*est)["plan"]},
                                  {"iteration_s", (*est)["estimate_s"]},
                                  {"model_flops_utilisation", (*est)["estimate_model_flops_utilisation"]}};
    }
    if (!r.size.is_null()) {
        const std::string limited = simulator_limited(r.size);
        if (!limited.empty()) s["simulator_limited"] = limited;
    }
    s["plan_json"] = out_dir + "/" + folder_name(r.sys.label) + "/plan.json";
    return s;
}

/// The console table, one line a system, then the fastest and by how much.
void print_comparison(std::ostream& out, const compare_options& o, const json& systems, size_t n_systems, bool power,
                      const std::string& out_dir) {
    std::vector<std::vector<std::string>> table = {
        {"system", "chips", "best plan", "iteration", "samples/s", "per chip", "MFU", "power", "samples/J"}};
    if (o.samples > 0) table.front().push_back("days for " + format_number(o.samples, 3) + " samples");
    if (power) table.front().insert(table.front().begin() + 2, "TDP");
    const json* fastest = nullptr;
    for (const auto& s : systems) {
        if (!s.contains("best")) continue;
        if (!fastest || s["best"]["samples_per_s"].get<double>() > (*fastest)["best"]["samples_per_s"].get<double>())
            fastest = &s;
    }
    for (const auto& s : systems) {
        const std::int64_t chips = s["chips"].get<std::int64_t>();
        std::vector<std::string> line = {s["system"].get<std::string>(), chips > 0 ? std::to_string(chips) : "-"};
        if (power) line.push_back(format_power(s["tdp_w"].get<double>()));
        if (s.contains("best")) {
            const json& b = s["best"];
            line.push_back(b["plan"].get<std::string>());
            line.push_back(format_time(b["iteration_s"].get<double>()));
            line.push_back(format_number(b["samples_per_s"].get<double>(), 4));
            line.push_back(format_number(b["samples_per_s_per_chip"].get<double>(), 4));
            line.push_back(format_number(100 * b["model_flops_utilisation"].get<double>(), 3) + "%");
            line.push_back(format_power(b["average_power_w"].get<double>()));
            line.push_back(format_number(b["samples_per_j"].get<double>(), 4));
            if (o.samples > 0) line.push_back(format_number(b["days"].get<double>(), 3));
        } else if (s.contains("best_estimate")) {
            const json& e = s["best_estimate"];
            line.push_back(e["plan"].get<std::string>());
            line.push_back("estimated " + format_time(e["iteration_s"].get<double>()) +
                           ", not simulated whole (below)");
        } else {
            line.emplace_back("-");
            line.push_back(short_failure(s["error"].get<std::string>()));
        }
        table.push_back(line);
    }
    out << "tessel compare: " << o.workload << " on " << n_systems << " systems";
    if (power) out << ", each as large as its TDP allows within " << format_power(o.power_watts);
    out << "\n" << sweep::systems_table(table, power ? 3 : 2);
    if (fastest) {
        const double best = (*fastest)["best"]["samples_per_s"].get<double>();
        out << "fastest: " << (*fastest)["system"].get<std::string>() << " ("
            << (*fastest)["best"]["plan"].get<std::string>() << ")";
        const json* next = nullptr;
        for (const auto& s : systems)
            if (&s != fastest && s.contains("best") &&
                (!next || s["best"]["samples_per_s"].get<double>() > (*next)["best"]["samples_per_s"].get<double>()))
                next = &s;
        if (next)
            out << ", " << format_number(best / (*next)["best"]["samples_per_s"].get<double>(), 3) << "x "
                << (*next)["system"].get<std::string>();
        out << "\n";
    }
    out << "why:\n";
    for (const auto& s : systems) {
        const std::string name = s["system"].get<std::string>();
        if (s.contains("best")) {
            const json& b = s["best"];
            out << "  " << name << ": " << b["plan"].get<std::string>() << " " << b["why"].get<std::string>() << "; "
                << memory_headroom(b) << "\n";
        } else {
            out << "  " << name << ": " << s["error"].get<std::string>() << "\n";
        }
        if (s.contains("simulator_limited"))
            out << "  " << name << ": " << s["simulator_limited"].get<std::string>() << "\n";
    }
    out << "each system's plans: " << out_dir << "/SYSTEM/plan.json; all of it: " << out_dir << "/compare.json\n";
}

}  // namespace

int run_compare(const compare_options& o, std::ostream& out, std::ostream& err) {
    if (o.systems.empty())
        throw input_error("tessel compare: no systems given (--system platforms/systems/dgx_h100.yaml:nodes=1 ...)");
    if (o.workload.empty()) throw input_error("tessel compare: no workload given (-w gpt2, bert, llama or a file)");
    const bool power = o.power_watts > 0;
    const std::vector<system_spec> specs = resolve_systems(o.systems, o.power_watts, o.plan.sweep.resolve_platform);
    if (power)
        for (const auto& sys : specs)
            err << "tessel compare: " << sys.label << ": " << format_power(sys.tdp) << " TDP within "
                << format_power(o.power_watts) << "\n";
    const std::string out_dir = o.out_dir.empty() ? "out/compare/" + fs::path(o.workload).stem().string() : o.out_dir;
    fs::create_directories(out_dir);

    std::vector<row> rows;
    for (const auto& sys : specs) {
        row r(sys);
        plan_options po = o.plan;
        po.platform = sys.platform;
        po.workload = o.workload;
        po.sets = o.sets;
        for (const auto& kv : sys.sets) po.sets.push_back(kv);
        po.out_dir = out_dir + "/" + folder_name(sys.label);
        po.json = false;
        po.dry_run = false;
        err << "tessel compare: " << sys.label << "\n";
        std::ostringstream report;
        try {
            const int status = run_plan(po, report, err);
            if (status >= 128) {
                out << "interrupted: run the same command again to resume (finished plans are kept)\n";
                return status;
            }
            std::ifstream in(po.out_dir + "/plan.json");
            const json doc = json::parse(in);
            const json& size = doc["sizes"][0];
            r.chips = size["chips"].get<std::int64_t>();
            r.size = size;
            if (!size["plans"].empty() && size["plans"][0]["status"] == "ok")
                r.best = size["plans"][0];
            else
                r.error = no_plan_finished(size["plans"], po.out_dir);
        } catch (const input_error& e) {
            r.error = e.message();
        }
        rows.push_back(std::move(r));
    }

    json systems = json::array();
    for (const auto& r : rows) systems.push_back(system_entry(o, r, power, out_dir));
    json doc = {{"workload", o.workload}, {"sets", o.sets}, {"samples", o.samples}};
    if (power) doc["power_budget_w"] = o.power_watts;
    doc["systems"] = systems;
    write_file_atomic(out_dir + "/compare.json", doc.dump(2) + "\n", "comparison", true);
    if (o.json) {
        out << doc.dump(2) << "\n";
        return 0;
    }

    print_comparison(out, o, systems, rows.size(), power, out_dir);
    return 0;
}

}  // namespace tessel
