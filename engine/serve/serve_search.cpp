#include "engine/serve/serve_search.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/run/session.h"
#include "engine/serve/pareto.h"
#include "engine/serve/serve_options.h"
#include "engine/sweep/spec.h"
#include "engine/system/system_mapper.h"
#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/units.h"

namespace tessel::serve {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

/// The chips of the system `o.base.platform` names, loaded with the user's platform parameters.
std::int64_t system_chips(const serve_search_options& o, const std::string& platform_file) {
    sim_context sim;
    param_context ctx;
    for (const auto& s : o.base.sets) {
        const auto [k, v] = split_set(s);
        if (k.rfind("serve.", 0) != 0 && k.rfind("workload.", 0) != 0) ctx.add_override(k, v);
    }
    const std::unique_ptr<platform> plat = platform::load(platform_file, ctx, sim);
    const std::unique_ptr<mapper> m = create_mapper(*plat, ctx);
    const auto* sm = dynamic_cast<const system_mapper*>(m.get());
    if (!sm)
        throw input_error("tessel plan --serve: '" + o.base.platform +
                          "' is one chip; the search is over a system's parallel plans (platforms/systems)");
    return static_cast<std::int64_t>(sm->chips(*plat).chips.size());
}

struct candidate {
    int tp = 1, pp = 1;
    std::int64_t dp = 1;
    std::string label() const {
        return "tp=" + std::to_string(tp) + " pp=" + std::to_string(pp) + " dp=" + std::to_string(dp);
    }
};

std::vector<candidate> candidates(const serve_search_options& o, std::int64_t chips) {
    std::vector<int> tps = o.tp, pps = o.pp.empty() ? std::vector<int>{1} : o.pp;
    if (tps.empty())
        for (int t = 1; t <= chips; t *= 2) tps.push_back(t);
    std::vector<candidate> out;
    for (const int t : tps)
        for (const int p : pps) {
            const std::int64_t per_replica = std::int64_t{t} * p;
            if (t < 1 || p < 1 || chips % per_replica) continue;
            out.push_back({t, p, chips / per_replica});
        }
    if (out.empty())
        throw input_error("tessel plan --serve: no plan of the tp and pp asked divides the system's " +
                          std::to_string(chips) + " chips");
    return out;
}

bool meets(const json& point, const serve_options& so) {
    if (so.slo_ttft_s <= 0 && so.slo_tpot_s <= 0) return true;
    return point["slo_attainment"].get<double>() >= k_attainment;
}

/// Marks each point `pareto` over every plan's points.
void mark_front(json& plans) {
    std::vector<json*> all;
    for (auto& p : plans)
        for (auto& x : p["points"]) all.push_back(&x);
    mark_pareto(all, "pareto");
}

void print_search(std::ostream& out, const serve_search_options& o, std::int64_t chips, const serve_options& so,
                  const json& doc, const std::string& dir) {
    out << "tessel plan --serve: " << o.base.workload << " on " << o.base.platform << " (" << chips
        << " chips); objectives: " << objectives(so) << "\n";
    out << "  plan                  users   TTFT p50   TPOT p50   tokens/s per user   tokens/s per chip   SLOs\n";
    for (const auto& p : doc["plans"]) {
        const std::string label = p["plan"].get<std::string>();
        if (p.contains("refused")) {
            out << "  " << label << ": not served: " << p["refused"].get<std::string>() << "\n";
            continue;
        }
        for (const auto& x : p["points"]) {
            char line[200];
            std::snprintf(line, sizeof line, "  %-20s %6lld %10s %10s %19s %19s   %s%s\n", label.c_str(),
                          static_cast<long long>(x["concurrency"].get<std::int64_t>()),
                          format_time(x["ttft_s"]["p50"].get<double>()).c_str(),
                          format_time(x["tpot_s"]["p50"].get<double>()).c_str(),
                          format_number(x["tokens_per_s_per_user"].get<double>()).c_str(),
                          format_number(x["output_tokens_per_s_per_chip"].get<double>()).c_str(),
                          x["meets_slos"].get<bool>() ? "met" : "missed", x["pareto"].get<bool>() ? "  *" : "");
            out << line;
        }
    }
    if (doc["best"].is_null()) {
        out << "best: no plan met the objectives at any number of users asked\n";
    } else {
        const json& b = doc["best"];
        out << "best: " << b["plan"].get<std::string>() << " at " << b["users"].get<std::int64_t>()
            << " users: " << format_number(b["output_tokens_per_s_per_chip"].get<double>()) << " tokens/s per chip, "
            << format_number(b["tokens_per_s_per_user"].get<double>()) << " tokens/s per user\n";
    }
    out << "* the Pareto front of tokens/s per user against tokens/s per chip over every plan\n";
    out << "results: " << dir << "/plan_serve.json (each plan's runs in its folder there)\n";
}

}  // namespace

