#include "models/memory/hbm.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "models/core/registry.h"
#include "models/core/sim_context.h"

namespace tessel {

void hbm::params::declare(param_decl& d) {
    d(clock, "clock", "${clock}", "memory controller clock (timings below may be given in its cycles)");
    d(channels, "channels", "8", "independent channels (an HBM3 stack has 16, an HBM2e stack 8)", bound::positive,
      4096);
    d(pseudo_channels, "pseudo_channels", "2", "pseudo-channels per channel, each with its own data bus and banks",
      bound::positive, 64);
    d(bank_groups, "bank_groups", "4", "bank groups per pseudo-channel", bound::positive, 256);
    d(banks_per_group, "banks_per_group", "4", "banks per bank group", bound::positive, 256);
    d(pin_rate, "pin_rate", "3.2Gb/s", "data rate of one data pin");
    d(width, "width", "64", "data bus width of one pseudo-channel, in bits", bound::positive);
    d(burst_length, "burst_length", "4", "beats per burst (bytes per burst = width / 8 x burst_length)",
      bound::positive);
    d(row_bytes, "row_bytes", "1KiB", "row (page) size of one bank", bound::positive);
    d(interleave, "interleave", "256B", "consecutive bytes mapped to one channel before the next", bound::positive);
    d(capacity, "capacity", "16GiB", "capacity of the whole device", bound::positive);
    d(tCL, "tCL", "14ns", "column access (CAS) latency: column command to first data");
    d(tRCD, "tRCD", "14ns", "activate to column command");
    d(tRP, "tRP", "14ns", "precharge to activate");
    d(tRAS, "tRAS", "34ns", "activate to precharge, minimum");
    d(tRRD, "tRRD", "4ns", "activate to activate in one pseudo-channel, minimum");
    d(tFAW, "tFAW", "30ns", "window in which at most four activations may start");
    d(tREFI, "tREFI", "3.9us", "refresh interval");
    d(tRFC, "tRFC", "260ns", "time one all-bank refresh blocks the channel");
    d.choice(page_policy, "page_policy", "open", {"open", "closed"},
             "open: keep a row open after an access (row hits); closed: precharge after every access");
    d.choice(bank_hash, "bank_hash", "xor", {"xor", "none"},
             "xor: bank index XOR low row bits, so streams at power-of-two strides spread over banks "
             "(permutation-based interleaving, Zhang et al., MICRO 2000); none: plain bank bits");
    d.choice(detail, "detail", "banks", {"banks", "stream"},
             "banks: every interleave block timed on its channel, bank and row; stream: each request a sequential "
             "stream at the sustained rate the bank model reaches (one queue per device, O(1) per request: for "
             "systems of many chips)");
    declare_energy(d, energy, energy_45nm::dram);
}

std::vector<stat_decl> hbm::stat_table() {
    return {
        {"read_bytes", "B", "bytes read"},
        {"write_bytes", "B", "bytes written"},
        {"row_hits", "access", "accesses to an already open row"},
        {"row_misses", "access", "accesses that closed another row first"},
        {"row_empty", "access", "accesses to a bank with no open row"},
        {"refresh_stall", "s", "time accesses waited for a refresh to finish"},
        {"bandwidth", "B/s", "bytes moved per simulated second"},
        {"peak_bandwidth", "B/s", "pins x pin rate over all pseudo-channels"},
        {"utilisation", "1", "bandwidth over peak bandwidth"},
        {"row_hit_rate", "1", "row hits over all accesses"},
    };
}

hbm::hbm(sc_core::sc_module_name n, const component_args& a)
    : component(n, a),
      m_read_bytes(stats().scalar("read_bytes")),
      m_write_bytes(stats().scalar("write_bytes")),
      m_hits(stats().scalar("row_hits")),
      m_misses(stats().scalar("row_misses")),
      m_empty(stats().scalar("row_empty")),
      m_refresh_stall(stats().scalar("refresh_stall")) {
    load_params(m_p, a);
    set_clock(m_p.clock);
    const clock_domain& clk = clock();
    m_pc_bps = m_p.pin_rate.bytes_per_second(clk) * static_cast<double>(m_p.width);
    m_xor_hash = m_p.bank_hash == "xor";
    m_closed_page = m_p.page_policy == "closed";
    m_stream_detail = m_p.detail == "stream";
    m_burst_bytes = static_cast<std::uint64_t>(m_p.width / 8 * m_p.burst_length);
    if (m_burst_bytes == 0)
        throw input_error("component '" + a.config_path + "' (hbm): width must be at least 8 bits", a.where);
    m_burst = transfer_ticks(static_cast<double>(m_burst_bytes), m_pc_bps);
    m_cl = m_p.tCL.to_ticks(clk);
    m_rcd = m_p.tRCD.to_ticks(clk);
    m_rp = m_p.tRP.to_ticks(clk);
    m_ras = m_p.tRAS.to_ticks(clk);
    m_rrd = m_p.tRRD.to_ticks(clk);
    m_faw = m_p.tFAW.to_ticks(clk);
    m_refi = m_p.tREFI.to_ticks(clk);
    // Channels refresh staggered across the interval so they do not all stall at once; channel c first
    // refreshes at (c + 1) / channels of the interval.
    for (std::int64_t c = 0; c < m_p.channels; ++c)
        m_refresh_offset.push_back(m_refi / static_cast<tick>(m_p.channels) * static_cast<tick>(c + 1));
    for (tick offset : m_refresh_offset) m_refresh_window.push_back(refresh_window{offset, 0});
    m_rfc = m_p.tRFC.to_ticks(clk);
    if (m_refi > 0 && m_rfc >= m_refi)
        throw input_error("component '" + a.config_path + "' (hbm): tRFC must be shorter than tREFI", a.where);
    if (m_p.interleave.bytes() > m_p.row_bytes.bytes())
        throw input_error("component '" + a.config_path + "' (hbm): interleave (" +
                              format_bytes(static_cast<double>(m_p.interleave.bytes())) +
                              ") must not exceed row_bytes (" +
                              format_bytes(static_cast<double>(m_p.row_bytes.bytes())) + ")",
                          a.where);
    m_by_pcs = divisor(static_cast<std::uint64_t>(m_p.pseudo_channels));
    m_by_row_blocks = divisor(m_p.row_bytes.bytes() / m_p.interleave.bytes());
    m_by_banks = divisor(static_cast<std::uint64_t>(m_p.bank_groups * m_p.banks_per_group));
    m_by_groups = divisor(static_cast<std::uint64_t>(m_p.bank_groups));
    const size_t pcs = static_cast<size_t>(m_p.channels * m_p.pseudo_channels);
    m_pcs.resize(pcs);
    for (auto& pc : m_pcs) pc.banks.resize(static_cast<size_t>(m_p.bank_groups * m_p.banks_per_group));
    if (m_stream_detail) {
        const stream_rate r = sustained_stream();
        m_stream_bps = r.bytes_per_second;
        m_stream_latency = seconds_to_ticks(r.latency_s);
        m_tracks.push_back(trace_track("stream"));
    } else {
        for (std::int64_t c = 0; c < m_p.channels; ++c)
            m_tracks.push_back(trace_track("channel[" + std::to_string(c) + "]"));
    }
    stats().formula("bandwidth", [this](double s) { return s > 0 ? (m_read_bytes + m_write_bytes) / s : 0.0; });
    stats().formula("peak_bandwidth", [this](double) { return peak_bytes_per_second(); });
    stats().formula("utilisation", [this](double s) {
        return s > 0 ? (m_read_bytes + m_write_bytes) / s / peak_bytes_per_second() : 0.0;
    });
    stats().formula("row_hit_rate", [this](double) {
        const double all = m_hits + m_misses + m_empty;
        return all > 0 ? m_hits / all : 0.0;
    });
}

hbm::divisor::divisor(std::uint64_t v) : d(v), shift(-1) {
    if (v == 0 || (v & (v - 1)) != 0) return;
    shift = 0;
    while ((std::uint64_t{1} << shift) != v) ++shift;
}

int hbm::unit_for_address(std::uint64_t address) const {
    return static_cast<int>((address / m_p.interleave.bytes()) % static_cast<std::uint64_t>(m_p.channels));
}

hbm::location hbm::map(std::uint64_t address, int forced_channel) const {
    // Row : bank : (column block) : pseudo-channel : channel : offset, from most to least significant.
    const std::uint64_t block = address / m_p.interleave.bytes();
    if (forced_channel >= 0) return locate(static_cast<std::uint32_t>(forced_channel), block);
    const std::uint64_t channels = static_cast<std::uint64_t>(m_p.channels);
    return locate(static_cast<std::uint32_t>(block % channels), block / channels);
}

// locate, after_refresh, access_pc and access_range run once per 256-byte block a transfer touches: the
// sustained-rate probe alone reads 64 MiB in every process that runs a chip with HBM. Under the sanitizer build
// (clang, -O1) they ran 15x slower than optimised, mostly UBSan's dynamic-type check on every member access
// (`this` here is always the hbm whose transport called them) and calls to std::max and operator[] left out of
// line. They are flattened (every call inside inlined) and skip that one check; AddressSanitizer and the rest of
// UBSan still check them. A 2-layer Llama-3-8B step on the H100 under the sanitizers: 3.5 -> 1.6 CPU-s.
[[gnu::flatten]] __attribute__((no_sanitize("vptr"))) hbm::location hbm::locate(std::uint32_t channel,
                                                                                std::uint64_t block) const {
    location loc{};
    loc.channel = channel;
    loc.pc = static_cast<std::uint32_t>(m_by_pcs.mod(block));
    block = m_by_row_blocks.div(m_by_pcs.div(block));
    // Consecutive rows go to different bank groups first, so streaming activations overlap.
    const std::uint64_t row = m_by_banks.div(block);
    std::uint64_t b = m_by_banks.mod(block);
    if (m_xor_hash) b ^= m_by_banks.mod(row);
    const std::uint64_t bg = m_by_groups.mod(b), within = m_by_groups.div(b);
    loc.bank = static_cast<std::uint32_t>(bg * static_cast<std::uint64_t>(m_p.banks_per_group) + within);
    loc.row = row;
    return loc;
}

[[gnu::flatten]] __attribute__((no_sanitize("vptr"))) tick hbm::after_refresh(std::uint32_t channel, tick t,
                                                                              std::uint64_t* epoch) const {
    if (m_refi == 0) {
        *epoch = 0;
        return t;
    }
    const tick offset = m_refresh_offset[channel];
    if (t < offset) {
        *epoch = 0;
        return t;
    }
    // The refresh interval t falls in: most accesses fall in the one the channel's last access did.
    refresh_window& w = m_refresh_window[channel];
    if (t < w.start || t - w.start >= m_refi) {
        w.k = (t - offset) / m_refi;
        w.start = offset + w.k * m_refi;
    }
    const tick window = w.start;
    *epoch = w.k + 1;
    if (t < window + m_rfc) return window + m_rfc;
    return t;
}

[[gnu::flatten]] __attribute__((no_sanitize("vptr"))) std::pair<tick, tick> hbm::access_pc(const location& loc,
                                                                                           std::uint64_t bytes, tick at,
                                                                                           tick tail) {
    pc_state& pc = m_pcs[loc.channel * static_cast<size_t>(m_p.pseudo_channels) + loc.pc];
    bank_state& bank = pc.banks[loc.bank];
    // The controller issues a request's commands as it nears the head of the queue: no earlier than the data
    // bus could take its data, counting back the commands it needs (so rows are not opened long before use).
    const tick free = pc.bus.free_at;
    auto back = [free](tick lead) { return free > lead ? free - lead : tick{0}; };
    const bool hit_candidate = bank.open_row == static_cast<std::int64_t>(loc.row);
    const tick lead = hit_candidate ? m_cl : bank.open_row >= 0 ? m_rp + m_rcd + m_cl : m_rcd + m_cl;
    const tick t_cmd = std::max(at, back(lead));
    std::uint64_t epoch = 0;
    const tick t0 = after_refresh(loc.channel, t_cmd, &epoch);
    if (t0 != t_cmd) m_refresh_stall += ticks_to_seconds(t0 - t_cmd);
    if (epoch != bank.epoch) {  // a refresh since the last access closed every row
        bank.open_row = -1;
        bank.epoch = epoch;
    }
    tick col;
    if (bank.open_row == static_cast<std::int64_t>(loc.row)) {
        m_hits += 1;
        col = std::max(t0, bank.col_ready);
    } else {
        tick act;
        if (bank.open_row >= 0) {
            m_misses += 1;
            const tick pre = std::max({t0, bank.act_at + m_ras, bank.data_end});
            act = pre + m_rp;
        } else {
            m_empty += 1;
            act = std::max(t0, bank.pre_ready);
        }
        if (pc.any_act) act = std::max(act, pc.last_act + m_rrd);
        if (pc.act_count >= 4) act = std::max(act, pc.acts[pc.act_next] + m_faw);  // the 5th in a tFAW window waits
        pc.acts[pc.act_next] = act;
        pc.act_next = (pc.act_next + 1) % 4;
        ++pc.act_count;
        pc.last_act = act;
        pc.any_act = true;
        bank.act_at = act;
        bank.open_row = static_cast<std::int64_t>(loc.row);
        col = act + m_rcd;
    }
    const std::uint64_t bursts = (bytes + m_burst_bytes - 1) / m_burst_bytes;
    const tick dur = m_burst * bursts;
    tick data_start = std::max(col + m_cl, pc.bus.free_at);
    // A refresh between the row's activation and this data closed the row: activate again after it.
    std::uint64_t ep_data = 0;
    const tick shifted = after_refresh(loc.channel, data_start, &ep_data);
    if (ep_data != bank.epoch || shifted != data_start) {
        const tick offset = m_refresh_offset[loc.channel];
        const tick window_end = offset + (ep_data - 1) * m_refi + m_rfc;
        const tick act = std::max(window_end, bank.pre_ready);
        const tick redone = std::max(act + m_rcd + m_cl, pc.bus.free_at);
        m_refresh_stall += ticks_to_seconds(redone > data_start ? redone - data_start : 0);
        bank.act_at = act;
        bank.open_row = static_cast<std::int64_t>(loc.row);
        bank.epoch = ep_data;
        data_start = redone;
    }
    data_start = pc.bus.reserve(data_start, dur);
    tick data_end = data_start + dur;
    if (tail > data_end) {  // write data still arriving: the bus waits for it
        pc.bus.free_at = tail;
        data_end = tail;
    }
    bank.col_ready = data_start - m_cl + dur;
    bank.data_end = data_end;
    pc.bytes += static_cast<double>(bytes);
    if (m_closed_page) {
        bank.pre_ready = std::max(data_end, bank.act_at + m_ras) + m_rp;
        bank.open_row = -1;
    }
    return {data_start, data_end};
}

[[gnu::flatten]] __attribute__((no_sanitize("vptr"))) std::pair<tick, tick> hbm::access_range(
    std::uint64_t address, std::uint64_t bytes, int unit, tick at, tick tail, const txn* traced) {
    const std::uint64_t il = m_p.interleave.bytes();
    std::uint64_t addr = address, left = bytes;
    tick first = max_tick, last = 0;
    bool any = false;
    // Consecutive blocks go to consecutive channels, the rest of their location changing only when the channels
    // wrap around: the divisions of map() once per round of channels, not per block.
    location loc = map(addr, unit);
    const std::uint64_t channels = static_cast<std::uint64_t>(m_p.channels);
    std::uint64_t rest = unit >= 0 ? addr / il : addr / il / channels;  // the block's number within its channel
    while (left > 0 || !any) {
        const std::uint64_t chunk = std::min(left, any ? il : il - addr % il);  // blocks after the first are whole
        if (any) {                                                              // the next block
            if (unit >= 0) {
                loc = locate(loc.channel, ++rest);
            } else if (loc.channel + 1 < channels) {
                ++loc.channel;
            } else {
                loc = locate(0, ++rest);
            }
        }
        const auto [s, e] = access_pc(loc, std::max<std::uint64_t>(chunk, 1), at, tail);
        if (traced) sim().trace.slice(m_tracks[loc.channel], s, e, traced->op, traced->step);
        first = std::min(first, s);
        last = std::max(last, e);
        any = true;
        addr += chunk;
        left -= chunk;
        if (chunk == 0) break;
    }
    return {first, last};
}

hbm::stream_rate hbm::sustained_stream() {
    // Two reads from idle, 16 and 64 MiB (several refresh intervals of a whole device), on a scratch copy of the
    // state: the rate is the slope between them, the latency what the shorter one took beyond its bytes.
    // Memoised per parameter set: a system instantiates the same memory hundreds of times.
    static std::map<std::string, stream_rate> memo;
    std::string key = std::to_string(m_pc_bps) + "/" + std::to_string(m_burst) + "/" + std::to_string(m_burst_bytes);
    for (std::int64_t v :
         {m_p.channels, m_p.pseudo_channels, m_p.bank_groups, m_p.banks_per_group,
          static_cast<std::int64_t>(m_p.row_bytes.bytes()), static_cast<std::int64_t>(m_p.interleave.bytes()),
          static_cast<std::int64_t>(m_cl), static_cast<std::int64_t>(m_rcd), static_cast<std::int64_t>(m_rp),
          static_cast<std::int64_t>(m_ras), static_cast<std::int64_t>(m_rrd), static_cast<std::int64_t>(m_faw),
          static_cast<std::int64_t>(m_refi), static_cast<std::int64_t>(m_rfc), static_cast<std::int64_t>(m_xor_hash),
          static_cast<std::int64_t>(m_closed_page)})
        key += "/" + std::to_string(v);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    const std::vector<pc_state> saved = m_pcs;
    const double stats_saved[] = {m_read_bytes, m_write_bytes, m_hits, m_misses, m_empty, m_refresh_stall};
    for (auto& pc : m_pcs) {
        const size_t banks = pc.banks.size();
        pc = pc_state{};
        pc.banks.resize(banks);
    }
    // The longer read's first n1 bytes are the shorter read (the same blocks in the same order from the same idle
    // state), so one read of n2 bytes, in two calls, times both.
    const std::uint64_t n1 = std::uint64_t{16} << 20, n2 = std::uint64_t{64} << 20;
    const tick t1 = access_range(0, n1, -1, 0, 0, nullptr).second;
    const tick t2 = std::max(t1, access_range(n1, n2 - n1, -1, 0, 0, nullptr).second);
    m_pcs = saved;
    m_read_bytes = stats_saved[0];
    m_write_bytes = stats_saved[1];
    m_hits = stats_saved[2];
    m_misses = stats_saved[3];
    m_empty = stats_saved[4];
    m_refresh_stall = stats_saved[5];
    stream_rate r;
    r.bytes_per_second = static_cast<double>(n2 - n1) / ticks_to_seconds(t2 - t1);
    r.latency_s = std::max(0.0, ticks_to_seconds(t1) - static_cast<double>(n1) / r.bytes_per_second);
    memo.emplace(key, r);
    return r;
}

void hbm::transport_stream(txn& t) {
    const bool buffered = t.kind == txn_kind::write && t.tail > t.head;
    const tick dur = transfer_ticks(static_cast<double>(std::max<std::uint64_t>(t.bytes, 1)), m_stream_bps);
    const tick start = m_stream.reserve(t.head + m_stream_latency, dur);
    const tick end = start + dur;
    sim().trace.slice(m_tracks.front(), start, end, t.op, t.step);
    m_stream_bytes += static_cast<double>(t.bytes);
    (t.kind == txn_kind::write ? m_write_bytes : m_read_bytes) += static_cast<double>(t.bytes);
    // A stream opens each row once (usage() counts the same).
    const double rows = static_cast<double>(t.bytes) / static_cast<double>(m_p.row_bytes.bytes());
    spend(t, energy_part::dram,
          m_p.energy.access(t.kind == txn_kind::write, static_cast<double>(t.bytes)) +
              rows * m_p.energy.activate.joules(),
          start, end);
    t.unit = t.unit >= 0 ? t.unit : unit_for_address(t.address);
    t.head = start;
    t.tail = buffered ? std::max(end, t.tail) : end;
}

void hbm::transport(txn& t) {
    if (m_stream_detail) return transport_stream(t);
    // Write data arriving from head to tail goes into the controller's write buffer: its bursts are booked
    // when the head arrives and do not hold the channel's bus until the tail, which would block every read
    // behind a slow incoming packet (a busy-until bus cannot fill the gaps). The write still completes no
    // earlier than its last byte arrives.
    const bool buffered = t.kind == txn_kind::write && t.tail > t.head;
    const tick arrival_end = t.tail;
    const std::uint32_t channel = map(t.address, t.unit).channel;
    const double opened = m_misses + m_empty;
    const auto [first, last] = access_range(t.address, t.bytes, t.unit, t.head, buffered ? t.head : t.tail, &t);
    (t.kind == txn_kind::write ? m_write_bytes : m_read_bytes) += static_cast<double>(t.bytes);
    spend(t, energy_part::dram,
          m_p.energy.access(t.kind == txn_kind::write, static_cast<double>(t.bytes)) +
              (m_misses + m_empty - opened) * m_p.energy.activate.joules(),
          first, last);
    t.head = first;
    t.tail = buffered ? std::max(last, arrival_end) : last;
    t.unit = static_cast<std::int32_t>(channel);
}

void hbm::usage(std::vector<resource_usage>& out) const {
    resource_usage u;
    u.name = path();
    u.kind = kind_name();
    u.cls = resource_class::memory;
    u.work = m_read_bytes + m_write_bytes;
    u.work_unit = "B";
    u.peak_rate = m_pc_bps;
    u.units = static_cast<double>(m_pcs.size());
    // At stream detail every pseudo-channel carries an equal share and is busy whenever the device is.
    const double stream_share = m_stream_bytes / static_cast<double>(m_pcs.size());
    for (const auto& pc : m_pcs) {
        const double busy = ticks_to_seconds(pc.bus.busy + m_stream.busy);
        u.ideal_max = std::max(u.ideal_max, (pc.bytes + stream_share) / m_pc_bps);
        u.busy_seconds += busy;
        u.busy_max = std::max(u.busy_max, busy);
    }
    u.ideal_seconds = u.work / m_pc_bps;
    u.off_chip = true;
    // A stream opens each row once (open page, sequential); the detailed model counts its activations.
    const double activations = m_misses + m_empty + m_stream_bytes / static_cast<double>(m_p.row_bytes.bytes());
    charge(u, m_p.energy.joules(m_read_bytes, m_write_bytes) + activations * m_p.energy.activate.joules(),
           m_p.energy.leakage.watts());
    out.push_back(u);
}

TESSEL_REGISTER_KIND([] {
    auto k = make_kind<hbm>("hbm", "memory",
                            "DRAM (HBM2e, HBM3, DDR4) with channels, pseudo-channels, banks, row-buffer hits and "
                            "misses from tRCD/tCL/tRP/tRAS, activation limits (tRRD, tFAW) and refresh");
    // Timings in ns: DRAMsim3 configs/HBM2_8Gb_x128.ini (CL=tRCD=tRP=14, tRAS=34, tRRD_S=4, tFAW=30 at tCK=1ns,
    // tREFI=3900, tRFC=260) and configs/DDR4_8Gb_x8_3200.ini (tCK=0.63ns: CL=tRCD=tRP=22, tRAS=52, tRRD_S=4,
    // tFAW=34, tREFI=12480, tRFC=560); organisation and pin rates from JEDEC JESD235 (HBM2/2e) and JESD238 (HBM3).
    // Energy of the HBM stacks: O'Connor et al., "Fine-Grained DRAM", MICRO 2017: an HBM2 bit costs 3.97 pJ, of
    // which 1.21 pJ row activation (per bit of a fully used row) and the rest on-die data movement and I/O
    // (2.54 pJ/bit per byte read or written here; a 1 KiB row activation 1.21 pJ x 8192 bits = 9.91 nJ). HBM3
    // taken as HBM2 (Samsung quotes 3.9 pJ/bit for HBM3E). DDR4: Horowitz's DRAM access (20 pJ/bit, activation
    // included).
    k.presets = {
        {"hbm2e_stack",
         "one HBM2e stack: 8 channels x 2 pseudo-channels of 64 bits at 3.2 Gb/s/pin (409.6 GB/s)",
         "JEDEC JESD235D; timings DRAMsim3 HBM2_8Gb_x128",
         {{"channels", "8"},
          {"pseudo_channels", "2"},
          {"bank_groups", "4"},
          {"banks_per_group", "4"},
          {"pin_rate", "3.2Gb/s"},
          {"width", "64"},
          {"burst_length", "4"},
          {"row_bytes", "1KiB"},
          {"capacity", "16GiB"},
          {"tCL", "14ns"},
          {"tRCD", "14ns"},
          {"tRP", "14ns"},
          {"tRAS", "34ns"},
          {"tRRD", "4ns"},
          {"tFAW", "30ns"},
          {"tREFI", "3.9us"},
          {"tRFC", "350ns"},
          {"energy.read", "2.54pJ/bit"},
          {"energy.write", "2.54pJ/bit"},
          {"energy.activate", "9.91nJ"}}},
        {"hbm3_stack",
         "one HBM3 stack: 16 channels x 2 pseudo-channels of 32 bits at 6.4 Gb/s/pin (819.2 GB/s)",
         "JEDEC JESD238; timings as HBM2e (DRAMsim3 HBM2_8Gb_x128), tRFC for 16 Gb dies",
         {{"channels", "16"},
          {"pseudo_channels", "2"},
          {"bank_groups", "4"},
          {"banks_per_group", "4"},
          {"pin_rate", "6.4Gb/s"},
          {"width", "32"},
          {"burst_length", "8"},
          {"row_bytes", "1KiB"},
          {"capacity", "16GiB"},
          {"tCL", "14ns"},
          {"tRCD", "14ns"},
          {"tRP", "14ns"},
          {"tRAS", "34ns"},
          {"tRRD", "4ns"},
          {"tFAW", "30ns"},
          {"tREFI", "3.9us"},
          {"tRFC", "450ns"},
          {"energy.read", "2.54pJ/bit"},
          {"energy.write", "2.54pJ/bit"},
          {"energy.activate", "9.91nJ"}}},
        {"ddr4_3200",
         "one DDR4-3200 channel: 64 bits at 3.2 Gb/s/pin (25.6 GB/s), 16 banks, 8 KiB rows",
         "JEDEC JESD79-4; timings DRAMsim3 DDR4_8Gb_x8_3200",
         {{"channels", "1"},
          {"pseudo_channels", "1"},
          {"bank_groups", "4"},
          {"banks_per_group", "4"},
          {"pin_rate", "3.2Gb/s"},
          {"width", "64"},
          {"burst_length", "8"},
          {"row_bytes", "8KiB"},
          {"interleave", "256B"},
          {"capacity", "64GiB"},
          {"tCL", "13.75ns"},
          {"tRCD", "13.75ns"},
          {"tRP", "13.75ns"},
          {"tRAS", "32.5ns"},
          {"tRRD", "2.5ns"},
          {"tFAW", "21.25ns"},
          {"tREFI", "7.8us"},
          {"tRFC", "350ns"}}},
    };
    return k;
}());

}  // namespace tessel
