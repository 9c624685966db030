#include "engine/exec/executor.h"

#include <algorithm>
#include <cmath>

#include "models/core/limits.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

executor::executor(sc_core::sc_module_name n, platform& plat) : sc_core::sc_module(n), m_plat(plat) {
    // Every component, parts of composites included (tile[0,0].sram), is reached by its id.
    const auto& all = plat.sim().components();
    m_comps = all;
    m_nets.assign(all.size(), nullptr);
    for (std::uint32_t id = 0; id < all.size(); ++id)
        if (all[id] && all[id]->has_role(component::role::interconnect))
            m_nets[id] = static_cast<interconnect*>(all[id]);
    SC_METHOD(process);
    sensitive << m_wake;
    dont_initialize();
}

executor::~executor() {
    if (m_plat.sim().events == this) m_plat.sim().events = nullptr;
}

namespace {
constexpr tick no_time = ~tick{0};

/// A free slot of a pool (flows, packets): a released one if any (its vectors keep their storage), else new.
template <class T>
std::uint32_t take_slot(std::vector<T>& pool, std::vector<std::uint32_t>& free) {
    if (free.empty()) {
        pool.emplace_back();
        return static_cast<std::uint32_t>(pool.size() - 1);
    }
    const std::uint32_t i = free.back();
    free.pop_back();
    return i;
}
}  // namespace

void executor::check_acyclic(const program& p) const {
    const size_t n = p.steps.size();
    std::vector<std::uint32_t> indeg(n, 0);
    for (size_t s = 0; s < n; ++s) indeg[s] = p.steps[s].dep_count;
    std::vector<std::uint32_t> stack;
    for (size_t s = 0; s < n; ++s)
        if (indeg[s] == 0) stack.push_back(static_cast<std::uint32_t>(s));
    size_t seen = 0;
    while (!stack.empty()) {
        const std::uint32_t s = stack.back();
        stack.pop_back();
        ++seen;
        for (std::uint32_t i = m_succ_begin[s]; i < m_succ_begin[s + 1]; ++i)
            if (--indeg[m_succ[i]] == 0) stack.push_back(m_succ[i]);
    }
    if (seen == n) return;
    // A safety net for programs built by mappers: a YAML program's cycle is refused where it is written.
    throw input_error(p.cycle_message(p.find_cycle()));
}

void executor::check_budget(const program& p) const {
    // Compute steps on a resource that does not compute, and the run's packets and simulated time estimated
    // before it starts: lower bounds from the largest packet and the fastest link of any network, so a run
    // refused here could never have fitted.
    using r = component::role;
    std::uint64_t max_packet = 0;
    double max_rate = 0;
    for (const interconnect* n : m_nets)
        if (n) {
            max_packet = std::max(max_packet, n->packet_bytes());
            max_rate = std::max(max_rate, n->link_bytes_per_second());
        }
    max_packet = std::max(max_packet, p.packet_bytes);
    double packets = 0;
    const double max_seconds = limits().sim_seconds;
    for (std::uint32_t s = 0; s < p.steps.size(); ++s) {
        const step& st = p.steps[s];
        auto refuse = [&](const component& c, const std::string& why) {
            throw input_error("program '" + p.name + "': " + p.describe(s) + " " + why + " " + c.path() + " (" +
                              c.kind_name() + ")");
        };
        if (st.kind == step_kind::compute && !m_comps[st.at.comp]->has_role(r::compute))
            refuse(*m_comps[st.at.comp], "computes on");
        // A start or a delay past the simulated-time budget could never finish inside it (an emitted program's
        // start of 1e23 ticks would otherwise leave the step waiting forever past the representable end).
        for (const auto& [t, verb] :
             {std::pair<tick, const char*>{st.not_before, " starts at "}, {st.length, " lasts "}}) {
            const double secs = ticks_to_seconds(t);
            if (secs > max_seconds)
                throw input_error("program '" + p.name + "': " + p.describe(s) + verb + format_time(secs) + "; " +
                                  over_limit("sim_seconds", secs, "simulated seconds"));
        }
        // Transfer endpoints are not checked by role here: mappers write configuration into compute units
        // (rdu_pcu takes writes); a hand-written program's are checked where they are read (program_yaml.cpp),
        // and a pe refuses a transfer itself (pe::transport).
        if (st.kind != step_kind::transfer) continue;
        if (st.bytes == 0 || max_packet == 0) continue;
        const double bytes = static_cast<double>(st.bytes);
        const double k = std::ceil(bytes / static_cast<double>(max_packet));
        packets += k;
        const double secs = max_rate > 0 ? bytes / max_rate : 0;
        if (secs > max_seconds)
            throw input_error(
                "program '" + p.name + "': " + p.describe(s) + " moves " + format_bytes(bytes) + ", at least " +
                format_time(secs) + " of simulated time at the fastest link bandwidth of any network, " +
                format_rate(max_rate, "B/s") + "; " + over_limit("sim_seconds", secs, "simulated seconds"));
    }
    if (packets > limits().packets)
        throw input_error("program '" + p.name + "' " + over_limit("packets", packets, "network packets") +
                          " (its transfers in packets of at most " + format_bytes(static_cast<double>(max_packet)) +
                          ")");
}

