// The rdu mapper's explainer: per section, its time split into reconfiguration, loads, pipeline fill, steady
// streaming, drain and stores, and its bottleneck stage; the totals over all sections.
#include <algorithm>

#include "engine/mappers/rdu/rdu_mapper.h"
#include "engine/report/explain/explainer.h"

namespace tessel {

namespace {

void explain_rdu(const mapping& m, const platform&, const executor::result& r, run_summary& s) {
    const rdu_record* planned = m.record_as<rdu_record>();
    if (!planned) return;
    const rdu_plan& plan = planned->plan;
    auto at = [&](std::uint32_t step) { return ticks_to_seconds(r.step_end[step] - r.start); };
    auto started = [&](std::uint32_t step) { return ticks_to_seconds(r.step_start[step] - r.start); };
    double tot_cfg = 0, tot_load = 0, tot_fill = 0, tot_steady = 0, tot_drain = 0, tot_store = 0;
    nlohmann::json secs = nlohmann::json::array();
    std::vector<std::string> lines;
    for (size_t si = 0; si < planned->sections.size(); ++si) {
        const auto& rec = planned->sections[si];
        const rdu_section& sec = plan.sections[si];
        const double t0 = at(rec.start), cfg = at(rec.configured), loaded = at(rec.loaded), end = at(rec.end);
        // The bottleneck: the compute stage whose PCUs were busiest (per PCU).
        int bn = -1;
        double bn_busy = -1, clast = loaded;
        for (size_t i = 0; i < rec.stages.size(); ++i) {
            const auto& st = rec.stages[i];
            if (st.computes.empty()) continue;
            double busy = 0;
            for (size_t k = 0; k < st.computes.size(); ++k) {
                const std::uint32_t c = st.computes[k];
                busy += st.width(k) * ticks_to_seconds(r.step_end[c] - r.step_start[c]);
                clast = std::max(clast, at(c));
            }
            busy /= std::max(1, st.pcus);
            if (busy > bn_busy) bn_busy = busy, bn = static_cast<int>(i);
        }
        double bfirst = loaded, blast = loaded;
        if (bn >= 0) {
            const auto& st = rec.stages[static_cast<size_t>(bn)];
            bfirst = 1e300;
            blast = 0;
            for (std::uint32_t c : st.computes) {
                bfirst = std::min(bfirst, started(c));
                blast = std::max(blast, at(c));
            }
        }
        const double rc = cfg - t0, ld = loaded - cfg, fill = std::max(0.0, bfirst - loaded),
                     steady = std::max(0.0, blast - std::max(bfirst, loaded)), drain = std::max(0.0, clast - blast),
                     store = std::max(0.0, end - std::max(clast, loaded));
        tot_cfg += rc;
        tot_load += ld;
        tot_fill += fill;
        tot_steady += steady;
        tot_drain += drain;
        tot_store += store;
        nlohmann::json js;
        js["section"] = si;
        js["time_s"] = end - t0;
        js["reconfigure_s"] = rc;
        js["load_s"] = ld;
        js["fill_s"] = fill;
        js["steady_s"] = steady;
        js["drain_s"] = drain;
        js["store_s"] = store;
        nlohmann::json ops = nlohmann::json::array();
        for (size_t i = 0; i < rec.stages.size(); ++i) {
            const rdu_placed& p = sec.stages[i];
            const auto& st = rec.stages[i];
            double busy = 0;
            for (size_t k = 0; k < st.computes.size(); ++k)
                busy += st.width(k) * ticks_to_seconds(r.step_end[st.computes[k]] - r.step_start[st.computes[k]]);
            nlohmann::json jo;
            jo["op"] = plan.stages[static_cast<size_t>(p.stage)].name;
            jo["pcus"] = st.pcus;
            jo["pmus"] = st.pmus;
            jo["busy_per_pcu_s"] = st.pcus > 0 ? busy / st.pcus : 0.0;
            jo["units"] = planned->units[si][i];
            ops.push_back(jo);
        }
        js["ops"] = ops;
        std::string line = "section " + std::to_string(si) + ": " + std::to_string(sec.stages.size()) + " stages on " +
                           std::to_string(sec.pcus) + " PCUs / " + std::to_string(sec.pmus) + " PMUs, " +
                           std::to_string(sec.tiles) + " tile" + (sec.tiles == 1 ? "" : "s") + "; ";
        if (bn >= 0) {
            const rdu_placed& p = sec.stages[static_cast<size_t>(bn)];
            const std::string name = plan.stages[static_cast<size_t>(p.stage)].name;
            js["bottleneck"] = name;
            js["bottleneck_busy_s"] = bn_busy;
            line += "bottleneck '" + name + "' (" + std::to_string(p.pcus.size()) + " PCUs, " +
                    format_time(bn_busy / p.tiles) + " per tile); ";
        }
        line += format_time(end - t0) + " = reconfigure " + format_time(rc) + " + load " + format_time(ld) +
                " + fill " + format_time(fill) + " + steady " + format_time(steady) + " + drain " + format_time(drain) +
                " + store " + format_time(store);
        lines.push_back(line);
        secs.push_back(js);
    }
    const double total = tot_cfg + tot_load + tot_fill + tot_steady + tot_drain + tot_store;
    auto pct = [&](double x) { return format_number(total > 0 ? 100 * x / total : 0, 3) + "%"; };
    s.notes.push_back("time: reconfiguration " + format_time(tot_cfg) + " (" + pct(tot_cfg) + "), loads " +
                      format_time(tot_load) + " (" + pct(tot_load) + "), pipeline fill " + format_time(tot_fill) +
                      " (" + pct(tot_fill) + ") and drain " + format_time(tot_drain) + " (" + pct(tot_drain) +
                      "), steady streaming " + format_time(tot_steady) + " (" + pct(tot_steady) + "), stores " +
                      format_time(tot_store) + " (" + pct(tot_store) + ")");
    // One line per section; very long runs keep the first and last ones.
    const size_t keep = 24;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines.size() > keep && i == keep / 2)
            s.notes.push_back("... " + std::to_string(lines.size() - keep) +
                              " more sections in summary.json (mapping.measured)");
        if (lines.size() > keep && i >= keep / 2 && i < lines.size() - keep / 2) continue;
        s.notes.push_back(lines[i]);
    }
    nlohmann::json meas;
    meas["sections"] = secs;
    meas["reconfigure_s"] = tot_cfg;
    meas["load_s"] = tot_load;
    meas["fill_s"] = tot_fill;
    meas["steady_s"] = tot_steady;
    meas["drain_s"] = tot_drain;
    meas["store_s"] = tot_store;
    s.details["measured"] = meas;
}

}  // namespace

TESSEL_REGISTER_EXPLAINER(explainer_info{"rdu", explain_rdu});

}  // namespace tessel
