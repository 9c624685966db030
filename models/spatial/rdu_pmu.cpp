#include "models/spatial/rdu_pmu.h"

#include <algorithm>
#include <cmath>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void rdu_pmu::params::declare(param_decl& d) {
    // The bank parameters are sram_bank's, declared at this level so a PMU reads as one flat map.
    scratchpad.declare(d);
    d(addresses_per_cycle, "addresses_per_cycle", "1", "addresses the address-generation pipeline produces per cycle",
      bound::positive);
    d(access_bytes, "access_bytes", "64B", "bytes one generated address reads or writes (one vector)", bound::positive);
    d(config_bytes, "config_bytes", "4KiB",
      "configuration state (address patterns, counters) loaded when a graph section is configured");
}

std::vector<stat_decl> rdu_pmu::stat_table() {
    auto t = sram_bank::access_stats();  // the bank rules' counts, plus the address pipeline's
    t.push_back({"address_utilisation", "1", "address pipeline busy time over simulated time"});
    return t;
}

rdu_pmu::rdu_pmu(const sc_core::sc_module_name& n, const component_args& a)
    : component(n, a),
      m_read_bytes(stats().scalar("read_bytes")),
      m_write_bytes(stats().scalar("write_bytes")),
      m_accesses(stats().scalar("accesses")) {
    load_params(m_p, a);
    const sram_bank::params& s = m_p.scratchpad;
    set_clock(s.clock);
    if (s.capacity.bytes() % static_cast<std::uint64_t>(s.banks) != 0)
        throw input_error("component '" + a.config_path + "' (rdu_pmu): capacity " +
                              format_bytes(static_cast<double>(s.capacity.bytes())) + " does not divide into " +
                              std::to_string(s.banks) + " equal banks",
                          a.where);
    m_banks = sram_bank::timing::shared(s);
    m_state = m_banks->make_state();
    m_addr_ticks = clock().cycles(1.0 / static_cast<double>(m_p.addresses_per_cycle));
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_banks->busy_total(m_state)); });
    stats().formula("bandwidth",
                    [this](double seconds) { return seconds > 0 ? (m_read_bytes + m_write_bytes) / seconds : 0.0; });
    stats().formula("address_utilisation",
                    [this](double seconds) { return seconds > 0 ? ticks_to_seconds(m_agen.busy) / seconds : 0.0; });
}

double rdu_pmu::peak_bytes_per_second() const {
    return m_banks->port_bytes_per_second() * static_cast<double>(m_banks->port_count());
}

void rdu_pmu::transport(txn& t) {
    if (t.kind != txn_kind::read && t.kind != txn_kind::write)
        throw input_error("pattern memory unit " + path() + " takes reads and writes (transfers), not compute steps");
    std::pair<tick, tick> served;
    const auto [head, tail] = m_banks->access(m_state, t.address, t.bytes, t.head, t.tail, &served);
    // The address pipeline issues one address per access_bytes, addresses_per_cycle at a time.
    const double addresses = std::ceil(static_cast<double>(t.bytes) / static_cast<double>(m_p.access_bytes.bytes()));
    const tick dur = static_cast<tick>(addresses) * m_addr_ticks;
    const tick start = m_agen.reserve(t.head, dur);
    m_agen_addresses += addresses;
    const tick agen_end = start + dur + m_p.scratchpad.latency.to_ticks(clock());
    (t.kind == txn_kind::write ? m_write_bytes : m_read_bytes) += static_cast<double>(t.bytes);
    m_accesses += 1;
    const tick end = std::max(tail, agen_end);
    spend(t, energy_part::sram, m_p.scratchpad.energy.access(t.kind == txn_kind::write, static_cast<double>(t.bytes)),
          std::max(head, start), end);
    // Traced while its address generator or its banks serve it.
    sim().trace.slice(m_track, std::min(start, served.first), std::max(start + dur, served.second), t.op, t.step);
    t.head = std::max(head, start);
    t.tail = end;
    t.unit = 0;
}

std::vector<double> rdu_pmu::unit_busy() const {
    return {ticks_to_seconds(m_banks->busy_total(m_state)) / static_cast<double>(m_banks->port_count())};
}

void rdu_pmu::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::memory;
    u.work = m_read_bytes + m_write_bytes;
    u.work_unit = "B";
    u.units = static_cast<double>(m_banks->port_count());
    u.peak_rate = m_banks->port_bytes_per_second();
    u.ideal_seconds = u.work / u.peak_rate;
    // The busiest bank, or the address pipeline, whichever needs longer at peak.
    const double agen_ideal = m_agen_addresses / (static_cast<double>(m_p.addresses_per_cycle) * clock().hz);
    u.ideal_max = std::max(m_banks->ideal_max_seconds(m_state), agen_ideal);
    u.busy_seconds = ticks_to_seconds(m_banks->busy_total(m_state));
    u.busy_max = std::max(ticks_to_seconds(m_banks->busy_max(m_state)), ticks_to_seconds(m_agen.busy));
    const memory_energy& e = m_p.scratchpad.energy;
    charge(u, e.joules(m_read_bytes, m_write_bytes), e.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<rdu_pmu>("rdu_pmu", "memory",
                                        "RDU pattern memory unit: banked scratchpad (sram_bank rules) with an "
                                        "address-generation pipeline of a given number of addresses per cycle"));

}  // namespace tessel