executor::result executor::run(const program& p) {
    m_prog = &p;
    const size_t n = p.steps.size();
    m_result = result{};
    m_result.step_start.assign(n, 0);
    m_result.step_end.assign(n, 0);
    m_remaining.resize(n);
    m_succ_begin.assign(n + 1, 0);
    bool forward = true;  // every step depends only on earlier-listed ones: no cycle is possible
    for (size_t s = 0; s < n; ++s) {
        const step& st = p.steps[s];
        m_remaining[s] = st.dep_count;
        for (std::uint32_t i = 0; i < st.dep_count; ++i) {
            const std::uint32_t d = p.deps[st.dep_begin + i];
            if (d >= n)
                throw input_error("program '" + p.name + "': " + p.describe(static_cast<std::uint32_t>(s)) +
                                  " depends on step " + std::to_string(d) + ", which does not exist");
            if (d == s) throw input_error("program '" + p.name + "': " + p.describe(d) + " depends on itself");
            forward = forward && d < s;
            ++m_succ_begin[d + 1];
        }
        if (st.anchor != ~0u && st.anchor >= s)
            throw input_error("program '" + p.name + "': " + p.describe(static_cast<std::uint32_t>(s)) +
                              " counts its start from step " + std::to_string(st.anchor) +
                              ", which is not an earlier step");
    }
    for (size_t s = 0; s < n; ++s) m_succ_begin[s + 1] += m_succ_begin[s];
    m_succ.assign(p.deps.size(), 0);
    {
        std::vector<std::uint32_t> fill(m_succ_begin.begin(), m_succ_begin.end() - 1);
        for (size_t s = 0; s < n; ++s) {
            const step& st = p.steps[s];
            for (std::uint32_t i = 0; i < st.dep_count; ++i)
                m_succ[fill[p.deps[st.dep_begin + i]]++] = static_cast<std::uint32_t>(s);
        }
    }
    if (!forward) check_acyclic(p);
    for (const step& st : p.steps) {
        auto check = [&](const endpoint& e) {
            if (!e.valid() || e.comp >= m_comps.size() || !m_comps[e.comp])
                throw input_error("program '" + p.name +
                                  "': a step names a component that is not part of the platform");
        };
        if (st.kind == step_kind::compute || st.kind == step_kind::sync) check(st.at);
        if (st.kind == step_kind::transfer) {
            check(st.at);
            check(st.to);
        }
    }
    check_budget(p);
    // Tie-break ranks: by label when the program has labels (a hand-written program's ids), else by index.
    m_rank.resize(n);
    for (size_t s = 0; s < n; ++s) m_rank[s] = static_cast<std::uint32_t>(s);
    if (p.step_labels.size() == n && n > 1) {
        std::vector<std::uint32_t> order(m_rank);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return p.step_labels[a] < p.step_labels[b]; });
        for (size_t r = 0; r < n; ++r) m_rank[order[r]] = static_cast<std::uint32_t>(r);
    }
    m_queue.reset(sc_core::sc_time_stamp().value());
    m_ready.clear();
    m_flows.clear();
    m_free_flows.clear();
    m_packets.clear();
    m_free_packets.clear();
    m_holder.clear();
    m_pace_net = nullptr;
    m_done = 0;
    m_error = nullptr;
    m_quantum = std::max(m_plat.quantum(), p.quantum);
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time::from_value(m_quantum));
    // What the program places on arrays of PEs, by component.
    std::unordered_map<std::uint32_t, std::vector<grid_placement>> placed;
    for (const placement& pl : p.placements) {
        const bool exists = pl.comp < m_comps.size() && m_comps[pl.comp];
        if (!exists || !m_plat.comp(pl.comp).grid())
            throw input_error(
                "program '" + p.name + "': " + pl.data.what + " is placed on " +
                (exists ? m_plat.comp(pl.comp).path() : std::string("a component that is not part of the platform")) +
                ", which is not an array of PEs held as data");
        placed[pl.comp].push_back(pl.data);
    }
    const tick start = sc_core::sc_time_stamp().value();
    m_result.start = start;
    m_result.end = start;
    m_now = start;
    m_plat.sim().events = this;
    // Every component starts the program, a PE grid with the program's placements on it (which it checks).
    static const std::vector<grid_placement> none;
    try {
        for (const auto& c : m_plat.sim().components()) {
            if (!c) continue;
            const auto it = placed.find(c->id());
            c->begin_program(start, it != placed.end() ? it->second : none);
        }
    } catch (...) {
        m_plat.sim().events = nullptr;
        throw;
    }
    for (size_t s = 0; s < n; ++s)
        if (m_remaining[s] == 0) m_ready.push_back(static_cast<std::uint32_t>(s));
    if (n > 0) {
        m_wake.notify(sc_core::SC_ZERO_TIME);
        sc_core::sc_start();
    }
    m_plat.sim().events = nullptr;
    if (m_error) std::rethrow_exception(m_error);
    if (m_done != n) {
        // Cannot happen for an acyclic program; name what is stuck if it ever does.
        std::string stuck;
        for (size_t s = 0; s < n && stuck.size() < 400; ++s)
            if (m_result.step_end[s] == 0 && m_remaining[s] > 0)
                stuck += " " + p.describe(static_cast<std::uint32_t>(s));
        throw std::logic_error("program '" + p.name + "' stopped with " + std::to_string(n - m_done) +
                               " steps unfinished:" + stuck);
    }
    m_prog = nullptr;
    return std::move(m_result);  // the next run starts from result{}
}

