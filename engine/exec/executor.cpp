#include "engine/exec/executor.h"

#include <algorithm>

#include "models/interconnect/interconnect.h"

namespace tessel {

executor::executor(sc_core::sc_module_name n, platform& plat) : sc_core::sc_module(n), m_out("out"), m_plat(plat) {
    // Every component, parts of composites included (tile[0,0].sram), gets its own binding.
    const auto& all = plat.sim().components();
    m_socket.assign(all.size(), -1);
    int next = 0;
    for (std::uint32_t id = 0; id < all.size(); ++id) {
        if (!all[id]) continue;
        m_out.bind(all[id]->in);
        m_socket[id] = next++;
    }
    SC_METHOD(process);
    sensitive << m_wake;
    dont_initialize();
}

void executor::push(tick t, std::uint32_t kind, std::uint32_t index) {
    m_heap.push_back(event{t, m_seq++, kind, index});
    std::push_heap(m_heap.begin(), m_heap.end(), event_later{});
}

void executor::send(std::uint32_t comp, txn& t) {
    const int sock = m_socket[comp];
    if (sock < 0) throw std::logic_error("component " + std::to_string(comp) + " is not bound to the executor");
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    m_out[static_cast<unsigned>(sock)]->b_transport(m_payload.gp(), delay);
}

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
    // Walk backwards along unfinished dependencies until a step repeats: that is a cycle.
    std::uint32_t cur = 0;
    while (indeg[cur] == 0) ++cur;
    std::vector<int> pos(n, -1);
    std::vector<std::uint32_t> path;
    while (pos[cur] < 0) {
        pos[cur] = static_cast<int>(path.size());
        path.push_back(cur);
        const std::uint32_t* d = p.deps_of(cur);
        std::uint32_t next = cur;
        for (std::uint32_t i = 0; i < p.steps[cur].dep_count; ++i)
            if (indeg[d[i]] > 0) {
                next = d[i];
                break;
            }
        cur = next;
    }
    std::string cycle;
    for (size_t i = path.size(); i-- > static_cast<size_t>(pos[cur]);) cycle += p.describe(path[i]) + " -> ";
    cycle += p.describe(cur);
    throw input_error("program '" + p.name + "' can never finish: its steps wait on each other in a cycle: " + cycle +
                      " (" + std::to_string(n - seen) + " steps are blocked)");
}

executor::result executor::run(const program& p) {
    m_prog = &p;
    const size_t n = p.steps.size();
    m_result = result{};
    m_result.step_start.assign(n, 0);
    m_result.step_end.assign(n, 0);
    m_remaining.resize(n);
    m_succ_begin.assign(n + 1, 0);
    for (size_t s = 0; s < n; ++s) {
        const step& st = p.steps[s];
        m_remaining[s] = st.dep_count;
        for (std::uint32_t i = 0; i < st.dep_count; ++i) {
            const std::uint32_t d = p.deps[st.dep_begin + i];
            if (d >= n)
                throw input_error("program '" + p.name + "': " + p.describe(static_cast<std::uint32_t>(s)) +
                                  " depends on step " + std::to_string(d) + ", which does not exist");
            if (d == s) throw input_error("program '" + p.name + "': " + p.describe(d) + " depends on itself");
            ++m_succ_begin[d + 1];
        }
    }
    for (size_t s = 0; s < n; ++s) m_succ_begin[s + 1] += m_succ_begin[s];
    m_succ.assign(p.deps.size(), 0);
    {
        std::vector<std::uint32_t> fill(m_succ_begin.begin(), m_succ_begin.end() - 1);
        for (size_t s = 0; s < n; ++s) {
            const step& st = p.steps[s];
            for (std::uint32_t i = 0; i < st.dep_count; ++i) m_succ[fill[p.deps[st.dep_begin + i]]++] = static_cast<std::uint32_t>(s);
        }
    }
    check_acyclic(p);
    for (const step& st : p.steps) {
        auto check = [&](const endpoint& e) {
            if (!e.valid() || e.comp >= m_socket.size() || m_socket[e.comp] < 0)
                throw input_error("program '" + p.name + "': a step names a component that is not part of the platform");
        };
        if (st.kind == step_kind::compute || st.kind == step_kind::sync) check(st.at);
        if (st.kind == step_kind::transfer) {
            check(st.at);
            check(st.to);
        }
    }
    m_heap.clear();
    m_ready.clear();
    m_flows.clear();
    m_free_flows.clear();
    m_holder.clear();
    m_done = 0;
    m_error = nullptr;
    m_quantum = m_plat.quantum();
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time::from_value(m_quantum));
    const tick start = sc_core::sc_time_stamp().value();
    m_result.start = start;
    m_result.end = start;
    for (size_t s = 0; s < n; ++s)
        if (m_remaining[s] == 0) m_ready.push_back(static_cast<std::uint32_t>(s));
    if (n > 0) {
        m_wake.notify(sc_core::SC_ZERO_TIME);
        sc_core::sc_start();
    }
    if (m_error) std::rethrow_exception(m_error);
    if (m_done != n) {
        // Cannot happen for an acyclic program; name what is stuck if it ever does.
        std::string stuck;
        for (size_t s = 0; s < n && stuck.size() < 400; ++s)
            if (m_remaining[s] > 0) stuck += " " + p.describe(static_cast<std::uint32_t>(s));
        throw std::logic_error("program '" + p.name + "' stopped with " + std::to_string(n - m_done) +
                               " steps unfinished:" + stuck);
    }
    m_prog = nullptr;
    return m_result;
}

