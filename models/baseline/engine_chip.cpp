#include "models/baseline/engine_chip.h"

#include <algorithm>

#include "models/baseline/dram_stream.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"
#include "models/memory/hbm.h"

namespace tessel {

void engine_chip::sram_params::declare(param_decl& d) {
    d(capacity, "capacity", required, "on-chip SRAM that keeps data between operations (0: none)");
    d(bw, "bandwidth", required, "bandwidth between the SRAM and the engines, whole chip");
    d(block, "block", "64KiB", "granularity at which the model tracks what the SRAM holds", bound::positive);
}

void engine_chip::op_params::declare(param_decl& d) {
    d(op_overhead, "op_overhead", "0ns", "fixed time per operation (issue, synchronisation between operations)");
    d(matrix_efficiency, "matrix_efficiency", "1",
      "fraction of the matrix engines' tile timing sustained (stalls between tiles)");
    d(hbm_efficiency, "hbm_efficiency", "1", "fraction of the device memory's peak an operation keeps requested");
    d(segment, "segment", "256KiB", "size of the requests an operation's memory traffic is paced in", bound::positive);
}

void engine_chip::host_params::declare(param_decl& d) {
    d(link, "link", "32GB/s", "the host link's bandwidth each way (default: PCIe 4.0 x16)");
    d(clock, "clock", "1GHz", "the host CPU's clock");
    d(flops_per_cycle, "flops_per_cycle", "0",
      "FLOPs per cycle of the host cores that run the ops the device does not take (0: no host fallback)",
      bound::non_negative);
    d(latency, "latency", "0ns", "fixed time per op run on the host (synchronisation, the framework's dispatch)");
}

void engine_chip::common_params::declare(param_decl& d, const char* sram_what) {
    d(clock, "clock", "${clock}", "engine clock");
    d.group(sram, "sram", sram_what);
    d.group(op, "op", "how operations run: overheads and achievable fractions");
    d.group(host, "host", "the host CPU that runs the ops the device's compiler does not take (mapper.host_ops)");
    d.part<hbm::params>(hbm, "hbm", "hbm", "the device memory (see `tessel describe hbm`)");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy per matrix MAC by data type and per element operation, and the static power of the chip "
                   "(the device memory declares its own)");
    declare_energy(d, sram_energy, energy_7nm::sram_mb, "sram_energy",
                   "energy per byte moved between the engines and the SRAM (reads and writes alike: the read figure "
                   "is charged), and the SRAM's static power");
}

std::vector<stat_decl> engine_chip::common_stats() {
    return {
        {"ops", "op", "operations run"},
        {"flops", "FLOP", "floating-point operations"},
        {"sram_hit_bytes", "B", "operand bytes found in the on-chip SRAM"},
        {"operand_bytes", "B", "operand bytes requested"},
        {"busy", "s", "time the chip ran operations"},
    };
}

engine_chip::engine_chip(const sc_core::sc_module_name& n, const component_args& a)
    : component(n, a),
      m_ops(stats().scalar("ops")),
      m_flops(stats().scalar("flops")),
      m_hits(stats().scalar("sram_hit_bytes")),
      m_operand_bytes(stats().scalar("operand_bytes")) {}

void engine_chip::start(common_params& c, std::vector<engine> engines, const component_args& a) {
    m_common = &c;
    m_engines = std::move(engines);
    m_work.assign(m_engines.size(), 0);
    m_ideal.assign(m_engines.size(), 0);
    m_engine_busy.assign(m_engines.size(), 0);
    set_clock(c.clock);
    const std::string who = "component '" + a.config_path + "' (" + kind_name() + ")";
    for (double e : {c.op.matrix_efficiency, c.op.hbm_efficiency})
        if (!(e > 0 && e <= 1)) throw input_error(who + ": op efficiencies must be above 0 and at most 1", a.where);
    m_hbm = make_part("hbm", c.hbm, a, role::memory);
    m_to_hbm.bind(m_hbm->in);
    try {
        m_sram = block_cache(c.sram.capacity.bytes(), c.sram.block.bytes());
        m_sram.coalesce(m_hbm->takes_whole_streams());
    } catch (const input_error& e) {
        throw input_error(who + " sram: " + e.message(), a.where);
    }
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_busy.busy); });
}

double engine_chip::host_peak() const {
    return static_cast<double>(m_common->host.flops_per_cycle) * m_common->host.clock.hz();
}

double engine_chip::host_link_peak() const { return m_common->host.link.bytes_per_second(clock()); }

