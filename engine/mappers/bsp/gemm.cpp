// The bsp mapper: a matrix product's supersteps. Its split (plan.cpp) is a grid of b x m x n x k tiles, run in
// serial slices of N when its working set needs them; each slice is an exchange (A, B and epilogue blocks), a
// compute superstep, and with a K split a reduce-scatter superstep that sums the partials.
#include <cstdio>
#include <tuple>

#include "engine/mappers/bsp/planner.h"

namespace tessel::bsp {

namespace {

/// Band i of `d` split into `parts` near-equal integer bands: [first, second).
std::pair<std::int64_t, std::int64_t> band(std::int64_t d, int parts, int i) {
    return std::make_pair(d * i / parts, d * (i + 1) / parts);
}

}  // namespace

/// A matrix product's split as a grid of tiles, and the serial slice of N being emitted.
struct planner::gemm_grid {
    gemm_shape s;
    plan p;
    int pb = 1, pm = 1, pn = 1, pk = 1, S = 1;
    std::uint32_t used = 0, base = 0, T = 1;
    double extra_vec = 0, outs = 0, bm_rows = 0;
    int a_in = 0, b_in = 0, out = 0;
    std::uint32_t op_x = 0, op_c = 0, op_s = 0, op_rx = 0, op_rc = 0, op_rs = 0;
    std::int64_t ns0 = 0, NS = 0;  // the current slice's N band: [ns0, ns0 + NS)

    std::uint32_t tile_of(int b, int i, int j, int l) const {
        return static_cast<std::uint32_t>((base + static_cast<std::uint32_t>(((b * pm + i) * pn + j) * pk + l)) % T);
    }
    /// Rows of the output (and of A) for batch band b and M band i, in elements of the batch*M row space.
    std::pair<std::int64_t, std::int64_t> rows_of(int b, int i) const {
        const auto [b0, b1] = band(s.batch, pb, b);
        const auto [m0, m1] = band(s.M, pm, i);
        return std::make_pair(b0 * s.M + m0, (b1 - 1) * s.M + m1);
    }
    /// N band j of the current slice.
    std::pair<std::int64_t, std::int64_t> nband(int j) const {
        const auto [a, b] = band(NS, pn, j);
        return std::make_pair(ns0 + a, ns0 + b);
    }
    void set_slice(int sl) {
        const auto ns_band = band(s.N, S, sl);
        ns0 = ns_band.first;
        NS = ns_band.second - ns_band.first;
    }
    /// The output region of block (b, i, j).
    rect out_rect(int b, int i, int j) const {
        const auto [r0, r1] = rows_of(b, i);
        const auto [n0, n1] = nband(j);
        return rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N);
    }
    rect a_rect(int b, int i, int l) const {
        const auto [r0, r1] = rows_of(b, i);
        const auto [k0, k1] = band(s.K, pk, l);
        rect ra = rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K);
        if (s.attention) ra.x0 = 0, ra.x1 = 1;
        return ra;
    }
    rect b_rect(int b, int j, int l) const {
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
    }
    /// Persistent B's home (see map_gemm).
    layout weight_home() const {
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
        return hl;
    }
};

planner::gemm_shape planner::gemm_shape_of(const op_node& op) const {
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
    const int b_in = op.inputs[1];
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
    return s;
}

