// The bsp mapper: the program. Every op is a superstep (exchange steps, compute steps, a sync); a matrix
// product split in K adds a reduce-scatter superstep.
#include <cstdio>

#include "engine/mappers/bsp/planner.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/workload/op_types.h"

namespace tessel::bsp {

void planner::begin(const std::string& name) {
    m_cur = bsp_mapper::superstep{};
    m_cur.name = name;
    m_cur.first = static_cast<std::uint32_t>(m_out.prog.size());
    m_cur.coarse = m_coarse;
    m_open = true;
    if (m_coarse) {
        m_ss = std::make_shared<bsp_superstep>();
        m_coarse_op = ~0u;
    }
}

bsp_superstep::tile_share& planner::share(std::uint32_t tile) {
    std::int32_t& i = m_share_of[tile];
    if (i < 0) {
        i = static_cast<std::int32_t>(m_ss->tiles.size());
        m_ss->tiles.emplace_back();
        m_ss->tiles.back().tile = tile;
        m_touched.push_back(tile);
    }
    return m_ss->tiles[static_cast<size_t>(i)];
}

std::uint32_t planner::packets(std::uint64_t bytes) const {
    const std::uint64_t p = m_xch->packet_bytes();
    return static_cast<std::uint32_t>(p > 0 ? (bytes + p - 1) / p : 1);
}

std::uint32_t planner::transfer(std::uint32_t op, endpoint from, std::uint32_t to_tile, std::uint64_t bytes,
                                std::vector<std::uint32_t> deps) {
    m_fine_steps += 1;
    if (m_coarse && from.comp == m_tiles->id()) {
        // Tile to tile: totals for the superstep's step; a sender's repeat of its last message is a multicast.
        const std::uint32_t src = static_cast<std::uint32_t>(from.unit);
        const std::uint32_t n = packets(bytes);
        bsp_superstep::tile_share& r = share(to_tile);
        r.recv_bytes += static_cast<double>(bytes);
        r.recv_packets += n;
        sent& last = m_last_sent[src];
        if (last.address != from.address || last.bytes != bytes) {
            bsp_superstep::tile_share& sd = share(src);
            sd.send_bytes += static_cast<double>(bytes);
            sd.send_packets += n;
            last = {from.address, bytes};
        }
        m_links.emplace_back(src, to_tile);
        m_coarse_deps.insert(m_coarse_deps.end(), deps.begin(), deps.end());
        if (m_coarse_op == ~0u) m_coarse_op = op;
        return ~0u;
    }
    if (deps.empty()) deps = m_after;
    const std::uint32_t s = m_out.prog.add_transfer(op, from, tile_ep(to_tile), bytes, deps);
    if (m_coarse) return s;  // from streaming memory: the superstep's step waits for it (end())
    if (m_incoming[to_tile].empty()) m_touched.push_back(to_tile);
    m_incoming[to_tile].push_back(s);
    return s;
}

std::uint32_t planner::compute(std::uint32_t op, std::uint32_t tile, const work& w) {
    m_fine_steps += 1;
    if (m_coarse) {
        // The distinct works of a superstep are few (every tile of a split has one of a handful of shapes).
        std::uint32_t wi = ~0u;
        for (size_t k = m_ss->works.size(); k-- > 0 && wi == ~0u;)
            if (m_ss->works[k] == w) wi = static_cast<std::uint32_t>(k);
        if (wi == ~0u) {
            wi = static_cast<std::uint32_t>(m_ss->works.size());
            m_ss->works.push_back(w);
        }
        bsp_superstep::tile_share* at = &share(tile);
        if (at->work != ~0u) {  // a second compute step on the tile: an entry of its own, after the first
            m_ss->tiles.emplace_back();
            at = &m_ss->tiles.back();
            at->tile = tile;
        }
        at->work = wi;
        m_coarse_op = op;
        return ~0u;
    }
    const auto& in = m_incoming[tile];
    const std::uint32_t id =
        m_out.prog.add_compute(op, tile_ep(tile), m_out.prog.add_work(w), in.empty() ? m_after : in);
    if (m_incoming[tile].empty()) m_touched.push_back(tile);  // so that end() forgets its compute step
    m_tile_compute[tile] = id;
    return id;
}

void planner::write_back(std::uint32_t op, std::uint32_t tile, int t, const rect& q) {
    const int r = root(t);
    const placement& p = m_place[static_cast<size_t>(r)];
    const double total = tbytes(r);
    const auto bytes = static_cast<std::uint64_t>(std::ceil(q.area() * total));
    if (bytes == 0) return;
    m_writes.push_back({op, tile, p.address + static_cast<std::uint64_t>(q.y0 * total), bytes});
}

void planner::end_coarse() {
    if (m_ss->tiles.empty()) return;
    // Each receiver's busiest sender.
    for (const auto& [src, dst] : m_links) {
        const bsp_superstep::tile_share& sd = m_ss->tiles[static_cast<size_t>(m_share_of[src])];
        bsp_superstep::tile_share& r = m_ss->tiles[static_cast<size_t>(m_share_of[dst])];
        if (sd.send_bytes > r.sender_bytes) {
            r.sender_bytes = sd.send_bytes;
            r.sender_packets = sd.send_packets;
        }
    }
    // The step's work is the superstep's total (reports count FLOPs by step); the tiles use their own.
    work total;
    for (const auto& t : m_ss->tiles)
        if (t.work != ~0u) {
            const work& w = m_ss->works[t.work];
            total.type = w.type;
            total.cls = w.cls;
            total.macs += w.macs;
            total.vector_ops += w.vector_ops;
            total.bytes_in += w.bytes_in;
            total.bytes_weight += w.bytes_weight;
            total.bytes_out += w.bytes_out;
        }
    std::vector<std::uint32_t> deps = m_after;
    for (std::uint32_t s = m_cur.first; s < m_out.prog.size(); ++s) deps.push_back(s);  // streamed in this superstep
    deps.insert(deps.end(), m_coarse_deps.begin(), m_coarse_deps.end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const std::uint32_t id = m_out.prog.add_compute(m_coarse_op, tile_ep(0), m_out.prog.add_work(total), deps);
    m_out.prog.set_payload(id, m_ss);
    m_cur.compute = id;
}

void planner::end(std::uint32_t op, std::uint32_t tiles_used) {
    if (m_coarse) end_coarse();
    // Write-backs to streaming memory leave once their tile's compute is done.
    for (const pending_write& w : m_writes) {
        // (A superstep that only writes has no compute step: its writes wait for the superstep before.)
        const std::uint32_t after = m_coarse ? (m_ss->tiles.empty() ? ~0u : m_cur.compute) : m_tile_compute[w.tile];
        endpoint dst = m_mem_ep;
        dst.address = w.address;
        m_out.prog.add_transfer(w.op, tile_ep(w.tile, w.address), dst, w.bytes,
                                after == ~0u ? m_after : std::vector<std::uint32_t>{after});
        m_cur.streamed_bytes += static_cast<double>(w.bytes);
        m_fine_steps += 1;
    }
    m_writes.clear();
    for (std::uint32_t t : m_touched) m_tile_compute[t] = ~0u;
    if (m_coarse) {
        for (std::uint32_t t : m_touched) m_share_of[t] = -1, m_last_sent[t] = sent{};
        m_links.clear();
        m_coarse_deps.clear();
        m_ss.reset();
    }
    const std::uint32_t last = static_cast<std::uint32_t>(m_out.prog.size());
    for (std::uint32_t t : m_touched) m_incoming[t].clear();
    m_touched.clear();
    m_open = false;
    if (last == m_cur.first) return;
    std::vector<std::uint32_t> deps(last - m_cur.first);
    for (std::uint32_t i = 0; i < deps.size(); ++i) deps[i] = m_cur.first + i;
    m_cur.sync = m_out.prog.add_sync(op, m_sync, deps);
    m_fine_steps += 1;
    m_cur.tiles = tiles_used;
    m_after = {m_cur.sync};
    m_exchange_total += m_cur.exchange_bytes;
    m_streamed_total += m_cur.streamed_bytes;
    m_steps.push_back(m_cur);
}

std::uint64_t planner::piece_address(int t, size_t piece, const rect& pr, const rect& ov) {
    const auto q = [](double x) { return static_cast<std::uint64_t>(std::clamp(x, 0.0, 0.999) * 16); };
    const std::uint64_t sub =
        q((ov.y0 - pr.y0) / std::max(eps, pr.y1 - pr.y0)) * 16 + q((ov.x0 - pr.x0) / std::max(eps, pr.x1 - pr.x0));
    return (static_cast<std::uint64_t>(t + 1) << 48) | (static_cast<std::uint64_t>(piece & 0xFFFFF) << 28) |
           (sub << 20);
}

void planner::fetch(std::uint32_t op, int t, const rect& q, std::uint32_t dst) {
    if (is_constant(t)) return;
    const int r = root(t);
    placement& p = m_place[static_cast<size_t>(r)];
    const double total = tbytes(r);
    if (p.w == where::streamed) {
        // Straight from streaming memory (small pieces; large ones are staged first, see stage()).
        const auto bytes = static_cast<std::uint64_t>(std::ceil(q.area() * total));
        if (bytes == 0) return;
        endpoint src = m_mem_ep;
        src.address = p.address + static_cast<std::uint64_t>(q.y0 * total);
        transfer(op, src, dst, bytes, {});
        m_cur.streamed_bytes += static_cast<double>(bytes);
        return;
    }
    if (p.w != where::tiles) return;
    p.lay.overlapping(q, [&](size_t piece, std::uint32_t src, const rect& ov) {
        if (src == dst) {
            if (p.staged && p.ready[piece] != ~0u) {
                if (m_coarse) {
                    m_coarse_deps.push_back(p.ready[piece]);
                } else {
                    if (m_incoming[dst].empty()) m_touched.push_back(dst);
                    m_incoming[dst].push_back(p.ready[piece]);
                }
            }
            return;
        }
        const auto bytes = static_cast<std::uint64_t>(std::ceil(ov.area() * total));
        if (bytes == 0) return;
        std::vector<std::uint32_t> deps;
        if (p.staged && p.ready[piece] != ~0u) deps = {p.ready[piece]};
        transfer(op, tile_ep(src, piece_address(r, piece, p.lay.piece(piece), ov)), dst, bytes, deps);
        m_cur.exchange_bytes += static_cast<double>(bytes);
    });
}

void planner::map_gemm(int o) {
    const op_node& op = m_g.op(o);
    const work whole = op.to_work();
    m_tm->check(whole, "the tiles of '" + m_plat.title() + "'");
    gemm_shape s{};
    s.batch = std::max<std::int64_t>(1, op.cost.batch);
    s.M = op.cost.m;
    s.N = op.cost.n;
    s.K = op.cost.k;
    s.type = op.compute_type;
    s.eb = bytes_of(op.compute_type);
    const int out = op.outputs.front();
    s.ob = bytes_of(tinfo(out).type);
    s.pb_bytes = bytes_of(m_partials);
    const int a_in = op.inputs[0], b_in = op.inputs[1];
    const bool conv = op.kind == op_kind::conv2d;
    s.attention = op.kind == op_kind::attention;
    s.b_persistent = persistent(b_in);
    s.b_streamed = m_streamed[static_cast<size_t>(root(b_in))];
    s.b_batched = !s.b_persistent && tinfo(b_in).shape.size() >= 3 && s.batch > 1;
    auto attr = [&](const char* k) {
        const auto it = op.int_attrs.find(k);
        return it != op.int_attrs.end() && !it->second.empty() && it->second[0] != 0;
    };
    s.tb = conv || s.attention || attr("transpose_b");
    s.ta = attr("transpose_a");
    // A resident weight without a home yet is counted in base_max() as an even spread over all tiles; the
    // split's working set counts its B block in full (the home share and what comes from the other tiles),
    // so its even share comes off here rather than being counted twice.
    double have = base_max();
    if (s.b_persistent && m_place[static_cast<size_t>(root(b_in))].w == where::nowhere)
        have = std::max(0.0, have - tbytes(root(b_in)) / m_T);
    const plan p = choose(op, s, have);
    if (p.serial > 1) ++m_serial_ops;

    const int pb = p.pb, pm = p.pm, pn = p.pn, pk = p.pk, S = p.serial;
    const std::uint32_t used = static_cast<std::uint32_t>(pb * pm * pn * pk);
    const std::uint32_t base = m_offset;
    m_offset = (m_offset + used) % m_T;
    auto tile_of = [&](int b, int i, int j, int l) {
        return static_cast<std::uint32_t>((base + static_cast<std::uint32_t>(((b * pm + i) * pn + j) * pk + l)) % m_T);
    };
    auto band = [](std::int64_t d, int parts, int i) { return std::make_pair(d * i / parts, d * (i + 1) / parts); };
    const double extra_vec = std::max(0.0, op.cost.flops - 2 * op.cost.macs);
    const double outs = static_cast<double>(s.batch) * static_cast<double>(s.M) * static_cast<double>(s.N);
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    const std::uint32_t op_rx = op_id(op.name, "reduce exchange"), op_rc = op_id(op.name, "reduce"),
                        op_rs = op_id(op.name, "reduce sync");

    // Rows of the output (and of A) for batch band b and M band i, in elements of the batch*M row space.
    auto rows_of = [&](int b, int i) {
        const auto [b0, b1] = band(s.batch, pb, b);
        const auto [m0, m1] = band(s.M, pm, i);
        return std::make_pair(b0 * s.M + m0, (b1 - 1) * s.M + m1);
    };
    const double bm_rows = static_cast<double>(s.batch * s.M);

    // Persistent B: its home is this split's B blocks, each divided among the pm tiles that use it.
    begin(op.name);
    if (s.b_persistent) {
        layout hl;
        const std::int64_t R = s.tb ? s.N : s.K, C = s.tb ? s.K : s.N;
        const int rparts = s.tb ? pn * S : pk, cparts = s.tb ? pk : pn * S;
        hl.rows.clear();
        for (int rb = 0; rb < rparts; ++rb)
            for (int sub = 0; sub < pm; ++sub) {
                const auto [r0, r1] = band(R, rparts, rb);
                hl.rows.push_back(static_cast<double>(r0 + (r1 - r0) * sub / pm) / static_cast<double>(R));
            }
        hl.rows.push_back(1.0);
        hl.cols = edges(C, cparts);
        hl.tile.resize(hl.pieces());
        for (int rb = 0; rb < rparts; ++rb)
            for (int sub = 0; sub < pm; ++sub)
                for (int cb = 0; cb < cparts; ++cb) {
                    const int nb = s.tb ? rb : cb, kb = s.tb ? cb : rb;
                    hl.tile[static_cast<size_t>((rb * pm + sub) * cparts + cb)] = tile_of(0, sub, nb % pn, kb);
                }
        home(op_x, b_in, hl);
    }

    std::vector<std::pair<std::uint32_t, rect>> out_pieces;  // tile, region of the output
    std::vector<double> out_cols;                            // output column edges
    for (int sl = 0; sl < S; ++sl) {
        if (sl > 0) begin(op.name + " (slice " + std::to_string(sl + 1) + ")");
        // Not a structured binding: lambdas below capture ns0, which C++17 allows only for variables (clang).
        const auto ns_band = band(s.N, S, sl);
        const auto ns0 = ns_band.first, ns1 = ns_band.second;
        const std::int64_t NS = ns1 - ns0;
        auto nband = [&](int j) {
            const auto [a, b] = band(NS, pn, j);
            return std::make_pair(ns0 + a, ns0 + b);
        };
        // Exchange: every tile gathers its A block (first slice only), B block and epilogue inputs. The
        // tiles that need the same region are visited one after another (A: all N bands of an (M, K) block;
        // B: all M bands of an (N, K) block), so that a holder's sends of one region follow each other and
        // the exchange multicasts them.
        auto a_rect = [&](int b, int i, int l) {
            const auto [r0, r1] = rows_of(b, i);
            const auto [k0, k1] = band(s.K, pk, l);
            rect ra =
                rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K);
            if (s.attention) ra.x0 = 0, ra.x1 = 1;
            return ra;
        };
        auto b_rect = [&](int b, int j, int l) {
            const auto [k0, k1] = band(s.K, pk, l);
            const auto [n0, n1] = nband(j);
            const auto [b0, b1] = band(s.batch, pb, b);
            rect rb;
            if (s.b_persistent && !s.attention) {
                rb = s.tb ? rows_cols(static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N,
                                      static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K)
                          : rows_cols(static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K,
                                      static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N);
            } else {
                const double items = static_cast<double>(s.batch);
                const std::int64_t inner = s.tb ? s.N : s.K;
                const auto [x0, x1] = s.tb ? std::make_pair(n0, n1) : std::make_pair(k0, k1);
                const double rr0 = static_cast<double>(b0 * inner + x0) / (items * inner);
                const double rr1 = static_cast<double>((b1 - 1) * inner + x1) / (items * inner);
                rb = s.tb ? rows_cols(rr0, rr1, static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K)
                          : rows_cols(rr0, rr1, static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N);
                if (s.attention) rb.x0 = 0, rb.x1 = 1;
            }
            return rb;
        };
        if (sl == 0)
            for (int b = 0; b < pb; ++b)
                for (int i = 0; i < pm; ++i)
                    for (int l = 0; l < pk; ++l) {
                        const rect ra = a_rect(b, i, l);
                        for (int j = 0; j < pn; ++j) fetch(op_x, a_in, ra, tile_of(b, i, j, l));
                    }
        for (int b = 0; b < pb; ++b)
            for (int j = 0; j < pn; ++j)
                for (int l = 0; l < pk; ++l) {
                    const rect rb = b_rect(b, j, l);
                    for (int i = 0; i < pm; ++i) {
                        const std::uint32_t t = tile_of(b, i, j, l);
                        fetch(op_x, b_in, rb, t);
                        if (s.attention)
                            for (size_t x = 2; x < op.own_inputs(); ++x)
                                fetch(op_x, op.inputs[x], rows_cols(rb.y0, rb.y1, 0, 1), t);
                    }
                }
        if (pk == 1)
            for (int b = 0; b < pb; ++b)
                for (int j = 0; j < pn; ++j)
                    for (int i = 0; i < pm; ++i) {
                        const auto [r0, r1] = rows_of(b, i);
                        const auto [n0, n1] = nband(j);
                        fetch_epilogue(op, op_x,
                                       rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(n0) / s.N,
                                                 static_cast<double>(n1) / s.N),
                                       tile_of(b, i, j, 0), s.attention);
                    }
        start_compute();
        for (int b = 0; b < pb; ++b)
            for (int i = 0; i < pm; ++i)
                for (int j = 0; j < pn; ++j)
                    for (int l = 0; l < pk; ++l) {
                        const auto [b0, b1] = band(s.batch, pb, b);
                        const auto [m0, m1] = band(s.M, pm, i);
                        const auto [n0, n1] = nband(j);
                        const auto [k0, k1] = band(s.K, pk, l);
                        work w;
                        w.type = s.type;
                        w.cls = op.cost.cls;
                        w.batch = b1 - b0;
                        w.m = m1 - m0;
                        w.n = n1 - n0;
                        w.k = k1 - k0;
                        if (w.batch <= 0 || w.m <= 0 || w.n <= 0 || w.k <= 0) continue;
                        const double cells =
                            static_cast<double>(w.batch) * static_cast<double>(w.m) * static_cast<double>(w.n);
                        w.macs = cells * static_cast<double>(w.k);
                        w.bytes_in = static_cast<double>(w.batch * w.m * w.k) * s.eb;
                        w.bytes_weight = static_cast<double>(w.batch * w.k * w.n) * s.eb;
                        w.bytes_out = cells * (pk > 1 ? s.pb_bytes : s.ob);
                        if (pk == 1) w.vector_ops = extra_vec * cells / outs;
                        compute(op_c, tile_of(b, i, j, l), w);
                    }
        const double blk_s = p.compute_s / S;
        if (pk == 1) {
            m_cur.predicted_compute = blk_s;
            end(op_s, used);
        } else {
            m_cur.predicted_compute = blk_s;
            end(op_s, used);
            // Reduce-scatter: block (b,i,j) splits its columns among its pk tiles; each sums pk partials.
            begin(op.name + (S > 1 ? " (slice " + std::to_string(sl + 1) + ") reduce" : " reduce"));
            std::vector<std::tuple<std::uint32_t, rect, work>> reducers;
            for (int b = 0; b < pb; ++b)
                for (int i = 0; i < pm; ++i)
                    for (int j = 0; j < pn; ++j) {
                        // Plain variables, not structured bindings: the lambdas below capture them (C++17, clang).
                        const std::int64_t items = band(s.batch, pb, b).second - band(s.batch, pb, b).first;
                        const std::int64_t rows = band(s.M, pm, i).second - band(s.M, pm, i).first;
                        const std::int64_t n0 = nband(j).first, n1 = nband(j).second;
                        const auto [r0, r1] = rows_of(b, i);
                        const std::int64_t width = n1 - n0;
                        const int parts = static_cast<int>(std::min<std::int64_t>(pk, width));
                        auto cols = [&](int l) {
                            return std::make_pair(n0 + width * l / parts, n0 + width * (l + 1) / parts);
                        };
                        auto cells_of = [&](int l) {
                            const auto c = cols(l);
                            return static_cast<double>(items * rows * (c.second - c.first));
                        };
                        // Staggered, as a compiled exchange is: in round k every tile l2 sends to tile l2 - k, so that
                        // each receiver hears one sender at a time and no sender waits on a receiver busy with others.
                        for (int k = 1; k < pk; ++k)
                            for (int l = 0; l < parts; ++l) {
                                const int l2 = (l + k) % pk;
                                const auto bytes = static_cast<std::uint64_t>(std::ceil(cells_of(l) * s.pb_bytes));
                                if (bytes == 0) continue;
                                const std::uint64_t addr =
                                    (static_cast<std::uint64_t>(out + 1) << 48) |
                                    (static_cast<std::uint64_t>((((b * pm + i) * pn + j) * pk + l) & 0xFFFFF) << 28);
                                transfer(op_rx, tile_ep(tile_of(b, i, j, l2), addr), tile_of(b, i, j, l), bytes, {});
                                m_cur.exchange_bytes += static_cast<double>(bytes);
                            }
                        for (int l = 0; l < parts; ++l) {
                            const auto [c0, c1] = cols(l);
                            const double cells = cells_of(l);
                            const std::uint32_t dst = tile_of(b, i, j, l);
                            const rect rc = rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(c0) / s.N,
                                                      static_cast<double>(c1) / s.N);
                            fetch_epilogue(op, op_rx, rc, dst, false);
                            work w;
                            w.type = s.type;
                            w.cls = op_class::reduction;
                            w.vector_ops = cells * (pk - 1) + extra_vec * cells / outs;
                            w.bytes_in = cells * s.pb_bytes * pk;
                            w.bytes_out = cells * s.ob;
                            reducers.emplace_back(dst, rc, w);
                        }
                    }
            start_compute();
            for (const auto& [t, rc, w] : reducers) {
                compute(op_rc, t, w);
                out_pieces.emplace_back(t, rc);
            }
            m_cur.predicted_compute = p.reduce_s / S;
            end(op_rs, used);
        }
        if (pk == 1)
            for (int b = 0; b < pb; ++b)
                for (int i = 0; i < pm; ++i)
                    for (int j = 0; j < pn; ++j) {
                        const auto [r0, r1] = rows_of(b, i);
                        const auto [n0, n1] = nband(j);
                        out_pieces.emplace_back(tile_of(b, i, j, 0),
                                                rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(n0) / s.N,
                                                          static_cast<double>(n1) / s.N));
                    }
    }
    unstage();
    place_output(op, out_pieces);

    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["gemm"] = {s.batch, s.M, s.N, s.K};
    d["split"] = split_str({pb, pm, pn, pk});
    d["serial"] = S;
    d["tiles"] = used;
    d["estimate_s"] = {{"compute", p.compute_s}, {"exchange", p.exchange_s}, {"reduce", p.reduce_s}};
    d["working_set_per_tile_B"] = p.mem;
    m_ops.push_back(d);
    char line[320];
    std::snprintf(line, sizeof line, "%s: %s %lldx%lldx%lld%s split b x m x n x k = %s on %u tiles%s%s",
                  op.name.c_str(), op_kind_name(op.kind), static_cast<long long>(s.M), static_cast<long long>(s.N),
                  static_cast<long long>(s.K), s.batch > 1 ? (" (batch " + std::to_string(s.batch) + ")").c_str() : "",
                  split_str({pb, pm, pn, pk}).c_str(), used, pk > 1 ? ", partials reduce-scattered" : "",
                  S > 1 ? (", in " + std::to_string(S) + " serial slices of N (working set)").c_str() : "");
    m_out.notes.push_back(line);
}

