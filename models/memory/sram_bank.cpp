#include "models/memory/sram_bank.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void sram_bank::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "clock of the banks (default: the platform clock)");
    d(capacity, "capacity", "256KiB", "total capacity over all banks", bound::positive);
    d(banks, "banks", "4", "independent banks", bound::positive, 65536);
    d(ports, "ports", "1", "ports per bank (accesses one bank serves at once)", bound::positive);
    d(bank_bandwidth, "bank_bandwidth", "16B/cycle", "bytes per cycle through one port of one bank");
    d(latency, "latency", "1cycle", "access latency added to every access");
    d(interleave, "interleave", "64B", "bytes mapped to one bank before the next (address interleaving)",
      bound::positive);
    declare_energy(d, energy, energy_45nm::sram);
}

sram_bank::timing::timing(const params& p)
    : m_banks(static_cast<size_t>(p.banks)),
      m_ports(static_cast<size_t>(p.ports)),
      m_interleave(p.interleave.bytes()),
      m_capacity(p.capacity.bytes()),
      m_bank_bps(p.bank_bandwidth.bytes_per_second(p.clock.clock())),
      m_fs_per_byte(ticks_per_second / m_bank_bps),
      m_latency(p.latency.to_ticks(p.clock.clock())),
      m_shares(splits_kept * m_banks) {}

std::shared_ptr<const sram_bank::timing> sram_bank::timing::shared(const params& p) {
    const timing t(p);
    using key = std::tuple<std::size_t, std::size_t, std::uint64_t, std::uint64_t, double, tick>;
    static std::map<key, std::shared_ptr<const timing>> made;
    std::shared_ptr<const timing>& at =
        made[key{t.m_banks, t.m_ports, t.m_interleave, t.m_capacity, t.m_bank_bps, t.m_latency}];
    if (!at) at = std::make_shared<const timing>(t);
    return at;
}

sram_bank::state sram_bank::timing::make_state() const {
    state s;
    s.ports.resize(m_banks * m_ports);
    s.bank_bytes.assign(m_banks, 0.0);
    return s;
}

void sram_bank::timing::make_split(split& sp, std::size_t slot, std::uint64_t phase, std::uint64_t bytes) const {
    sp.phase = phase;
    sp.bytes = bytes;
    sp.count = 0;
    share* const out = &m_shares[slot * m_banks];
    // Bytes falling in each bank, in closed form (no loop over stripes): the partial first and last stripes
    // exactly, the whole stripes between them dealt round-robin from the bank after the first. Most banks of
    // a long access get the same byte count, so its duration is converted once.
    const std::uint64_t il = m_interleave, nb = m_banks;
    const std::uint64_t first = phase / il, last = (phase + bytes - 1) / il;
    std::uint64_t dur_bytes = 0;
    tick dur = 0;
    auto add = [&](std::uint64_t bank, std::uint64_t b) {
        if (b != dur_bytes) {
            dur_bytes = b;
            dur = fs_to_ticks(static_cast<double>(b) * m_fs_per_byte);
        }
        out[sp.count++] = share{static_cast<std::size_t>(bank), static_cast<double>(b), dur};
    };
    if (first == last) {
        add(first % nb, bytes);
    } else {
        const std::uint64_t first_bank = first % nb, last_bank = last % nb;
        const std::uint64_t head_bytes = (first + 1) * il - phase, tail_bytes = phase + bytes - last * il;
        const std::uint64_t whole = last - first - 1;  // stripes first+1 .. last-1
        const std::uint64_t per_bank = whole / nb, extra = whole % nb;
        // k counts banks from the one after the first stripe's; it gets a whole stripe more while k < extra.
        std::uint64_t bank = first_bank + 1 == nb ? 0 : first_bank + 1;
        for (std::uint64_t k = 0; k < nb; ++k) {
            std::uint64_t b = (per_bank + (k < extra ? 1 : 0)) * il;
            if (bank == first_bank) b += head_bytes;
            if (bank == last_bank) b += tail_bytes;
            if (b > 0) add(bank, b);
            bank = bank + 1 == nb ? 0 : bank + 1;
        }
    }
}

