#include "models/bsp/ipu_tiles.h"
#include "models/core/limits.h"

#include <algorithm>
#include <cmath>

#include "models/bsp/ipu_exchange.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void ipu_tiles::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "tile clock (default: the platform clock)");
    d(width, "width", required, "tiles along x of the drawing grid (units = width x height tiles)", bound::positive);
    d(height, "height", required, "tiles along y of the drawing grid", bound::positive);
    if (!d.describing())
        require_units(static_cast<double>(width) * static_cast<double>(height),
                      "a ipu_tiles of " + std::to_string(width) + " x " + std::to_string(height) + " tiles");
    d(threads, "threads", "6",
      "barrel-scheduled worker threads per tile: each issues one instruction every `threads` cycles", bound::positive);
    d(amp_macs_per_cycle, "amp_macs_per_cycle", "{fp32: 8, fp16: 32}",
      "multiply-accumulates per cycle per tile on the accumulating matrix product (AMP) unit, with all workers busy");
    d(vector_ops_per_cycle, "vector_ops_per_cycle", "{fp32: 2, fp16: 4}",
      "element operations per cycle per tile on the 64-bit vector path (f32v2, f16v4), with all workers busy");
    d(compute_set_overhead, "compute_set_overhead", "0cycles",
      "fixed cost of one compute step on a tile (the supervisor starting the workers and waiting for them)");
    d(memory, "memory", "256KiB", "SRAM per tile (In-Processor-Memory); only this tile can address it",
      bound::positive);
    d(load_bandwidth, "load_bandwidth", "16B/cycle", "SRAM read bandwidth of one tile");
    d(store_bandwidth, "store_bandwidth", "8B/cycle", "SRAM write bandwidth of one tile");
    d(memory_latency, "memory_latency", "6cycles", "SRAM access latency (hidden behind the barrel for compute)");
    declare_energy(d, energy, energy_7nm::compute, "energy",
                   "energy of one tile's datapath per action, and its static power");
    declare_energy(d, sram_energy, energy_7nm::sram_mb, "memory_energy",
                   "energy of one tile's SRAM per byte, and its static power");
}

ipu_tiles::timing::timing(const params& prm) : p(prm), clk(prm.clock.clock()) {
    for (int i = 0; i < dtype_count; ++i) {
        const auto t = static_cast<dtype>(i);
        amp[static_cast<size_t>(i)] = p.amp_macs_per_cycle.at(t);
        vector[static_cast<size_t>(i)] = p.vector_ops_per_cycle.at(t);
    }
    load_bps = p.load_bandwidth.bytes_per_second(clk);
    store_bps = p.store_bandwidth.bytes_per_second(clk);
}

double ipu_tiles::timing::vector_rate(dtype t) const {
    // Types the table does not list run at the rate of the narrowest listed type at least as wide.
    if (vector[static_cast<size_t>(t)] > 0) return vector[static_cast<size_t>(t)];
    if (dtype_bits(t) <= 16 && vector[static_cast<size_t>(dtype::fp16)] > 0)
        return vector[static_cast<size_t>(dtype::fp16)];
    return vector[static_cast<size_t>(dtype::fp32)];
}

void ipu_tiles::timing::check(const work& w, const std::string& who) const {
    if (w.macs > 0 && amp_rate(w.type) <= 0) {
        std::string have;
        for (const auto& [t, r] : p.amp_macs_per_cycle.by_type)
            have += std::string(have.empty() ? "" : ", ") + dtype_name(t);
        throw input_error(who + " cannot multiply in " + std::string(dtype_name(w.type)) +
                          " (amp_macs_per_cycle lists: " + have +
                          "); set the workload precision to one of those, e.g. --set workload.precision=fp16");
    }
    if (w.vector_ops > 0 && vector_rate(w.type) <= 0)
        throw input_error(who + " has no vector rate for " + std::string(dtype_name(w.type)) +
                          " (vector_ops_per_cycle)");
}

double ipu_tiles::timing::worker_cycles(const work& w) const {
    const double T = static_cast<double>(p.threads);
    double c = 0;
    if (w.macs > 0) {
        const double rate = amp_rate(w.type);
        if (rate <= 0) throw input_error("IPU tile cannot multiply in " + std::string(dtype_name(w.type)));
        // Workers share the larger of the output rows (over all batches) and the output columns; the busiest
        // worker gets ceil(D / T) of them and issues once every T cycles.
        double D = w.is_matmul() ? std::max(static_cast<double>(std::max<std::int64_t>(1, w.batch) * w.m),
                                            static_cast<double>(w.n))
                                 : std::ceil(w.macs);
        D = std::max(1.0, D);
        const double busiest = std::ceil(D / T) * (w.macs / D);
        c += busiest * T / rate;
    }
    if (w.vector_ops > 0) {
        const double rate = vector_rate(w.type);
        if (rate <= 0) throw input_error("IPU tile has no vector rate for " + std::string(dtype_name(w.type)));
        c += std::ceil(w.vector_ops / T) * T / rate;
    }
    return c;
}