void executor::process() {
    try {
        const tick now = sc_core::sc_time_stamp().value();
        ++m_result.activations;
        for (;;) {
            while (!m_heap.empty() && m_heap.front().time <= now) {
                std::pop_heap(m_heap.begin(), m_heap.end(), event_later{});
                const event e = m_heap.back();
                m_heap.pop_back();
                if (e.kind == 0) complete(e.index, e.time);
                else inject(e.index, now);
            }
            if (m_ready.empty()) break;
            // Steps that became ready at this instant start in step-id order.
            m_issuing.swap(m_ready);
            m_ready.clear();
            std::sort(m_issuing.begin(), m_issuing.end());
            for (std::uint32_t s : m_issuing) issue(s, now);
            m_issuing.clear();
        }
        if (!m_heap.empty()) m_wake.notify(sc_core::sc_time::from_value(m_heap.front().time - now));
    } catch (...) {
        // Stop this program (no further events), not the kernel: later programs may still run.
        m_error = std::current_exception();
        m_heap.clear();
        m_ready.clear();
    }
}

void executor::complete(std::uint32_t s, tick at) {
    m_result.step_end[s] = at;
    m_result.end = std::max(m_result.end, at);
    ++m_done;
    for (std::uint32_t i = m_succ_begin[s]; i < m_succ_begin[s + 1]; ++i)
        if (--m_remaining[m_succ[i]] == 0) m_ready.push_back(m_succ[i]);
}

void executor::issue(std::uint32_t s, tick now) {
    const program& p = *m_prog;
    const step& st = p.steps[s];
    const tick at = std::max(now, st.not_before);
    txn& t = m_payload.ext();
    t.op = st.op;
    t.step = s;
    switch (st.kind) {
        case step_kind::delay:
            m_result.step_start[s] = at;
            push(at + st.length, 0, s);
            return;
        case step_kind::sync:
            t.kind = txn_kind::sync;
            t.unit = st.at.unit < 0 ? 0 : st.at.unit;
            t.participants = st.dep_count;
            t.head = t.tail = at;
            send(st.at.comp, t);
            m_result.step_start[s] = at;
            push(t.tail, 0, s);
            return;
        case step_kind::compute: {
            t.kind = txn_kind::compute;
            t.unit = st.at.unit < 0 ? 0 : st.at.unit;
            t.w = &p.works[st.work];
            t.head = t.tail = at;
            const std::uint64_t key = (static_cast<std::uint64_t>(st.at.comp) << 32) | static_cast<std::uint32_t>(t.unit);
            if (p.strict_schedule) {
                send(st.at.comp, t);
                if (t.head != at) {
                    const auto prev = m_holder.find(key);
                    const double cyc = m_plat.clock().to_cycles(at - m_result.start);
                    throw input_error("schedule conflict on " + m_plat.name_of(st.at) + " at cycle " +
                                      format_number(cyc, 12) + ": " + p.describe(s) + " is scheduled to start there but " +
                                      (prev != m_holder.end() ? p.describe(prev->second) : std::string("an earlier step")) +
                                      " holds it until cycle " +
                                      format_number(m_plat.clock().to_cycles(t.head - m_result.start), 12));
                }
                m_holder[key] = s;
            } else {
                send(st.at.comp, t);
            }
            m_result.step_start[s] = t.head;
            push(t.tail, 0, s);
            return;
        }
        case step_kind::transfer:
            m_result.step_start[s] = at;
            start_flow(s, at);
            return;
    }
}

attach_point executor::attach_or_fail(const endpoint& e, std::int32_t unit, std::uint32_t s) const {
    const attach_point ap = m_plat.attachment(e.comp, unit);
    if (!ap.valid()) {
        endpoint named = e;
        named.unit = unit;
        throw input_error("program '" + m_prog->name + "': " + m_prog->describe(s) + " moves data through " +
                          m_plat.name_of(named) + ", which is not connected to any network (add a connection in the platform)");
    }
    return ap;
}

