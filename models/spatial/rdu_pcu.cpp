#include "models/spatial/rdu_pcu.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"
#include "models/core/unit_gang.h"

namespace tessel {

void rdu_pcu::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the pipeline (default: the platform clock)");
    d(lanes, "lanes", "16", "SIMD lanes: elements of a vector processed side by side", bound::positive);
    d(stages, "stages", "6", "pipeline stages of functional units (the depth of the pipeline)", bound::positive);
    d(fu_macs, "fu_macs", "{fp32: 1}",
      "multiply-accumulates per functional unit per cycle, per data type (fp16 and bf16 stand in for each other "
      "when only one is listed); the unit's peak is lanes x stages x this");
    d.choice(matmul_mode, "matmul_mode", "simd", {"simd", "systolic", "best"},
             "how matrix products run: simd (K along the stages, partial sums through the PMU), systolic (a "
             "lanes x stages weight-stationary array, SN40L), best (whichever is faster for each step)");
    d(input_bandwidth, "input_bandwidth", "64B/cycle", "bytes per cycle the unit takes in over its vector inputs");
    d(output_bandwidth, "output_bandwidth", "64B/cycle", "bytes per cycle the unit sends out over its vector outputs");
    d(accumulator, "accumulator", "4B", "bytes of one partial sum (fp32 accumulation)", bound::positive);
    d(config_bytes, "config_bytes", "4KiB",
      "configuration state loaded into the unit when a graph section is configured");
    declare_energy(d, energy, energy_7nm::compute);
}

rdu_pcu::timing::timing(const params& p) : clk(p.clock.clock()), m_p(p) {
    m_simd = p.matmul_mode != "systolic";
    m_systolic = p.matmul_mode != "simd";
    for (int i = 0; i < dtype_count; ++i) {
        const dtype t = static_cast<dtype>(i);
        double r = 0;
        if (p.fu_macs.has(t))
            r = p.fu_macs.at(t);
        else if (t == dtype::bf16 && p.fu_macs.has(dtype::fp16))
            r = p.fu_macs.at(dtype::fp16);
        else if (t == dtype::fp16 && p.fu_macs.has(dtype::bf16))
            r = p.fu_macs.at(dtype::bf16);
        m_rate[static_cast<size_t>(i)] = r;
        m_peak[static_cast<size_t>(i)] = r * static_cast<double>(p.lanes * p.stages);
    }
    m_in_bpc = p.input_bandwidth.bytes_per_second(clk) / clk.hz;
    m_out_bpc = p.output_bandwidth.bytes_per_second(clk) / clk.hz;
}

void rdu_pcu::timing::check(const work& w, const std::string& who) const {
    if (w.macs > 0 && peak_macs_per_cycle(w.type) <= 0) {
        std::string have;
        for (const auto& [t, r] : m_p.fu_macs.by_type) have += std::string(have.empty() ? "" : ", ") + dtype_name(t);
        throw input_error(who + " cannot compute in " + dtype_name(w.type) + " (fu_macs lists: " + have +
                          "); set the workload precision to one of those or add a rate for it");
    }
}

rdu_pcu::timing::shape rdu_pcu::timing::matmul(const work& w, double rows_k, double cols_n, double per_fold_overhead,
                                               double fill) const {
    const double b = static_cast<double>(std::max<std::int64_t>(1, w.batch));
    const double m = static_cast<double>(w.m), n = static_cast<double>(w.n), k = static_cast<double>(w.k);
    const double eb = dtype_bits(w.type) / 8.0;
    const double acc = static_cast<double>(m_p.accumulator.bytes());
    const double kf = std::ceil(k / rows_k), nf = std::ceil(n / cols_n);
    shape s;
    s.cycles = b * kf * nf * (m + per_fold_overhead) + fill;
    // A streams once per N block, the weights once, partial sums out and back between K blocks.
    s.in = b * (m * k * eb * nf + k * n * eb + (kf - 1) * m * n * acc);
    s.out = b * ((kf - 1) * m * n * acc + m * n * eb);
    return s;
}

