#include "models/baseline/tpu.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/baseline/dram_stream.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void tpu::core_params::declare(param_decl& d) {
    d(mxus, "mxus", required, "matrix units (MXUs) per TensorCore", bound::positive);
    d(mxu_rows, "mxu_rows", "128", "rows of one MXU's systolic array (the K dimension of a weight fold)",
      bound::positive);
    d(mxu_cols, "mxu_cols", "128", "columns of one MXU's systolic array (the N dimension of a weight fold)",
      bound::positive);
    d(mxu_types, "mxu_types", "{bf16: 1}",
      "data types the MXUs multiply at one MAC per cell per cycle (others are an error)");
    d(sublanes, "sublanes", "8", "rows of the vector registers: M is padded to a multiple", bound::positive);
    d(vector_ops_per_cycle, "vector_ops_per_cycle", required, "element operations per cycle of one core's vector unit",
      bound::positive);
    d(special_ops_per_cycle, "special_ops_per_cycle", required,
      "transcendental results (exp, rsqrt, tanh) per cycle of one core", bound::positive);
}

void tpu::cmem_params::declare(param_decl& d) {
    d(capacity, "capacity", required, "on-chip common memory that keeps data between operations (0: none)");
    d(bw, "bandwidth", required, "bandwidth between CMEM and the cores");
    d(block, "block", "64KiB", "granularity at which the model tracks what CMEM holds", bound::positive);
}

void tpu::op_params::declare(param_decl& d) {
    d(op_overhead, "op_overhead", "0ns", "fixed time per XLA operation (issue, synchronisation between operations)");
    d(mxu_efficiency, "mxu_efficiency", "1", "fraction of the MXU fold timing sustained (stalls between folds)");
    d(hbm_efficiency, "hbm_efficiency", "1", "fraction of the HBM peak an operation keeps requested");
    d(segment, "segment", "256KiB", "size of the HBM requests an operation's traffic is paced in", bound::positive);
}

void tpu::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "TensorCore clock");
    d(cores, "cores", required, "TensorCores that run each operation together (TPU v4 megacore: 2)", bound::positive);
    d.group(core, "core", "one TensorCore");
    d.group(cmem, "cmem", "the on-chip common memory");
    d.group(op, "op", "how operations run: overheads and achievable fractions");
    d.part<hbm::params>(hbm, "hbm", "hbm", "the device memory (see `tessel describe hbm`)");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy per MXU MAC (bf16 passes; int8 native) and per vector or transcendental operation, and the "
                   "static power of the chip (the device memory declares its own)");
    declare_energy(d, cmem_energy, energy_7nm::sram_mb, "cmem_energy",
                   "energy per byte moved between the cores and CMEM (reads and writes are counted together: the read "
                   "figure is charged), and the CMEM's static power");
}

tpu::timing::timing(const params& prm, const std::string& who) : p(prm), clk(prm.clock.clock()) {
    for (double e : {p.op.mxu_efficiency, p.op.hbm_efficiency})
        if (!(e > 0 && e <= 1)) throw input_error(who + ": op efficiencies must be above 0 and at most 1");
}

double tpu::timing::mxu_peak() const {
    return static_cast<double>(p.cores * p.core.mxus * p.core.mxu_rows * p.core.mxu_cols) * clk.hz;
}
double tpu::timing::vector_peak() const { return static_cast<double>(p.cores * p.core.vector_ops_per_cycle) * clk.hz; }
double tpu::timing::special_peak() const {
    return static_cast<double>(p.cores * p.core.special_ops_per_cycle) * clk.hz;
}
double tpu::timing::cmem_peak() const { return p.cmem.bw.bytes_per_second(clk); }

double tpu::timing::mxu_cycles(double batch, double m, double n, double k) const {
    const double R = static_cast<double>(p.core.mxu_rows), C = static_cast<double>(p.core.mxu_cols);
    const double arrays = static_cast<double>(p.cores * p.core.mxus);
    const double rows = ceil_div(m, static_cast<double>(p.core.sublanes)) * static_cast<double>(p.core.sublanes);
    const double folds = batch * ceil_div(k, R) * ceil_div(n, C);
    const double per_array = ceil_div(folds, arrays);
    return per_array * std::max(rows, R) + (R + C - 2);
}