void engine_chip::run_on_host(txn& t, const work& w, const kernel_desc& d) {
    double in_bytes = 0, out_bytes = 0;
    for (const auto& o : d.operands) (o.write ? out_bytes : in_bytes) += o.bytes;
    if (d.operands.empty()) {
        in_bytes = w.bytes_in + w.bytes_weight;
        out_bytes = w.bytes_out;
    }
    // The results land in device memory as any op's do (the SRAM keeps what it can).
    m_dram.clear();
    for (const auto& o : d.operands)
        if (o.write) m_sram.write(o.address, o.bytes, m_dram);
    const double link = host_link_peak(), flops = w.flops() + d.special_ops;
    const double link_s = (in_bytes + out_bytes) / link, host_s = flops / host_peak();
    const tick start = std::max(t.head, m_busy.free_at);
    const tick end = start + seconds_to_ticks(m_common->host.latency.q.value + link_s + host_s);
    m_busy.free_at = end;
    m_busy.busy += end - start;
    t.head = start;
    t.tail = end;
    sim().trace.slice(m_track, start, end, t.op, t.step);
    m_ops += 1;
    m_flops += w.flops();
    m_host_flops += flops;
    m_host_busy += host_s;
    m_link_bytes += in_bytes + out_bytes;
    m_link_busy += link_s;
    if (!keeps_records()) return;
    kernel_record r;
    r.step = t.step;
    r.op = t.op;
    r.start = start;
    r.end = end;
    r.plan = "on the host CPU: " + format_bytes(in_bytes) + " over the host link, " + format_bytes(out_bytes) + " back";
    r.compute_s = host_s;
    r.dram_s = link_s;
    r.overhead_s = m_common->host.latency.q.value;
    r.flops = w.flops();
    r.bound = "host";
    m_records.push_back(std::move(r));
}

void engine_chip::warm(const kernel_desc& d) {
    m_dram.clear();
    for (const auto& o : d.operands)
        if (!o.write) m_sram.read(o.address, o.bytes, m_dram);
    for (const auto& o : d.operands)
        if (o.write) m_sram.write(o.address, o.bytes, m_dram);
}

