#include "models/spatial/wafer_pe_array.h"
#include "models/core/limits.h"

#include <algorithm>
#include <cmath>

#include "models/core/grid_span.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void wafer_pe_array::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the PEs and their routers (default: the platform clock)");
    d(width, "width", required, "PEs along x", bound::positive);
    d(height, "height", required, "PEs along y", bound::positive);
    if (!d.describing())
        require_units(static_cast<double>(width) * static_cast<double>(height),
                      "a wafer_pe_array of " + std::to_string(width) + " x " + std::to_string(height) + " PEs");
    d(sram, "sram", "48KiB",
      "SRAM of one PE; everything the PE computes on lives here (WSE-2: 48 KB in 8 banks, Hot Chips 34)",
      bound::positive);
    d(read_bandwidth, "read_bandwidth", "16B/cycle", "SRAM reads per cycle (WSE-2: two 64-bit reads, Hot Chips 34)");
    d(write_bandwidth, "write_bandwidth", "8B/cycle", "SRAM writes per cycle (WSE-2: one 64-bit write, Hot Chips 34)");
    d(ramp_bandwidth, "ramp_bandwidth", "4B/cycle",
      "router-to-PE ramp, each way: one 32-bit wavelet per cycle (Cerebras SDK); operands streamed from the fabric "
      "pass it");
    d(macs_per_cycle, "macs_per_cycle", "{fp16: 4, bf16: 4, fp32: 1}",
      "multiply-accumulates per cycle by data type (WSE-2: 4-wide fp16 SIMD, which the 2 x 64-bit reads feed)");
    d(vector_ops_per_cycle, "vector_ops_per_cycle", "{fp16: 4, bf16: 4, fp32: 1}",
      "element operations (add, multiply, compare) per cycle by data type, on the same SIMD datapath");
    d(task_overhead, "task_overhead", "0cycles",
      "fixed cycles to start one task (activation, operand descriptor setup); no published figure, 0 by default");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy of one PE's datapath per action, and its static power");
    declare_energy(d, sram_energy, energy_7nm::sram, "sram_energy",
                   "energy of one PE's SRAM per byte, and its static power");
    declare_energy(d, ramp_energy, energy_7nm::noc, "ramp_energy",
                   "energy per byte over one PE's ramp, and its static power");
}

namespace {

double rate_for(const rate_table& r, dtype t) {
    if (r.has(t)) return r.at(t);
    if (t == dtype::bf16 && r.has(dtype::fp16)) return r.at(dtype::fp16);
    if (t == dtype::fp16 && r.has(dtype::bf16)) return r.at(dtype::bf16);
    return 0;
}

}  // namespace

wafer_pe_array::timing::timing(const params& p) : clk(p.clock.clock()) {
    read_bpc = p.read_bandwidth.bytes_per_second(clk) / clk.hz;
    write_bpc = p.write_bandwidth.bytes_per_second(clk) / clk.hz;
    ramp_bpc = p.ramp_bandwidth.bytes_per_second(clk) / clk.hz;
    overhead_cycles = p.task_overhead.to_cycles(clk);
    for (int i = 0; i < dtype_count; ++i) {
        macs[static_cast<size_t>(i)] = rate_for(p.macs_per_cycle, static_cast<dtype>(i));
        vec[static_cast<size_t>(i)] = rate_for(p.vector_ops_per_cycle, static_cast<dtype>(i));
    }
}

void wafer_pe_array::timing::check(const work& w, const std::string& who) const {
    if ((w.macs > 0 && mac_rate(w.type) <= 0) || (w.vector_ops > 0 && vec_rate(w.type) <= 0))
        throw input_error(who + " cannot compute in " + std::string(dtype_name(w.type)) +
                          " (the PE's macs_per_cycle and vector_ops_per_cycle have no rate for it); set the workload "
                          "precision to a type the PE lists");
}

double wafer_pe_array::timing::compute_cycles(const work& w) const {
    double c = 0;
    if (w.macs > 0) c += std::ceil(w.macs / mac_rate(w.type) - 1e-9);
    if (w.vector_ops > 0) c += std::ceil(w.vector_ops / vec_rate(w.type) - 1e-9);
    return c;
}