tpu::op_plan tpu::timing::plan(const work& w, const kernel_desc* d) const {
    op_plan pl;
    const double hz = clk.hz;
    const double batch = static_cast<double>(std::max<std::int64_t>(1, w.batch));
    std::ostringstream os;
    if (w.is_matmul() && w.macs > 0) {
        if (!p.core.mxu_types.has(w.type))
            throw input_error("tpu: the MXUs do not multiply " + std::string(dtype_name(w.type)) +
                              " (core.mxu_types); run the workload in bf16 (--set workload.precision=bf16)");
        const double M = static_cast<double>(w.m), N = static_cast<double>(w.n), K = static_cast<double>(w.k);
        double cycles;
        double done = 1;
        if (w.cls == op_class::attention) {
            // Scores Q.K^T (K = d) then P.V (K = keys); causal skips the blocks above the diagonal.
            const double dqk = K / 2, dv = K - dqk;
            if (d && d->causal && M > 1) done = std::min(1.0, (M + static_cast<double>(p.core.mxu_cols)) / (2 * N));
            cycles = done * (mxu_cycles(batch, M, N, dqk) + mxu_cycles(batch, M, dv, N));
            pl.special_ops = done * batch * M * N;
            os << "attention on " << p.cores * p.core.mxus << " MXUs" << (done < 1 ? ", causal" : "");
        } else {
            cycles = mxu_cycles(batch, M, N, K);
            const double folds = batch * ceil_div(K, static_cast<double>(p.core.mxu_rows)) *
                                 ceil_div(N, static_cast<double>(p.core.mxu_cols));
            os << static_cast<long long>(folds) << " weight folds of " << p.core.mxu_rows << "x" << p.core.mxu_cols
               << " over " << p.cores * p.core.mxus << " MXUs, " << static_cast<long long>(M) << " rows streamed";
        }
        pl.mxu_s = cycles / hz / p.op.mxu_efficiency;
        pl.mxu_macs = w.macs * done;
        pl.lane_ops = std::max(0.0, w.vector_ops) * done;
    } else {
        pl.lane_ops = std::max(0.0, w.vector_ops) + std::max(0.0, w.macs);
        os << (d && d->rows > 0 ? "row-wise on the vector unit" : "vector unit");
    }
    if (d && w.cls != op_class::attention) pl.special_ops = d->special_ops;
    pl.vector_s = pl.lane_ops / vector_peak() + pl.special_ops / special_peak();
    pl.cache_bytes = w.local_bytes();
    pl.cache_s = pl.cache_bytes / cmem_peak();
    pl.text = os.str();
    return pl;
}

std::vector<stat_decl> tpu::stat_table() {
    return {
        {"ops", "op", "operations run"},
        {"flops", "FLOP", "floating-point operations"},
        {"cmem_hit_bytes", "B", "operand bytes found in CMEM"},
        {"operand_bytes", "B", "operand bytes requested"},
        {"busy", "s", "time the TPU ran operations"},
        {"mxu_utilisation", "1", "MXU MACs over MXU peak for the simulated time"},
    };
}

tpu::tpu(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_ops(stats().scalar("ops")),
      m_flops(stats().scalar("flops")),
      m_hits(stats().scalar("cmem_hit_bytes")),
      m_operand_bytes(stats().scalar("operand_bytes")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_timing = std::make_unique<timing>(m_p, "component '" + a.config_path + "' (tpu)");
    m_hbm = make_part("hbm", m_p.hbm, a, role::memory);
    m_to_hbm.bind(m_hbm->in);
    try {
        m_cmem = block_cache(m_p.cmem.capacity.bytes(), m_p.cmem.block.bytes());
        m_cmem.coalesce(m_hbm->takes_whole_streams());
    } catch (const input_error& e) {
        throw input_error("component '" + a.config_path + "' (tpu) cmem: " + e.message(), a.where);
    }
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_busy.busy); });
    stats().formula("mxu_utilisation",
                    [this](double s) { return s > 0 ? m_mxu_macs / (m_timing->mxu_peak() * s) : 0.0; });
}