double ipu_tiles::timing::memory_cycles(const work& w) const {
    const double load = (w.bytes_in + w.bytes_weight) / load_bps * clk.hz;
    const double store = w.bytes_out / store_bps * clk.hz;
    return std::max(load, store);
}

double ipu_tiles::timing::cycles(const work& w) const {
    return p.compute_set_overhead.to_cycles(clk) + std::ceil(std::max(worker_cycles(w), memory_cycles(w)) - 1e-9);
}

double ipu_tiles::timing::ideal_seconds(const work& w) const {
    double s = 0;
    if (w.macs > 0 && amp_rate(w.type) > 0) s += w.macs / (amp_rate(w.type) * clk.hz);
    if (w.vector_ops > 0 && vector_rate(w.type) > 0) s += w.vector_ops / (vector_rate(w.type) * clk.hz);
    return s;
}

std::vector<stat_decl> ipu_tiles::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates over all tiles"},
        {"vector_ops", "op", "element operations over all tiles"},
        {"load_bytes", "B", "SRAM bytes read (compute operands and exchange sends)"},
        {"store_bytes", "B", "SRAM bytes written (compute results and exchange receives)"},
        {"compute_steps", "step", "compute steps over all tiles"},
        {"busy_max", "s", "busiest tile's compute time"},
        {"utilisation", "1", "mean compute occupancy over all tiles"},
        {"busy", "s", "compute time per tile (x-major)", stat_shape::per_unit},
    };
}