double wafer_pe_array::timing::cycles(const work& w) const {
    double c = compute_cycles(w);
    if (w.bytes_in > 0) c = std::max(c, std::ceil(w.bytes_in / ramp_bpc - 1e-9));
    if (w.bytes_weight > 0) c = std::max(c, std::ceil(w.bytes_weight / read_bpc - 1e-9));
    if (w.bytes_out > 0) c = std::max(c, std::ceil(w.bytes_out / write_bpc - 1e-9));
    return overhead_cycles + c;
}

std::vector<stat_decl> wafer_pe_array::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates over all PEs"},
        {"vector_ops", "op", "element operations over all PEs"},
        {"sram_read_bytes", "B", "SRAM bytes read by compute steps"},
        {"sram_write_bytes", "B", "SRAM bytes written by compute steps"},
        {"ramp_bytes", "B", "operand bytes streamed into compute steps through the ramps"},
        {"fabric_bytes", "B", "bytes sent and received by transfers"},
        {"steps", "step", "compute steps (a span step counts once)"},
        {"busy_max", "s", "busiest PE's compute time"},
        {"utilisation", "1", "mean compute occupancy over all PEs"},
        {"sram_used_max", "B", "most bytes placed on one PE"},
        {"sram_used_mean", "B", "mean bytes placed per PE"},
        {"busy", "s", "compute time per PE (x-major)", stat_shape::per_unit},
        {"sram_used", "B", "bytes placed per PE (x-major)", stat_shape::per_unit},
    };
}