void executor::process() {
    try {
        const tick woken = sc_core::sc_time_stamp().value();
        tick now = woken;
        ++m_result.activations;
        for (;;) {
            // This instant's events first (completions make steps ready), then the steps that became ready, in
            // rank order; repeat until nothing is left at this instant.
            event e;
            if (m_queue.pop_until(now, e)) {
                m_now = e.time;
                // The next event's packet or successor list lies anywhere in memory: start fetching it now.
                if (const event* next = m_queue.peek_same_time()) {
                    if (next->kind == ev::complete)
                        __builtin_prefetch(&m_succ_begin[next->index]);
                    else if (next->kind == ev::stage)
                        __builtin_prefetch(&m_packets[next->index]);
                }
                switch (e.kind) {
                    case ev::complete:
                        complete(e.index);
                        break;
                    case ev::issue:
                        m_ready.push_back(e.index);
                        break;
                    case ev::inject:
                        inject(e.index, e.time);
                        break;
                    case ev::stage:
                        advance(e.index);
                        break;
                    case ev::wake:
                        m_plat.comp(e.index).wake(e.time);
                        break;
                }
                continue;
            }
            if (m_ready.empty()) {
                // This instant is done. The executor is the kernel's only process and components are timed by
                // the ticks they are given, not by the kernel's clock: it moves on to the next instant itself
                // (the same order of events, without a kernel round trip per instant).
                if (m_queue.empty()) break;
                now = m_queue.next_time();
                continue;
            }
            m_issuing.swap(m_ready);
            m_ready.clear();
            // Often in rank order already (completions come in the order their steps were issued).
            const auto by_rank = [&](std::uint32_t a, std::uint32_t b) { return m_rank[a] < m_rank[b]; };
            if (!std::is_sorted(m_issuing.begin(), m_issuing.end(), by_rank))
                std::sort(m_issuing.begin(), m_issuing.end(), by_rank);
            m_now = now;
            const step* const steps = m_prog->steps.data();
            for (m_batch_left = m_issuing.size(); m_batch_left > 0; --m_batch_left) {
                const std::size_t i = m_issuing.size() - m_batch_left;
                // A batch's steps lie anywhere in the program: fetch the step two ahead while this one issues.
                if (m_batch_left > 2) {
                    const char* const next = reinterpret_cast<const char*>(&steps[m_issuing[i + 2]]);
                    __builtin_prefetch(next);
                    __builtin_prefetch(next + sizeof(step) - 1);  // a step may straddle two lines
                }
                issue(m_issuing[i], now);
            }
            m_issuing.clear();
        }
        // The kernel's clock follows to the last instant: a later program starts from there.
        if (now > woken) m_wake.notify(sc_core::sc_time::from_value(now - woken));
    } catch (...) {
        // Stop this program (no further events), not the kernel: later programs may still run.
        m_error = std::current_exception();
        m_queue.reset(sc_core::sc_time_stamp().value());
        m_ready.clear();
    }
}

