#include "models/interconnect/flow_control/credit_flow.h"

#include <algorithm>
#include <stdexcept>

#include "models/core/sim_context.h"
#include "models/interconnect/mesh_noc.h"

namespace tessel {

namespace {
constexpr int local = mesh_dir::local;
int opposite(int dir) { return dir ^ 1; }  // east <-> west, north <-> south
}  // namespace

credit_flow::credit_flow(mesh_noc& noc, const config& c) : m_noc(noc), m_c(c) {
    m_v = static_cast<std::uint32_t>(c.vcs);
    m_b = static_cast<std::uint32_t>(c.buffer_flits);
    m_nodes = static_cast<std::uint32_t>(c.width * c.height);
    m_credit_delay = std::max<std::uint64_t>(c.link_cycles, 1);
    const std::size_t vcs = static_cast<std::size_t>(m_nodes) * 5 * m_v;
    m_slot_pkt.assign(vcs * m_b, none);
    m_slot_idx.assign(vcs * m_b, 0);
    m_slot_ready.assign(vcs * m_b, 0);
    m_fifo_head.assign(vcs, 0);
    m_fifo_count.assign(vcs, 0);
    m_route.assign(vcs, -1);
    m_outvc.assign(vcs, -1);
    m_credits.assign(vcs, static_cast<std::int32_t>(m_b));
    m_taken.assign(vcs, 0);
    m_eject_taken.assign(static_cast<std::size_t>(m_nodes) * m_v, 0);
    m_va_rr.assign(m_nodes, 0);
    m_ovc_rr.assign(static_cast<std::size_t>(m_nodes) * 5, 0);
    m_sa_rr.assign(static_cast<std::size_t>(m_nodes) * 5, 0);
    m_router_flits.assign(m_nodes, 0);
    m_is_active.assign(m_nodes, 0);
    m_src_head.assign(m_nodes, none);
    m_src_tail.assign(m_nodes, none);
    m_ni_vc.assign(m_nodes, -1);
    m_ni_rr.assign(m_nodes, 0);
    m_ni_active.assign(m_nodes, 0);
    m_ni_last.assign(m_nodes, 0);
    m_is_touched.assign(m_nodes, 0);
}

std::uint32_t credit_flow::neighbour(std::uint32_t node, int dir) const {
    const auto w = static_cast<std::uint32_t>(m_c.width);
    switch (dir) {
        case mesh_dir::east:
            return node + 1;
        case mesh_dir::west:
            return node - 1;
        case mesh_dir::north:
            return node + w;
        default:
            return node - w;  // south
    }
}

tick credit_flow::flit_ready(const packet& p, std::uint32_t k) const {
    // The source hands the packet over from head_in to tail_in: flit k is there
    // no earlier than head_in, and the last ones no earlier than the tail allows
    // at one flit per cycle.
    const tick behind = static_cast<tick>(p.nflits - k) * m_c.cycle;
    return p.tail_in > p.head_in + behind ? p.tail_in - behind : p.head_in;
}

void credit_flow::accept(txn& t) {
    if (t.hop != 0)
        throw std::logic_error(m_noc.path() + ": credit flow control got a packet at hop " + std::to_string(t.hop));
    if (!m_noc.sim().events)
        throw std::logic_error(m_noc.path() +
                               ": credit flow control runs in the executor's event "
                               "loop (sim().events is null)");
    const bool was_idle = !busy();
    std::uint32_t k;
    if (!m_free.empty()) {
        k = m_free.back();
        m_free.pop_back();
    } else {
        k = static_cast<std::uint32_t>(m_packets.size());
        m_packets.emplace_back();
    }
    packet& p = m_packets[k];
    p.token = t.token;
    p.payload = t.bytes;
    p.wire = t.bytes + m_noc.header_bytes();
    p.head_in = t.head;
    p.tail_in = std::max(t.tail, t.head);
    p.src = t.src_port;
    p.dst = t.dst_port;
    p.nflits = static_cast<std::uint32_t>(flits(p.wire));
    p.sent = 0;
    p.next = none;
    p.head_cycle = 0;
    p.op = t.op;
    p.link_bytes = 0;
    if (m_src_tail[p.src] == none)
        m_src_head[p.src] = k;
    else
        m_packets[m_src_tail[p.src]].next = k;
    m_src_tail[p.src] = k;
    ++m_queued;
    if (!m_ni_active[p.src]) {
        m_ni_active[p.src] = 1;
        m_ni_list.push_back(p.src);
    }
    const tick ready = flit_ready(p, 0);
    const std::uint64_t first = (ready + m_c.cycle - 1) / m_c.cycle;
    if (m_next_cycle > 0 && first < m_next_cycle && m_src_head[p.src] == k && m_ni_last[p.src] < m_next_cycle) {
        // The packet reaches its interface at the very instant of the cycle just
        // simulated (after that cycle's wake-up in the event order) and the
        // interface sent nothing in it: inject as if it had come first. Exact,
        // because nothing injected in a cycle is visible to anyone before the next
        // one.
        if (was_idle) m_epoch = m_next_cycle - 1;
        inject(p.src, m_next_cycle - 1);
    } else if (was_idle) {
        m_epoch = std::max(first, m_next_cycle);
    }
    if (!m_wake_pending) {
        // Idle until now: simulate from the cycle the first flit can go (never a
        // cycle already simulated).
        m_wake_pending = true;
        m_noc.sim().events->wake_at(m_noc, static_cast<tick>(std::max(first, m_next_cycle)) * m_c.cycle);
    }
    t.hop = txn::parked;
}

void credit_flow::push_flit(std::uint32_t i, std::uint32_t pkt, std::uint32_t idx, std::uint64_t ready) {
    const std::size_t s = static_cast<std::size_t>(i) * m_b + (m_fifo_head[i] + m_fifo_count[i]) % m_b;
    if (m_fifo_count[i] >= m_b) throw std::logic_error(m_noc.path() + ": credit flow control overflowed a buffer");
    m_slot_pkt[s] = pkt;
    m_slot_idx[s] = idx;
    m_slot_ready[s] = ready;
    ++m_fifo_count[i];
}

void credit_flow::activate(std::uint32_t node) {
    ++m_router_flits[node];
    ++m_in_routers;
    if (!m_is_active[node]) {
        m_is_active[node] = 1;
        m_active.push_back(node);
    }
}

void credit_flow::touch(std::uint32_t node) {
    if (!m_is_touched[node]) {
        m_is_touched[node] = 1;
        m_touched.push_back(node);
    }
}

void credit_flow::inject(std::uint32_t node, std::uint64_t c) {
    const std::uint32_t k = m_src_head[node];
    touch(node);
    packet& p = m_packets[k];
    const std::uint32_t base = ivc(node, local, 0);
    if (m_ni_vc[node] < 0) {
        for (std::uint32_t n = 0; n < m_v; ++n) {
            const std::uint32_t v = (m_ni_rr[node] + n) % m_v;
            const std::uint32_t i = base + v;
            if (m_taken[i] || (m_c.cut_through && m_credits[i] < static_cast<std::int32_t>(p.nflits))) continue;
            m_taken[i] = 1;
            m_ni_vc[node] = static_cast<std::int8_t>(v);
            m_ni_rr[node] = static_cast<std::uint8_t>((v + 1) % m_v);
            break;
        }
        if (m_ni_vc[node] < 0) return;
    }
    const std::uint32_t i = base + static_cast<std::uint32_t>(m_ni_vc[node]);
    if (m_credits[i] < 1 || flit_ready(p, p.sent) > static_cast<tick>(c) * m_c.cycle) return;
    --m_credits[i];
    m_ni_last[node] = c + 1;
    push_flit(i, k, p.sent, c + m_c.link_cycles + m_c.router_cycles);
    activate(node);
    const std::uint64_t fb =
        p.sent + 1 == p.nflits ? p.wire - static_cast<std::uint64_t>(p.sent) * m_c.flit_bytes : m_c.flit_bytes;
    m_noc.m_inject[node].r.busy += m_c.cycle;
    m_noc.m_inject[node].bytes += static_cast<double>(fb);
    p.link_bytes += static_cast<double>(fb);
    if (++p.sent == p.nflits) {
        m_taken[i] = 0;
        m_ni_vc[node] = -1;
        m_src_head[node] = p.next;
        if (p.next == none) m_src_tail[node] = none;
        --m_queued;
    }
}

void credit_flow::step_router(std::uint32_t node, std::uint64_t c) {
    const auto nv = static_cast<std::uint32_t>(5 * m_v);
    const std::uint32_t base = ivc(node, 0, 0);
    touch(node);
    const int w = m_c.width;
    const int x = static_cast<int>(node) % w, y = static_cast<int>(node) / w;
    std::uint64_t req[5] = {0, 0, 0, 0, 0};
    tick age[40];  // of each requester's packet, when the arbiter reads it (5 ports x at most 8 VCs)
    const bool aged = m_c.arbiter->uses_age();
    // Route computation and virtual channel allocation, from an input VC that
    // rotates every cycle.
    const std::uint32_t start = m_va_rr[node];
    for (std::uint32_t n = 0; n < nv; ++n) {
        const std::uint32_t iv = (start + n) % nv;
        const std::uint32_t i = base + iv;
        if (m_fifo_count[i] == 0) continue;
        const std::size_t s = static_cast<std::size_t>(i) * m_b + m_fifo_head[i];
        if (m_slot_ready[s] > c) continue;
        const packet& p = m_packets[m_slot_pkt[s]];
        if (m_route[i] < 0)
            m_route[i] = static_cast<std::int8_t>(
                m_noc.next_direction(x, y, static_cast<int>(p.dst) % w, static_cast<int>(p.dst) / w));
        const int out = m_route[i];
        if (m_outvc[i] < 0) {
            // Only a head flit is ever at the front without a VC: the rest of a
            // packet follows its head's VC.
            std::uint8_t& rr = m_ovc_rr[node * 5 + static_cast<std::uint32_t>(out)];
            for (std::uint32_t k = 0; k < m_v; ++k) {
                const std::uint32_t v = (rr + k) % m_v;
                if (out == local) {
                    std::uint8_t& taken = m_eject_taken[node * m_v + v];
                    if (taken) continue;
                    taken = 1;
                } else {
                    const std::uint32_t j = ivc(neighbour(node, out), opposite(out), static_cast<int>(v));
                    if (m_taken[j] || (m_c.cut_through && m_credits[j] < static_cast<std::int32_t>(p.nflits))) continue;
                    m_taken[j] = 1;
                }
                m_outvc[i] = static_cast<std::int8_t>(v);
                rr = static_cast<std::uint8_t>((v + 1) % m_v);
                break;
            }
            if (m_outvc[i] < 0) continue;
        }
        if (out != local && m_credits[ivc(neighbour(node, out), opposite(out), m_outvc[i])] < 1) continue;
        req[out] |= std::uint64_t{1} << iv;
        if (aged) age[iv] = p.head_in;
    }
    m_va_rr[node] = static_cast<std::uint8_t>((start + 1) % nv);
    // Switch allocation: one arbiter per output (outputs in an order that rotates every cycle), one flit per
    // output and per input port.
    std::uint64_t used_in = 0;  // the VCs of input ports already served this cycle
    const std::uint64_t port_vcs = (std::uint64_t{1} << m_v) - 1;
    for (int o = 0; o < 5; ++o) {
        const int out = static_cast<int>((c - m_epoch + static_cast<std::uint64_t>(o)) % 5);
        const std::uint64_t r = req[out] & ~used_in;
        if (!r) continue;
        std::uint8_t& rr = m_sa_rr[node * 5 + static_cast<std::uint32_t>(out)];
        const std::uint32_t iv = m_c.arbiter->grant(r, nv, rr, age);
        used_in |= port_vcs << (iv / m_v * m_v);
        send(node, base + iv, out, c);
    }
}

void credit_flow::send(std::uint32_t node, std::uint32_t i, int out, std::uint64_t c) {
    const std::size_t s = static_cast<std::size_t>(i) * m_b + m_fifo_head[i];
    const std::uint32_t k = m_slot_pkt[s], idx = m_slot_idx[s];
    m_fifo_head[i] = (m_fifo_head[i] + 1) % m_b;
    --m_fifo_count[i];
    --m_router_flits[node];
    --m_in_routers;
    m_credit_q.push_back(credit{c + m_credit_delay, i});
    packet& p = m_packets[k];
    const bool tail = idx + 1 == p.nflits;
    const std::uint64_t fb = tail ? p.wire - static_cast<std::uint64_t>(idx) * m_c.flit_bytes : m_c.flit_bytes;
    const std::size_t l = m_noc.link_index(node, out);
    m_noc.m_links[l].r.busy += m_c.cycle;
    m_noc.m_links[l].bytes += static_cast<double>(fb);
    p.link_bytes += static_cast<double>(fb);
    const auto v = static_cast<std::uint32_t>(m_outvc[i]);
    if (out == local) {
        if (idx == 0) m_packets[k].head_cycle = c;
        if (tail) {
            m_eject_taken[node * m_v + v] = 0;
            finish(k, c);
        }
    } else {
        const std::uint32_t nb = neighbour(node, out);
        const std::uint32_t j = ivc(nb, opposite(out), static_cast<int>(v));
        --m_credits[j];
        push_flit(j, k, idx, c + m_c.link_cycles + m_c.router_cycles);
        activate(nb);
        if (tail) m_taken[j] = 0;
    }
    if (tail) {
        m_route[i] = -1;
        m_outvc[i] = -1;
    }
}

void credit_flow::finish(std::uint32_t k, std::uint64_t c) {
    const packet& p = m_packets[k];
    const tick cyc = m_c.cycle, now = static_cast<tick>(c) * cyc;
    // The last flit carries the remainder: the tail leaves ser(wire) - (flits -
    // 1) cycles after it starts.
    const tick body = static_cast<tick>(p.nflits - 1) * cyc;
    const tick ser = m_noc.ser_ticks(p.wire);
    const tick tail = now + static_cast<tick>(m_c.link_cycles) * cyc + (ser > body ? ser - body : 0);
    const tick head = std::max(static_cast<tick>(p.head_cycle + m_c.link_cycles) * cyc, now);
    m_noc.m_packets += 1;
    m_noc.m_bytes += static_cast<double>(p.payload);
    m_noc.spend(p.op, energy_part::network, p.link_bytes * m_noc.m_p.energy.transfer.joules(), p.head_in, tail);
    const std::uint64_t token = p.token;
    m_free.push_back(k);
    m_noc.sim().events->release(token, txn::arrived, head, tail);
}

void credit_flow::wake(tick now) {
    m_wake_pending = false;
    const std::uint64_t c = static_cast<std::uint64_t>(now / m_c.cycle);
    if (c < m_next_cycle || static_cast<tick>(c) * m_c.cycle != now)
        throw std::logic_error(m_noc.path() + ": credit flow control woken off its cycle grid");
    // 1. Credits that have come back.
    while (m_credit_head < m_credit_q.size() && m_credit_q[m_credit_head].cycle <= c)
        ++m_credits[m_credit_q[m_credit_head++].vc];
    if (m_credit_head == m_credit_q.size()) {
        m_credit_q.clear();
        m_credit_head = 0;
    } else if (m_credit_head > 4096 && m_credit_head * 2 > m_credit_q.size()) {
        m_credit_q.erase(m_credit_q.begin(), m_credit_q.begin() + static_cast<std::ptrdiff_t>(m_credit_head));
        m_credit_head = 0;
    }
    // 2. Injection. Flits injected now are not ready before next cycle, so the
    // order of 2 and 3 and of the routers within 3 does not matter
    // (router_latency + link_latency >= 1 cycle).
    std::size_t keep = 0;
    for (std::size_t n = 0; n < m_ni_list.size(); ++n) {
        const std::uint32_t node = m_ni_list[n];
        inject(node, c);
        if (m_src_head[node] != none)
            m_ni_list[keep++] = node;
        else
            m_ni_active[node] = 0;
    }
    m_ni_list.resize(keep);
    // 3. Routers holding flits (those that receive their first flit now are
    // appended and have nothing ready).
    const std::size_t active = m_active.size();
    for (std::size_t n = 0; n < active; ++n) step_router(m_active[n], c);
    keep = 0;
    for (std::size_t n = 0; n < m_active.size(); ++n) {
        const std::uint32_t node = m_active[n];
        if (m_router_flits[node] > 0)
            m_active[keep++] = node;
        else
            m_is_active[node] = 0;
    }
    m_active.resize(keep);
    m_next_cycle = c + 1;
    if (busy()) {
        m_wake_pending = true;
        m_noc.sim().events->wake_at(m_noc, static_cast<tick>(c + 1) * m_c.cycle);
        return;
    }
    // Drained: forget the arbitration state, so what runs next does not depend on
    // what ran before.
    for (const std::uint32_t node : m_touched) {
        m_is_touched[node] = 0;
        m_va_rr[node] = 0;
        m_ni_rr[node] = 0;
        std::fill_n(m_ovc_rr.begin() + node * 5, 5, std::uint8_t{0});
        std::fill_n(m_sa_rr.begin() + node * 5, 5, std::uint8_t{0});
    }
    m_touched.clear();
}

}  // namespace tessel