rdu_pcu::timing::estimate rdu_pcu::timing::evaluate(const work& w) const {
    const double lanes = static_cast<double>(m_p.lanes), stages = static_cast<double>(m_p.stages);
    const double vec = w.vector_ops > 0 ? std::ceil(w.vector_ops / (lanes * stages)) : 0.0;
    const double peak = peak_macs_per_cycle(w.type);
    if (w.macs > 0 && peak <= 0)
        throw input_error("pattern compute unit cannot compute in " + std::string(dtype_name(w.type)));
    // Never faster than the MACs at peak, whatever the view says.
    const double floor_macs = w.macs > 0 ? std::ceil(w.macs / peak) : 0.0;
    auto finish = [&](double compute, double in, double out, bool systolic) {
        estimate e;
        e.compute = compute;
        e.in_bytes = in;
        e.out_bytes = out;
        e.systolic = systolic;
        e.cycles = std::max({compute, in / m_in_bpc, out / m_out_bpc});
        return e;
    };
    if (w.macs > 0 && w.is_matmul()) {
        const double r = m_rate[static_cast<size_t>(w.type)];
        estimate best;
        bool have = false;
        if (m_simd) {
            const shape s = matmul(w, stages, lanes * r, 0.0, stages);
            best = finish(std::max(s.cycles, floor_macs + stages) + vec, s.in, s.out, false);
            have = true;
        }
        if (m_systolic) {
            const double rows = lanes, cols = stages * r;  // the array: K along its rows, N along its columns
            const shape s = matmul(w, rows, cols, 2 * rows + cols - 2, 0.0);
            const estimate e = finish(std::max(s.cycles, floor_macs) + vec, s.in, s.out, true);
            if (!have || e.cycles < best.cycles) best = e;
        }
        return best;
    }
    estimate e = finish(floor_macs + vec, w.bytes_in + w.bytes_weight, w.bytes_out, false);
    e.cycles += stages;  // the pipeline fills once per step
    return e;
}

double rdu_pcu::timing::ideal_seconds(const work& w) const {
    double s = 0;
    const double peak = peak_macs_per_cycle(w.type);
    if (w.macs > 0 && peak > 0) s += w.macs / (peak * clk.hz);
    if (w.vector_ops > 0) s += w.vector_ops / (vector_ops_per_cycle() * clk.hz);
    return s;
}

double rdu_pcu::timing::peak_flops(const std::array<double, dtype_count>& macs_by_type) const {
    size_t best = static_cast<size_t>(dtype::bf16);
    for (size_t i = 0; i < macs_by_type.size(); ++i)
        if (macs_by_type[i] > macs_by_type[best]) best = i;
    double peak = m_peak[best];
    if (peak <= 0)  // nothing ran in a supported type: the best rate the unit has
        for (double p : m_peak) peak = std::max(peak, p);
    return 2 * peak * clk.hz;
}

std::vector<stat_decl> rdu_pcu::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates performed"},
        {"vector_ops", "op", "element operations"},
        {"steps", "step", "compute steps (tiles of an op's share)"},
        {"systolic_steps", "step", "matrix-product steps run in the systolic configuration"},
        {"config_bytes", "B", "configuration bytes loaded"},
        {"busy", "s", "time the pipeline was occupied"},
        {"utilisation", "1", "busy time over simulated time"},
        {"efficiency", "1", "time at peak rate for the work done over simulated time"},
    };
}

rdu_pcu::rdu_pcu(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_timing((load_params(m_p, a), m_p)),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_steps(stats().scalar("steps")),
      m_systolic_steps(stats().scalar("systolic_steps")),
      m_config_bytes(stats().scalar("config_bytes")) {
    set_clock(m_p.clock);
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_pipe.busy); });
    stats().formula("utilisation", [this](double s) { return s > 0 ? ticks_to_seconds(m_pipe.busy) / s : 0.0; });
    stats().formula("efficiency", [this](double s) { return s > 0 ? m_ideal / s : 0.0; });
}

