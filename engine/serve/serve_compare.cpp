#include "engine/serve/serve_compare.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/run/session.h"
#include "engine/serve/pareto.h"
#include "engine/serve/serve_options.h"
#include "engine/serve/serve_search.h"
#include "engine/sweep/system_spec.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"

namespace tessel::serve {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

double number(const json& point, const char* key) { return point[key].get<double>(); }

/// A system's best point: the most tokens/s per chip among the points that meet the objectives (plan_serve.json's
/// own choice), or null.
json best_point(const json& search) { return search.value("best", json()); }

/// Why a system serves at no point: every plan refused (the largest plan's reason, the one closest to fitting), or
/// no point met the objectives (the point closest to them).
std::string why_none(const json& search) {
    std::string refused;
    const json* closest = nullptr;
    std::string closest_plan;
    for (const auto& p : search["plans"]) {
        if (p.contains("refused")) refused = p["refused"].get<std::string>();
        for (const auto& x : p["points"])
            if (!closest || number(x, "slo_attainment") > number(*closest, "slo_attainment")) {
                closest = &x;
                closest_plan = p["plan"].get<std::string>();
            }
    }
    if (!closest) return refused.empty() ? "no plan to serve" : refused;
    return "no plan met the objectives at any number of users asked; closest: " + closest_plan + " at " +
           std::to_string((*closest)["concurrency"].get<std::int64_t>()) + " users, " +
           format_number(100 * number(*closest, "slo_attainment"), 3) + "% of requests within them";
}

/// A failed system's row, in a few words (the whole reason follows the table).
std::string serve_failure(const std::string& why) {
    if (why.find("over the limit of") != std::string::npos)
        return "not simulated: over the simulator's budgets (below)";
    if (why.find("does not fit") != std::string::npos) return "does not serve: does not fit in memory (below)";
    if (why.rfind("no plan met", 0) == 0) return "misses the objectives (below)";
    return "does not serve (below)";
}

/// Marks `front` on every system's points, over all of them.
void mark_systems_front(json& systems) {
    std::vector<json*> all;
    for (auto& s : systems)
        for (auto& x : s["points"]) all.push_back(&x);
    mark_pareto(all, "front");
}

/// A system's entry of compare_serve.json from its plan_serve.json: its best point, every point with its plan,
/// or why it serves at none.
json serving_entry(const sweep::system_spec& sys, bool power, const json& search, const std::string& folder) {
    json s = {{"system", sys.label}, {"platform", sys.platform}, {"params", sys.sets}};
    s["chips"] = search.value("chips", std::int64_t{0});
    if (power) s["tdp_w"] = sys.tdp;
    json points = json::array();
    for (const auto& p : search.value("plans", json::array()))
        for (auto x : p["points"]) {
            x["plan"] = p["plan"];
            points.push_back(x);
        }
    s["points"] = points;
    const json best = best_point(search);
    if (!best.is_null())
        s["best"] = best;
    else
        s["error"] = search.contains("plans") ? why_none(search) : search.value("error", std::string());
    s["plan_serve_json"] = folder + "/plan_serve.json";
    return s;
}

std::string cell_time(const json& x, const char* metric) { return format_time(x[metric]["p50"].get<double>()); }

void print_serving_table(std::ostream& out, const json& systems, bool power) {
    std::vector<std::vector<std::string>> table = {{"system", "chips", "best plan", "users", "TTFT p50", "TPOT p50",
                                                    "tokens/s per user", "tokens/s per chip", "tokens/kJ"}};
    if (power) table.front().insert(table.front().begin() + 2, "TDP");
    for (const auto& s : systems) {
        const std::int64_t chips = s["chips"].get<std::int64_t>();
        std::vector<std::string> line = {s["system"].get<std::string>(), chips > 0 ? std::to_string(chips) : "-"};
        if (power) line.push_back(format_power(s["tdp_w"].get<double>()));
        if (s.contains("best")) {
            const json& b = s["best"];
            line.push_back(b["plan"].get<std::string>());
            line.push_back(std::to_string(b["users"].get<std::int64_t>()));
            line.push_back(cell_time(b, "ttft_s"));
            line.push_back(cell_time(b, "tpot_s"));
            line.push_back(format_number(number(b, "tokens_per_s_per_user")));
            line.push_back(format_number(number(b, "output_tokens_per_s_per_chip")));
            line.push_back(format_number(number(b, "output_tokens_per_kj")));
        } else {
            line.emplace_back("-");
            line.push_back(serve_failure(s["error"].get<std::string>()));
        }
        table.push_back(line);
    }
    out << sweep::systems_table(table, power ? 3 : 2);
}

/// The system whose met point is largest by `metric`, with that point.
std::pair<const json*, json> leader(const json& systems, const char* metric) {
    const json* who = nullptr;
    json top;
    for (const auto& s : systems)
        for (const auto& x : s["points"])
            if (x["meets_slos"].get<bool>() && (top.is_null() || number(x, metric) > number(top, metric))) {
                who = &s;
                top = x;
            }
    return {who, top};
}

void print_leaders(std::ostream& out, const json& systems) {
    const json* first = nullptr;
    for (const auto& s : systems)
        if (s.contains("best") && (!first || number(s["best"], "output_tokens_per_s_per_chip") >
                                                 number((*first)["best"], "output_tokens_per_s_per_chip")))
            first = &s;
    if (!first) return;
    const double top = number((*first)["best"], "output_tokens_per_s_per_chip");
    out << "most tokens/s per chip within the objectives: " << (*first)["system"].get<std::string>();
    const json* next = nullptr;
    for (const auto& s : systems)
        if (&s != first && s.contains("best") &&
            (!next || number(s["best"], "output_tokens_per_s_per_chip") >
                          number((*next)["best"], "output_tokens_per_s_per_chip")))
            next = &s;
    if (next)
        out << ", " << format_number(top / number((*next)["best"], "output_tokens_per_s_per_chip"), 3) << "x "
            << (*next)["system"].get<std::string>();
    out << "\n";
    const auto [fast, point] = leader(systems, "tokens_per_s_per_user");
    const std::int64_t users = point["concurrency"].get<std::int64_t>();
    out << "fastest for one user within the objectives: " << (*fast)["system"].get<std::string>() << " ("
        << point["plan"].get<std::string>() << ", " << users << (users == 1 ? " user" : " users")
        << "): " << format_number(number(point, "tokens_per_s_per_user")) << " tokens/s per user\n";
}

void print_front(std::ostream& out, const json& systems) {
    out << "the front of tokens/s per user against tokens/s per chip, over every system's points:\n";
    std::vector<std::pair<double, std::string>> lines;
    for (const auto& s : systems)
        for (const auto& x : s["points"]) {
            if (!x["front"].get<bool>()) continue;
            char line[240];
            const std::int64_t users = x["concurrency"].get<std::int64_t>();
            std::snprintf(line, sizeof line, "  %-22s %-16s %5lld %-5s %10s tokens/s per user %10s per chip%s\n",
                          s["system"].get<std::string>().c_str(), x["plan"].get<std::string>().c_str(),
                          static_cast<long long>(users), users == 1 ? "user" : "users",
                          format_number(number(x, "tokens_per_s_per_user")).c_str(),
                          format_number(number(x, "output_tokens_per_s_per_chip")).c_str(),
                          x["meets_slos"].get<bool>() ? "" : "  (misses the objectives)");
            lines.emplace_back(-number(x, "tokens_per_s_per_user"), line);
        }
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) out << l.second;
}

