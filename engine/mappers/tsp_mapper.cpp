#include "engine/mappers/tsp_mapper.h"

#include <algorithm>
#include <numeric>

#include "engine/mappers/toolkit/parts.h"
#include "engine/mappers/tsp_scheduler.h"
#include "models/core/registry.h"
#include "models/streaming/tsp.h"

namespace tessel {

void tsp_mapper::options::declare(param_decl& d) {
    d(chip, "chip", "", "the tsp component to schedule (default: the first)");
    d(fuse_epilogues, "fuse_epilogues", "true",
      "fuse elementwise and batchnorm ops whose only input is a matrix product into that product's VXM epilogue, and "
      "a residual add (a matrix product's result plus a tensor written before it) with the ops after it");
}

mapping tsp_mapper::map(const workload_graph& g, const platform& plat) const {
    // A static schedule is written in the tsp kind's own instructions and timing rules (tsp::timing), so this
    // mapper reaches the chip as that kind, checked by the kind registry (as_kind), not by a capability query.
    auto is_tsp = [](const component& c) { return as_kind<tsp>(c) != nullptr; };
    const tsp* chip = as_kind<tsp>(
        toolkit::first(plat, toolkit::find_part(plat, m_opt.chip, {"tsp mapper", "chip", "a tsp", is_tsp})));
    tsp_sched::scheduler sch(g, *chip, m_opt);
    sch.run(plat.title());

    // Steps in order of their cycle (producers before consumers at equal cycles), each fixed to its cycle.
    std::vector<std::uint32_t> order(sch.records.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return sch.records[a].in.cycle < sch.records[b].in.cycle;
    });
    std::vector<std::uint32_t> step_of(order.size());
    for (std::uint32_t s = 0; s < order.size(); ++s) step_of[order[s]] = s;
    mapping m;
    m.prog.name = g.name;
    m.prog.strict_schedule = true;
    for (const auto& n : sch.op_names) m.prog.intern_op(n);
    const tsp::timing& tm = chip->model();
    std::int64_t predicted = 0;
    for (std::uint32_t s = 0; s < order.size(); ++s) {
        tsp_sched::rec r = sch.records[order[s]];
        for (auto& p : r.in.producer)
            if (p != ~0u) p = step_of[p];
        if (r.in.after != ~0u) r.in.after = step_of[r.in.after];
        if (r.in.cycle < 0)
            throw std::logic_error("tsp mapper: instruction '" + r.in.name + "' scheduled before cycle 0");
        const std::uint32_t id =
            m.prog.add_compute(m.prog.intern_op(sch.op_names[r.op]),
                               endpoint{chip->id(), static_cast<std::int32_t>(r.in.unit), 0}, m.prog.add_work(r.w), {});
        m.prog.steps[id].not_before = tm.clk.cycles(static_cast<double>(r.in.cycle));  // from the program start
        predicted = std::max(predicted, r.in.cycle + tm.busy(r.in) + tm.skew);
        m.prog.set_payload(id, std::make_shared<tsp::instruction>(std::move(r.in)));
    }
    auto planned = std::make_shared<tsp_record>();
    planned->predicted_cycles = predicted;
    planned->hz = tm.clk.hz;
    for (const auto& [n, a, b, u] : sch.spans) planned->spans.push_back(tsp_record::op_span{n, a, b, u});
    m.record = planned;
    m.notes.push_back("static schedule: " + std::to_string(order.size()) + " instructions, predicted " +
                      std::to_string(predicted) + " cycles (" +
                      format_time(static_cast<double>(predicted) / tm.clk.hz) + " at " +
                      format_quantity(quantity{tm.clk.hz, dimension::frequency}) + ")");
    for (auto& n : sch.notes) m.notes.push_back(std::move(n));
    m.details = sch.details;
    m.details["mapper"] = "tsp";
    m.details["instructions"] = order.size();
    m.details["predicted_cycles"] = predicted;
    m.samples = std::max(1.0, g.batch);
    return m;
}

TESSEL_REGISTER_MAPPER(make_mapper<tsp_mapper>(
    "tsp",
    "Groq TSP: a cycle-exact static schedule of MXM passes, VXM and SXM streams between MEM slices; the "
    "simulation must end at the predicted cycle"));

}  // namespace tessel