void planner::fetch_epilogue(const op_node& op, std::uint32_t opx, const rect& rc, std::uint32_t t, bool attention) {
    const size_t first = attention ? op.own_inputs() : 2;
    const int out = op.outputs.front();
    for (size_t x = first; x < op.inputs.size(); ++x) {
        const int in = op.inputs[x];
        if (attention && x == 3) continue;  // attention's mask: constant-sized, see the class comment
        const bool broadcast = tinfo(in).elements() < tinfo(out).elements();
        fetch(opx, in, broadcast ? rows_cols(0, 1, rc.x0, rc.x1) : rc, t);
    }
}

void planner::map_gather(int o) {
    const op_node& op = m_g.op(o);
    const int table = op.inputs[0], out = op.outputs.front();
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    begin(op.name);
    if (m_place[static_cast<size_t>(root(table))].w == where::nowhere)
        home(op_x, table, spread(table, spread_tiles(table), true));
    const layout L = spread(out, spread_tiles(out), true);
    const placement& tp = m_place[static_cast<size_t>(root(table))];
    const double rows_bytes = op.cost.bytes_weight > 0 ? op.cost.bytes_weight : tbytes(out);
    for (size_t p = 0; p < L.pieces(); ++p) {
        const rect q = L.piece(p);
        const std::uint32_t t = L.tile[p];
        for (size_t x = 1; x < op.inputs.size(); ++x) fetch(op_x, op.inputs[x], q, t);
        // The looked-up rows come from the piece of the table that holds them (data dependent: spread evenly).
        const auto bytes = static_cast<std::uint64_t>(std::ceil(rows_bytes * q.area()));
        if (bytes == 0) continue;
        if (tp.w == where::streamed) {
            endpoint src = m_mem_ep;
            src.address = tp.address + static_cast<std::uint64_t>(q.y0 * tbytes(root(table)));
            transfer(op_x, src, t, bytes, {});
            m_cur.streamed_bytes += static_cast<double>(bytes);
        } else if (tp.w == where::tiles) {
            const size_t piece = p % tp.lay.pieces();
            if (tp.lay.tile[piece] != t) {
                transfer(op_x, tile_ep(tp.lay.tile[piece], piece_address(root(table), piece, tp.lay.piece(piece), q)),
                         t, bytes,
                         tp.staged && tp.ready[piece] != ~0u ? std::vector<std::uint32_t>{tp.ready[piece]}
                                                             : std::vector<std::uint32_t>{});
                m_cur.exchange_bytes += static_cast<double>(bytes);
            }
        }
    }
    emit_rows(op, L, op_c);
    m_cur.predicted_compute = 0;
    end(op_s, static_cast<std::uint32_t>(L.pieces()));
    unstage();
    place_output(op, pieces_of(L));
}

