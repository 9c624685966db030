// The bsp mapper: where tensors live. Inputs start spread over the tiles; weights and state get their home on
// the tiles of their first product's split (or stay in streaming memory and are staged onto tiles for the op
// that reads them); every output is a grid of pieces on the tiles that computed it, freed after its last reader.
#include "engine/mappers/bsp/planner.h"

namespace tessel::bsp {

void planner::account(int t, const layout& lay, double sign) {
    const double b = tbytes(t);
    for (size_t p = 0; p < lay.pieces(); ++p) m_mem[lay.tile[p]] += sign * lay.piece(p).area() * b;
}

layout planner::spread(int t, std::uint32_t n, bool rows_only) {
    const double b = tbytes(t);
    n = std::max<std::uint32_t>(
        1, std::min<std::uint32_t>(
               n, static_cast<std::uint32_t>(
                      std::max(1.0, std::floor(b / std::max(1.0, static_cast<double>(m_opt.min_piece.bytes())))))));
    n = std::min(n, m_T);
    const std::int64_t R = view_rows(t), C = view_cols(t);
    layout L;
    const bool by_rows = rows_only || R >= static_cast<std::int64_t>(n) || R >= C;
    const std::int64_t D = by_rows ? R : C;
    n = static_cast<std::uint32_t>(std::min<std::int64_t>(n, D));
    std::vector<double> edges(n + 1);
    for (std::uint32_t i = 0; i <= n; ++i) edges[i] = static_cast<double>(D * i / n) / static_cast<double>(D);
    (by_rows ? L.rows : L.cols) = edges;
    L.tile.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) L.tile[i] = (m_offset + i) % m_T;
    m_offset = (m_offset + n) % m_T;
    return L;
}

std::uint32_t planner::spread_tiles(int t) const {
    const double b = tbytes(t);
    return static_cast<std::uint32_t>(std::clamp(
        std::floor(b / std::max(1.0, static_cast<double>(m_opt.min_piece.bytes()))), 1.0, static_cast<double>(m_T)));
}

std::uint64_t planner::stream_alloc(int t) {
    const std::uint64_t a = m_stream.alloc(tinfo(t).bytes());
    if (m_stream.overflowed())
        throw input_error("workload '" + m_g.name + "' needs " +
                          format_bytes(static_cast<double>(m_stream.high_water())) +
                          " of streaming memory for the tensors it keeps there, more than the " +
                          format_bytes(static_cast<double>(m_stream.capacity())) + " of '" + m_stream_name + "' on '" +
                          m_plat.title() + "'");
    return a;
}

void planner::place_sources() {
    double persistent_bytes = 0;
    std::vector<std::pair<double, std::string>> big;
    for (size_t i = 0; i < m_g.tensors().size(); ++i) {
        const tensor_info& ti = m_g.tensors()[i];
        if (!is_source(ti)) continue;
        const int t = static_cast<int>(i);
        if (ti.role == tensor_role::weight || ti.role == tensor_role::state) {
            if (m_streamed[i]) {
                m_place[i].w = where::streamed;
                m_place[i].address = stream_alloc(t);
            } else {
                persistent_bytes += tbytes(t);
                big.emplace_back(tbytes(t), ti.name);
                m_unplaced += tbytes(t);
            }
        } else if (ti.role == tensor_role::input && m_streaming && ti.grad_of >= 0 &&
                   m_g.tensor(ti.grad_of).role == tensor_role::weight) {
            // A weight gradient the program takes in (a pipeline stage's optimizer program) is where write_out
            // left it when its backward program ran with streaming memory: it comes back over the gateway.
            m_streamed[i] = true;
            m_place[i].w = where::streamed;
            m_place[i].address = stream_alloc(t);
        } else if (ti.role != tensor_role::constant) {
            // Inputs start on the tiles (host I/O is left out); with activations in streaming memory, one that only
            // the backward pass reads (saved by an earlier pass or piece of the program) goes there first.
            m_place[i].w = where::tiles;
            m_place[i].lay = spread(t, spread_tiles(t), false);
            account(t, m_place[i].lay, +1);
            if (m_spill && m_forward_left[i] == 0 && m_liveness.reads_left(t) > 0) m_saved_inputs.push_back(t);
        }
    }
    const double total = m_usable * m_T;
    if (persistent_bytes > total) {
        std::sort(big.rbegin(), big.rend());
        std::string list;
        for (size_t i = 0; i < big.size() && i < 5; ++i)
            list += (i ? ", " : "") + big[i].second + " " + format_bytes(big[i].first);
        throw does_not_fit{"weights and state of '" + m_g.name + "' need " + format_bytes(persistent_bytes) +
                           " but the " + std::to_string(m_T) + " tiles of '" + m_plat.title() + "' hold " +
                           format_capacity(total) + ", " + format_bytes(m_usable) + " each after the " +
                           format_number(100 * m_opt.code_reserve, 3) + "% code reserve: short by " +
                           format_bytes(persistent_bytes - total) + "; largest: " + list};
    }
}