void tpu::warm(const kernel_desc& d) {
    m_dram.clear();
    for (const auto& o : d.operands)
        if (!o.write) m_cmem.read(o.address, o.bytes, m_dram);
    for (const auto& o : d.operands)
        if (o.write) m_cmem.write(o.address, o.bytes, m_dram);
}

void tpu::transport(txn& t) {
    if (t.kind != txn_kind::compute || !t.w) {
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_generic_payload gp;
        gp.set_extension(&t);
        m_to_hbm->b_transport(gp, delay);
        gp.clear_extension(&t);
        return;
    }
    const work& w = *t.w;
    const kernel_desc* d = payload_as<kernel_desc>(t.payload);
    const timing& tm = *m_timing;
    const op_plan pl = tm.plan(w, d);
    const tick start = std::max(t.head, m_busy.free_at);
    const double overhead = tm.p.op.op_overhead.q.value;
    const tick t0 = start + seconds_to_ticks(overhead);
    m_dram.clear();
    double hits = 0, operand_bytes = 0;
    if (d && !d->operands.empty()) {
        for (const auto& o : d->operands)
            if (!o.write) {
                hits += m_cmem.read(o.address, o.bytes, m_dram);
                operand_bytes += o.bytes;
            }
        for (const auto& o : d->operands)
            if (o.write) m_cmem.write(o.address, o.bytes, m_dram);
    } else {
        const double in_bytes = w.bytes_in + w.bytes_weight;
        if (in_bytes > 0) m_dram.push_back({0, in_bytes, false});
        if (w.bytes_out > 0) m_dram.push_back({0, w.bytes_out, true});
        operand_bytes = in_bytes;
    }
    const dram_stream_result dr = stream_to_memory(*m_to_hbm.operator->(), m_payload, m_dram, t0,
                                                   m_hbm->peak_bytes_per_second() * tm.p.op.hbm_efficiency,
                                                   tm.p.op.segment.bytes(), t.op, t.step, m_hbm->takes_whole_streams());
    const double dram_s = ticks_to_seconds(dr.last - t0);
    const double compute = std::max(pl.mxu_s, pl.vector_s);
    const double body = std::max({compute, pl.cache_s, dram_s});
    const tick end = t0 + seconds_to_ticks(body);
    m_busy.free_at = end;
    m_busy.busy += end - start;
    t.head = start;
    t.tail = end;
    sim().trace.slice(m_track, start, end, t.op, t.step);

    m_ops += 1;
    m_flops += w.flops();
    m_hits += hits;
    m_operand_bytes += operand_bytes;
    m_mxu_macs += pl.mxu_macs;
    m_mxu_macs_by_type[static_cast<size_t>(w.type == dtype::int8 ? dtype::int8 : dtype::bf16)] += pl.mxu_macs;
    m_mxu_ideal += pl.mxu_macs / tm.mxu_peak();
    m_lane_ops += pl.lane_ops;
    m_special += pl.special_ops;
    m_cache_bytes += pl.cache_bytes;
    m_mxu_busy += std::min(pl.mxu_s, body);
    m_vector_busy += std::min(pl.vector_s, body);
    m_cmem_busy += std::min(pl.cache_s, body);
    spend(t, energy_part::compute,
          m_p.energy.joules(w.type == dtype::int8 ? dtype::int8 : dtype::bf16, pl.mxu_macs,
                            pl.lane_ops + pl.special_ops, name()) +
              m_p.energy.busy_joules(ticks_to_seconds(end - start)),
          start, end);
    spend(t, energy_part::sram, pl.cache_bytes * m_p.cmem_energy.read.joules(), start, end);

    if (!keeps_records()) return;
    kernel_record r;
    r.step = t.step;
    r.op = t.op;
    r.start = start;
    r.end = end;
    r.plan = pl.text;
    r.compute_s = compute;
    r.cache_s = pl.cache_s;
    r.dram_s = dram_s;
    r.overhead_s = overhead;
    r.flops = w.flops();
    r.cache_bytes = pl.cache_bytes;
    r.hit_bytes = hits;
    r.dram_bytes = dr.read_bytes + dr.write_bytes;
    if (overhead > body)
        r.bound = "overhead";
    else if (body == dram_s)
        r.bound = "dram";
    else if (body == compute)
        r.bound = "compute";
    else
        r.bound = "cache";
    m_records.push_back(std::move(r));
}