std::vector<std::pair<std::uint32_t, rect>> planner::pieces_of(const layout& L) {
    std::vector<std::pair<std::uint32_t, rect>> v;
    for (size_t p = 0; p < L.pieces(); ++p) v.emplace_back(L.tile[p], L.piece(p));
    return v;
}

void planner::emit_rows(const op_node& op, const layout& L, std::uint32_t op_c) {
    const work whole = op.to_work();
    if (whole.macs > 0 || whole.vector_ops > 0) m_tm->check(whole, "the tiles of '" + m_plat.title() + "'");
    std::vector<double> share(m_T, 0.0);
    std::vector<std::uint32_t> order;
    for (size_t p = 0; p < L.pieces(); ++p) {
        const std::uint32_t t = L.tile[p];
        if (share[t] == 0) order.push_back(t);
        share[t] += L.piece(p).area();
    }
    start_compute();
    for (std::uint32_t t : order) {
        work w = whole;
        const double f = share[t];
        w.macs *= f;
        w.vector_ops *= f;
        w.bytes_in *= f;
        w.bytes_weight *= f;
        w.bytes_out *= f;
        w.batch = w.m = w.n = w.k = 0;
        compute(op_c, t, w);
    }
}

void planner::map_rows(int o) {
    const op_node& op = m_g.op(o);
    const int out = op.outputs.front();
    const bool rowwise = op.kind == op_kind::softmax || op.kind == op_kind::layernorm || op.kind == op_kind::reduce;
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    // Run where the first activation input lies when the shapes agree (and rows are whole for row-wise ops).
    int src = -1;
    for (int t : op.inputs)
        if (!is_constant(t) && !persistent(t)) {
            src = t;
            break;
        }
    begin(op.name);
    layout L;
    bool reuse = false;
    if (src >= 0) {
        const placement& sp = m_place[static_cast<size_t>(root(src))];
        reuse = sp.w == where::tiles && !sp.staged && tinfo(src).elements() == tinfo(out).elements() &&
                (!rowwise || sp.lay.nc() == 1);
        if (reuse) L = sp.lay;
    }
    if (!reuse) L = spread(out, spread_tiles(out), rowwise);
    // Working set check: the pieces of every input and output on the busiest tile.
    {
        double per_tile = 0;
        for (int t : op.inputs) per_tile += is_constant(t) ? 0.0 : tbytes(t) / static_cast<double>(L.pieces());
        for (int t : op.outputs) per_tile += tbytes(t) / static_cast<double>(L.pieces());
        const double have = base_max();
        if (have + per_tile > m_usable) no_fit(op, per_tile, have);
    }
    // Only arithmetic broadcasts: a smaller input of a data-movement op (a concat's parts, a slice's source)
    // maps onto its share of the output.
    const bool moves = op.kind == op_kind::concat || op.kind == op_kind::slice || op.kind == op_kind::split ||
                       op.kind == op_kind::transpose || op.kind == op_kind::gather || op.kind == op_kind::generic;
    for (int t : op.inputs) {
        if (is_constant(t)) continue;
        const int r = root(t);
        if (persistent(r) && m_place[static_cast<size_t>(r)].w != where::tiles) {
            // A broadcast weight (a norm's scale) lives on one tile; one the size of the output (a KV cache
            // being appended to) gets the output's layout, so that every piece is where it is used.
            const bool small = !moves && tinfo(t).elements() < tinfo(out).elements();
            home(op_x, r, small ? spread(r, 1, false) : L);
        }
    }
    // A broadcast operand (a bias, batchnorm's per-channel parameters) goes to every piece: its sends are
    // issued column band by column band, so that the receivers of the same region follow each other and the
    // exchange multicasts them (one send heard by many tiles) instead of sending each copy in turn.
    for (int in : op.inputs) {
        if (is_constant(in)) continue;
        const bool broadcast = !moves && tinfo(in).elements() < tinfo(out).elements();
        for (size_t c = 0; c < L.nc(); ++c)
            for (size_t r = 0; r < L.nr(); ++r) {
                const size_t p = broadcast ? r * L.nc() + c : c * L.nr() + r;
                const rect q = L.piece(p);
                fetch(op_x, in, broadcast ? rows_cols(0, 1, q.x0, q.x1) : q, L.tile[p]);
            }
    }
    emit_rows(op, L, op_c);
    end(op_s, static_cast<std::uint32_t>(L.pieces()));
    unstage();
    place_output(op, pieces_of(L));
}

