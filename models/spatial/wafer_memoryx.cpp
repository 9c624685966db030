#include "models/spatial/wafer_memoryx.h"

#include <algorithm>

#include "models/core/registry.h"
#include "models/core/sim_context.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

void wafer_memoryx::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock for cycle-valued parameters (default: the platform clock)");
    d(ports, "ports", required, "edge ports where data enter and leave the wafer (each attaches to an edge router)",
      bound::positive);
    d(capacity, "capacity", "2.4PB", "what the service stores (CS-2 MemoryX: up to 2.4 PB, Cerebras 2021)",
      bound::positive);
    d(io_bandwidth, "io_bandwidth", "150GB/s",
      "system I/O shared by all ports, each direction (CS-2: 12 x 100 GbE = 1.2 Tb/s, Cerebras CS-2 datasheet)");
    d(latency, "latency", "2us",
      "from a request to its first byte at the wafer's edge (u: no published figure; Ethernet and SwarmX hops)");
    d(interleave, "interleave", "4KiB", "address interleave over the ports when a step names no port", bound::positive);
    declare_energy(d, energy, memory_appliance, "energy",
                   "energy per byte read (to the wafer) and written (from it), DRAM and network, and static power");
}

std::vector<stat_decl> wafer_memoryx::stat_table() {
    return {
        {"read_bytes", "B", "bytes streamed into the wafer"},
        {"write_bytes", "B", "bytes streamed out of the wafer"},
        {"read_utilisation", "1", "inbound I/O busy time over simulated time"},
        {"write_utilisation", "1", "outbound I/O busy time over simulated time"},
    };
}

wafer_memoryx::wafer_memoryx(sc_core::sc_module_name n, const component_args& a) : component(n, a) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_bps = m_p.io_bandwidth.bytes_per_second(clock());
    if (m_bps <= 0)
        throw input_error("component '" + a.config_path + "' (wafer_memoryx): io_bandwidth must be positive", a.where);
    m_latency = m_p.latency.to_ticks(clock());
    stats().formula("read_bytes", [this](double) { return m_bytes[0]; });
    stats().formula("write_bytes", [this](double) { return m_bytes[1]; });
    stats().formula("read_utilisation", [this](double s) { return s > 0 ? ticks_to_seconds(m_dir[0].busy) / s : 0.0; });
    stats().formula("write_utilisation",
                    [this](double s) { return s > 0 ? ticks_to_seconds(m_dir[1].busy) / s : 0.0; });
}

int wafer_memoryx::unit_for_address(std::uint64_t address) const {
    return static_cast<int>((address / m_p.interleave.bytes()) % static_cast<std::uint64_t>(m_p.ports));
}

void wafer_memoryx::transport(txn& t) {
    if (t.kind != txn_kind::read && t.kind != txn_kind::write)
        throw std::logic_error(path() + ": MemoryX serves reads and writes only");
    const int d = t.kind == txn_kind::read ? 0 : 1;
    if (t.bytes != m_ser_bytes) {
        m_ser_bytes = t.bytes;
        m_ser_ticks = transfer_ticks(static_cast<double>(t.bytes), m_bps);
    }
    // Reads: the request waits for the shared I/O, then the data arrive after the latency. Writes: the data
    // leave the wafer over the I/O; the write is done when the service has them.
    link_hop::pass(m_dir[d], m_bytes[d], t.bytes, m_ser_ticks, 0, m_latency, t.head, t.tail);
    spend(t, energy_part::dram, static_cast<double>(t.bytes) * (d == 0 ? m_p.energy.read : m_p.energy.write).joules(),
          t.head - m_latency, t.tail - m_latency);
    if (sim().trace.enabled()) {
        if (m_tracks[d] < 0) m_tracks[d] = trace_track(d == 0 ? "to_wafer" : "from_wafer");
        sim().trace.slice(m_tracks[d], t.head - m_latency, t.tail - m_latency, t.op, t.step);
    }
}

void wafer_memoryx::usage(std::vector<resource_usage>& out) const {
    for (int d = 0; d < 2; ++d) {
        resource_usage u;
        u.name = path() + (d == 0 ? ".to_wafer" : ".from_wafer");
        u.kind = kind_name();
        u.cls = resource_class::memory;
        u.work = m_bytes[d];
        u.work_unit = "B";
        u.peak_rate = m_bps;
        u.ideal_seconds = m_bytes[d] / m_bps;
        u.ideal_max = u.ideal_seconds;
        u.busy_seconds = ticks_to_seconds(m_dir[d].busy);
        u.busy_max = u.busy_seconds;
        u.off_chip = true;
        // Bytes to the wafer are reads of the service; bytes from it, writes. Its leakage is charged once.
        charge(u, m_bytes[d] * (d == 0 ? m_p.energy.read : m_p.energy.write).joules(),
               d == 0 ? m_p.energy.leakage.watts() : 0.0);
        out.push_back(u);
    }
}

TESSEL_REGISTER_KIND(
    make_kind<wafer_memoryx>("wafer_memoryx", "memory",
                             "external memory service of a wafer-scale system (MemoryX): edge ports on the "
                             "wafer sharing the system I/O bandwidth each way, plus a latency"));

}  // namespace tessel