void tpu::usage(std::vector<resource_usage>& out) const {
    const timing& tm = *m_timing;
    resource_usage mxu;
    mxu.name = path() + ".mxu";
    mxu.kind = kind_name();
    mxu.cls = resource_class::compute;
    mxu.work = 2 * m_mxu_macs;
    mxu.work_unit = "FLOP";
    mxu.peak_rate = 2 * tm.mxu_peak();
    mxu.ideal_seconds = m_mxu_ideal;
    mxu.ideal_max = m_mxu_ideal;
    mxu.busy_seconds = m_mxu_busy;
    mxu.busy_max = m_mxu_busy;
    // Active power over the operations' residency: the chip clocks while any operation runs.
    charge(mxu,
           m_p.energy.joules(m_mxu_macs_by_type, 0, path()) + m_p.energy.busy_joules(ticks_to_seconds(m_busy.busy)),
           m_p.energy.leakage.watts());
    out.push_back(mxu);
    resource_usage vpu;
    vpu.name = path() + ".vector";
    vpu.kind = kind_name();
    vpu.cls = resource_class::compute;
    vpu.work = m_lane_ops;
    vpu.work_unit = "op";
    vpu.peak_rate = tm.vector_peak();
    vpu.ideal_seconds = m_lane_ops / tm.vector_peak() + m_special / tm.special_peak();
    vpu.ideal_max = vpu.ideal_seconds;
    vpu.busy_seconds = m_vector_busy;
    vpu.busy_max = m_vector_busy;
    charge(vpu, (m_lane_ops + m_special) * m_p.energy.op.joules(), 0.0);
    out.push_back(vpu);
    resource_usage cm;
    cm.name = path() + ".cmem";
    cm.kind = kind_name();
    cm.cls = resource_class::memory;
    cm.work = m_cache_bytes;
    cm.work_unit = "B";
    cm.peak_rate = tm.cmem_peak();
    cm.ideal_seconds = m_cache_bytes / tm.cmem_peak();
    cm.ideal_max = cm.ideal_seconds;
    cm.busy_seconds = m_cmem_busy;
    cm.busy_max = m_cmem_busy;
    charge(cm, m_cache_bytes * m_p.cmem_energy.read.joules(), m_p.cmem_energy.leakage.watts());
    out.push_back(cm);
}

std::vector<tunable> tpu::tunables() {
    auto& o = m_timing->p.op;
    std::vector<tunable> out;
    out.push_back(tunable{"op.op_overhead", "s", 0.05e-6, 20e-6, true, "all", [&o] { return o.op_overhead.q.value; },
                          [&o](double v) {
                              o.op_overhead.q = quantity{v, dimension::time};
                          }});
    out.push_back(tunable{"op.mxu_efficiency", "", 0.3, 1.0, false, "gemm", [&o] { return o.mxu_efficiency; },
                          [&o](double v) { o.mxu_efficiency = v; }});
    out.push_back(tunable{"op.hbm_efficiency", "", 0.5, 1.0, false, "stream", [&o] { return o.hbm_efficiency; },
                          [&o](double v) { o.hbm_efficiency = v; }});
    return out;
}

std::string tpu::summary() const {
    const timing& tm = *m_timing;
    std::ostringstream os;
    os << "TPU " << path() << ": " << m_p.cores << " TensorCores x " << m_p.core.mxus << " MXUs of "
       << m_p.core.mxu_rows << "x" << m_p.core.mxu_cols << " at " << format_quantity(m_p.clock.q) << ", "
       << format_rate(2 * tm.mxu_peak(), "FLOP/s") << ", CMEM " << format_bytes(cache_capacity()) << ", HBM "
       << format_rate(m_hbm->peak_bytes_per_second(), "B/s");
    return os.str();
}

TESSEL_REGISTER_KIND(make_kind<tpu>(
    "tpu", "composite",
    "TPU running operation after operation: TensorCores with weight-stationary 128x128 MXUs (padding to the array, "
    "fill and drain), vector and transcendental units, CMEM kept between operations, device memory as a part (an hbm "
    "by default)"));

}  // namespace tessel