void planner::stage(std::uint32_t op, int t, const layout& home) {
    const int r = root(t);
    placement& p = m_place[static_cast<size_t>(r)];
    if (p.w != where::streamed) return;
    const double total = tbytes(r);
    p.w = where::tiles;
    p.staged = true;
    p.lay = home;
    p.ready.assign(home.pieces(), ~0u);
    for (size_t i = 0; i < home.pieces(); ++i) {
        const rect pr = home.piece(i);
        const auto bytes = static_cast<std::uint64_t>(std::ceil(pr.area() * total));
        if (bytes == 0) continue;
        endpoint src = m_mem_ep;
        src.address = p.address + offset_in(r, pr);
        p.ready[i] = transfer(op, src, home.tile[i], bytes, {});
        m_cur.streamed_bytes += static_cast<double>(bytes);
    }
    account(r, home, +1);
    m_staged.push_back(r);
}

void planner::unstage() {
    for (int r : m_staged) {
        placement& p = m_place[static_cast<size_t>(r)];
        account(r, p.lay, -1);
        p.w = where::streamed;
        p.staged = false;
        p.lay = layout{};
        p.ready.clear();
    }
    m_staged.clear();
}

void planner::home(std::uint32_t op, int t, const layout& lay) {
    const int r = root(t);
    placement& p = m_place[static_cast<size_t>(r)];
    if (p.w == where::streamed) {
        stage(op, r, lay);
    } else if (p.w == where::nowhere && persistent(r)) {
        p.w = where::tiles;
        p.lay = lay;
        account(r, lay, +1);
        m_unplaced -= tbytes(r);
    }
}

void planner::release(int o) {
    unstage();
    m_liveness.read_inputs(m_g.op(o), [&](int r) {
        placement& p = m_place[static_cast<size_t>(r)];
        if (!persistent(r) && p.w == where::tiles) {
            account(r, p.lay, -1);
            p.w = where::nowhere;
        }
    });
}

void planner::write_out(int o) {
    if (!m_streaming || !m_has_stream) return;
    const op_node& op = m_g.op(o);
    std::vector<int> out;
    for (int t : op.outputs)
        if (root(t) == t && tinfo(t).role == tensor_role::output && tinfo(t).grad_of >= 0 &&
            m_place[static_cast<size_t>(t)].w == where::tiles && m_liveness.reads_left(t) == 0)
            out.push_back(t);
    move_out(out, op.name, " (to streaming memory)");
}

double planner::move_out(const std::vector<int>& out, const std::string& op_name, const std::string& what) {
    if (out.empty()) return 0;
    begin(op_name + what);
    const std::uint32_t op_w = m_out.prog.intern_op(op_name);
    std::vector<std::uint32_t> tiles;
    double bytes = 0;
    for (int t : out) {
        placement& p = m_place[static_cast<size_t>(t)];
        p.address = stream_alloc(t);
        for (size_t i = 0; i < p.lay.pieces(); ++i) {
            write_back(op_w, p.lay.tile[i], t, p.lay.piece(i));
            tiles.push_back(p.lay.tile[i]);
        }
        account(t, p.lay, -1);
        p.w = where::streamed;
        p.lay = layout{};
        bytes += tbytes(t);
    }
    std::sort(tiles.begin(), tiles.end());
    tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
    end(op_w, static_cast<std::uint32_t>(tiles.size()));
    return bytes;
}