void executor::complete(std::uint32_t s) {
    const tick at = m_result.step_end[s];
    m_result.end = std::max(m_result.end, at);
    ++m_done;
    for (std::uint32_t i = m_succ_begin[s]; i < m_succ_begin[s + 1]; ++i)
        if (--m_remaining[m_succ[i]] == 0) m_ready.push_back(m_succ[i]);
}

tick executor::origin_of(const step& st) const {
    if (st.anchor == ~0u) return m_result.start;
    const tick end = m_result.step_end[st.anchor];
    if (st.kind != step_kind::compute) return end;
    const clock_domain& clk = m_comps[st.at.comp]->clock();
    return m_result.start + clk.cycles(std::ceil(clk.to_cycles(end - m_result.start) - 1e-6));
}

void executor::issue(std::uint32_t s, tick now) {
    const program& p = *m_prog;
    const step& st = p.steps[s];
    const tick origin = origin_of(st);
    if (now < origin + st.not_before) {  // (an anchored origin may lie ahead of now: the next clock edge)
        // `start:` (or a static schedule's slot, counted from the program's start or its anchor): the step is
        // issued when its time comes, in time order with every other request, not booked ahead of them.
        push(origin + st.not_before, ev::issue, s);
        return;
    }
    const tick at = now;
    auto finish_at = [&](tick end) {
        m_result.step_end[s] = end;
        push(end, ev::complete, s);
    };
    txn& t = m_txn;
    t.op = st.op;
    t.step = s;
    t.payload = p.payload_of(s);
    switch (st.kind) {
        case step_kind::delay:
            m_result.step_start[s] = at;
            finish_at(at + st.length);
            return;
        case step_kind::sync:
            t.kind = txn_kind::sync;
            t.unit = st.at.unit < 0 ? 0 : st.at.unit;
            t.participants = st.dep_count;
            t.head = t.tail = at;
            m_comps[st.at.comp]->transport(t);
            m_result.step_start[s] = at;
            finish_at(t.tail);
            return;
        case step_kind::compute: {
            t.kind = txn_kind::compute;
            t.unit = st.at.unit < 0 ? 0 : st.at.unit;
            t.w = &p.works[st.work];
            t.head = t.tail = at;
            t.origin = origin;
            const std::uint64_t key =
                (static_cast<std::uint64_t>(st.at.comp) << 32) | static_cast<std::uint32_t>(t.unit);
            m_comps[st.at.comp]->transport(t);
            if (p.strict_schedule) {
                if (t.head != at) {
                    const auto prev = m_holder.find(key);
                    const double cyc = m_plat.clock().to_cycles(at - m_result.start);
                    throw input_error(
                        "schedule conflict on " + m_plat.name_of(st.at) + " at cycle " + format_number(cyc, 12) + ": " +
                        p.describe(s) + " is scheduled to start there but " +
                        (prev != m_holder.end() ? p.describe(prev->second) : std::string("an earlier step")) +
                        " holds it until cycle " +
                        format_number(m_plat.clock().to_cycles(t.head - m_result.start), 12));
                }
                m_holder[key] = s;
            }
            m_result.step_start[s] = t.head;
            finish_at(t.tail);
            return;
        }
        case step_kind::transfer:
            m_result.step_start[s] = at;
            start_flow(s, at);
            return;
    }
}