void engine_chip::transport(txn& t) {
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
    if (d && d->host) {
        run_on_host(t, w, *d);
        return;
    }
    const op_plan pl = plan(w, d);
    const tick start = std::max(t.head, m_busy.free_at);
    const double overhead = m_common->op.op_overhead.q.value;
    const tick t0 = start + seconds_to_ticks(overhead);
    m_dram.clear();
    double hits = 0, operand_bytes = 0;
    if (d && !d->operands.empty()) {
        for (const auto& o : d->operands)
            if (!o.write) {
                hits += m_sram.read(o.address, o.bytes, m_dram);
                operand_bytes += o.bytes;
            }
        for (const auto& o : d->operands)
            if (o.write) m_sram.write(o.address, o.bytes, m_dram);
    } else {
        const double in_bytes = w.bytes_in + w.bytes_weight;
        if (in_bytes > 0) m_dram.push_back({0, in_bytes, false});
        if (w.bytes_out > 0) m_dram.push_back({0, w.bytes_out, true});
        operand_bytes = in_bytes;
    }
    const dram_stream_result dr =
        stream_to_memory(*m_to_hbm.operator->(), m_payload, m_dram, t0, hbm_peak() * m_common->op.hbm_efficiency,
                         m_common->op.segment.bytes(), t.op, t.step, m_hbm->takes_whole_streams());
    const double dram_s = ticks_to_seconds(dr.last - t0);
    const double compute = pl.seconds.empty() ? 0.0 : *std::max_element(pl.seconds.begin(), pl.seconds.end());
    const double sram_s = pl.sram_bytes / sram_peak();
    const double body = std::max({compute, sram_s, dram_s});
    const tick end = t0 + seconds_to_ticks(body);
    m_busy.free_at = end;
    m_busy.busy += end - start;
    t.head = start;
    t.tail = end;
    sim().trace.slice(m_track, start, end, t.op, t.step);

    double macs = 0, elem_ops = 0;
    for (size_t e = 0; e < m_engines.size(); ++e) {
        m_work[e] += pl.work[e];
        // At full rate: a matrix engine's MACs at its peak for the type, another engine's own time.
        m_ideal[e] += m_engines[e].matrix ? pl.work[e] / m_engines[e].peak_for(w.type) : pl.seconds[e];
        m_engine_busy[e] += std::min(pl.seconds[e], body);
        (m_engines[e].matrix ? macs : elem_ops) += pl.work[e];
    }
    m_ops += 1;
    m_flops += w.flops();
    m_hits += hits;
    m_operand_bytes += operand_bytes;
    m_macs_by_type[static_cast<size_t>(w.type)] += macs;
    m_elem_ops += elem_ops;
    m_sram_bytes += pl.sram_bytes;
    m_sram_busy += std::min(sram_s, body);
    spend(t, energy_part::compute,
          m_common->energy.joules(w.type, macs, elem_ops, name()) +
              m_common->energy.busy_joules(ticks_to_seconds(end - start)),
          start, end);
    spend(t, energy_part::sram, pl.sram_bytes * m_common->sram_energy.read.joules(), start, end);

    if (!keeps_records()) return;
    kernel_record r;
    r.step = t.step;
    r.op = t.op;
    r.start = start;
    r.end = end;
    r.plan = pl.text;
    r.compute_s = compute;
    r.cache_s = sram_s;
    r.dram_s = dram_s;
    r.overhead_s = overhead;
    r.flops = w.flops();
    r.cache_bytes = pl.sram_bytes;
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

void engine_chip::usage(std::vector<resource_usage>& out) const {
    // One resource of the chip: `work` at `peak` per second, busy `busy` seconds; ideal is the work at full rate.
    auto resource = [&](const std::string& what, resource_class cls, double work, const std::string& unit, double peak,
                        double ideal, double busy) {
        resource_usage u;
        u.name = path() + "." + what;
        u.kind = kind_name();
        u.cls = cls;
        u.work = work;
        u.work_unit = unit;
        u.peak_rate = peak;
        u.ideal_seconds = ideal;
        u.ideal_max = ideal;
        u.busy_seconds = busy;
        u.busy_max = busy;
        return u;
    };
    for (size_t e = 0; e < m_engines.size(); ++e) {
        const engine& en = m_engines[e];
        if (!en.matrix) {
            resource_usage u = resource(en.name, resource_class::compute, m_work[e], en.work_unit, en.peak, m_ideal[e],
                                        m_engine_busy[e]);
            charge(u, m_work[e] * m_common->energy.op.joules(), 0.0);
            out.push_back(u);
            continue;
        }
        // Matrix engines report FLOPs (2 per MAC) against the FLOP peak of the data type that did most of the
        // work, as the gpu kind does.
        size_t best = static_cast<size_t>(dtype::bf16);
        for (size_t i = 0; i < m_macs_by_type.size(); ++i)
            if (m_macs_by_type[i] > m_macs_by_type[best]) best = i;
        resource_usage u = resource(en.name, resource_class::compute, 2 * m_work[e], en.work_unit,
                                    2 * en.peak_for(static_cast<dtype>(best)), m_ideal[e], m_engine_busy[e]);
        // The chip's active and static power go with its first matrix engine: it clocks while any operation runs.
        charge(u,
               m_common->energy.joules(m_macs_by_type, 0, path()) +
                   m_common->energy.busy_joules(ticks_to_seconds(m_busy.busy)),
               e == 0 ? m_common->energy.leakage.watts() : 0.0);
        out.push_back(u);
    }
    resource_usage s = resource("sram", resource_class::memory, m_sram_bytes, "B", sram_peak(),
                                m_sram_bytes / sram_peak(), m_sram_busy);
    charge(s, m_sram_bytes * m_common->sram_energy.read.joules(), m_common->sram_energy.leakage.watts());
    out.push_back(s);
    if (!has_host() || m_link_bytes == 0) return;
    // The host and its link are not the chip: their energy is not the chip's to charge.
    out.push_back(resource("host", resource_class::compute, m_host_flops, "FLOP", host_peak(),
                           m_host_flops / host_peak(), m_host_busy));
    out.push_back(resource("host_link", resource_class::network, m_link_bytes, "B", host_link_peak(),
                           m_link_bytes / host_link_peak(), m_link_busy));
}

std::vector<tunable> engine_chip::tunables() {
    auto& o = m_common->op;
    std::vector<tunable> out;
    out.push_back(tunable{"op.op_overhead", "s", 0.05e-6, 20e-6, true, "all", [&o] { return o.op_overhead.q.value; },
                          [&o](double v) {
                              o.op_overhead.q = quantity{v, dimension::time};
                          }});
    out.push_back(tunable{"op.matrix_efficiency", "", 0.3, 1.0, false, "gemm", [&o] { return o.matrix_efficiency; },
                          [&o](double v) { o.matrix_efficiency = v; }});
    out.push_back(tunable{"op.hbm_efficiency", "", 0.5, 1.0, false, "stream", [&o] { return o.hbm_efficiency; },
                          [&o](double v) { o.hbm_efficiency = v; }});
    return out;
}

}  // namespace tessel
