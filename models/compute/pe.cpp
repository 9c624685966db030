#include "models/compute/pe.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void pe::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the MAC datapath and issue logic (default: the platform clock)");
    d(macs_per_cycle, "macs_per_cycle", "{fp32: 64, bf16: 256, fp16: 256, int8: 512}",
      "multiply-accumulates per cycle at peak, per data type (SIMD mode; illustrative teaching defaults)");
    d(vector_lanes, "vector_lanes", "16", "element operations per cycle on the vector path (activations, norms)",
      bound::positive);
    d(issue_overhead, "issue_overhead", "4cycles", "fixed cost to start one step (decode, address setup)");
    d.choice(mode, "mode", "simd", {"simd", "systolic"},
             "simd: MACs at macs_per_cycle; systolic: a rows x cols array timed per fold with fill and drain");
    d(rows, "rows", "16", "systolic array rows (systolic mode)", bound::positive);
    d(cols, "cols", "16", "systolic array columns (systolic mode)", bound::positive);
    d.choice(dataflow, "dataflow", "ws", {"os", "ws", "is"},
             "systolic dataflow: output-, weight- or input-stationary (which operand stays in the array)");
    d(scalesim, "scalesim", "false",
      "count a systolic step as SCALE-Sim v2 reports it (compute cycles, InterfaceBandwidth: CALC): no issue "
      "overhead, and the index of the last busy cycle, one less than the cycles busy (docs/timing-model.md)");
    declare_energy(d, energy, energy_45nm::compute);
}

pe::timing::timing(const params& prm)
    : p(prm),
      clk(prm.clock.clock()),
      systolic(prm.mode == "systolic"),
      dataflow(prm.dataflow.empty() ? 'w' : prm.dataflow[0]) {
    for (int i = 0; i < dtype_count; ++i) peak[static_cast<size_t>(i)] = lookup_peak(static_cast<dtype>(i));
}

double pe::timing::peak_macs_per_cycle(dtype t) const { return peak[static_cast<size_t>(t)]; }

double pe::timing::lookup_peak(dtype t) const {
    const bool supported = p.macs_per_cycle.has(t) || (t == dtype::bf16 && p.macs_per_cycle.has(dtype::fp16)) ||
                           (t == dtype::fp16 && p.macs_per_cycle.has(dtype::bf16));
    if (!supported) return 0;
    if (systolic) return static_cast<double>(p.rows * p.cols);
    if (p.macs_per_cycle.has(t)) return p.macs_per_cycle.at(t);
    return p.macs_per_cycle.at(t == dtype::bf16 ? dtype::fp16 : dtype::bf16);
}

void pe::timing::check(const work& w, const std::string& who) const {
    if (w.macs > 0 && peak_macs_per_cycle(w.type) <= 0) {
        std::string have;
        for (const auto& [t, r] : p.macs_per_cycle.by_type)
            have += std::string(have.empty() ? "" : ", ") + dtype_name(t);
        throw input_error(who + " cannot compute in " + dtype_name(w.type) + " (macs_per_cycle lists: " + have +
                          "); set the workload precision to one of those or add a rate for it");
    }
}

double pe::timing::cycles(const work& w) const {
    const bool scalesim_count = systolic && p.scalesim && w.is_matmul() && w.macs > 0;
    double c = scalesim_count ? 0.0 : p.issue_overhead.to_cycles(clk);
    if (w.macs > 0) {
        const double macs_per_cycle = peak_macs_per_cycle(w.type);
        if (macs_per_cycle <= 0)
            throw input_error("processing element cannot compute in " + std::string(dtype_name(w.type)));
        if (systolic && w.is_matmul()) {
            // Map (M x K) . (K x N) onto the R x C array as SCALE-Sim v2 does (Samajdar et al., ISPASS 2020;
            // compute/systolic_compute_{os,ws,is}.py): two spatial dimensions fold over rows and columns, the third
            // streams through (T). Per fold, T rows of operands skewed over the array, plus its fill: the
            // output-stationary array drains its results as the next operands skew in (R + C + T - 2); weight- and
            // input-stationary first load the stationary operand, R more cycles (2R + C + T - 2). Folds run one
            // after another.
            const double R = static_cast<double>(p.rows), C = static_cast<double>(p.cols);
            double spatial_r, spatial_c, temporal, fill;
            if (dataflow == 'o') {
                spatial_r = static_cast<double>(w.m), spatial_c = static_cast<double>(w.n),
                temporal = static_cast<double>(w.k);
                fill = R + C - 2;
            } else if (dataflow == 'w') {
                spatial_r = static_cast<double>(w.k), spatial_c = static_cast<double>(w.n),
                temporal = static_cast<double>(w.m);
                fill = 2 * R + C - 2;
            } else {
                spatial_r = static_cast<double>(w.k), spatial_c = static_cast<double>(w.m),
                temporal = static_cast<double>(w.n);
                fill = 2 * R + C - 2;
            }
            const double folds = std::ceil(spatial_r / R) * std::ceil(spatial_c / C);
            const double batch = static_cast<double>(std::max<std::int64_t>(1, w.batch));
            const double busy = batch * folds * (fill + temporal);
            // SCALE-Sim reports the last busy cycle's index (its cycles count from 0); never below the MACs at
            // one per cell per cycle (a 1 x 1 array would otherwise beat its own peak by a cycle).
            c += scalesim_count ? std::max(busy - 1, std::ceil(w.macs / macs_per_cycle)) : busy;
        } else {
            c += std::ceil(w.macs / macs_per_cycle);
        }
    }
    if (w.vector_ops > 0) c += std::ceil(w.vector_ops / static_cast<double>(p.vector_lanes));
    return c;
}