void print_serving_comparison(std::ostream& out, const serve_compare_options& o, const serve_options& so,
                              const json& systems, const std::string& dir) {
    out << "tessel compare --serve: " << o.workload << " on " << systems.size() << " systems";
    if (o.power_watts > 0) out << ", each as large as its TDP allows within " << format_power(o.power_watts);
    out << "; objectives: " << objectives(so) << "\n";
    print_serving_table(out, systems, o.power_watts > 0);
    print_leaders(out, systems);
    print_front(out, systems);
    bool failed = false;
    for (const auto& s : systems) failed |= !s.contains("best");
    if (failed) {
        out << "why:\n";
        for (const auto& s : systems)
            if (!s.contains("best"))
                out << "  " << s["system"].get<std::string>() << ": " << s["error"].get<std::string>() << "\n";
    }
    out << "each system's plans: " << dir << "/SYSTEM/plan_serve.json; all of it: " << dir << "/compare_serve.json\n";
}

int parse_positive_int(const std::string& kv, const std::string& value) {
    try {
        size_t used = 0;
        const int n = std::stoi(value, &used);
        if (used == value.size() && n > 0) return n;
    } catch (const std::exception&) {
    }
    throw input_error("--system: '" + kv + "': expected a positive whole number of chips");
}

serve_options objectives_of(const std::vector<std::string>& sets) {
    std::map<std::string, std::string> serve_sets;
    for (const auto& s : sets) {
        const auto [k, v] = split_set(s);
        if (k.rfind("serve.", 0) == 0) serve_sets[k.substr(6)] = v;
    }
    return parse_serve_options(serve_sets);
}

}  // namespace