void planner::spill_saved(int o) {
    const op_node& op = m_g.op(o);
    if (op.phase == op_phase::forward)
        for (int t : op.inputs) {
            size_t& left = m_forward_left[static_cast<size_t>(root(t))];
            if (left > 0) --left;
        }
    if (!m_spill || op.phase != op_phase::forward) return;
    std::vector<int> out;
    auto saved = [&](int t) {
        const int r = root(t);
        const placement& p = m_place[static_cast<size_t>(r)];
        if (is_constant(r) || persistent(r) || p.w != where::tiles || p.staged || m_liveness.reads_left(r) == 0 ||
            m_forward_left[static_cast<size_t>(r)] > 0 || std::find(out.begin(), out.end(), r) != out.end())
            return;
        out.push_back(r);
    };
    for (int t : op.inputs) saved(t);
    for (int t : op.outputs) saved(t);
    spill(out, op.name);
}

void planner::spill(const std::vector<int>& out, const std::string& op_name) {
    m_spilled_bytes += move_out(out, op_name, " (activations to streaming memory)");
    m_spilled += static_cast<std::uint32_t>(out.size());
}

void planner::alias(int o) {
    const op_node& op = m_g.op(o);
    int src = -1;
    for (int t : op.inputs)
        if (!is_constant(t)) {
            src = t;
            break;
        }
    if (src >= 0)
        for (int t : op.outputs) {
            m_liveness.share(t, src);
            m_forward_left[static_cast<size_t>(root(src))] += m_forward_left[static_cast<size_t>(t)];
            m_forward_left[static_cast<size_t>(t)] = 0;
        }
}

double planner::base_max() const {
    double m = 0;
    for (double x : m_mem) m = std::max(m, x);
    return m + m_unplaced / m_T;
}

void planner::no_fit(const op_node& op, double need, double have) {
    // The largest tensors holding memory now.
    std::vector<std::pair<double, std::string>> live;
    for (size_t i = 0; i < m_place.size(); ++i)
        if (m_place[i].w == where::tiles && root(static_cast<int>(i)) == static_cast<int>(i))
            live.emplace_back(tbytes(static_cast<int>(i)), m_g.tensors()[i].name);
    std::sort(live.rbegin(), live.rend());
    std::string list;
    for (size_t i = 0; i < live.size() && i < 5; ++i)
        list += (i ? ", " : "") + live[i].second + " " + format_bytes(live[i].first);
    throw does_not_fit{
        "op '" + op.name + "' of '" + m_g.name + "' needs " + format_bytes(need) + " per tile for its operands " +
        "next to " + format_bytes(have) + " of live tensors, but a tile of '" + m_plat.title() + "' has " +
        format_bytes(m_usable) + " for tensors (" + format_bytes(static_cast<double>(m_tiles->capacity_bytes())) +
        " less the " + format_number(100 * m_opt.code_reserve, 3) + "% code reserve): short by " +
        format_bytes(need + have - m_usable) + " per tile" + (list.empty() ? "" : "; largest live tensors: " + list)};
}

void planner::place_output(const op_node& op, const std::vector<std::pair<std::uint32_t, rect>>& pieces) {
    std::vector<double> rows, cols;
    for (const auto& [t, r] : pieces) {
        rows.push_back(r.y0), rows.push_back(r.y1);
        cols.push_back(r.x0), cols.push_back(r.x1);
    }
    auto uniq = [](std::vector<double>& v) {
        std::sort(v.begin(), v.end());
        std::vector<double> u;
        for (double x : v)
            if (u.empty() || x > u.back() + eps) u.push_back(x);
        v = u;
    };
    uniq(rows);
    uniq(cols);
    layout L;
    L.rows = rows;
    L.cols = cols;
    L.tile.assign(L.pieces(), pieces.empty() ? 0 : pieces.front().first);
    for (const auto& [t, r] : pieces) {
        const size_t rb = static_cast<size_t>(std::lower_bound(rows.begin(), rows.end(), r.y0 - eps) - rows.begin());
        const size_t cb = static_cast<size_t>(std::lower_bound(cols.begin(), cols.end(), r.x0 - eps) - cols.begin());
        for (size_t rr = rb; rr + 1 < rows.size() && rows[rr] < r.y1 - eps; ++rr)
            for (size_t cc = cb; cc + 1 < cols.size() && cols[cc] < r.x1 - eps; ++cc) L.tile[rr * L.nc() + cc] = t;
    }
    for (int t : op.outputs) {
        placement& p = m_place[static_cast<size_t>(t)];
        p.w = where::tiles;
        p.lay = L;
        account(t, L, +1);
    }
}

}  // namespace tessel::bsp
