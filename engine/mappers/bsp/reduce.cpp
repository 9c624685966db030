// The bsp mapper: reductions (reduce_* ops, argmax, dot) split over tiles: column bands of the input, bands of
// output elements, or row bands reduced to partials that a combine superstep sums (see planner::map_reduce).
#include "engine/mappers/bsp/planner.h"
#include "engine/workload/op_types.h"

namespace tessel::bsp {

namespace {

/// The folded axes: those named (argmax: one), or every axis (dot, or none named).
std::vector<bool> folded_axes(const op_node& op, size_t rank) {
    std::vector<bool> folded(rank, op.type == "dot");
    std::vector<std::int64_t> named =
        op.type == "argmax" ? std::vector<std::int64_t>{attr_int(op, "axis", 0)} : attr_ints(op, "axes");
    if (op.type != "dot" && op.type != "argmax" && named.empty()) folded.assign(rank, true);
    for (std::int64_t a : named) {
        if (a < 0) a += static_cast<std::int64_t>(rank);
        if (a >= 0 && a < static_cast<std::int64_t>(rank)) folded[static_cast<size_t>(a)] = true;
    }
    return folded;
}

}  // namespace

/// A reduction being mapped: its sizes, how its axes fold, and the output pieces placed so far.
struct planner::reduce_job {
    reduce_job(const op_node& o, const tensor_info& in) : op(o), x(in) {}

    const op_node& op;
    const tensor_info& x;  // the (first) input
    int out = 0;
    work whole;
    std::uint32_t op_x = 0, op_c = 0, op_s = 0;
    double in_bytes = 0, out_bytes = 0, have = 0;
    double need_tiles = 0;   // tiles needed for the operands to fit
    std::uint32_t want = 0;  // the tiles the input's size asks for (at least need_tiles)
    std::int64_t C = 1, R = 1, Ro = 1, Co = 1, out_elems = 1;
    bool last_kept = false, only_last = false, block = false;
    double pb = 0;                   // partial element bytes
    const placement* src = nullptr;  // where the input lies
    bool in_place = false;
    std::vector<std::pair<std::uint32_t, rect>> out_pieces;
    std::uint64_t seq = 0;  // combine messages sent, for their addresses