void executor::start_flow(std::uint32_t s, tick now) {
    const step& st = m_prog->steps[s];
    std::uint32_t fi;
    if (!m_free_flows.empty()) {
        fi = m_free_flows.back();
        m_free_flows.pop_back();
    } else {
        fi = static_cast<std::uint32_t>(m_flows.size());
        m_flows.emplace_back();
    }
    flow& f = m_flows[fi];
    // Reset field by field: the vectors keep their storage from the flow that used this slot before.
    f.sent = f.count = 0;
    f.local = false;
    f.step = s;
    f.total = st.bytes;
    f.next_at = now;
    f.last = now;
    f.src_by_address = st.at.unit < 0;
    f.dst_by_address = st.to.unit < 0;
    const bool same_place = st.at.comp == st.to.comp && st.at.unit == st.to.unit && !f.src_by_address;
    if (same_place) {
        f.local = true;
    } else {
        // Packet size and window from the networks on the way (the first packet's route when it varies).
        const std::int32_t su = f.src_by_address ? m_plat.comp(st.at.comp).unit_for_address(st.at.address) : st.at.unit;
        const std::int32_t du = f.dst_by_address ? m_plat.comp(st.to.comp).unit_for_address(st.to.address) : st.to.unit;
        f.src_ap = attach_or_fail(st.at, su, s);
        f.dst_ap = attach_or_fail(st.to, du, s);
        m_plat.route_into(f.src_ap, f.dst_ap, f.route);
        f.packet = ~std::uint64_t{0};
        f.window = ~0u;
        for (const auto& seg : f.route) {
            const interconnect& n = m_plat.net(seg.net);
            f.packet = std::min(f.packet, n.packet_bytes());
            f.window = std::min(f.window, n.max_outstanding());
        }
        f.delivered.assign(f.window, now);
        const interconnect& first = m_plat.net(f.route.front().net);
        f.pace = transfer_ticks(static_cast<double>(f.packet + first.header_bytes()), first.link_bytes_per_second());
    }
    if (f.total == 0) {
        push(now, 0, s);
        m_free_flows.push_back(fi);
        return;
    }
    inject(fi, now);
}

void executor::inject(std::uint32_t fi, tick now) {
    const step& st = m_prog->steps[m_flows[fi].step];
    txn& t = m_payload.ext();
    t.op = st.op;
    t.step = m_flows[fi].step;
    for (;;) {
        flow& f = m_flows[fi];
        if (f.sent >= f.total) break;
        if (f.next_at > now + m_quantum) {
            push(f.next_at, 1, fi);
            return;
        }
        const std::uint64_t bytes = f.local ? f.total : std::min(f.packet, f.total - f.sent);
        const tick t0 = f.next_at;
        // Source memory.
        t.kind = txn_kind::read;
        t.unit = st.at.unit;
        t.address = st.at.address + f.sent;
        t.bytes = bytes;
        t.head = t.tail = t0;
        send(st.at.comp, t);
        if (!f.local) {
            attach_point sap = f.src_ap, dap = f.dst_ap;
            bool reroute = false;
            if (f.src_by_address) {
                sap = attach_or_fail(st.at, t.unit, f.step);
                reroute = sap.net != f.src_ap.net || sap.port != f.src_ap.port;
            }
            if (f.dst_by_address) {
                dap = attach_or_fail(st.to, m_plat.comp(st.to.comp).unit_for_address(st.to.address + f.sent), f.step);
                reroute = reroute || dap.net != f.dst_ap.net || dap.port != f.dst_ap.port;
            }
            if (reroute) m_plat.route_into(sap, dap, m_reroute);
            const std::vector<route_segment>& route = reroute ? m_reroute : f.route;
            for (const route_segment& seg : route) {
                t.kind = txn_kind::route;
                t.src_port = seg.in;
                t.dst_port = seg.out;
                t.bytes = bytes;
                send(seg.net, t);
            }
        }
        // Destination memory.
        t.kind = txn_kind::write;
        t.unit = st.to.unit;
        t.address = st.to.address + f.sent;
        t.bytes = bytes;
        send(st.to.comp, t);
        f.sent += bytes;
        f.last = std::max(f.last, t.tail);
        ++m_result.packets;
        if (f.local) break;
        // The next packet is injected one serialisation time later at the first network's link rate, once a
        // buffer slot is free: at most `window` packets of this transfer are in flight. Memory reads are
        // pipelined (the next request does not wait for this one's data).
        f.delivered[f.count % f.window] = t.tail;
        ++f.count;
        const tick slot = f.count >= f.window ? f.delivered[f.count % f.window] : t0;
        f.next_at = std::max(t0 + f.pace, slot);
    }
    flow& f = m_flows[fi];
    push(f.last, 0, f.step);
    m_free_flows.push_back(fi);
}

}  // namespace tessel
