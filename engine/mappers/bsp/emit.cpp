// The bsp mapper: the program. Every op is a superstep (exchange steps, compute steps, a sync); matrix products
// (gemm.cpp) and reductions (reduce.cpp) are emitted with the steps here.
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
    if (m_merge_streams && from.comp == m_mem_ep.comp && deps.empty()) {
        // From streaming memory: merged with the superstep's other loads (end()), which its step waits for.
        m_loads.push_back({op, to_tile, from.address, bytes});
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
    m_writes.push_back({op, tile, p.address + offset_in(r, q), bytes});
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

std::uint32_t planner::stream_fanout() const {
    if (m_tile_bps <= 0) return m_T;
    return static_cast<std::uint32_t>(
        std::clamp(std::ceil(2 * m_stream_bps / m_tile_bps), 1.0, static_cast<double>(m_T)));
}

void planner::emit_merged(const std::vector<pending_write>& moves, bool load, const std::vector<std::uint32_t>& deps) {
    double total = 0;
    for (const pending_write& w : moves) total += static_cast<double>(w.bytes);
    const double groups = std::min<double>(stream_fanout(), static_cast<double>(moves.size()));
    size_t i = 0;
    double done = 0;
    for (double g = 1; g <= groups && i < moves.size(); ++g) {
        const pending_write& first = moves[i];
        std::uint64_t bytes = 0;
        // Consecutive moves up to this group's share of the bytes (the last group takes the rest).
        do {
            bytes += moves[i].bytes;
            done += static_cast<double>(moves[i].bytes);
            ++i;
        } while (i < moves.size() && (g == groups || done < total * g / groups));
        endpoint mem = m_mem_ep;
        mem.address = first.address;
        if (load)
            m_out.prog.add_transfer(first.op, mem, tile_ep(first.tile), bytes, deps);
        else
            m_out.prog.add_transfer(first.op, tile_ep(first.tile, first.address), mem, bytes, deps);
    }
}

void planner::end(std::uint32_t op, std::uint32_t tiles_used) {
    if (m_coarse) {
        emit_merged(m_loads, true, m_after);  // the superstep's step waits for every step since m_cur.first
        m_loads.clear();
        end_coarse();
    }
    // Write-backs to streaming memory leave once their tile's compute is done.
    if (m_merge_streams && !m_writes.empty()) {
        m_fine_steps += static_cast<double>(m_writes.size());
        for (const pending_write& w : m_writes) m_cur.streamed_bytes += static_cast<double>(w.bytes);
        emit_merged(m_writes, false, m_ss->tiles.empty() ? m_after : std::vector<std::uint32_t>{m_cur.compute});
        m_writes.clear();
    }
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
        src.address = p.address + offset_in(r, q);
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

void planner::map_gather(int o) {
    const op_node& op = m_g.op(o);
    const int table = op.inputs[0], out = op.outputs.front();
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    begin(op.name);
    if (m_place[static_cast<size_t>(root(table))].w == where::nowhere)
        home(op_x, table, spread(table, spread_tiles(table), true));
    const layout lay = spread(out, spread_tiles(out), true);
    const placement& tp = m_place[static_cast<size_t>(root(table))];
    const double rows_bytes = op.cost.bytes_weight > 0 ? op.cost.bytes_weight : tbytes(out);
    for (size_t p = 0; p < lay.pieces(); ++p) {
        const rect q = lay.piece(p);
        const std::uint32_t t = lay.tile[p];
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
    emit_rows(op, lay, op_c);
    m_cur.predicted_compute = 0;
    end(op_s, static_cast<std::uint32_t>(lay.pieces()));
    unstage();
    place_output(op, pieces_of(lay));
}

std::vector<std::pair<std::uint32_t, rect>> planner::pieces_of(const layout& lay) {
    std::vector<std::pair<std::uint32_t, rect>> v;
    for (size_t p = 0; p < lay.pieces(); ++p) v.emplace_back(lay.tile[p], lay.piece(p));
    return v;
}

void planner::emit_rows(const op_node& op, const layout& lay, std::uint32_t op_c) {
    const work whole = op.to_work();
    if (whole.macs > 0 || whole.vector_ops > 0) m_tm->check(whole, "the tiles of '" + m_plat.title() + "'");
    std::vector<double> share(m_T, 0.0);
    std::vector<std::uint32_t> order;
    for (size_t p = 0; p < lay.pieces(); ++p) {
        const std::uint32_t t = lay.tile[p];
        if (share[t] == 0) order.push_back(t);
        share[t] += lay.piece(p).area();
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
    // Run where an activation input lies on the tiles when the shapes agree (and rows are whole for row-wise ops):
    // the first such input, so that the op can run in place over it (a gradient sum whose first part went to
    // streaming memory runs on its second).
    int src = -1;
    layout lay;
    bool reuse = false;
    for (int t : op.inputs) {
        if (is_constant(t) || persistent(t)) continue;
        const placement& sp = m_place[static_cast<size_t>(root(t))];
        if (sp.w == where::tiles && !sp.staged && tinfo(t).elements() == tinfo(out).elements() &&
            (!rowwise || sp.lay.nc() == 1)) {
            src = t;
            reuse = true;
            lay = sp.lay;
            break;
        }
    }
    begin(op.name);
    if (!reuse) lay = spread(out, spread_tiles(out), rowwise);
    // Working set check: the pieces of the operands the op brings onto the busiest tile and of its outputs, next
    // to what is live. A source it runs on in place (its layout reused) is already live; an output no larger than
    // that source, read for the last time here, overwrites it (an in-place elementwise op, as Poplar runs them),
    // so it needs no room of its own: a 257 MB gradient sum or a 335 MB attention scaling fits beside its input.
    {
        const int on = reuse ? root(src) : -1;
        const auto reads_here = std::count_if(op.inputs.begin(), op.inputs.end(), [&](int t) { return root(t) == on; });
        bool overwrite = on >= 0 && !persistent(on) && m_liveness.reads_left(on) == static_cast<size_t>(reads_here);
        double per_tile = 0;
        for (int t : op.inputs)
            if (!is_constant(t) && root(t) != on) per_tile += tbytes(t) / static_cast<double>(lay.pieces());
        for (int t : op.outputs) {
            if (overwrite && tbytes(t) <= tbytes(on)) {
                overwrite = false;  // one output takes the source's room
                continue;
            }
            per_tile += tbytes(t) / static_cast<double>(lay.pieces());
        }
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
            home(op_x, r, small ? spread(r, 1, false) : lay);
        }
    }
    // A broadcast operand (a bias, batchnorm's per-channel parameters) goes to every piece: its sends are
    // issued column band by column band, so that the receivers of the same region follow each other and the
    // exchange multicasts them (one send heard by many tiles) instead of sending each copy in turn.
    for (int in : op.inputs) {
        if (is_constant(in)) continue;
        const bool broadcast = !moves && tinfo(in).elements() < tinfo(out).elements();
        for (size_t c = 0; c < lay.nc(); ++c)
            for (size_t r = 0; r < lay.nr(); ++r) {
                const size_t p = broadcast ? r * lay.nc() + c : c * lay.nr() + r;
                const rect q = lay.piece(p);
                fetch(op_x, in, broadcast ? rows_cols(0, 1, q.x0, q.x1) : q, lay.tile[p]);
            }
    }
    emit_rows(op, lay, op_c);
    end(op_s, static_cast<std::uint32_t>(lay.pieces()));
    unstage();
    place_output(op, pieces_of(lay));
}

void planner::map_update(int o) {
    const op_node& op = m_g.op(o);
    const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"),
                        op_s = op_id(op.name, "sync");
    const int weight = op.inputs.front();
    auto rewritten = [&](size_t i) { return op.inputs[i == 0 ? 0 : i + 1]; };  // output i's input
    // Row bands of the weight over as many tiles as its size asks for; resident state not yet placed goes there.
    // A flat weight (one row: a bias, or a ZeRO shard of the flattened parameters) is one band, on one tile, unless
    // it does not fit there in row slices: then column bands (`by_rows` false).
    const auto incoming_bytes = [&] {  // what must come onto the tiles: streamed weight and state, anything not there
        double b = 0;
        for (size_t i = 0; i < op.own_inputs(); ++i) {
            const int t = op.inputs[i];
            if (!is_constant(t) && m_place[static_cast<size_t>(root(t))].w != where::tiles) b += tbytes(t);
        }
        return b;
    };
    const bool by_rows = view_rows(weight) > 1 || incoming_bytes() <= m_usable - base_max();
    const std::int64_t n_rows = by_rows ? view_rows(weight) : view_cols(weight);
    const std::uint32_t n =
        std::min<std::uint32_t>(spread_tiles(weight), static_cast<std::uint32_t>(std::max<std::int64_t>(1, n_rows)));
    const layout full = spread(weight, n, by_rows);
    for (size_t i = 0; i < op.own_inputs(); ++i) {
        const int r = root(op.inputs[i]);
        if (persistent(r) && m_place[static_cast<size_t>(r)].w == where::nowhere) home(op_x, r, full);
    }
    // What must come onto the tiles, against their free room.
    const double incoming = incoming_bytes();
    const double have = base_max(), room = m_usable - have;
    const double per_tile = incoming / static_cast<double>(full.pieces());
    std::int64_t slices = 1;
    if (per_tile > 0) {
        if (room <= 0) no_fit(op, per_tile, have);
        slices = static_cast<std::int64_t>(std::ceil(per_tile / room));
        if (slices > n_rows)
            no_fit(op, incoming / static_cast<double>(full.pieces() * static_cast<size_t>(n_rows)), have);
    }
    for (std::int64_t sl = 0; sl < slices; ++sl) {
        begin(slices > 1 ? op.name + " (slice " + std::to_string(sl + 1) + ")" : op.name);
        // This slice's rows (or columns), in bands on the tiles of the full layout.
        const std::int64_t r0 = n_rows * sl / slices, r1 = n_rows * (sl + 1) / slices;
        const int bands = static_cast<int>(std::min<std::int64_t>(static_cast<std::int64_t>(full.pieces()), r1 - r0));
        layout lay;
        std::vector<double>& band_edges = by_rows ? lay.rows : lay.cols;
        band_edges.clear();
        for (int k = 0; k <= bands; ++k) {
            const std::int64_t edge = r0 + (r1 - r0) * k / bands;  // whole rows (or columns)
            band_edges.push_back(static_cast<double>(edge) / static_cast<double>(n_rows));
        }
        lay.tile.resize(static_cast<size_t>(bands));
        for (int k = 0; k < bands; ++k)
            lay.tile[static_cast<size_t>(k)] = full.tile[static_cast<size_t>(k) % full.tile.size()];
        for (size_t i = 0; i < op.own_inputs(); ++i)
            for (size_t p = 0; p < lay.pieces(); ++p) fetch(op_x, op.inputs[i], lay.piece(p), lay.tile[p]);
        emit_rows(op, lay, op_c);
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            const int t = rewritten(i);
            if (m_place[static_cast<size_t>(root(t))].w != where::streamed) continue;
            for (size_t p = 0; p < lay.pieces(); ++p) write_back(op_x, lay.tile[p], t, lay.piece(p));
        }
        m_cur.update = true;
        end(op_s, static_cast<std::uint32_t>(lay.pieces()));
    }
    // In place: the outputs are the rewritten tensors, which keep their homes (on the tiles or in streaming memory).
    for (size_t i = 0; i < op.outputs.size(); ++i) m_liveness.share(op.outputs[i], rewritten(i));
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["update"] = "in place, " + std::to_string(slices) + " slice(s) of " + (by_rows ? "rows" : "columns");
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