wafer_pe_array::wafer_pe_array(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_timing((load_params(m_p, a), m_p)),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_read_bytes(stats().scalar("sram_read_bytes")),
      m_write_bytes(stats().scalar("sram_write_bytes")),
      m_ramp_bytes(stats().scalar("ramp_bytes")),
      m_fabric_bytes(stats().scalar("fabric_bytes")),
      m_steps(stats().scalar("steps")) {
    set_clock(m_p.clock);
    if (m_timing.read_bpc <= 0 || m_timing.write_bpc <= 0 || m_timing.ramp_bpc <= 0)
        throw input_error(
            "component '" + a.config_path + "' (wafer_pe_array): read, write and ramp bandwidths must be positive",
            a.where);
    if (m_p.sram.bytes() > 0xffffffffULL)
        throw input_error("component '" + a.config_path + "' (wafer_pe_array): sram above 4 GiB per PE", a.where);
    const size_t pes = static_cast<size_t>(m_p.width * m_p.height);
    if (pes > 50000000)
        throw input_error("component '" + a.config_path + "' (wafer_pe_array): more than 50 M PEs", a.where);
    m_pes = pes;  // m_pipe and m_work are made by the first compute step: a wafer a system's representative
                  // stands for never runs one (745,500 PEs, 48 MB on a WSE-2)
    m_sram = sram_tally(static_cast<int>(m_p.width), static_cast<int>(m_p.height), m_p.sram.bytes(), path());
    stats().formula("busy_max", [this](double) {
        tick b = 0;
        for (const auto& r : m_pipe) b = std::max(b, r.busy);
        return ticks_to_seconds(b);
    });
    stats().formula("utilisation", [this](double s) {
        double b = 0;
        for (const auto& r : m_pipe) b += ticks_to_seconds(r.busy);
        return s > 0 ? b / (s * static_cast<double>(m_pes)) : 0.0;
    });
    stats().formula("sram_used_max", [this](double) { return static_cast<double>(max_used_bytes()); });
    stats().formula("sram_used_mean", [this](double) {
        const auto& used = m_sram.per_pe();
        double s = 0;
        for (std::uint32_t u : used) s += u;
        return used.empty() ? 0.0 : s / static_cast<double>(used.size());
    });
    stats().per_unit("busy", [this](double) { return unit_busy(); });
    stats().per_unit("sram_used", [this](double) {
        const auto& used = m_sram.per_pe();
        return std::vector<double>(used.begin(), used.end());
    });
}

void wafer_pe_array::begin_program(tick /*origin*/, const std::vector<grid_placement>& placements) {
    m_sram.clear();
    for (const grid_placement& p : placements) m_sram.add(p);
}

std::vector<double> wafer_pe_array::unit_busy() const {
    std::vector<double> v(m_pes);
    for (size_t i = 0; i < m_pipe.size(); ++i) v[i] = ticks_to_seconds(m_pipe[i].busy);
    return v;
}

void wafer_pe_array::compute(txn& t, const grid_rect& s) {
    const work& w = *t.w;
    m_timing.check(w, path());
    const tick dur = m_timing.clk.cycles(m_timing.cycles(w));
    if (m_pipe.empty()) {
        m_pipe.resize(m_pes);
        m_work.resize(m_pes);
    }
    // Lockstep: every PE of the span starts when the last of them is free.
    tick start = t.head;
    for (int y = s.y0; y < s.y1; ++y) {
        const reservation* row = &m_pipe[static_cast<size_t>(unit_of(s.x0, y))];
        for (int x = 0; x < s.x1 - s.x0; ++x) start = std::max(start, row[x].free_at);
    }
    const double hz = m_timing.clk.hz;
    const double cs = m_timing.compute_cycles(w) / hz;
    for (int y = s.y0; y < s.y1; ++y) {
        const size_t base = static_cast<size_t>(unit_of(s.x0, y));
        for (size_t i = base; i < base + static_cast<size_t>(s.x1 - s.x0); ++i) {
            m_pipe[i].free_at = start + dur;
            m_pipe[i].busy += dur;
            pe_work& pw = m_work[i];
            pw.compute_s += cs;
            pw.read_b += w.bytes_weight;
            pw.write_b += w.bytes_out;
            pw.ramp_b += w.bytes_in;
        }
    }
    const double n = static_cast<double>(s.area());
    m_macs += w.macs * n;
    m_macs_by_type[static_cast<size_t>(w.type)] += w.macs * n;
    m_vector_ops += w.vector_ops * n;
    m_read_bytes += w.bytes_weight * n;
    m_write_bytes += w.bytes_out * n;
    m_ramp_bytes += w.bytes_in * n;
    m_steps += 1;
    const tick end = start + dur;
    spend(t, energy_part::compute,
          n * (m_p.energy.joules(w.type, w.macs, w.vector_ops, name()) + m_p.energy.busy_joules(ticks_to_seconds(dur))),
          start, end);
    spend(t, energy_part::sram, n * m_p.sram_energy.joules(w.bytes_weight, w.bytes_out), start, end);
    spend(t, energy_part::network, n * w.bytes_in * m_p.ramp_energy.transfer.joules(), start, end);
    t.head = start;
    t.tail = end;
}

int wafer_pe_array::span_track(const grid_rect& s) {
    const auto [it, fresh] = m_span_tracks.try_emplace({s.x0, s.y0, s.x1, s.y1}, -1);
    if (fresh)
        it->second = trace_track("pe[" + std::to_string(s.x0) + ".." + std::to_string(s.x1 - 1) + "," +
                                 std::to_string(s.y0) + ".." + std::to_string(s.y1 - 1) + "]");
    return it->second;
}

void wafer_pe_array::transport(txn& t) {
    if (t.unit < 0 || t.unit >= pe_count())
        throw input_error(path() + ": unit " + std::to_string(t.unit) + " is not one of the " +
                          std::to_string(m_p.width) + " x " + std::to_string(m_p.height) + " PEs");
    if (t.kind != txn_kind::compute) {
        // Reads and writes of transfers: the ramp (the fabric's injection and ejection links) is the limit.
        m_fabric_bytes += static_cast<double>(t.bytes);
        return;
    }
    const grid_rect pe = rect_of(t.unit);
    if (t.payload) {
        // A span: the step's PEs in lockstep; its unit is one of them.
        const auto* sp = payload_as<grid_span>(t.payload);
        if (!sp) throw input_error(path() + ": a compute step carries a payload that is not a span of PEs");
        const grid_rect& s = sp->rect;
        if (!holds(s) || !s.contains(pe))
            throw input_error(path() + ": span [" + std::to_string(s.x0) + "," + std::to_string(s.x1) + ") x [" +
                              std::to_string(s.y0) + "," + std::to_string(s.y1) + ") is empty, outside the " +
                              std::to_string(m_p.width) + " x " + std::to_string(m_p.height) +
                              " array or without the step's PE (" + std::to_string(pe.x0) + "," +
                              std::to_string(pe.y0) + ")");
        compute(t, s);
        if (sim().trace.enabled()) sim().trace.slice(span_track(s), t.head, t.tail, t.op, t.step);
        return;
    }
    compute(t, pe);
    if (sim().trace.enabled()) {
        if (m_pe_tracks.empty()) m_pe_tracks.assign(m_pipe.size(), -2);
        int& track = m_pe_tracks[static_cast<size_t>(t.unit)];
        if (track == -2) track = trace_track("pe[" + std::to_string(pe.x0) + "," + std::to_string(pe.y0) + "]");
        sim().trace.slice(track, t.head, t.tail, t.op, t.step);
    }
}

void wafer_pe_array::usage(std::vector<resource_usage>& out) const {
    const double hz = m_timing.clk.hz;
    size_t best = static_cast<size_t>(dtype::fp16);
    for (size_t i = 0; i < m_macs_by_type.size(); ++i)
        if (m_macs_by_type[i] > m_macs_by_type[best]) best = i;
    const double pes = static_cast<double>(m_pes);
    auto add = [&](const std::string& what, resource_class cls, double peak, const char* unit, auto work_of,
                   auto ideal_of, double joules, double leakage_per_pe) {
        resource_usage u;
        u.name = path() + "." + what;
        u.kind = kind_name();
        u.cls = cls;
        u.work_unit = unit;
        u.peak_rate = peak;
        u.units = static_cast<double>(m_pes);
        for (size_t i = 0; i < m_pipe.size(); ++i) {
            u.work += work_of(m_work[i]);
            const double ideal = ideal_of(m_work[i]);
            u.ideal_seconds += ideal;
            u.ideal_max = std::max(u.ideal_max, ideal);
            const double b = ticks_to_seconds(m_pipe[i].busy);
            u.busy_seconds += b;
            u.busy_max = std::max(u.busy_max, b);
        }
        charge(u, joules, leakage_per_pe * pes);
        out.push_back(u);
    };
    double read_b = 0, write_b = 0, ramp_b = 0, pipe_busy = 0;
    for (const auto& r : m_pipe) pipe_busy += ticks_to_seconds(r.busy);
    for (const auto& w : m_work) read_b += w.read_b, write_b += w.write_b, ramp_b += w.ramp_b;
    const double flops = 2 * m_macs + m_vector_ops;
    const double peak_flops = 2 * m_timing.macs[best] * hz;
    // Compute work per PE is not kept in FLOPs (the rate depends on the data type), so the array's FLOPs are
    // spread over the PEs in proportion to their datapath time; the physical bound uses the datapath time.
    double total_cs = 0;
    for (const auto& w : m_work) total_cs += w.compute_s;
    add(
        "pe", resource_class::compute, peak_flops, "FLOP",
        [&](const pe_work& w) { return total_cs > 0 ? flops * w.compute_s / total_cs : 0.0; },
        [](const pe_work& w) { return w.compute_s; },
        m_p.energy.joules(m_macs_by_type, m_vector_ops, path()) + m_p.energy.busy_joules(pipe_busy),
        m_p.energy.leakage.watts());
    add(
        "sram_read", resource_class::memory, m_timing.read_bpc * hz, "B", [](const pe_work& w) { return w.read_b; },
        [&](const pe_work& w) { return w.read_b / (m_timing.read_bpc * hz); }, read_b * m_p.sram_energy.read.joules(),
        m_p.sram_energy.leakage.watts());
    add(
        "sram_write", resource_class::memory, m_timing.write_bpc * hz, "B", [](const pe_work& w) { return w.write_b; },
        [&](const pe_work& w) { return w.write_b / (m_timing.write_bpc * hz); },
        write_b * m_p.sram_energy.write.joules(),
        0.0);  // the SRAM's leakage is charged once, with its reads
    add(
        "ramp", resource_class::network, m_timing.ramp_bpc * hz, "B", [](const pe_work& w) { return w.ramp_b; },
        [&](const pe_work& w) { return w.ramp_b / (m_timing.ramp_bpc * hz); },
        ramp_b * m_p.ramp_energy.transfer.joules(), m_p.ramp_energy.leakage.watts());
}

TESSEL_REGISTER_KIND(make_kind<wafer_pe_array>(
    "wafer_pe_array", "compute",
    "a wafer-scale engine's PEs as data: SIMD datapath, private SRAM (capacity checked on every placement), a "
    "ramp to the router; a step is bound by datapath, ramp, SRAM reads or writes; spans run rows in lockstep"));

}  // namespace tessel
