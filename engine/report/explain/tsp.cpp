// The tsp mapper's explainer: the simulated length against the schedule's prediction (they must be equal), and
// time by unit kind over the ops' spans.
#include <cmath>

#include "engine/mappers/tsp_mapper.h"
#include "engine/report/explain/explainer.h"

namespace tessel {

namespace {

void explain_tsp(const mapping& m, const platform&, const executor::result& r, run_summary& s) {
    const tsp_record* rec = m.record_as<tsp_record>();
    if (!rec) return;
    const double simulated = ticks_to_seconds(r.duration()) * rec->hz;
    const auto sim_cycles = static_cast<std::int64_t>(std::llround(simulated));
    const std::int64_t predicted = rec->predicted_cycles;
    const bool equal = sim_cycles == predicted && std::fabs(simulated - static_cast<double>(sim_cycles)) < 1e-6;
    s.notes.push_back("simulated " + std::to_string(sim_cycles) + " cycles; the schedule predicted " +
                      std::to_string(predicted) + (equal ? " (equal)" : " (MISMATCH: a modelling bug)"));
    s.details["tsp"] = {{"predicted_cycles", predicted}, {"simulated_cycles", sim_cycles}, {"equal", equal}};
    // Time by unit kind over the op spans (ops may overlap; each op counts from its first to its last cycle).
    double mxm = 0, vxm = 0, sxm = 0;
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& sp : rec->spans) {
        const double c = static_cast<double>(sp.last - sp.first);
        (sp.unit == "MXM" ? mxm : sp.unit == "VXM" ? vxm : sxm) += c;
        ops.push_back({{"op", sp.name}, {"unit", sp.unit}, {"first_cycle", sp.first}, {"last_cycle", sp.last}});
    }
    s.details["tsp"]["ops"] = ops;
    s.notes.push_back("op spans: matrix products " + format_number(mxm, 6) + " cycles, vector ops " +
                      format_number(vxm, 6) + " cycles, data movement " + format_number(sxm, 6) + " cycles");
}

}  // namespace

TESSEL_REGISTER_EXPLAINER(explainer_info{"tsp", explain_tsp});

}  // namespace tessel