    /// Output elements a band of input rows [y0, y1) (fractions) contributes to. Keeping the last axis, a band
    /// touches whole output rows: when the folded axes are one block just before the last, consecutive input rows
    /// fold into the same output row (so a band touches about rows / group of them); otherwise up to one output row
    /// per input row. Folding the last axis with others, up to one output element per input element.
    double partial_elems(const rect& q) const {
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
    }
};

void planner::map_reduce(int o) {
    const op_node& op = m_g.op(o);
    reduce_job r(op, tinfo(op.inputs.front()));
    r.out = op.outputs.front();
    const int out = r.out;
    const size_t rank = r.x.shape.size();
    const std::vector<bool> folded = folded_axes(op, rank);
    r.last_kept = !folded[rank - 1];
    r.only_last = !r.last_kept && std::count(folded.begin(), folded.end(), true) == 1;

    r.op_x = op_id(op.name, "exchange");
    r.op_c = op_id(op.name, "compute");
    r.op_s = op_id(op.name, "sync");
    r.whole = op.to_work();
    if (r.whole.vector_ops > 0) m_tm->check(r.whole, "the tiles of '" + m_plat.title() + "'");
    for (int t : op.inputs) r.in_bytes += is_constant(t) ? 0.0 : tbytes(t);
    r.out_bytes = tbytes(out);
    r.have = base_max();
    const double room = m_usable - r.have;
    // Tiles needed for the operands to fit, and the tiles the input's size asks for.
    r.need_tiles = room > 0 ? std::ceil((r.in_bytes + r.out_bytes) / room) : 1e18;
    r.want =
        std::min<std::uint32_t>(m_T, std::max<std::uint32_t>(spread_tiles(op.inputs.front()),
                                                             static_cast<std::uint32_t>(std::min(r.need_tiles, 1e9))));
    // A weight or state input not yet on the tiles gets the layout of the input it is read with: row bands.
    for (int t : op.inputs) {
        const int rt = root(t);
        if (!is_constant(t) && persistent(rt) && m_place[static_cast<size_t>(rt)].w != where::tiles)
            home(r.op_x, rt, spread(rt, r.want, true));
    }
    begin(op.name);
    r.C = view_cols(op.inputs.front()), r.R = view_rows(op.inputs.front());
    r.Ro = view_rows(out), r.Co = view_cols(out);
    r.out_elems = std::max<std::int64_t>(1, tinfo(out).elements());
    size_t first_folded = rank, last_folded = 0;
    for (size_t i = 0; i < rank; ++i)
        if (folded[i]) first_folded = std::min(first_folded, i), last_folded = i;
    r.block = r.last_kept && last_folded + 2 == rank &&
              std::all_of(folded.begin() + static_cast<long>(first_folded),
                          folded.begin() + static_cast<long>(last_folded) + 1, [](bool f) { return f; });
    std::string how;
    // An input already in row bands on the tiles (where the op before left it) is cheaper reduced where it lies:
    // every band sends a partial of at most the output's size instead of every column band gathering all rows.
    r.src = &m_place[static_cast<size_t>(root(op.inputs.front()))];
    const placement& src = *r.src;
    r.pb = bytes_of(m_partials);
    r.in_place = op.inputs.size() == 1 && src.w == where::tiles && !src.staged && src.lay.nc() == 1 &&
                 static_cast<double>(src.lay.pieces()) >= r.need_tiles && [&] {
                     double partial = 0;
                     for (size_t k = 0; k < src.lay.pieces(); ++k) partial += r.partial_elems(src.lay.piece(k)) * r.pb;
                     return partial < r.in_bytes;
                 }();
    if (r.last_kept && !r.in_place && static_cast<double>(std::min<std::int64_t>(r.C, r.want)) >= r.need_tiles)
        how = reduce_columns(r);
    else if (r.only_last && static_cast<double>(std::min<std::int64_t>(r.out_elems, r.want)) >= r.need_tiles)
        how = reduce_output_bands(r);
    else
        how = reduce_partials(r);
    unstage();
    place_output(op, r.out_pieces);
    nlohmann::json d;
    d["op"] = op.name;
    d["kind"] = op_kind_name(op.kind);
    d["reduction"] = how;
    m_ops.push_back(d);
}

void planner::reduce_band(reduce_job& r, std::uint32_t t, const rect& in_region, const rect& out_piece) {
    // One band of work: its input region on tile t, the output piece it writes, its share of the op.
    for (int in : r.op.inputs) fetch(r.op_x, in, in_region, t);
    r.out_pieces.emplace_back(t, out_piece);
}

void planner::emit_reduce_bands(const reduce_job& r) {
    start_compute();
    for (const auto& [t, q] : r.out_pieces) {
        work w = r.whole;
        const double f = q.area();
        w.vector_ops *= f;
        w.bytes_in *= f;
        w.bytes_weight *= f;
        w.bytes_out *= f;
        w.batch = w.m = w.n = w.k = 0;
        compute(r.op_c, t, w);
    }
    end(r.op_s, static_cast<std::uint32_t>(r.out_pieces.size()));
}

std::string planner::reduce_columns(reduce_job& r) {
    // Column bands: band k reduces input columns [c0, c1) over every row into output columns [c0, c1).
    const int bands = static_cast<int>(std::min<std::int64_t>(r.C, r.want));
    const std::vector<double> e = edges(r.C, bands);
    for (int k = 0; k < bands; ++k) {
        const std::uint32_t t = (m_offset + static_cast<std::uint32_t>(k)) % m_T;
        reduce_band(r, t, rows_cols(0, 1, e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1]),
                    rows_cols(0, 1, e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1]));
    }
    m_offset = (m_offset + static_cast<std::uint32_t>(bands)) % m_T;
    emit_reduce_bands(r);
    return "column bands on " + std::to_string(bands) + " tiles";
}