void planner::map_gemm(int o) {
    const op_node& op = m_g.op(o);
    const work whole = op.to_work();
    m_tm->check(whole, "the tiles of '" + m_plat.title() + "'");
    gemm_grid g;
    g.s = gemm_shape_of(op);
    const gemm_shape& s = g.s;
    g.out = op.outputs.front();
    g.a_in = op.inputs[0];
    g.b_in = op.inputs[1];
    // A resident weight without a home yet is counted in base_max() as an even spread over all tiles; the
    // split's working set counts its B block in full (the home share and what comes from the other tiles),
    // so its even share comes off here rather than being counted twice.
    double have = base_max();
    if (s.b_persistent && m_place[static_cast<size_t>(root(g.b_in))].w == where::nowhere)
        have = std::max(0.0, have - tbytes(root(g.b_in)) / m_T);
    g.p = choose(op, s, have);
    if (g.p.serial > 1) ++m_serial_ops;

    g.pb = g.p.pb, g.pm = g.p.pm, g.pn = g.p.pn, g.pk = g.p.pk, g.S = g.p.serial;
    g.used = static_cast<std::uint32_t>(g.pb * g.pm * g.pn * g.pk);
    g.base = m_offset;
    g.T = m_T;
    m_offset = (m_offset + g.used) % m_T;
    g.extra_vec = std::max(0.0, op.cost.flops - 2 * op.cost.macs);
    g.outs = static_cast<double>(s.batch) * static_cast<double>(s.M) * static_cast<double>(s.N);
    g.op_x = op_id(op.name, "exchange");
    g.op_c = op_id(op.name, "compute");
    g.op_s = op_id(op.name, "sync");
    g.op_rx = op_id(op.name, "reduce exchange");
    g.op_rc = op_id(op.name, "reduce");
    g.op_rs = op_id(op.name, "reduce sync");
    g.bm_rows = static_cast<double>(s.batch * s.M);

    // Persistent B: its home is this split's B blocks, each divided among the pm tiles that use it.
    begin(op.name);
    if (s.b_persistent) home(g.op_x, g.b_in, g.weight_home());

    std::vector<std::pair<std::uint32_t, rect>> out_pieces;  // tile, region of the output
    std::vector<double> out_cols;                            // output column edges
    for (int sl = 0; sl < g.S; ++sl) {
        if (sl > 0) begin(op.name + " (slice " + std::to_string(sl + 1) + ")");
        g.set_slice(sl);
        gemm_exchange(op, g, sl == 0);
        gemm_compute(op, g);
        const double blk_s = g.p.compute_s / g.S;
        m_cur.predicted_compute = blk_s;
        end(g.op_s, g.used);
        if (g.pk > 1) {
            gemm_reduce_scatter(op, g, sl, out_pieces);
        } else {
            for (int b = 0; b < g.pb; ++b)
                for (int i = 0; i < g.pm; ++i)
                    for (int j = 0; j < g.pn; ++j) out_pieces.emplace_back(g.tile_of(b, i, j, 0), g.out_rect(b, i, j));
        }
    }
    unstage();
    place_output(op, out_pieces);
    report_gemm(op, g);
}

void planner::gemm_exchange(const op_node& op, const gemm_grid& g, bool first_slice) {
    // Exchange: every tile gathers its A block (first slice only), B block and epilogue inputs. The
    // tiles that need the same region are visited one after another (A: all N bands of an (M, K) block;
    // B: all M bands of an (N, K) block), so that a holder's sends of one region follow each other and
    // the exchange multicasts them.
    if (first_slice)
        for (int b = 0; b < g.pb; ++b)
            for (int i = 0; i < g.pm; ++i)
                for (int l = 0; l < g.pk; ++l) {
                    const rect ra = g.a_rect(b, i, l);
                    for (int j = 0; j < g.pn; ++j) fetch(g.op_x, g.a_in, ra, g.tile_of(b, i, j, l));
                }
    for (int b = 0; b < g.pb; ++b)
        for (int j = 0; j < g.pn; ++j)
            for (int l = 0; l < g.pk; ++l) {
                const rect rb = g.b_rect(b, j, l);
                for (int i = 0; i < g.pm; ++i) {
                    const std::uint32_t t = g.tile_of(b, i, j, l);
                    fetch(g.op_x, g.b_in, rb, t);
                    if (g.s.attention)
                        for (size_t x = 2; x < op.own_inputs(); ++x)
                            fetch(g.op_x, op.inputs[x], rows_cols(rb.y0, rb.y1, 0, 1), t);
                }
            }
    if (g.pk == 1)
        for (int b = 0; b < g.pb; ++b)
            for (int j = 0; j < g.pn; ++j)
                for (int i = 0; i < g.pm; ++i)
                    fetch_epilogue(op, g.op_x, g.out_rect(b, i, j), g.tile_of(b, i, j, 0), g.s.attention);
}

void planner::gemm_compute(const op_node& op, const gemm_grid& g) {
    const gemm_shape& s = g.s;
    start_compute();
    for (int b = 0; b < g.pb; ++b)
        for (int i = 0; i < g.pm; ++i)
            for (int j = 0; j < g.pn; ++j)
                for (int l = 0; l < g.pk; ++l) {
                    const auto [b0, b1] = band(s.batch, g.pb, b);
                    const auto [m0, m1] = band(s.M, g.pm, i);
                    const auto [n0, n1] = g.nband(j);
                    const auto [k0, k1] = band(s.K, g.pk, l);
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
                    w.bytes_out = cells * (g.pk > 1 ? s.pb_bytes : s.ob);
                    if (g.pk == 1) w.vector_ops = g.extra_vec * cells / g.outs;
                    compute(g.op_c, g.tile_of(b, i, j, l), w);
                }
}