double pe::timing::peak_flops(const std::array<double, dtype_count>& macs_by_type) const {
    size_t best = static_cast<size_t>(dtype::fp16);
    for (size_t i = 0; i < macs_by_type.size(); ++i)
        if (macs_by_type[i] > macs_by_type[best]) best = i;
    return 2 * peak_macs_per_cycle(static_cast<dtype>(best)) * clk.hz;
}

double pe::timing::ideal_seconds(const work& w) const {
    double s = 0;
    if (w.macs > 0) {
        const double macs_per_cycle = peak_macs_per_cycle(w.type);
        if (macs_per_cycle > 0) s += w.macs / (macs_per_cycle * clk.hz);
    }
    if (w.vector_ops > 0) s += w.vector_ops / (static_cast<double>(p.vector_lanes) * clk.hz);
    return s;
}

std::vector<stat_decl> pe::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates performed"},
        {"vector_ops", "op", "element operations on the vector path"},
        {"steps", "step", "compute steps executed"},
        {"busy", "s", "time the datapath was occupied"},
        {"utilisation", "1", "busy time over simulated time"},
        {"efficiency", "1", "time at peak rate for the work done over simulated time"},
    };
}

pe::pe(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_timing((load_params(m_p, a), m_p)),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_steps(stats().scalar("steps")) {
    init();
}

void pe::init() {
    set_clock(m_p.clock);
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_pipe.busy); });
    stats().formula("utilisation", [this](double s) { return s > 0 ? ticks_to_seconds(m_pipe.busy) / s : 0.0; });
    stats().formula("efficiency", [this](double s) { return s > 0 ? m_ideal / s : 0.0; });
}

void pe::transport(txn& t) {
    // A pe holds no data: only compute reaches it (a hand-written program's transfer to one is refused where it is
    // read; this catches any other, such as an emitted program's).
    if (t.kind != txn_kind::compute || !t.w)
        throw input_error("a transfer reads or writes " + path() +
                          " (pe), which holds no data; move data to or from its "
                          "tile or its sram");
    const work& w = *t.w;
    const tick dur = m_timing.ticks(w);
    const tick start = m_pipe.reserve(t.head, dur);
    t.head = start;
    t.tail = start + dur;
    m_macs += w.macs;
    m_macs_by_type[static_cast<size_t>(w.type)] += w.macs;
    m_vector_ops += w.vector_ops;
    m_steps += 1;
    m_ideal += m_timing.ideal_seconds(w);
    spend(t, energy_part::compute,
          m_p.energy.joules(w.type, w.macs, w.vector_ops, name()) + m_p.energy.busy_joules(ticks_to_seconds(dur)),
          start, start + dur);
    sim().trace.slice(m_track, start, start + dur, t.op, t.step);
}

void pe::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::compute;
    u.work = 2 * m_macs + m_vector_ops;
    u.work_unit = "FLOP";
    u.peak_rate = m_timing.peak_flops(m_macs_by_type);
    u.ideal_seconds = m_ideal;
    u.ideal_max = m_ideal;
    u.busy_seconds = ticks_to_seconds(m_pipe.busy);
    u.busy_max = u.busy_seconds;
    charge(u, m_p.energy.joules(m_macs_by_type, m_vector_ops, path()) + m_p.energy.busy_joules(u.busy_seconds),
           m_p.energy.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND(
    make_kind<pe>("pe", "compute",
                  "processing element: MAC datapath (SIMD rate per data type, or an R x C systolic array "
                  "with os/ws/is dataflow, fill/drain and tile quantisation) plus vector lanes"));

}  // namespace tessel