std::string planner::reduce_output_bands(reduce_job& r) {
    // Bands of output elements, in order: output element i is input row i, so a band of the output's rows
    // (or, with fewer rows than bands, of one row's columns) reads a contiguous band of input rows.
    const std::int64_t Ro = r.Ro, Co = r.Co;
    const int bands = static_cast<int>(std::min<std::int64_t>(r.out_elems, r.want));
    std::vector<rect> pieces;
    if (Ro >= bands) {
        const std::vector<double> e = edges(Ro, bands);
        for (int k = 0; k < bands; ++k)
            pieces.push_back(rows_cols(e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1], 0, 1));
    } else {
        const int per_row = static_cast<int>((bands + Ro - 1) / Ro);
        const std::vector<double> rw = edges(Ro, static_cast<int>(Ro)),
                                  c = edges(Co, static_cast<int>(std::min<std::int64_t>(per_row, Co)));
        for (size_t i = 0; i + 1 < rw.size(); ++i)
            for (size_t j = 0; j + 1 < c.size(); ++j) pieces.push_back(rows_cols(rw[i], rw[i + 1], c[j], c[j + 1]));
    }
    for (size_t k = 0; k < pieces.size(); ++k) {
        const rect& q = pieces[k];
        // The flattened output elements of the piece, as a fraction of all: the input rows it reduces.
        const double f0 = q.y0 + q.x0 * (q.y1 - q.y0), f1 = q.y0 + q.x1 * (q.y1 - q.y0);
        reduce_band(r, (m_offset + static_cast<std::uint32_t>(k)) % m_T, rows_cols(f0, f1, 0, 1), q);
    }
    m_offset = (m_offset + static_cast<std::uint32_t>(pieces.size())) % m_T;
    emit_reduce_bands(r);
    return "bands of output elements on " + std::to_string(pieces.size()) + " tiles";
}

std::string planner::reduce_partials(reduce_job& r) {
    // Partials: row bands of the input (where it lies, or spread) each reduced to at most the whole output, in
    // mapper.partials precision; then a combine superstep.
    const op_node& op = r.op;
    std::vector<std::pair<std::uint32_t, rect>> bands_at;
    if (r.in_place) {
        bands_at = pieces_of(r.src->lay);
    } else {
        const int n = static_cast<int>(std::min<std::int64_t>(r.R, std::max<std::int64_t>(r.want, 1)));
        if (static_cast<double>(n) < r.need_tiles) no_fit(op, (r.in_bytes + r.out_bytes) / n, r.have);
        const std::vector<double> e = edges(r.R, n);
        for (int k = 0; k < n; ++k)
            bands_at.emplace_back((m_offset + static_cast<std::uint32_t>(k)) % m_T,
                                  rows_cols(e[static_cast<size_t>(k)], e[static_cast<size_t>(k) + 1], 0, 1));
        m_offset = (m_offset + static_cast<std::uint32_t>(n)) % m_T;
    }
    const int bands = static_cast<int>(bands_at.size());
    std::vector<std::pair<std::uint32_t, double>> partials;  // tile, partial elements
    start_compute();
    for (const auto& [t, q] : bands_at) {
        for (int in : op.inputs) fetch(r.op_x, in, q, t);
        const double elems = r.partial_elems(q);
        work w = r.whole;
        w.vector_ops *= q.area();
        w.bytes_in *= q.area();
        w.bytes_weight *= q.area();
        w.bytes_out = elems * r.pb;
        w.batch = w.m = w.n = w.k = 0;
        w.cls = op_class::reduction;
        compute(r.op_c, t, w);
        partials.emplace_back(t, elems);
    }
    end(r.op_s, static_cast<std::uint32_t>(bands));
    // Combine. The output goes to p tiles (about the square root of the bands, so that no tile receives much);
    // with many bands the partials are first reduce-scattered inside groups of p bands (member i sums piece i
    // of its group), so each output tile then receives one piece per group instead of one per band.
    const std::uint32_t g = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(partials.size()))));
    // (spread() would stop at mapper.min_piece; a combine wants its receivers spread even for a small output.)
    layout L;
    {
        const std::uint32_t n =
            static_cast<std::uint32_t>(std::min<std::int64_t>(std::min<std::int64_t>(g, m_T), std::max(r.Ro, r.Co)));
        (r.Ro >= r.Co ? L.rows : L.cols) = edges(r.Ro >= r.Co ? r.Ro : r.Co, static_cast<int>(n));
        L.tile.resize(n);
        for (std::uint32_t i = 0; i < n; ++i) L.tile[i] = (m_offset + i) % m_T;
        m_offset = (m_offset + n) % m_T;
    }
    const size_t P = L.pieces();
    // (tile, partial elements) for each piece of the output, from every source that still holds a share.
    std::vector<std::vector<std::pair<std::uint32_t, double>>> to_piece(P);
    const bool grouped = P > 1 && partials.size() > 2 * P;
    if (grouped) {
        reduce_scatter_partials(r, partials, L, to_piece);
    } else {
        for (size_t i = 0; i < P; ++i)
            for (const auto& [t, e] : partials) to_piece[i].emplace_back(t, e * L.piece(i).area());
    }
    combine_partials(r, L, to_piece);
    return "partials of " + std::to_string(bands) + " row bands" + (r.in_place ? " where the input lies" : "") +
           (grouped ? ", reduce-scattered in groups of " + std::to_string(P) : "") + ", combined on " +
           std::to_string(P) + " tile(s)";
}