attach_point executor::attach_or_fail(const endpoint& e, std::int32_t unit, std::uint32_t s) const {
    if (const interconnect* c = m_nets[e.comp]) {
        // A network port itself: the packet enters or leaves there, with no memory on that side.
        if (unit < 0 || static_cast<std::uint32_t>(unit) >= c->unit_count())
            throw input_error("program '" + m_prog->name + "': " + m_prog->describe(s) + " names port " +
                              std::to_string(unit) + " of " + c->path() + ", which has " +
                              std::to_string(c->unit_count()) + " ports");
        return attach_point{e.comp, static_cast<std::uint32_t>(unit)};
    }
    const attach_point ap = m_plat.attachment(e.comp, unit);
    if (!ap.valid()) {
        endpoint named = e;
        named.unit = unit;
        throw input_error("program '" + m_prog->name + "': " + m_prog->describe(s) + " moves data through " +
                          m_plat.name_of(named) +
                          ", which is not connected to any network (add a connection in the platform)");
    }
    return ap;
}

void executor::start_flow(std::uint32_t s, tick now) {
    const step& st = m_prog->steps[s];
    const std::uint32_t fi = take_slot(m_flows, m_free_flows);
    flow& f = m_flows[fi];
    // Reset field by field: the vectors keep their storage from the flow that used this slot before.
    f.sent = f.count = f.delivered = 0;
    f.local = f.waiting = f.aligned = false;
    f.step = s;
    f.total = st.bytes;
    f.last = now;
    f.src_by_address = st.at.unit < 0;
    f.dst_by_address = st.to.unit < 0;
    f.src_is_port = m_nets[st.at.comp] != nullptr;
    f.dst_is_port = m_nets[st.to.comp] != nullptr;
    f.window = 1;
    f.packet = f.total;
    f.pace = 0;
    const bool same_place = st.at.comp == st.to.comp && st.at.unit == st.to.unit && !f.src_by_address;
    if (same_place && !f.src_is_port) {
        f.local = true;
    } else {
        // Packet size from the networks on the way (the first packet's route when it varies), the window from the
        // first: packets of a transfer in flight at once are what its source interface buffers; on a route through
        // several networks a packet gives its slot back when it leaves the first (the next network's interface
        // buffers it from there; leave_network), on a route through one when it is delivered.
        const std::int32_t su = f.src_by_address ? m_plat.comp(st.at.comp).unit_for_address(st.at.address) : st.at.unit;
        const std::int32_t du = f.dst_by_address ? m_plat.comp(st.to.comp).unit_for_address(st.to.address) : st.to.unit;
        f.src_ap = attach_or_fail(st.at, su, s);
        f.dst_ap = attach_or_fail(st.to, du, s);
        m_plat.route_into(f.src_ap, f.dst_ap, f.route);
        f.packet = ~std::uint64_t{0};
        for (const auto& seg : f.route) f.packet = std::min(f.packet, m_nets[seg.net]->packet_bytes());
        f.packet = std::max(f.packet, m_prog->packet_bytes);
        f.aligned = m_comps[st.at.comp]->aligns_bursts() || m_comps[st.to.comp]->aligns_bursts();
        f.aligned_at = m_comps[st.at.comp]->aligns_bursts() ? st.at.address : st.to.address;
        const interconnect& first = *m_nets[f.route.front().net];
        f.window = first.max_outstanding();
        const std::uint64_t wire = f.packet + first.header_bytes();
        if (&first != m_pace_net || wire != m_pace_wire) {  // most transfers pace like the one before
            m_pace_net = &first;
            m_pace_wire = wire;
            m_pace = transfer_ticks(static_cast<double>(wire), first.link_bytes_per_second());
        }
        f.pace = m_pace;
    }
    // Every entry is written when its packet is injected, before it is read (schedule_next), so the ring is
    // only grown, never cleared.
    if (f.ring.size() < f.window) f.ring.resize(f.window);
    if (f.total == 0) {
        m_result.step_end[s] = now;
        push(now, ev::complete, s);
        m_free_flows.push_back(fi);
        return;
    }
    if (may_go_now(now))
        inject(fi, now);
    else
        push(now, ev::inject, fi);
}