std::pair<tick, tick> sram_bank::timing::access(state& s, std::uint64_t address, std::uint64_t bytes, tick head,
                                                tick tail, std::pair<tick, tick>* served) const {
    if (bytes == 0) {
        if (served) *served = {head, head};
        return {head + m_latency, std::max(head, tail) + m_latency};
    }
    const std::uint64_t phase = address % (m_interleave * m_banks);
    const std::size_t slot =
        static_cast<std::size_t>(((phase ^ (bytes * 0x9E3779B97F4A7C15ull)) * 0x9E3779B97F4A7C15ull) >> 61) %
        splits_kept;
    split& sp = m_splits[slot];
    if (sp.phase != phase || sp.bytes != bytes) make_split(sp, slot, phase, bytes);
    const share* const shares = &m_shares[slot * m_banks];
    reservation* const ports = s.ports.data();
    double* const bank_bytes = s.bank_bytes.data();
    const std::size_t np = m_ports;
    tick end = tail, first = max_tick, last = 0;
    for (std::size_t i = 0; i < sp.count; ++i) {
        const share& sh = shares[i];
        // The port that frees first serves the access (ties: the lowest port).
        reservation* const p = ports + sh.bank * np;
        reservation* best = p;
        for (std::size_t q = 1; q < np; ++q)
            if (p[q].free_at < best->free_at) best = p + q;
        const tick start = best->reserve(head, sh.dur);
        bank_bytes[sh.bank] += sh.bytes;
        end = std::max(end, start + sh.dur);
        first = std::min(first, start);
        last = std::max(last, start + sh.dur);
    }
    if (served) *served = {first, last};
    return {head + m_latency, end + m_latency};
}

tick sram_bank::timing::busy_total(const state& s) const {
    tick t = 0;
    for (const auto& r : s.ports) t += r.busy;
    return t;
}

tick sram_bank::timing::busy_max(const state& s) const {
    tick t = 0;
    for (const auto& r : s.ports) t = std::max(t, r.busy);
    return t;
}

double sram_bank::timing::ideal_max_seconds(const state& s) const {
    double worst = 0;
    for (double b : s.bank_bytes) worst = std::max(worst, b / (m_bank_bps * static_cast<double>(m_ports)));
    return worst;
}

std::vector<stat_decl> sram_bank::access_stats() {
    return {
        {"read_bytes", "B", "bytes read"},
        {"write_bytes", "B", "bytes written"},
        {"accesses", "access", "accesses served"},
        {"busy", "s", "port time reserved, summed over banks and ports"},
        {"bandwidth", "B/s", "bytes moved per simulated second"},
    };
}

std::vector<stat_decl> sram_bank::stat_table() {
    auto t = access_stats();
    t.push_back({"utilisation", "1", "average port occupancy over simulated time"});
    return t;
}

sram_bank::sram_bank(const sc_core::sc_module_name& n, const component_args& a)
    : component(n, a),
      m_read_bytes(stats().scalar("read_bytes")),
      m_write_bytes(stats().scalar("write_bytes")),
      m_accesses(stats().scalar("accesses")) {
    load_params(m_p, a);
    init(a);
}

void sram_bank::init(const component_args& a) {
    set_clock(m_p.clock);
    if (m_p.capacity.bytes() % static_cast<std::uint64_t>(m_p.banks) != 0)
        throw input_error("component '" + a.config_path + "' (sram_bank): capacity " +
                              format_bytes(static_cast<double>(m_p.capacity.bytes())) + " does not divide into " +
                              std::to_string(m_p.banks) + " equal banks",
                          a.where);
    m_timing = std::make_unique<timing>(m_p);
    m_state = m_timing->make_state();
    m_track = trace_track("");
    stats().formula("busy", [this](double) { return ticks_to_seconds(m_timing->busy_total(m_state)); });
    stats().formula("bandwidth", [this](double s) { return s > 0 ? (m_read_bytes + m_write_bytes) / s : 0.0; });
    stats().formula("utilisation", [this](double s) {
        return s > 0
                   ? ticks_to_seconds(m_timing->busy_total(m_state)) / (s * static_cast<double>(m_timing->port_count()))
                   : 0.0;
    });
}

void sram_bank::transport(txn& t) {
    std::pair<tick, tick> served;
    const auto [head, tail] = m_timing->access(m_state, t.address, t.bytes, t.head, t.tail, &served);
    (t.kind == txn_kind::write ? m_write_bytes : m_read_bytes) += static_cast<double>(t.bytes);
    m_accesses += 1;
    spend(t, energy_part::sram, m_p.energy.access(t.kind == txn_kind::write, static_cast<double>(t.bytes)), head, tail);
    sim().trace.slice(m_track, served.first, served.second, t.op, t.step);
    t.head = head;
    t.tail = tail;
    t.unit = 0;
}

void sram_bank::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::memory;
    u.work = m_read_bytes + m_write_bytes;
    u.work_unit = "B";
    u.units = static_cast<double>(m_timing->port_count());
    u.peak_rate = m_timing->port_bytes_per_second();
    u.ideal_seconds = u.work / u.peak_rate;
    u.ideal_max = m_timing->ideal_max_seconds(m_state);
    u.busy_seconds = ticks_to_seconds(m_timing->busy_total(m_state));
    u.busy_max = ticks_to_seconds(m_timing->busy_max(m_state));
    charge(u, m_p.energy.joules(m_read_bytes, m_write_bytes), m_p.energy.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND(make_kind<sram_bank>("sram_bank", "memory",
                                          "banked on-chip SRAM: capacity, banks x ports of a given width, address "
                                          "interleaving and latency; bank conflicts serialise"));

}  // namespace tessel