void planner::map_update(int o) {
    const op_node& op = m_g.op(o);
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    const int weight = op.inputs.front();
    auto rewritten = [&](size_t i) { return op.inputs[i == 0 ? 0 : i + 1]; };  // output i's input
    // Row bands of the weight over as many tiles as its size asks for; resident state not yet placed goes there.
    const std::int64_t R = view_rows(weight);
    const std::uint32_t n =
        std::min<std::uint32_t>(spread_tiles(weight), static_cast<std::uint32_t>(std::max<std::int64_t>(1, R)));
    const layout full = spread(weight, n, true);
    for (size_t i = 0; i < op.own_inputs(); ++i) {
        const int r = root(op.inputs[i]);
        if (persistent(r) && m_place[static_cast<size_t>(r)].w == where::nowhere) home(op_x, r, full);
    }
    // What must come onto the tiles (streamed weight and state; anything not held there), against their free room.
    double incoming = 0;
    for (size_t i = 0; i < op.own_inputs(); ++i) {
        const int t = op.inputs[i];
        if (!is_constant(t) && m_place[static_cast<size_t>(root(t))].w != where::tiles) incoming += tbytes(t);
    }
    const double have = base_max(), room = m_usable - have;
    const double per_tile = incoming / static_cast<double>(full.pieces());
    std::int64_t S = 1;
    if (per_tile > 0) {
        if (room <= 0) no_fit(op, per_tile, have);
        S = static_cast<std::int64_t>(std::ceil(per_tile / room));
        if (S > R) no_fit(op, incoming / static_cast<double>(full.pieces() * static_cast<size_t>(R)), have);
    }
    for (std::int64_t sl = 0; sl < S; ++sl) {
        begin(S > 1 ? op.name + " (slice " + std::to_string(sl + 1) + ")" : op.name);
        // This slice's rows, in bands on the tiles of the full layout.
        const std::int64_t r0 = R * sl / S, r1 = R * (sl + 1) / S;
        const int bands = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(full.pieces()), r1 - r0));
        layout L;
        L.rows.clear();
        for (int k = 0; k <= bands; ++k)
            L.rows.push_back(static_cast<double>(r0 + (r1 - r0) * k / bands) / static_cast<double>(R));
        L.tile.resize(static_cast<size_t>(bands));
        for (int k = 0; k < bands; ++k)
            L.tile[static_cast<size_t>(k)] = full.tile[static_cast<size_t>(k) % full.tile.size()];
        for (size_t i = 0; i < op.own_inputs(); ++i)
            for (size_t p = 0; p < L.pieces(); ++p) fetch(op_x, op.inputs[i], L.piece(p), L.tile[p]);
        emit_rows(op, L, op_c);
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            const int t = rewritten(i);
            if (m_place[static_cast<size_t>(root(t))].w != where::streamed) continue;
            for (size_t p = 0; p < L.pieces(); ++p) write_back(op_x, L.tile[p], t, L.piece(p));
        }
        m_cur.update = true;
        end(op_s, static_cast<std::uint32_t>(L.pieces()));
    }
    // In place: the outputs are the rewritten tensors, which keep their homes (on the tiles or in streaming memory).
    for (size_t i = 0; i < op.outputs.size(); ++i) m_liveness.share(op.outputs[i], rewritten(i));
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["update"] = "in place, " + std::to_string(S) + " slice(s) of rows";
    m_ops.push_back(d);
}