void executor::inject(std::uint32_t fi, tick now) {
    const std::uint32_t ki = take_slot(m_packets, m_free_packets);
    flow& f = m_flows[fi];
    packet& k = m_packets[ki];
    k.flow = fi;
    k.number = static_cast<std::uint32_t>(f.count);
    k.stage = 0;
    const std::uint64_t room = f.aligned ? f.packet - (f.aligned_at + f.sent) % f.packet : f.packet;
    k.bytes = f.local ? f.total : std::min(room, f.total - f.sent);
    k.offset = f.sent;
    k.created = now;
    k.own_route = false;
    k.net = nullptr;
    k.t.head = k.t.tail = now;
    f.ring[f.count % f.window] = no_time;
    f.sent += k.bytes;
    ++f.count;
    ++m_result.packets;
    // The next packet one serialisation time later at the first network's rate, once a window slot is free.
    if (f.sent < f.total) schedule_next(fi, now + f.pace);
    advance(ki);
}

void executor::schedule_next(std::uint32_t fi, tick earliest) {
    flow& f = m_flows[fi];
    if (f.count >= f.window) {
        const tick freed = f.ring[f.count % f.window];  // delivery of the packet `window` places back
        if (freed == no_time) {
            f.waiting = true;
            f.wait_from = earliest;
            return;
        }
        earliest = std::max(earliest, freed);
    }
    push(earliest, ev::inject, fi);
}

const std::vector<route_segment>& executor::route_of(const packet& k) const {
    return k.own_route ? k.route : m_flows[k.flow].route;
}

void executor::memory_stage(packet& k, txn_kind kind, const endpoint& e, const flow& f) {
    txn& t = m_txn;
    t.op = m_prog->steps[f.step].op;
    t.step = f.step;
    t.payload = nullptr;
    t.kind = kind;
    t.unit = e.unit;
    t.address = e.address + k.offset;
    t.bytes = k.bytes;
    t.head = k.t.head;
    t.tail = k.t.tail;
    m_comps[e.comp]->transport(t);
    k.t.head = t.head;
    k.t.tail = t.tail;
}

void executor::enter_stage(packet& k, std::uint32_t ki) {
    const flow& f = m_flows[k.flow];
    const std::vector<route_segment>& route = route_of(k);
    if (f.local || k.stage > route.size()) {
        k.net = nullptr;
        return;
    }
    const route_segment& seg = route[k.stage - 1];
    k.net = m_nets[seg.net];
    txn& t = k.t;
    t.kind = txn_kind::route;
    t.op = m_prog->steps[f.step].op;
    t.step = f.step;
    t.bytes = k.bytes;
    t.address = m_prog->steps[f.step].at.address + k.offset;  // where it was read (the IPU exchange's multicast)
    t.src_port = seg.in;
    t.dst_port = seg.out;
    t.hop = 0;
    t.token = ki;
}

void executor::advance(std::uint32_t ki) {
    // The common case, kept small: a packet in a network takes its next link (or several, while nothing queued
    // comes first), by a direct call on the network with the packet's own route transaction, and is then
    // still in the network with something queued before its head.
    packet& k = m_packets[ki];
    if (k.net) {
        const tick h = horizon();
        const std::size_t queued = m_queue.size();
        k.t.horizon = h;
        k.net->transport(k.t);
        // Nothing was queued meanwhile, so may_go_now(head) is head < h.
        if (k.t.hop < txn::parked && k.t.head >= h && queued == m_queue.size()) {
            push(k.t.head, ev::stage, ki);
            return;
        }
        if (k.t.hop == txn::parked) return;  // the network hands it back through release()
        if (k.t.hop == txn::arrived) {
            leave_network(k, ki);
        }
        if (queued == m_queue.size() ? k.t.head >= h : !may_go_now(k.t.head)) {
            push(k.t.head, ev::stage, ki);
            return;
        }
        m_now = std::max(m_now, k.t.head);
    }
    move_on(ki);
}