void rdu_pcu::transport(txn& t) {
    switch (t.kind) {
        case txn_kind::compute: {
            // One unit, or a gang of PCUs in lockstep (the mapper's gang form), each an equal share of the work.
            const unit_gang* gang = payload_as<unit_gang>(t.payload);
            if (t.payload && !gang)
                throw input_error(path() + ": a compute step carries a payload that is not a gang of PCUs");
            work w = *t.w;
            if (gang) {
                const double k = static_cast<double>(gang->size());
                for (double* x : {&w.macs, &w.vector_ops, &w.bytes_in, &w.bytes_weight, &w.bytes_out}) *x /= k;
            }
            const timing::estimate e = m_timing.evaluate(w);
            const tick dur = m_timing.clk.cycles(e.cycles);
            tick start = std::max(t.head, m_pipe.free_at);
            if (gang)
                for (std::int32_t off : gang->others) start = std::max(start, gang_member(off).m_pipe.free_at);
            compute(t, w, e.systolic, start, dur);
            if (gang)
                for (std::int32_t off : gang->others) gang_member(off).compute(t, w, e.systolic, start, dur);
            t.head = start;
            t.tail = start + dur;
            return;
        }
        case txn_kind::write: {
            // Configuration (or data) into the unit: it takes the bytes at its input bandwidth.
            const tick dur =
                transfer_ticks(static_cast<double>(t.bytes), m_p.input_bandwidth.bytes_per_second(m_timing.clk));
            const tick start = m_pipe.reserve(t.head, dur);
            m_config_bytes += static_cast<double>(t.bytes);
            spend(t, energy_part::compute, m_p.energy.busy_joules(ticks_to_seconds(dur)), start, start + dur);
            sim().trace.slice(m_track, start, start + dur, t.op, t.step);
            t.head = start;
            t.tail = std::max(start + dur, t.tail);
            return;
        }
        case txn_kind::read:
            // Results leave as the step that computed them produced them; no further time here.
            t.unit = 0;
            return;
        default:
            throw input_error("pattern compute unit " + path() + " takes compute steps and transfers, not " +
                              (t.kind == txn_kind::route ? "route" : "sync") + " requests");
    }
}

rdu_pcu& rdu_pcu::gang_member(std::int32_t offset) const {
    const auto& all = sim().components();
    const std::int64_t at = static_cast<std::int64_t>(id()) + offset;
    auto* u = at >= 0 && at < static_cast<std::int64_t>(all.size())
                  ? dynamic_cast<rdu_pcu*>(all[static_cast<size_t>(at)])
                  : nullptr;
    if (!u)
        throw input_error(path() + ": a gang member " + std::to_string(offset) +
                          " components away is not a pattern compute unit");
    return *u;
}

void rdu_pcu::compute(const txn& t, const work& w, bool systolic, tick start, tick dur) {
    m_pipe.reserve(start, dur);
    m_macs += w.macs;
    m_macs_by_type[static_cast<size_t>(w.type)] += w.macs;
    m_vector_ops += w.vector_ops;
    m_steps += 1;
    if (systolic) m_systolic_steps += 1;
    m_ideal += m_timing.ideal_seconds(w);
    spend(t, energy_part::compute,
          m_p.energy.joules(w.type, w.macs, w.vector_ops, name()) + m_p.energy.busy_joules(ticks_to_seconds(dur)),
          start, start + dur);
    sim().trace.slice(m_track, start, start + dur, t.op, t.step);
}

void rdu_pcu::usage(std::vector<resource_usage>& out) const {
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
    make_kind<rdu_pcu>("rdu_pcu", "compute",
                       "RDU pattern compute unit: lanes x stages SIMD pipeline; matrix products as SIMD "
                       "blocks (partial sums via the PMU) or a weight-stationary systolic array (SN40L), "
                       "bounded by its vector ports"));

}  // namespace tessel