void planner::map_reduce(int o) {
    const op_node& op = m_g.op(o);
    const int out = op.outputs.front();
    const tensor_info& x = tinfo(op.inputs.front());
    const size_t rank = x.shape.size();
    // The folded axes: those named (argmax: one), or every axis (dot, or none named).
    std::vector<bool> folded(rank, op.type == "dot");
    std::vector<std::int64_t> named =
        op.type == "argmax" ? std::vector<std::int64_t>{attr_int(op, "axis", 0)} : attr_ints(op, "axes");
    if (op.type != "dot" && op.type != "argmax" && named.empty()) folded.assign(rank, true);
    for (std::int64_t a : named) {
        if (a < 0) a += static_cast<std::int64_t>(rank);
        if (a >= 0 && a < static_cast<std::int64_t>(rank)) folded[static_cast<size_t>(a)] = true;
    }
    const bool last_kept = !folded[rank - 1];
    const bool only_last = !last_kept && std::count(folded.begin(), folded.end(), true) == 1;

    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    const work whole = op.to_work();
    if (whole.vector_ops > 0) m_tm->check(whole, "the tiles of '" + m_plat.title() + "'");
    double in_bytes = 0;
    for (int t : op.inputs) in_bytes += is_constant(t) ? 0.0 : tbytes(t);
    const double out_bytes = tbytes(out);
    const double have = base_max();
    const double room = m_usable - have;
    // Tiles needed for the operands to fit, and the tiles the input's size asks for.
    const double need_tiles = room > 0 ? std::ceil((in_bytes + out_bytes) / room) : 1e18;
    const std::uint32_t want =
        std::min<std::uint32_t>(m_T, std::max<std::uint32_t>(spread_tiles(op.inputs.front()),
                                                             static_cast<std::uint32_t>(std::min(need_tiles, 1e9))));
    // A weight or state input not yet on the tiles gets the layout of the input it is read with: row bands.
    for (int t : op.inputs) {
        const int r = root(t);
        if (!is_constant(t) && persistent(r) && m_place[static_cast<size_t>(r)].w != where::tiles)
            home(op_x, r, spread(r, want, true));
    }
    begin(op.name);
    std::vector<std::pair<std::uint32_t, rect>> out_pieces;
    // One band of work: its input region on tile t, the output piece it writes, its share of the op.
    auto band = [&](std::uint32_t t, const rect& in_region, const rect& out_piece) {
        for (int in : op.inputs) fetch(op_x, in, in_region, t);
        out_pieces.emplace_back(t, out_piece);
    };
    auto emit_bands = [&] {
        start_compute();
        for (const auto& [t, q] : out_pieces) {
            work w = whole;
            const double f = q.area();
            w.vector_ops *= f;
            w.bytes_in *= f;
            w.bytes_weight *= f;
            w.bytes_out *= f;
            w.batch = w.m = w.n = w.k = 0;
            compute(op_c, t, w);
        }
        end(op_s, static_cast<std::uint32_t>(out_pieces.size()));
    };
    const std::int64_t C = view_cols(op.inputs.front()), R = view_rows(op.inputs.front());
    const std::int64_t Ro = view_rows(out), Co = view_cols(out);
    const std::int64_t out_elems = std::max<std::int64_t>(1, tinfo(out).elements());
    // Output elements a band of input rows [y0, y1) (fractions) contributes to. Keeping the last axis, a band
    // touches whole output rows: when the folded axes are one block just before the last, consecutive input rows
    // fold into the same output row (so a band touches about rows / group of them); otherwise up to one output row
    // per input row. Folding the last axis with others, up to one output element per input element.
    size_t first_folded = rank, last_folded = 0;
    for (size_t i = 0; i < rank; ++i)
        if (folded[i]) first_folded = std::min(first_folded, i), last_folded = i;
    const bool block = last_kept && last_folded + 2 == rank &&
                       std::all_of(folded.begin() + static_cast<long>(first_folded),
                                   folded.begin() + static_cast<long>(last_folded) + 1, [](bool f) { return f; });
    auto partial_elems = [&](const rect& q) {
        const double rows = (q.y1 - q.y0) * static_cast<double>(R);
        double e = q.area() * static_cast<double>(x.elements());
        if (last_kept) {
            // With a block, input row r folds into output row r / (R / Ro).
            const double group = static_cast<double>(R) / static_cast<double>(Ro);
            const double touched = block ? std::floor((std::round(q.y1 * static_cast<double>(R)) - 1) / group) -
                                               std::floor(std::round(q.y0 * static_cast<double>(R)) / group) + 1
                                         : rows;
            e = std::min(static_cast<double>(Ro), touched) * static_cast<double>(Co) * (q.x1 - q.x0);
        }
        return std::min(static_cast<double>(out_elems), e);
    };
    std::string how;
    // An input already in row bands on the tiles (where the op before left it) is cheaper reduced where it lies:
    // every band sends a partial of at most the output's size instead of every column band gathering all rows.
    const placement& src = m_place[static_cast<size_t>(root(op.inputs.front()))];
    const double pb = bytes_of(m_partials);
    const bool in_place = op.inputs.size() == 1 && src.w == where::tiles && !src.staged && src.lay.nc() == 1 &&
                          static_cast<double>(src.lay.pieces()) >= need_tiles && [&] {
                              double partial = 0;
                              for (size_t k = 0; k < src.lay.pieces(); ++k)
                                  partial += partial_elems(src.lay.piece(k)) * pb;
                              return partial < in_bytes;
                          }();
    if (last_kept && !in_place && static_cast<double>(std::min<std::int64_t>(C, want)) >= need_tiles) {
        // Column bands: band k reduces input columns [c0, c1) over every row into output columns [c0, c1).
        const int bands = static_cast<int>(std::min<std::int64_t>(C, want));
        const std::vector<double> e = edges(C, bands);
        for (int k = 0; k < bands; ++k) {
            const std::uint32_t t = (m_offset + static_cast<std::uint32_t>(k)) % m_T;
            band(t, rows_cols(0, 1, e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1]),
                 rows_cols(0, 1, e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1]));
        }
        m_offset = (m_offset + static_cast<std::uint32_t>(bands)) % m_T;
        emit_bands();
        how = "column bands on " + std::to_string(bands) + " tiles";
    } else if (only_last && static_cast<double>(std::min<std::int64_t>(out_elems, want)) >= need_tiles) {
        // Bands of output elements, in order: output element i is input row i, so a band of the output's rows
        // (or, with fewer rows than bands, of one row's columns) reads a contiguous band of input rows.
        const int bands = static_cast<int>(std::min<std::int64_t>(out_elems, want));
        std::vector<rect> pieces;
        if (Ro >= bands) {
            const std::vector<double> e = edges(Ro, bands);
            for (int k = 0; k < bands; ++k)
                pieces.push_back(rows_cols(e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1], 0, 1));
        } else {
            const int per_row = static_cast<int>((bands + Ro - 1) / Ro);
            const std::vector<double> r = edges(Ro, static_cast<int>(Ro)),
                                      c = edges(Co, static_cast<int>(std::min<std::int64_t>(per_row, Co)));
            for (size_t i = 0; i + 1 < r.size(); ++i)
                for (size_t j = 0; j + 1 < c.size(); ++j) pieces.push_back(rows_cols(r[i], r[i + 1], c[j], c[j + 1]));
        }
        for (size_t k = 0; k < pieces.size(); ++k) {
            const rect& q = pieces[k];
            // The flattened output elements of the piece, as a fraction of all: the input rows it reduces.
            const double f0 = q.y0 + q.x0 * (q.y1 - q.y0), f1 = q.y0 + q.x1 * (q.y1 - q.y0);
            band((m_offset + static_cast<std::uint32_t>(k)) % m_T, rows_cols(f0, f1, 0, 1), q);
        }
        m_offset = (m_offset + static_cast<std::uint32_t>(pieces.size())) % m_T;
        emit_bands();
        how = "bands of output elements on " + std::to_string(pieces.size()) + " tiles";
    } else {
        // Partials: row bands of the input (where it lies, or spread) each reduced to at most the whole output, in
        // mapper.partials precision; then a combine superstep.
        std::vector<std::pair<std::uint32_t, rect>> bands_at;
        if (in_place) {
            bands_at = pieces_of(src.lay);
        } else {
            const int n = static_cast<int>(std::min<std::int64_t>(R, std::max<std::int64_t>(want, 1)));
            if (static_cast<double>(n) < need_tiles) no_fit(op, (in_bytes + out_bytes) / n, have);
            const std::vector<double> e = edges(R, n);
            for (int k = 0; k < n; ++k)
                bands_at.emplace_back((m_offset + static_cast<std::uint32_t>(k)) % m_T,
                                      rows_cols(e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1], 0, 1));
            m_offset = (m_offset + static_cast<std::uint32_t>(n)) % m_T;
        }
        const int bands = static_cast<int>(bands_at.size());
        std::vector<std::pair<std::uint32_t, double>> partials;  // tile, partial elements
        start_compute();
        for (const auto& [t, q] : bands_at) {
            for (int in : op.inputs) fetch(op_x, in, q, t);
            const double elems = partial_elems(q);
            work w = whole;
            w.vector_ops *= q.area();
            w.bytes_in *= q.area();
            w.bytes_weight *= q.area();
            w.bytes_out = elems * pb;
            w.batch = w.m = w.n = w.k = 0;
            w.cls = op_class::reduction;
            compute(op_c, t, w);
            partials.emplace_back(t, elems);
        }
        end(op_s, static_cast<std::uint32_t>(bands));
        // Combine. The output goes to p tiles (about the square root of the bands, so that no tile receives much);
        // with many bands the partials are first reduce-scattered inside groups of p bands (member i sums piece i
        // of its group), so each output tile then receives one piece per group instead of one per band.
        const std::uint32_t g = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(partials.size()))));
        // (spread() would stop at mapper.min_piece; a combine wants its receivers spread even for a small output.)
        layout L;
        {
            const std::uint32_t n =
                static_cast<std::uint32_t>(std::min<std::int64_t>(std::min<std::int64_t>(g, m_T), std::max(Ro, Co)));
            (Ro >= Co ? L.rows : L.cols) = edges(Ro >= Co ? Ro : Co, static_cast<int>(n));
            L.tile.resize(n);
            for (std::uint32_t i = 0; i < n; ++i) L.tile[i] = (m_offset + i) % m_T;
            m_offset = (m_offset + n) % m_T;
        }
        const size_t P = L.pieces();
        std::uint64_t seq = 0;
        auto send = [&](std::uint32_t op_rx, std::uint32_t from, std::uint32_t to, double bytes) {
            const auto b = static_cast<std::uint64_t>(std::ceil(bytes));
            if (from == to || b == 0) return;
            const std::uint64_t addr = (static_cast<std::uint64_t>(out + 1) << 48) | ((seq++ & 0xFFFFFFF) << 20);
            transfer(op_rx, tile_ep(from, addr), to, b, {});
            m_cur.exchange_bytes += static_cast<double>(b);
        };
        // (tile, partial elements) for each piece of the output, from every source that still holds a share.
        std::vector<std::vector<std::pair<std::uint32_t, double>>> to_piece(P);
        const bool grouped = P > 1 && partials.size() > 2 * P;
        if (grouped) {
            begin(op.name + " reduce-scatter");
            const std::uint32_t op_gx = op_id(op.name, "reduce-scatter exchange"),
                                op_gc = op_id(op.name, "reduce-scatter"), op_gs = op_id(op.name, "reduce-scatter sync");
            std::vector<std::pair<std::uint32_t, work>> sums;
            for (size_t first = 0; first < partials.size(); first += P) {
                const size_t size = std::min(P, partials.size() - first);
                for (size_t i = 0; i < P; ++i) {
                    const size_t owner = first + i % size;
                    const double area = L.piece(i).area();
                    double received = 0, elems = 0;
                    for (size_t j = first; j < first + size; ++j) {
                        send(op_gx, partials[j].first, partials[owner].first, partials[j].second * area * pb);
                        received += partials[j].second * area;
                        elems = std::max(elems, partials[j].second * area);
                    }
                    work w;
                    w.type = whole.type;
                    w.cls = op_class::reduction;
                    w.vector_ops = received;
                    w.bytes_in = received * pb;
                    w.bytes_out = elems * pb;
                    sums.emplace_back(partials[owner].first, w);
                    to_piece[i].emplace_back(partials[owner].first, elems);
                }
            }
            start_compute();
            for (const auto& [t, w] : sums) compute(op_gc, t, w);
            end(op_gs, static_cast<std::uint32_t>(partials.size()));
        } else {
            for (size_t i = 0; i < P; ++i)
                for (const auto& [t, e] : partials) to_piece[i].emplace_back(t, e * L.piece(i).area());
        }
        begin(op.name + " combine");
        const std::uint32_t op_rx = op_id(op.name, "combine exchange"), op_rc = op_id(op.name, "combine"),
                            op_rs = op_id(op.name, "combine sync");
        std::vector<std::pair<std::uint32_t, work>> sums;
        for (size_t i = 0; i < P; ++i) {
            const rect q = L.piece(i);
            const std::uint32_t dst = L.tile[i];
            double received = 0;
            for (const auto& [t, e] : to_piece[i]) {
                send(op_rx, t, dst, e * pb);
                received += e;
            }
            work w;
            w.type = whole.type;
            w.cls = op_class::reduction;
            w.vector_ops = received;
            w.bytes_in = received * pb;
            w.bytes_out = q.area() * out_bytes;
            sums.emplace_back(dst, w);
            out_pieces.emplace_back(dst, q);
        }
        start_compute();
        for (const auto& [t, w] : sums) compute(op_rc, t, w);
        end(op_rs, static_cast<std::uint32_t>(sums.size()));
        how = "partials of " + std::to_string(bands) + " row bands" + (in_place ? " where the input lies" : "") +
              (grouped ? ", reduce-scattered in groups of " + std::to_string(P) : "") + ", combined on " +
              std::to_string(P) + " tile(s)";
    }
    unstage();
    place_output(op, out_pieces);
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["reduction"] = how;
    m_ops.push_back(d);
}