void planner::send_partial(reduce_job& r, std::uint32_t op_rx, std::uint32_t from, std::uint32_t to, double bytes) {
    const auto b = static_cast<std::uint64_t>(std::ceil(bytes));
    if (from == to || b == 0) return;
    const std::uint64_t addr = (static_cast<std::uint64_t>(r.out + 1) << 48) | ((r.seq++ & 0xFFFFFFF) << 20);
    transfer(op_rx, tile_ep(from, addr), to, b, {});
    m_cur.exchange_bytes += static_cast<double>(b);
}

void planner::reduce_scatter_partials(reduce_job& r, const std::vector<std::pair<std::uint32_t, double>>& partials,
                                      const layout& L,
                                      std::vector<std::vector<std::pair<std::uint32_t, double>>>& to_piece) {
    const op_node& op = r.op;
    const size_t P = L.pieces();
    begin(op.name + " reduce-scatter");
    const std::uint32_t op_gx = op_id(op.name, "reduce-scatter exchange"), op_gc = op_id(op.name, "reduce-scatter"),
                        op_gs = op_id(op.name, "reduce-scatter sync");
    std::vector<std::pair<std::uint32_t, work>> sums;
    for (size_t first = 0; first < partials.size(); first += P) {
        const size_t size = std::min(P, partials.size() - first);
        for (size_t i = 0; i < P; ++i) {
            const size_t owner = first + i % size;
            const double area = L.piece(i).area();
            double received = 0, elems = 0;
            for (size_t j = first; j < first + size; ++j) {
                send_partial(r, op_gx, partials[j].first, partials[owner].first, partials[j].second * area * r.pb);
                received += partials[j].second * area;
                elems = std::max(elems, partials[j].second * area);
            }
            work w;
            w.type = r.whole.type;
            w.cls = op_class::reduction;
            w.vector_ops = received;
            w.bytes_in = received * r.pb;
            w.bytes_out = elems * r.pb;
            sums.emplace_back(partials[owner].first, w);
            to_piece[i].emplace_back(partials[owner].first, elems);
        }
    }
    start_compute();
    for (const auto& [t, w] : sums) compute(op_gc, t, w);
    end(op_gs, static_cast<std::uint32_t>(partials.size()));
}

void planner::combine_partials(reduce_job& r, const layout& L,
                               const std::vector<std::vector<std::pair<std::uint32_t, double>>>& to_piece) {
    const op_node& op = r.op;
    begin(op.name + " combine");
    const std::uint32_t op_rx = op_id(op.name, "combine exchange"), op_rc = op_id(op.name, "combine"),
                        op_rs = op_id(op.name, "combine sync");
    std::vector<std::pair<std::uint32_t, work>> sums;
    for (size_t i = 0; i < L.pieces(); ++i) {
        const rect q = L.piece(i);
        const std::uint32_t dst = L.tile[i];
        double received = 0;
        for (const auto& [t, e] : to_piece[i]) {
            send_partial(r, op_rx, t, dst, e * r.pb);
            received += e;
        }
        work w;
        w.type = r.whole.type;
        w.cls = op_class::reduction;
        w.vector_ops = received;
        w.bytes_in = received * r.pb;
        w.bytes_out = q.area() * r.out_bytes;
        sums.emplace_back(dst, w);
        r.out_pieces.emplace_back(dst, q);
    }
    start_compute();
    for (const auto& [t, w] : sums) compute(op_rc, t, w);
    end(op_rs, static_cast<std::uint32_t>(sums.size()));
}

}  // namespace tessel::bsp