void executor::move_on(std::uint32_t ki) {
    for (;;) {
        packet& k = m_packets[ki];
        if (k.net) {
            k.t.horizon = horizon();
            k.net->transport(k.t);
            if (k.t.hop == txn::parked) return;
            if (k.t.hop == txn::arrived) {
                leave_network(k, ki);
            }
        } else if (k.stage == 0) {
            const flow& f = m_flows[k.flow];
            const step& st = m_prog->steps[f.step];
            // Source memory (none when the source is a network port).
            if (!f.src_is_port) memory_stage(k, txn_kind::read, st.at, f);
            k.stage = 1;
            if (!f.local && (f.src_by_address || f.dst_by_address)) {
                // Memories that pick the unit by address may move this packet to another port.
                attach_point sap = f.src_ap, dap = f.dst_ap;
                if (f.src_by_address) sap = attach_or_fail(st.at, m_txn.unit, f.step);
                if (f.dst_by_address)
                    dap = attach_or_fail(st.to, m_plat.comp(st.to.comp).unit_for_address(st.to.address + k.offset),
                                         f.step);
                if (sap.net != f.src_ap.net || sap.port != f.src_ap.port || dap.net != f.dst_ap.net ||
                    dap.port != f.dst_ap.port) {
                    m_plat.route_into(sap, dap, k.route);
                    k.own_route = true;
                }
            }
            enter_stage(k, ki);
        } else {
            // Destination memory (none when the destination is a network port).
            const flow& f = m_flows[k.flow];
            if (!f.dst_is_port) memory_stage(k, txn_kind::write, m_prog->steps[f.step].to, f);
            delivered(ki);
            return;
        }
        // The next request is made when the head gets there: now, if nothing queued comes first.
        const tick head = m_packets[ki].t.head;
        if (!may_go_now(head)) {
            push(head, ev::stage, ki);
            return;
        }
        m_now = std::max(m_now, head);
    }
}

void executor::leave_network(packet& k, std::uint32_t ki) {
    if (k.stage == 1 && route_of(k).size() > 1) release_slot(k.flow, k.number, k.t.tail);
    ++k.stage;
    enter_stage(k, ki);
}

void executor::release_slot(std::uint32_t fi, std::uint32_t number, tick at) {
    flow& f = m_flows[fi];
    f.ring[number % f.window] = at;
    if (f.waiting && f.count >= f.window && f.count - f.window == number) {
        f.waiting = false;
        schedule_next(fi, f.wait_from);
    }
}

void executor::delivered(std::uint32_t ki) {
    const packet& k = m_packets[ki];
    const std::uint32_t fi = k.flow;
    flow& f = m_flows[fi];
    const tick done = k.t.tail;
    m_result.latency.add(done - k.created);
    const traffic_spec& tr = m_prog->traffic;
    if (tr.enabled()) {
        const tick created = m_result.step_start[f.step];
        if (tr.measured(created - m_result.start)) {
            m_result.measured_latency.add(done - created);
            ++m_result.measured_packets;
        }
        const tick since = done - m_result.start;
        if (since >= tr.measure_begin && since < tr.measure_end && tr.flit_bytes > 0) {
            const std::uint64_t header = f.local ? 0 : m_plat.net(route_of(k).front().net).header_bytes();
            m_result.window_flits_delivered += (k.bytes + header + tr.flit_bytes - 1) / tr.flit_bytes;
        }
    }
    f.last = std::max(f.last, done);
    ++f.delivered;
    m_free_packets.push_back(ki);
    if (f.local || route_of(k).size() <= 1) release_slot(fi, k.number, done);
    if (f.sent >= f.total && f.delivered == f.count) {
        m_result.step_end[f.step] = f.last;
        push(f.last, ev::complete, f.step);
        m_free_flows.push_back(fi);
    }
}

void executor::wake_at(component& c, tick at) { push(at, ev::wake, c.id()); }

void executor::release(std::uint64_t token, std::uint32_t hop, tick head, tick tail) {
    const auto ki = static_cast<std::uint32_t>(token);
    packet& k = m_packets[ki];
    k.t.head = head;
    k.t.tail = tail;
    k.t.hop = hop;
    if (hop == txn::arrived) {
        leave_network(k, ki);
    }
    push(head, ev::stage, ki);
}

}  // namespace tessel