void planner::finish() {
    m_out.details["mapper"] = "bsp";
    m_out.details["tiles"] = m_T;
    size_t streamed_tensors = 0, persistent_tensors = 0;
    double streamed_held = 0;
    for (size_t t = 0; t < m_streamed.size(); ++t) {
        const tensor_info& ti = m_g.tensors()[t];
        if (is_held(ti)) ++persistent_tensors;
        if (m_streamed[t]) ++streamed_tensors, streamed_held += tbytes(static_cast<int>(t));
    }
    m_out.details["weights"] = !m_streaming                   ? "resident"
                               : m_opt.weights == "streaming" ? "streaming"
                                                              : "partly streaming";
    m_out.details["streamed_tensors"] = streamed_tensors;
    m_out.details["tile_memory_usable_B"] = m_usable;
    double peak = 0;
    for (double x : m_mem) peak = std::max(peak, x);
    m_out.details["exchange_bytes"] = m_exchange_total;
    m_out.details["streamed_bytes"] = m_streamed_total;
    m_out.details["ops"] = m_ops;
    m_out.samples = toolkit::batch_samples(m_g);
    if (m_streaming)
        m_out.notes.insert(m_out.notes.begin(),
                           std::to_string(streamed_tensors) + " of " + std::to_string(persistent_tensors) +
                               " weight and state tensors (" + format_bytes(streamed_held) + ") stream from '" +
                               m_stream_name + "' at " + format_rate(m_stream_bps, "B/s") + ": " +
                               format_bytes(m_streamed_total) + " per run" +
                               (streamed_tensors < persistent_tensors ? "; the others stay resident" : ""));
    else
        m_out.notes.insert(m_out.notes.begin(), "weights and state resident in tile memory");
    if (m_serial_ops > 0)
        m_out.notes.insert(
            m_out.notes.begin() + 1,
            std::to_string(m_serial_ops) + " matrix product(s) run in serial slices so their working set fits a tile");
}

}  // namespace tessel::bsp