int run_serve_compare(const serve_compare_options& o, std::ostream& out, std::ostream& err) {
    if (o.systems.empty())
        throw input_error("tessel compare --serve: no systems given (--system platforms/systems/dgx_h100.yaml ...)");
    if (o.workload.empty()) throw input_error("tessel compare --serve: no workload given (-w llama3-70b or a file)");
    for (const auto& s : o.sets) {
        const std::string key = split_set(s).first;
        if (key == "parallel.tp" || key == "parallel.pp" || key == "parallel.dp")
            throw input_error("--set " + key + ": tessel compare --serve searches the plans itself, per system");
    }
    const serve_options so = objectives_of(o.sets);
    const bool power = o.power_watts > 0;
    const std::vector<sweep::system_spec> specs =
        sweep::resolve_systems(o.systems, o.power_watts, o.sweep.resolve_platform);
    for (const auto& sys : specs)
        if (power)
            err << "tessel compare --serve: " << sys.label << ": " << format_power(sys.tdp) << " TDP within "
                << format_power(o.power_watts) << "\n";
    const std::string dir =
        o.out_dir.empty() ? "out/compare/" + fs::path(o.workload).stem().string() + "-serve" : o.out_dir;
    fs::create_directories(dir);

    json systems = json::array();
    for (const auto& sys : specs) {
        serve_search_options search;
        search.base.platform = sys.platform;
        search.base.workload = o.workload;
        search.base.sets = o.sets;
        for (const auto& kv : sys.sets) {  // a system's own parallel.tp or parallel.pp restricts its search
            const auto [key, value] = split_set(kv);
            if (key == "parallel.tp" || key == "parallel.pp")
                (key == "parallel.tp" ? search.tp : search.pp) = {parse_positive_int(kv, value)};
            else
                search.base.sets.push_back(kv);
        }
        search.base.sweep = o.sweep;
        search.base.json = true;
        search.base.out_dir = dir + "/" + sweep::folder_name(sys.label);
        search.users = o.users;
        err << "tessel compare --serve: " << sys.label << "\n";
        json found;
        try {
            std::ostringstream printed;
            const int status = run_serve_search(search, printed, err);
            if (status != 0) {
                out << "interrupted: run the same command again to resume (finished steps are kept)\n";
                return status;
            }
            std::ifstream in(search.base.out_dir + "/plan_serve.json");
            found = json::parse(in);
        } catch (const input_error& e) {
            found = {{"error", e.message()}};  // a system that cannot be searched at all is a row with the reason
        }
        systems.push_back(serving_entry(sys, power, found, search.base.out_dir));
    }
    mark_systems_front(systems);

    json doc = {{"workload", o.workload},
                {"sets", o.sets},
                {"users", o.users},
                {"slo_ttft_s", so.slo_ttft_s},
                {"slo_tpot_s", so.slo_tpot_s},
                {"attainment", k_attainment}};
    if (power) doc["power_budget_w"] = o.power_watts;
    doc["systems"] = systems;
    write_file_atomic(dir + "/compare_serve.json", doc.dump(2) + "\n", "serving comparison", true);
    if (o.json)
        out << doc.dump(2) << "\n";
    else
        print_serving_comparison(out, o, so, systems, dir);
    return 0;
}

}  // namespace tessel::serve
