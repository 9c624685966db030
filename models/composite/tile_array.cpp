#include "models/composite/tile_array.h"
#include "models/core/limits.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void tile_array::params::declare(param_decl& d) {
    d(width, "width", required, "tiles along x", bound::positive);
    d(height, "height", required, "tiles along y", bound::positive);
    if (!d.describing())
        require_units(static_cast<double>(width) * static_cast<double>(height),
                      "a tile_array of " + std::to_string(width) + " x " + std::to_string(height) + " tiles");
    d.group(compute, "pe", "the processing element of every tile (see `tessel describe pe`)");
    d.group(scratchpad, "sram", "the scratchpad of every tile (see `tessel describe sram_bank`)");
}

std::vector<stat_decl> tile_array::stat_table() {
    return {
        {"macs", "MAC", "multiply-accumulates over all tiles"},
        {"vector_ops", "op", "element operations over all tiles"},
        {"sram_bytes", "B", "scratchpad bytes read and written over all tiles"},
        {"busy_max", "s", "busiest tile's compute time"},
        {"utilisation", "1", "mean compute-pipe occupancy over all tiles"},
        {"busy", "s", "compute time per tile (x-major)", stat_shape::per_unit},
    };
}

tile_array::tile_array(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_pe((load_params(m_p, a), m_p.compute)),
      m_macs(stats().scalar("macs")),
      m_vector_ops(stats().scalar("vector_ops")),
      m_bytes(stats().scalar("sram_bytes")) {
    set_clock(m_p.compute.clock);
    if (m_p.scratchpad.capacity.bytes() % static_cast<std::uint64_t>(m_p.scratchpad.banks) != 0)
        throw input_error("component '" + a.config_path + "' (tile_array): sram capacity does not divide into " +
                              std::to_string(m_p.scratchpad.banks) + " equal banks",
                          a.where);
    m_sram = std::make_unique<sram_bank::timing>(m_p.scratchpad);
    const size_t units = static_cast<size_t>(m_p.width * m_p.height);
    m_pipe.resize(units);
    m_ideal.assign(units, 0.0);
    m_banks.reserve(units);
    for (size_t u = 0; u < units; ++u) m_banks.push_back(m_sram->make_state());
    m_tracks.assign(units, -2);
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
    stats().per_unit("busy", [this](double) { return busy_per_unit(); });
}

std::vector<double> tile_array::busy_per_unit() const {
    std::vector<double> v(m_pipe.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = ticks_to_seconds(m_pipe[i].busy);
    return v;
}

void tile_array::transport(txn& t) {
    const size_t u = static_cast<size_t>(t.unit);
    if (sim().trace.enabled() && m_tracks[u] == -2)
        m_tracks[u] = trace_track("tile" + unit_suffix(static_cast<std::uint32_t>(u)));
    if (t.kind != txn_kind::compute) {
        const auto [head, tail] = m_sram->access(m_banks[u], t.address, t.bytes, t.head, t.tail);
        m_bytes += static_cast<double>(t.bytes);
        if (t.kind == txn_kind::write) m_written += static_cast<double>(t.bytes);
        spend(t, energy_part::sram,
              m_p.scratchpad.energy.access(t.kind == txn_kind::write, static_cast<double>(t.bytes)), head, tail);
        t.head = head;
        t.tail = tail;
        return;
    }
    const work& w = *t.w;
    // Programs repeat the same work over many tiles: the last one's duration and ideal time are kept.
    if (!(w.macs == m_last.macs && w.vector_ops == m_last.vector_ops && w.type == m_last.type &&
          w.batch == m_last.batch && w.m == m_last.m && w.n == m_last.n && w.k == m_last.k) ||
        !m_last_valid) {
        m_last_ticks = m_pe.ticks(w);  // (throws for a data type the pe lacks: nothing is kept then)
        m_last_ideal = m_pe.ideal_seconds(w);
        m_last = w;
        m_last_valid = true;
    }
    const tick dur = m_last_ticks;
    const tick start = m_pipe[u].reserve(t.head, dur);
    t.head = start;
    t.tail = start + dur;
    m_macs += w.macs;
    m_macs_by_type[static_cast<size_t>(w.type)] += w.macs;
    m_vector_ops += w.vector_ops;
    m_ideal[u] += m_last_ideal;
    const compute_energy& ce = m_p.compute.energy;
    spend(t, energy_part::compute,
          ce.joules(w.type, w.macs, w.vector_ops, name()) + ce.busy_joules(ticks_to_seconds(dur)), start, start + dur);
    sim().trace.slice(m_tracks[u], start, start + dur, t.op, t.step);
    const double bytes = w.local_bytes();
    if (bytes > 0) {
        const auto b = static_cast<std::uint64_t>(std::ceil(bytes));
        const auto [h, tail] = m_sram->access(m_banks[u], 0, b, start, start);
        m_bytes += static_cast<double>(b);
        spend(t, energy_part::sram, m_p.scratchpad.energy.access(false, static_cast<double>(b)), start, tail);
        t.tail = std::max(t.tail, tail);
        (void)h;
    }
}

void tile_array::usage(std::vector<resource_usage>& out) const {
    resource_usage c;
    c.name = path() + ".pe";
    c.kind = kind_name();
    c.cls = resource_class::compute;
    c.work = 2 * m_macs + m_vector_ops;
    c.work_unit = "FLOP";
    c.peak_rate = m_pe.peak_flops(m_macs_by_type);
    c.units = static_cast<double>(m_pipe.size());
    for (size_t i = 0; i < m_pipe.size(); ++i) {
        c.ideal_seconds += m_ideal[i];
        c.ideal_max = std::max(c.ideal_max, m_ideal[i]);
        c.busy_seconds += ticks_to_seconds(m_pipe[i].busy);
        c.busy_max = std::max(c.busy_max, ticks_to_seconds(m_pipe[i].busy));
    }
    const compute_energy& ce = m_p.compute.energy;
    charge(c, ce.joules(m_macs_by_type, m_vector_ops, path() + ".pe") + ce.busy_joules(c.busy_seconds),
           ce.leakage.watts() * c.units);
    out.push_back(c);
    resource_usage m;
    m.name = path() + ".sram";
    m.kind = kind_name();
    m.cls = resource_class::memory;
    m.work = m_bytes;
    m.work_unit = "B";
    m.peak_rate = m_sram->port_bytes_per_second();
    m.units = static_cast<double>(m_banks.size() * m_sram->port_count());
    for (const auto& s : m_banks) {
        m.ideal_max = std::max(m.ideal_max, m_sram->ideal_max_seconds(s));
        m.busy_seconds += ticks_to_seconds(m_sram->busy_total(s));
        m.busy_max = std::max(m.busy_max, ticks_to_seconds(m_sram->busy_max(s)));
    }
    m.ideal_seconds = m.work / m.peak_rate;
    const memory_energy& me = m_p.scratchpad.energy;
    charge(m, me.joules(m_bytes - m_written, m_written), me.leakage.watts() * static_cast<double>(m_banks.size()));
    out.push_back(m);
}

TESSEL_REGISTER_KIND(make_kind<tile_array>(
    "tile_array", "composite", "a grid of tiles held as data (for large arrays); timing identical to `tile`"));

}  // namespace tessel