void planner::gemm_reduce_scatter(const op_node& op, const gemm_grid& g, int sl,
                                  std::vector<std::pair<std::uint32_t, rect>>& out_pieces) {
    const gemm_shape& s = g.s;
    const int pb = g.pb, pm = g.pm, pn = g.pn, pk = g.pk, S = g.S;
    // Reduce-scatter: block (b,i,j) splits its columns among its pk tiles; each sums pk partials.
    begin(op.name + (S > 1 ? " (slice " + std::to_string(sl + 1) + ") reduce" : " reduce"));
    std::vector<std::tuple<std::uint32_t, rect, work>> reducers;
    for (int b = 0; b < pb; ++b)
        for (int i = 0; i < pm; ++i)
            for (int j = 0; j < pn; ++j) {
                // Plain variables, not structured bindings: the lambdas below capture them (C++17, clang).
                const std::int64_t items = band(s.batch, pb, b).second - band(s.batch, pb, b).first;
                const std::int64_t rows = band(s.M, pm, i).second - band(s.M, pm, i).first;
                const std::int64_t n0 = g.nband(j).first, n1 = g.nband(j).second;
                const auto [r0, r1] = g.rows_of(b, i);
                const std::int64_t width = n1 - n0;
                const int parts = static_cast<int>(std::min<std::int64_t>(pk, width));
                auto cols = [&](int l) { return std::make_pair(n0 + width * l / parts, n0 + width * (l + 1) / parts); };
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
                            (static_cast<std::uint64_t>(g.out + 1) << 48) |
                            (static_cast<std::uint64_t>((((b * pm + i) * pn + j) * pk + l) & 0xFFFFF) << 28);
                        transfer(g.op_rx, tile_ep(g.tile_of(b, i, j, l2), addr), g.tile_of(b, i, j, l), bytes, {});
                        m_cur.exchange_bytes += static_cast<double>(bytes);
                    }
                for (int l = 0; l < parts; ++l) {
                    const auto [c0, c1] = cols(l);
                    const double cells = cells_of(l);
                    const std::uint32_t dst = g.tile_of(b, i, j, l);
                    const rect rc = rows_cols(r0 / g.bm_rows, r1 / g.bm_rows, static_cast<double>(c0) / s.N,
                                              static_cast<double>(c1) / s.N);
                    fetch_epilogue(op, g.op_rx, rc, dst, false);
                    work w;
                    w.type = s.type;
                    w.cls = op_class::reduction;
                    w.vector_ops = cells * (pk - 1) + g.extra_vec * cells / g.outs;
                    w.bytes_in = cells * s.pb_bytes * pk;
                    w.bytes_out = cells * s.ob;
                    reducers.emplace_back(dst, rc, w);
                }
            }
    start_compute();
    for (const auto& [t, rc, w] : reducers) {
        compute(g.op_rc, t, w);
        out_pieces.emplace_back(t, rc);
    }
    m_cur.predicted_compute = g.p.reduce_s / S;
    end(g.op_rs, g.used);
}

void planner::report_gemm(const op_node& op, const gemm_grid& g) {
    const gemm_shape& s = g.s;
    const plan& p = g.p;
    const int pb = g.pb, pm = g.pm, pn = g.pn, pk = g.pk, S = g.S;
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["gemm"] = {s.batch, s.M, s.N, s.K};
    d["split"] = split_str({pb, pm, pn, pk});
    d["serial"] = S;
    d["tiles"] = g.used;
    d["estimate_s"] = {{"compute", p.compute_s}, {"exchange", p.exchange_s}, {"reduce", p.reduce_s}};
    d["working_set_per_tile_B"] = p.mem;
    m_ops.push_back(d);
    char line[320];
    std::snprintf(line, sizeof line, "%s: %s %lldx%lldx%lld%s split b x m x n x k = %s on %u tiles%s%s",
                  op.name.c_str(), op_kind_name(op.kind), static_cast<long long>(s.M), static_cast<long long>(s.N),
                  static_cast<long long>(s.K), s.batch > 1 ? (" (batch " + std::to_string(s.batch) + ")").c_str() : "",
                  split_str({pb, pm, pn, pk}).c_str(), g.used, pk > 1 ? ", partials reduce-scattered" : "",
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

}  // namespace tessel::bsp