ipu_tiles::ipu_tiles(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_timing((load_params(m_p, a), m_p)),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_load_bytes(stats().scalar("load_bytes")),
      m_store_bytes(stats().scalar("store_bytes")),
      m_steps(stats().scalar("compute_steps")) {
    set_clock(m_p.clock);
    if (m_timing.vector_rate(dtype::fp32) <= 0)
        throw input_error("component '" + a.config_path + "' (ipu_tiles): vector_ops_per_cycle needs an fp32 rate",
                          a.where);
    if (m_timing.load_bps <= 0 || m_timing.store_bps <= 0)
        throw input_error("component '" + a.config_path + "' (ipu_tiles): load and store bandwidths must be positive",
                          a.where);
    const size_t units = static_cast<size_t>(m_p.width * m_p.height);
    m_pipe.resize(units);
    m_load.resize(units);
    m_store.resize(units);
    m_ideal.assign(units, 0.0);
    m_mem_bytes.assign(units, 0.0);
    m_tracks.assign(units, -2);
    m_last_read.resize(units);
    stats().formula("busy_max", [this](double) {
        tick b = 0;
        for (const auto& r : m_pipe) b = std::max(b, r.busy);
        return ticks_to_seconds(b);
    });
    stats().formula("utilisation", [this](double s) {
        double b = 0;
        for (const auto& r : m_pipe) b += ticks_to_seconds(r.busy);
        return s > 0 ? b / (s * static_cast<double>(m_pipe.size())) : 0.0;
    });
    stats().per_unit("busy", [this](double) { return unit_busy(); });
}

std::vector<double> ipu_tiles::unit_busy() const {
    std::vector<double> v(m_pipe.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = ticks_to_seconds(m_pipe[i].busy);
    return v;
}

void ipu_tiles::transport(txn& t) {
    if (const auto* ss = payload_as<bsp_superstep>(t.payload)) return run_superstep(t, *ss);
    const size_t u = static_cast<size_t>(t.unit < 0 ? 0 : t.unit);
    if (u >= m_pipe.size()) throw std::logic_error(path() + ": tile " + std::to_string(u) + " out of range");
    if (sim().trace.enabled() && m_tracks[u] == -2)
        m_tracks[u] = trace_track("tile" + unit_suffix(static_cast<std::uint32_t>(u)));
    const tick lat = m_p.memory_latency.to_ticks(clock());
    if (t.kind == txn_kind::read || t.kind == txn_kind::write) {
        // Exchange traffic: the sender's SRAM is read at the load bandwidth, the receiver's written at the
        // store bandwidth; the first byte appears after the SRAM latency.
        const bool rd = t.kind == txn_kind::read;
        if (rd) {
            last_read& lr = m_last_read[u];
            if (lr.address == t.address && lr.bytes == t.bytes && lr.at == t.head) {
                t.head = lr.head;
                t.tail = lr.tail;
                return;
            }
            lr.address = t.address;
            lr.bytes = t.bytes;
            lr.at = t.head;
        }
        reservation& port = rd ? m_load[u] : m_store[u];
        const tick ser = transfer_ticks(static_cast<double>(t.bytes), rd ? m_timing.load_bps : m_timing.store_bps);
        const tick start = port.reserve(t.head, ser);
        tick end = start + ser;
        if (t.tail > end) {
            end = t.tail;
            port.free_at = std::max(port.free_at, end);
        }
        (rd ? m_load_bytes : m_store_bytes) += static_cast<double>(t.bytes);
        m_mem_bytes[u] += static_cast<double>(t.bytes);
        spend(t, energy_part::sram, m_p.sram_energy.access(!rd, static_cast<double>(t.bytes)), start, end);
        t.head = start + lat;
        t.tail = end + lat;
        if (rd) {
            m_last_read[u].head = t.head;
            m_last_read[u].tail = t.tail;
        }
        return;
    }
    const auto [start, end] = compute_on(t, u, *t.w, t.head);
    t.head = start;
    t.tail = end;
}

std::pair<tick, tick> ipu_tiles::compute_on(const txn& t, size_t u, const work& w, tick at) {
    if (sim().trace.enabled() && m_tracks[u] == -2)
        m_tracks[u] = trace_track("tile" + unit_suffix(static_cast<std::uint32_t>(u)));
    const tick dur = m_timing.ticks(w);
    const tick start = m_pipe[u].reserve(at, dur);
    // The step's operand traffic holds this tile's SRAM ports while it runs.
    const double in_bytes = w.bytes_in + w.bytes_weight;
    if (in_bytes > 0) m_load[u].reserve(start, transfer_ticks(in_bytes, m_timing.load_bps));
    if (w.bytes_out > 0) m_store[u].reserve(start, transfer_ticks(w.bytes_out, m_timing.store_bps));
    m_macs += w.macs;
    m_macs_by_type[static_cast<size_t>(w.type)] += w.macs;
    m_vector_ops += w.vector_ops;
    m_load_bytes += in_bytes;
    m_store_bytes += w.bytes_out;
    m_mem_bytes[u] += in_bytes + w.bytes_out;
    m_steps += 1;
    m_ideal[u] += m_timing.ideal_seconds(w);
    spend(t, energy_part::compute,
          m_p.energy.joules(w.type, w.macs, w.vector_ops, name()) + m_p.energy.busy_joules(ticks_to_seconds(dur)),
          start, start + dur);
    spend(t, energy_part::sram, m_p.sram_energy.joules(in_bytes, w.bytes_out), start, start + dur);
    sim().trace.slice(m_tracks[u], start, start + dur, t.op, t.step);
    return {start, start + dur};
}

ipu_exchange& ipu_tiles::exchange() {
    if (m_exchange) return *m_exchange;
    const std::string me = path();
    const std::string parent = me.rfind('.') == std::string::npos ? "" : me.substr(0, me.rfind('.'));
    for (component* c : sim().components()) {
        if (!c) continue;
        ipu_exchange* x = as_kind<ipu_exchange>(*c);
        const std::string p = c->path();
        const std::string xp = p.rfind('.') == std::string::npos ? "" : p.substr(0, p.rfind('.'));
        if (!x || xp != parent) continue;
        if (m_exchange)
            throw input_error(me + ": a coarse superstep needs one ipu_exchange beside these tiles; found '" +
                              m_exchange->path() + "' and '" + p + "'");
        m_exchange = x;
    }
    if (!m_exchange)
        throw input_error(me + ": a coarse superstep needs an ipu_exchange beside these tiles (none found)");
    return *m_exchange;
}

void ipu_tiles::run_superstep(txn& t, const bsp_superstep& ss) {
    ipu_exchange& x = exchange();
    const tick lat = m_p.memory_latency.to_ticks(clock());
    const tick begin = t.head;
    tick phase = begin, last = begin;
    for (const auto& s : ss.tiles) {
        const size_t u = s.tile;
        if (u >= m_pipe.size())
            throw input_error(path() + ": step " + std::to_string(t.step) + "'s superstep names tile " +
                              std::to_string(u) + "; there are " + std::to_string(m_pipe.size()));
        // The exchange reads the sender's SRAM and writes the receiver's as the bytes pass (each port faster than
        // the exchange's, so neither delays it), the first byte after the SRAM latency.
        if (s.send_bytes > 0) {
            const tick ser = transfer_ticks(s.send_bytes, m_timing.load_bps);
            const tick at = m_load[u].reserve(begin, ser);
            m_load_bytes += s.send_bytes;
            m_mem_bytes[u] += s.send_bytes;
            spend(t, energy_part::sram, m_p.sram_energy.access(false, s.send_bytes), at, at + ser);
        }
        tick ready = s.send_packets + s.recv_packets > 0 ? x.coarse_phase(t, s, begin + lat) : begin;
        if (s.recv_bytes > 0) {
            const tick ser = transfer_ticks(s.recv_bytes, m_timing.store_bps);
            const tick at = m_store[u].reserve(ready > ser ? ready - ser : 0, ser);
            m_store_bytes += s.recv_bytes;
            m_mem_bytes[u] += s.recv_bytes;
            spend(t, energy_part::sram, m_p.sram_energy.access(true, s.recv_bytes), at, at + ser);
            ready = std::max(ready, at + ser) + lat;
        }
        phase = std::max(phase, ready);
        if (s.work != ~0u) last = std::max(last, compute_on(t, u, ss.works.at(s.work), ready).second);
    }
    t.head = phase;
    t.tail = std::max(phase, last);
}

void ipu_tiles::usage(std::vector<resource_usage>& out) const {
    resource_usage c;
    c.name = path() + ".compute";
    c.kind = kind_name();
    c.cls = resource_class::compute;
    c.work = 2 * m_macs + m_vector_ops;
    c.work_unit = "FLOP";
    size_t best = static_cast<size_t>(dtype::fp16);
    for (size_t i = 0; i < m_macs_by_type.size(); ++i)
        if (m_macs_by_type[i] > m_macs_by_type[best]) best = i;
    c.peak_rate = 2 * m_timing.amp[best] * m_timing.clk.hz;
    c.units = static_cast<double>(m_pipe.size());
    for (size_t i = 0; i < m_pipe.size(); ++i) {
        c.ideal_seconds += m_ideal[i];
        c.ideal_max = std::max(c.ideal_max, m_ideal[i]);
        c.busy_seconds += ticks_to_seconds(m_pipe[i].busy);
        c.busy_max = std::max(c.busy_max, ticks_to_seconds(m_pipe[i].busy));
    }
    charge(c, m_p.energy.joules(m_macs_by_type, m_vector_ops, path()) + m_p.energy.busy_joules(c.busy_seconds),
           m_p.energy.leakage.watts() * c.units);
    out.push_back(c);
    resource_usage m;
    m.name = path() + ".sram";
    m.kind = kind_name();
    m.cls = resource_class::memory;
    m.work = m_load_bytes + m_store_bytes;
    m.work_unit = "B";
    m.peak_rate = m_timing.load_bps + m_timing.store_bps;
    m.units = static_cast<double>(m_pipe.size());
    for (size_t i = 0; i < m_pipe.size(); ++i) {
        m.ideal_max = std::max(m.ideal_max, m_mem_bytes[i] / m.peak_rate);
        const double b = ticks_to_seconds(std::max(m_load[i].busy, m_store[i].busy));
        m.busy_seconds += b;
        m.busy_max = std::max(m.busy_max, b);
    }
    m.ideal_seconds = m.work / m.peak_rate;
    charge(m, m_p.sram_energy.joules(m_load_bytes, m_store_bytes), m_p.sram_energy.leakage.watts() * m.units);
    out.push_back(m);
}

TESSEL_REGISTER_KIND([] {
    auto k = make_kind<ipu_tiles>("ipu_tiles", "compute",
                                  "Graphcore IPU tiles held as data: private SRAM per tile, barrel-scheduled worker "
                                  "threads sharing the AMP and vector path, SRAM load/store ports");
    k.presets = {
        {"gc2",
         "Colossus GC2 (Mk1) tile: 256 KiB SRAM, 6 workers, 32 fp16 / 8 fp32 AMP MACs per cycle",
         "Jia et al., arXiv 1912.03413 (124.5 TFLOPS mixed / 31.1 fp32 over 1,216 tiles at 1.6 GHz; 31.1 TB/s read)",
         {{"threads", "6"},
          {"amp_macs_per_cycle", "{fp32: 8, fp16: 32}"},
          {"memory", "256KiB"},
          {"load_bandwidth", "16B/cycle"},
          {"store_bandwidth", "8B/cycle"},
          {"memory_latency", "6cycles"}}},
        {"gc200",
         "Colossus GC200 (Mk2) tile: 624 KiB SRAM, 6 workers, 64 fp16 / 16 fp32 AMP MACs per cycle",
         "Graphcore docs (900 MB, 250 TFLOPS fp16, 62.5 fp32 over 1,472 tiles at 1.325 GHz; 47.5 TB/s)",
         {{"threads", "6"},
          {"amp_macs_per_cycle", "{fp32: 16, fp16: 64}"},
          {"memory", "624KiB"},
          {"load_bandwidth", "16B/cycle"},
          {"store_bandwidth", "8B/cycle"},
          {"memory_latency", "6cycles"}}}};
    return k;
}());

}  // namespace tessel