std::string objectives(const serve_options& so) {
    if (so.slo_ttft_s <= 0 && so.slo_tpot_s <= 0) return "none (serve.slo_ttft, serve.slo_tpot)";
    std::string s;
    if (so.slo_ttft_s > 0) s += "TTFT " + format_time(so.slo_ttft_s);
    if (so.slo_tpot_s > 0) s += std::string(s.empty() ? "" : ", ") + "TPOT " + format_time(so.slo_tpot_s);
    return s + " for " + format_number(100 * k_attainment) + "% of requests";
}

int run_serve_search(const serve_search_options& o, std::ostream& out, std::ostream& err) {
    if (o.users.empty()) throw input_error("tessel plan --serve: no numbers of users to serve at (--users)");
    std::map<std::string, std::string> serve_sets;
    for (const auto& s : o.base.sets) {
        const auto [k, v] = split_set(s);
        if (k == "parallel.tp" || k == "parallel.pp" || k == "parallel.dp")
            throw input_error("--set " + k +
                              ": tessel plan --serve searches the plans itself; restrict it with "
                              "--tp and --pp");
        if (k.rfind("serve.", 0) == 0) serve_sets[k.substr(6)] = v;
    }
    const serve_options so = parse_serve_options(serve_sets);
    if (!so.trace.empty() || so.concurrency > 0)
        throw input_error(
            "tessel plan --serve serves closed loops at each --users count; leave out serve.trace and "
            "serve.concurrency");
    const std::string platform_file =
        o.base.sweep.resolve_platform ? o.base.sweep.resolve_platform(o.base.platform) : o.base.platform;
    const std::int64_t chips = system_chips(o, platform_file);
    const std::vector<candidate> plans = candidates(o, chips);
    const std::string dir = o.base.out_dir.empty() ? "out/plans/" + fs::path(platform_file).stem().string() + "-" +
                                                         fs::path(o.base.workload).stem().string() + "-serve"
                                                   : o.base.out_dir;
    if (o.dry_run) {
        out << "tessel plan --serve: " << plans.size() << " plans of " << o.base.workload << " on " << o.base.platform
            << " (" << chips << " chips), each served at " << o.users.size() << " numbers of users:\n";
        for (const candidate& c : plans) out << "  " << c.label() << "\n";
        return 0;
    }
    fs::create_directories(dir);
    json doc = {
        {"platform", o.base.platform}, {"workload", o.base.workload}, {"sets", o.base.sets},       {"chips", chips},
        {"slo_ttft_s", so.slo_ttft_s}, {"slo_tpot_s", so.slo_tpot_s}, {"attainment", k_attainment}};
    json rows = json::array();
    for (const candidate& c : plans) {
        serve_cli run = o.base;
        run.sets.push_back("parallel.tp=" + std::to_string(c.tp));
        run.sets.push_back("parallel.pp=" + std::to_string(c.pp));
        run.curve = o.users;
        run.json = true;
        run.out_dir = dir + "/tp" + std::to_string(c.tp) + "_pp" + std::to_string(c.pp);
        json row = {{"plan", c.label()}, {"tp", c.tp}, {"pp", c.pp}, {"dp", c.dp}};
        std::ostringstream printed;
        try {
            const int status = run_serve(run, printed, err);
            if (status != 0) return status;
            std::ifstream in(run.out_dir + "/curve.json");
            json points = json::parse(in)["points"];
            for (auto& x : points) x["meets_slos"] = meets(x, so);
            row["points"] = points;
        } catch (const input_error& e) {
            // A plan the model does not allow or that does not fit (its reason names which) is a row, not the end.
            row["refused"] = e.message();
            row["points"] = json::array();
        }
        rows.push_back(row);
    }
    mark_front(rows);
    json best;
    for (const auto& p : rows)
        for (const auto& x : p["points"])
            if (x["meets_slos"].get<bool>() &&
                (best.is_null() || x["output_tokens_per_s_per_chip"].get<double>() >
                                       best["output_tokens_per_s_per_chip"].get<double>())) {
                best = x;
                best["plan"] = p["plan"];
                best["users"] = x["concurrency"];
            }
    doc["plans"] = rows;
    doc["best"] = best;
    write_file_atomic(dir + "/plan_serve.json", doc.dump(2) + "\n", "serving plan search", true);
    if (o.base.json)
        out << doc.dump(2) << "\n";
    else
        print_search(out, o, chips, so, doc, dir);
    return 0;
}

}  // namespace tessel::serve
