#include "models/spatial/rdu_agcu.h"

#include <algorithm>
#include <sstream>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void rdu_agcu::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the coalescing units (default: the platform clock)");
    d(count, "count", required, "AGCUs (units of this component), each attached to a port of the switch mesh",
      bound::positive);
    d(memory, "memory", required,
      "the memory components behind the AGCUs, in address order, separated by commas (\"hbm, ddr\"); each "
      "tier's addresses follow the previous tier's capacity");
    d(unit_bandwidth, "unit_bandwidth", "64B/cycle", "bytes per cycle one AGCU coalesces into DRAM requests");
    d(latency, "latency", "20cycles", "request pipeline latency of an AGCU, added to every access");
    declare_energy(d, energy, energy_7nm::noc, "energy",
                   "energy per byte an AGCU moves between the mesh and its memories (the memories charge their own), "
                   "and static power of one AGCU");
}

std::vector<stat_decl> rdu_agcu::stat_table() {
    return {
        {"read_bytes", "B", "bytes loaded from off-chip memory"},
        {"write_bytes", "B", "bytes stored to off-chip memory"},
        {"bandwidth", "B/s", "off-chip bytes moved per simulated second"},
    };
}

rdu_agcu::rdu_agcu(sc_core::sc_module_name n, const component_args& a)
    : component(n, a), m_read_bytes(stats().scalar("read_bytes")), m_write_bytes(stats().scalar("write_bytes")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    m_bps = m_p.unit_bandwidth.bytes_per_second(clock());
    m_fs_per_byte = ticks_per_second / m_bps;
    m_latency = m_p.latency.to_ticks(clock());
    m_units.resize(static_cast<size_t>(m_p.count));
    m_unit_bytes.assign(static_cast<size_t>(m_p.count), 0.0);
    for (std::int64_t u = 0; u < m_p.count; ++u) m_tracks.push_back(trace_track("unit[" + std::to_string(u) + "]"));

    // The tiers: siblings of this component, already built (declared earlier in the platform file).
    std::string list = m_p.memory;
    std::replace(list.begin(), list.end(), ',', ' ');
    std::istringstream names(list);
    const sc_core::sc_object* parent = get_parent_object();
    const std::string prefix = parent ? std::string(parent->name()) + "." : std::string();
    std::uint64_t base = 0;
    for (std::string name; names >> name;) {
        component* mem = sim().find_component(prefix + name);
        if (!mem || !mem->has_role(role::memory))
            throw input_error("component '" + a.config_path + "' (rdu_agcu): memory '" + name +
                                  "' is not a memory component declared before it (declare the memories the AGCUs "
                                  "reach above them in the platform file)",
                              a.where);
        if (mem->capacity_bytes() == 0)
            throw input_error("component '" + a.config_path + "' (rdu_agcu): memory '" + name + "' has no capacity",
                              a.where);
        tier t;
        t.name = name;
        t.memory = mem;
        t.base = base;
        t.capacity = mem->capacity_bytes();
        t.peak_bytes_per_second = mem->peak_bytes_per_second();
        base += t.capacity;
        m_tiers.push_back(t);
        auto sock = std::make_unique<tlm_utils::simple_initiator_socket<rdu_agcu>>(("to_" + name).c_str());
        sock->bind(mem->in);
        m_to_memory.push_back(std::move(sock));
    }
    if (m_tiers.empty())
        throw input_error("component '" + a.config_path + "' (rdu_agcu): 'memory' names no memory", a.where);
    stats().formula("bandwidth", [this](double s) { return s > 0 ? (m_read_bytes + m_write_bytes) / s : 0.0; });
}

std::uint64_t rdu_agcu::capacity_bytes() const {
    return m_tiers.empty() ? 0 : m_tiers.back().base + m_tiers.back().capacity;
}

void rdu_agcu::transport(txn& t) {
    if (t.kind != txn_kind::read && t.kind != txn_kind::write)
        throw input_error("AGCU " + path() + " takes loads and stores (transfers), not compute or route requests");
    const size_t u = t.unit < 0 ? 0 : static_cast<size_t>(t.unit);
    if (u >= m_units.size())
        throw input_error("AGCU " + path() + " has " + std::to_string(m_units.size()) + " units; unit " +
                          std::to_string(u) + " does not exist");
    size_t ti = 0;
    while (ti + 1 < m_tiers.size() && t.address >= m_tiers[ti + 1].base) ++ti;
    const tier& tr = m_tiers[ti];
    if (t.address + t.bytes > tr.base + tr.capacity)
        throw input_error("AGCU " + path() + ": access of " + std::to_string(t.bytes) + " B at address " +
                          std::to_string(t.address) + " runs past the end of '" + tr.name + "' (" +
                          format_bytes(static_cast<double>(tr.base + tr.capacity)) + ")");
    // The coalescer takes the bytes at its bandwidth; the memory serves them meanwhile.
    const tick dur = fs_to_ticks(static_cast<double>(t.bytes) * m_fs_per_byte);
    const tick start = m_units[u].reserve(t.head, dur);
    txn& f = m_forward.ext();
    f = t;
    f.unit = -1;
    f.address = t.address - tr.base;
    f.head = start;
    f.tail = std::max(t.tail, start);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    (*m_to_memory[ti])->b_transport(m_forward.gp(), delay);
    const tick head = std::max(f.head, start) + m_latency;
    const tick tail = std::max(f.tail, start + dur) + m_latency;
    (t.kind == txn_kind::write ? m_write_bytes : m_read_bytes) += static_cast<double>(t.bytes);
    m_unit_bytes[u] += static_cast<double>(t.bytes);
    spend(t, energy_part::sram, static_cast<double>(t.bytes) * m_p.energy.transfer.joules(), start, start + dur);
    sim().trace.slice(m_tracks[u], start, tail, t.op, t.step);
    t.head = head;
    t.tail = tail;
    t.unit = static_cast<std::int32_t>(u);
}

void rdu_agcu::usage(std::vector<resource_usage>& out) const {
    resource_usage r;
    r.name = path();
    r.kind = kind_name();
    r.cls = resource_class::memory;
    r.work = m_read_bytes + m_write_bytes;
    r.work_unit = "B";
    r.peak_rate = m_bps;
    r.units = static_cast<double>(m_units.size());
    r.ideal_seconds = r.work / m_bps;
    for (size_t u = 0; u < m_units.size(); ++u) {
        r.ideal_max = std::max(r.ideal_max, m_unit_bytes[u] / m_bps);
        r.busy_seconds += ticks_to_seconds(m_units[u].busy);
        r.busy_max = std::max(r.busy_max, ticks_to_seconds(m_units[u].busy));
    }
    charge(r, r.work * m_p.energy.transfer.joules(), m_p.energy.leakage.watts() * r.units);
    out.push_back(r);
}

TESSEL_REGISTER_KIND(
    make_kind<rdu_agcu>("rdu_agcu", "memory",
                        "RDU address generation and coalescing units: DMA portals on the mesh edge to one "
                        "or more off-chip memory tiers (HBM, DDR) in one address space"));

}  // namespace tessel
