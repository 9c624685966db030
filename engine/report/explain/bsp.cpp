// The bsp mapper's explainer: time per superstep split into exchange, compute and sync, the optimizer's
// supersteps, and the longest supersteps.
#include <algorithm>

#include "engine/mappers/bsp/bsp_mapper.h"
#include "engine/report/explain/explainer.h"

namespace tessel {

namespace {

double superstep_seconds(const nlohmann::json& j) {
    return j["exchange_s"].get<double>() + j["compute_s"].get<double>() + j["sync_s"].get<double>();
}

void explain_bsp(const mapping& m, const platform&, const executor::result& r, run_summary& s) {
    const bsp_record* planned = m.record_as<bsp_record>();
    if (!planned || planned->steps.empty()) return;
    const std::vector<bsp_mapper::superstep>& steps = planned->steps;
    double tc = 0, ts = 0, tx = 0;
    tick prev = r.start;
    nlohmann::json arr = nlohmann::json::array();
    std::vector<std::pair<double, size_t>> longest;
    for (size_t i = 0; i < steps.size(); ++i) {
        const bsp_mapper::superstep& st = steps[i];
        tick xend = prev;
        for (std::uint32_t k = st.first; k < st.compute; ++k) xend = std::max(xend, r.step_end[k]);
        if (st.coarse) xend = std::max(xend, r.step_start[st.compute]);  // its head: the last tile's data in
        const tick sync_start = std::max(r.step_start[st.sync], xend);
        const tick sync_end = r.step_end[st.sync];
        const double x = ticks_to_seconds(xend - prev), c = ticks_to_seconds(sync_start - xend),
                     y = ticks_to_seconds(sync_end - sync_start);
        tx += x, tc += c, ts += y;
        nlohmann::json j;
        j["name"] = st.name;
        j["exchange_s"] = x;
        j["compute_s"] = c;
        j["sync_s"] = y;
        j["tiles"] = st.tiles;
        j["exchange_bytes"] = st.exchange_bytes;
        j["streamed_bytes"] = st.streamed_bytes;
        j["planned_compute_s"] = st.predicted_compute;
        arr.push_back(j);
        longest.emplace_back(x + c + y, i);
        prev = sync_end;
    }
    const double total = tc + ts + tx;
    double updates = 0;
    size_t update_steps = 0;
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].update) updates += superstep_seconds(arr[i]), ++update_steps;
    s.details["supersteps"] = arr;
    s.details["phase_totals_s"] = {{"compute", tc}, {"sync", ts}, {"exchange", tx}};
    auto pct = [&](double v) { return format_number(total > 0 ? 100 * v / total : 0, 3) + "%"; };
    s.notes.push_back(std::to_string(steps.size()) + " supersteps: compute " + format_time(tc) + " (" + pct(tc) +
                      "), sync " + format_time(ts) + " (" + pct(ts) + "), exchange " + format_time(tx) + " (" +
                      pct(tx) + ")");
    if (update_steps > 0) {
        s.details["optimizer_s"] = updates;
        s.notes.push_back(
            "optimizer updates: " + std::to_string(update_steps) + " supersteps, " + format_time(updates) + " (" +
            pct(updates) +
            " of the supersteps; weights and state rewritten in place, streamed ones read and written back)");
    }
    std::sort(longest.rbegin(), longest.rend());
    for (size_t i = 0; i < longest.size() && i < 5; ++i) {
        const auto& j = arr[longest[i].second];
        s.notes.push_back("  superstep " + std::to_string(longest[i].second) + " '" + j["name"].get<std::string>() +
                          "': " + format_time(longest[i].first) + " = compute " +
                          format_time(j["compute_s"].get<double>()) + " + sync " +
                          format_time(j["sync_s"].get<double>()) + " + exchange " +
                          format_time(j["exchange_s"].get<double>()) + " (" +
                          format_bytes(j["exchange_bytes"].get<double>() + j["streamed_bytes"].get<double>()) + " in)");
    }
}

}  // namespace

TESSEL_REGISTER_EXPLAINER(explainer_info{"bsp", explain_bsp});

}  // namespace tessel
