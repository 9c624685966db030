#include "engine/mappers/bsp_mapper.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>

#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/matmul_split.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/report/summary.h"
#include "models/core/compute_model.h"
#include "models/core/rect.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

void bsp_mapper::options::declare(param_decl& d) {
    d(tiles, "tiles", "", "the ipu_tiles component to run on (default: the first)");
    d(sync, "sync", "", "the barrier that ends every superstep (default: the first barrier)");
    d(streaming_memory, "streaming_memory", "",
      "memory for weights that do not stay on the tiles (default: the first memory that does not compute; "
      "'none': no streaming memory)");
    d(code_reserve, "code_reserve", "0.25",
      "share of each tile's SRAM taken by code, vertex state, stacks and exchange buffers (not for tensors); an "
      "assumption: Poplar's always-live memory varies by model");
    d.choice(weights, "weights", "auto", {"auto", "resident", "streaming"},
             "auto: weights and state stay on the tiles when they fit, else the fewest that make the rest fit come from "
             "streaming memory (sparsely read tables first, then the largest; reported); "
             "resident: they must fit; streaming: always from streaming memory");
    d.choice(partials, "partials", "fp32", {"fp32", "fp16"}, "type of matrix-product partial sums (Poplar's default: fp32)");
    d(min_piece, "min_piece", "256B", "smallest piece of a tensor given a tile of its own: small tensors spread over fewer tiles");
    d(matmul_split, "matmul_split", "",
      "force every matrix product's split as PMxPNxPK (teaching, tests); empty: the planner chooses");
}

namespace {

/// A region of a tensor's 2D view (rows = all axes but the last, columns = the last), as fractions.
using rect = region;

constexpr double eps = 1e-12;

/// A tensor spread over tiles as a grid of pieces: row bands x column bands, one tile per piece.
struct layout {
    std::vector<double> rows{0, 1}, cols{0, 1};
    std::vector<std::uint32_t> tile{0};
    size_t nr() const { return rows.size() - 1; }
    size_t nc() const { return cols.size() - 1; }
    size_t pieces() const { return nr() * nc(); }
    rect piece(size_t p) const {
        const size_t r = p / nc(), c = p % nc();
        return rows_cols(rows[r], rows[r + 1], cols[c], cols[c + 1]);
    }
    /// Calls fn(piece, tile, overlap) for every piece that overlaps `q`.
    template <class F>
    void overlapping(const rect& q, F fn) const {
        const auto band = [](const std::vector<double>& e, double x) {
            size_t i = static_cast<size_t>(std::upper_bound(e.begin(), e.end(), x + eps) - e.begin());
            return i == 0 ? size_t{0} : i - 1;
        };
        for (size_t r = band(rows, q.y0); r + 1 < rows.size() && rows[r] < q.y1 - eps; ++r)
            for (size_t c = band(cols, q.x0); c + 1 < cols.size() && cols[c] < q.x1 - eps; ++c) {
                const rect ov = rows_cols(std::max(rows[r], q.y0), std::min(rows[r + 1], q.y1), std::max(cols[c], q.x0),
                              std::min(cols[c + 1], q.x1));
                if (ov.area() > eps) fn(r * nc() + c, tile[r * nc() + c], ov);
            }
    }
};

enum class where { nowhere, tiles, streamed };

struct placement {
    where w = where::nowhere;
    layout lay;
    std::uint64_t address = 0;              // in streaming memory
    std::vector<std::uint32_t> ready;       // per piece, for pieces staged from streaming memory in this superstep
    bool staged = false;                    // a streamed tensor staged on tiles for the current op only
};

/// Internal: the mapping does not fit the tiles' memory (map() may fall back to streaming weights).
struct does_not_fit {
    std::string message;
};

std::string split_str(std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

double bytes_of(dtype t) { return dtype_bits(t) / 8.0; }

/// Band edges (as fractions) of `d` split into `parts` near-equal integer bands.
std::vector<double> edges(std::int64_t d, int parts) {
    std::vector<double> e(static_cast<size_t>(parts) + 1);
    for (int i = 0; i <= parts; ++i) e[static_cast<size_t>(i)] = static_cast<double>(d * i / parts) / static_cast<double>(d);
    return e;
}

/// A tensor the graph starts with (no producer, some reader, not a view).
bool is_source(const tensor_info& ti) { return ti.producer < 0 && !ti.consumers.empty() && ti.alias_of < 0; }

/// A weight or state tensor the graph starts with: what stays on the tiles or streams.
bool is_held(const tensor_info& ti) { return is_source(ti) && (ti.role == tensor_role::weight || ti.role == tensor_role::state); }

class planner {
public:
    /// `streamed`: per tensor, whether it lives in streaming memory (weights and state only); empty: none.
    planner(const workload_graph& g, const platform& plat, const bsp_mapper::options& o, std::vector<bool> streamed,
            std::vector<bsp_mapper::superstep>& steps)
        : m_g(g), m_plat(plat), m_opt(o), m_streamed(std::move(streamed)), m_steps(steps) {
        m_streaming = std::find(m_streamed.begin(), m_streamed.end(), true) != m_streamed.end();
        m_streamed.resize(g.tensors().size(), false);
        find_parts();
        m_out.prog.name = g.name;
        const size_t nt = g.tensors().size();
        m_place.resize(nt);
        m_root.resize(nt);
        for (size_t t = 0; t < nt; ++t) m_root[t] = static_cast<int>(t);
        m_left.resize(nt);
        for (size_t t = 0; t < nt; ++t) m_left[t] = g.tensors()[t].consumers.size();
        m_mem.assign(m_T, 0.0);
        m_incoming.resize(m_T);
        m_partials = o.partials == "fp16" ? dtype::fp16 : dtype::fp32;
        if (m_streaming && !m_has_stream)
            throw input_error("platform '" + plat.title() + "' has no streaming memory to hold them (a multi-chip system, a "
                              "platform with streaming memory such as gc200, or a lower precision may fit)");
    }

    /// Bytes all tiles hold for tensors (after the code reserve).
    double usable_total() const { return m_usable * m_T; }

    mapping run() {
        place_sources();
        for (int o : m_g.topological_order()) {
            const op_node& op = m_g.op(o);
            if (op.kind == op_kind::shape_only || op.kind == op_kind::reshape ||
                (op.cost.flops == 0 && op.cost.macs == 0 && op.cost.bytes_out == 0 && op.cost.bytes_in == 0))
                alias(o);
            else if (op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0 && op.inputs.size() >= 2)
                map_gemm(o);
            else if ((op.kind == op_kind::embedding || op.kind == op_kind::gather) && !op.inputs.empty() &&
                     persistent(op.inputs[0]))
                map_gather(o);
            else
                map_rows(o);
            release(o);
        }
        finish();
        return std::move(m_out);
    }

private:
    const workload_graph& m_g;
    const platform& m_plat;
    const bsp_mapper::options& m_opt;
    std::vector<bool> m_streamed;
    bool m_streaming = false;  // any tensor streamed
    std::vector<bsp_mapper::superstep>& m_steps;
    mapping m_out;

    const component* m_tiles = nullptr;
    const compute_model* m_tm = nullptr;
    std::uint32_t m_T = 0;
    const interconnect* m_xch = nullptr;
    endpoint m_sync;
    endpoint m_mem_ep;
    bool m_has_stream = false;
    std::string m_stream_name;
    double m_stream_bps = 0;
    toolkit::address_allocator m_stream;  // addresses in streaming memory
    double m_usable = 0;
    double m_tile_bps = 0, m_latency_s = 0, m_sync_s = 0;
    dtype m_partials = dtype::fp32;

    std::vector<placement> m_place;
    std::vector<int> m_root;
    std::vector<size_t> m_left;
    std::vector<double> m_mem;  // bytes of live tensors per tile
    double m_unplaced = 0;      // resident weights not yet given a home, spread evenly for the fit check
    std::uint32_t m_offset = 0;

    // The superstep being built.
    bsp_mapper::superstep m_cur;
    bool m_open = false;
    std::vector<std::uint32_t> m_after;  // the last sync
    std::vector<std::vector<std::uint32_t>> m_incoming;
    std::vector<std::uint32_t> m_touched;
    std::vector<int> m_staged;
    double m_streamed_total = 0, m_exchange_total = 0;
    std::uint32_t m_serial_ops = 0;
    nlohmann::json m_ops = nlohmann::json::array();

    // ---- platform ---------------------------------------------------------------------------------------
    void find_parts() {
        // The tiles: one component whose units are tiles that compute on their own memory.
        const platform::group& tg = toolkit::find_part(
            m_plat, m_opt.tiles, {"bsp mapper", "tiles", "a tile array (compute units with their own memory)", toolkit::computes_with_own_memory});
        m_tiles = &toolkit::first(m_plat, tg);
        m_tm = m_tiles->unit_model();
        m_T = m_tiles->unit_count();
        const attach_point ap = m_plat.attachment(m_tiles->id(), 0);
        if (!ap.valid()) throw input_error("bsp mapper: the tiles of '" + m_plat.title() + "' are not connected to an exchange");
        m_xch = &m_plat.net(ap.net);
        m_tile_bps = m_xch->port_bytes_per_second(ap.port);
        m_latency_s = ticks_to_seconds(m_xch->transfer_latency_ticks());

        const platform::group& sg =
            toolkit::find_part(m_plat, m_opt.sync, {"bsp mapper", "sync", "a barrier for the global sync", toolkit::is_barrier});
        const component& sync = toolkit::first(m_plat, sg);
        m_sync = endpoint{sync.id(), 0, 0};
        m_sync_s = ticks_to_seconds(sync.sync_ticks(m_T));

        m_usable = static_cast<double>(m_tiles->capacity_bytes()) * (1.0 - m_opt.code_reserve);
        find_streaming();
    }

    void find_streaming() {
        if (m_opt.streaming_memory == "none") return;
        const platform::group* mg = toolkit::find_optional_part(
            m_plat, m_opt.streaming_memory, {"bsp mapper", "streaming_memory", "a memory that does not compute", toolkit::is_pure_memory});
        if (!mg) return;
        const component& mem = toolkit::first(m_plat, *mg);
        const attach_point ap = m_plat.attachment(mem.id(), 0);
        if (!ap.valid()) throw input_error("bsp mapper: streaming memory '" + mg->name + "' is not connected to anything");
        // Aggregate rate into the tiles: the memory's peak, then every network on the way at the port the route
        // enters it by (the exchange's external port).
        double bps = mem.peak_bytes_per_second() > 0 ? mem.peak_bytes_per_second() : 1e300;
        for (const auto& seg : m_plat.route(ap, m_plat.attachment(m_tiles->id(), 0)))
            bps = std::min(bps, m_plat.net(seg.net).port_bytes_per_second(seg.in));
        m_has_stream = true;
        m_stream_name = mg->name;
        m_stream_bps = bps;
        m_stream = toolkit::address_allocator({mem.capacity_bytes() * std::max<std::uint64_t>(1, mem.unit_count()), 4096, 0, 0});
        m_mem_ep = endpoint{mem.id(), mem.unit_count() > 1 ? -1 : 0, 0};
    }

    endpoint tile_ep(std::uint32_t t, std::uint64_t address = 0) const {
        return endpoint{m_tiles->id(), static_cast<std::int32_t>(t), address};
    }

    // ---- tensors ----------------------------------------------------------------------------------------
    int root(int t) const { return m_root[static_cast<size_t>(t)]; }
    const tensor_info& tinfo(int t) const { return m_g.tensor(t); }
    double tbytes(int t) const { return static_cast<double>(tinfo(t).bytes()); }
    bool persistent(int t) const {
        const tensor_role r = tinfo(root(t)).role;
        return r == tensor_role::weight || r == tensor_role::state;
    }
    bool is_constant(int t) const { return tinfo(root(t)).role == tensor_role::constant; }
    std::int64_t view_rows(int t) const {
        const auto& s = tinfo(t).shape;
        std::int64_t r = 1;
        for (size_t i = 0; i + 1 < s.size(); ++i) r *= s[i];
        return std::max<std::int64_t>(1, r);
    }
    std::int64_t view_cols(int t) const {
        const auto& s = tinfo(t).shape;
        return s.empty() ? 1 : std::max<std::int64_t>(1, s.back());
    }

    /// Bytes of `t` in each piece of `lay`, added to (sign +1) or removed from (-1) the tiles' memory.
    void account(int t, const layout& lay, double sign) {
        const double b = tbytes(t);
        for (size_t p = 0; p < lay.pieces(); ++p) m_mem[lay.tile[p]] += sign * lay.piece(p).area() * b;
    }

    /// An even spread of `t` over up to `n` tiles, along rows (or columns when there are fewer rows and
    /// `rows_only` is false), starting at the rotating offset.
    layout spread(int t, std::uint32_t n, bool rows_only) {
        const double b = tbytes(t);
        n = std::max<std::uint32_t>(1, std::min<std::uint32_t>(n, static_cast<std::uint32_t>(std::max(1.0, std::floor(b / std::max(1.0, static_cast<double>(m_opt.min_piece.bytes())))))));
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

    std::uint32_t spread_tiles(int t) const {
        const double b = tbytes(t);
        return static_cast<std::uint32_t>(std::clamp(std::floor(b / std::max(1.0, static_cast<double>(m_opt.min_piece.bytes()))), 1.0,
                                                     static_cast<double>(m_T)));
    }

    std::uint64_t stream_alloc(int t) {
        const std::uint64_t a = m_stream.alloc(tinfo(t).bytes());
        if (m_stream.overflowed())
            throw input_error("workload '" + m_g.name + "' needs " + format_bytes(static_cast<double>(m_stream.high_water())) +
                              " of streaming memory for its weights and state, more than the " +
                              format_bytes(static_cast<double>(m_stream.capacity())) + " of '" + m_stream_name + "' on '" +
                              m_plat.title() + "'");
        return a;
    }

    /// Where every input, weight and state tensor starts.
    void place_sources() {
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
            } else if (ti.role != tensor_role::constant) {
                // Inputs start on the tiles (host I/O is left out).
                m_place[i].w = where::tiles;
                m_place[i].lay = spread(t, spread_tiles(t), false);
                account(t, m_place[i].lay, +1);
            }
        }
        for (size_t i = 0; i < m_g.tensors().size(); ++i) {
            const tensor_info& ti = m_g.tensors()[i];
            if (ti.alias_of >= 0 && ti.producer < 0) m_root[i] = root(ti.alias_of);
        }
        const double total = m_usable * m_T;
        if (persistent_bytes > total) {
            std::sort(big.rbegin(), big.rend());
            std::string list;
            for (size_t i = 0; i < big.size() && i < 5; ++i)
                list += (i ? ", " : "") + big[i].second + " " + format_bytes(big[i].first);
            throw does_not_fit{"weights and state of '" + m_g.name + "' need " + format_bytes(persistent_bytes) + " but the " +
                               std::to_string(m_T) + " tiles of '" + m_plat.title() + "' hold " + format_capacity(total) + ", " +
                               format_bytes(m_usable) + " each after the " + format_number(100 * m_opt.code_reserve, 3) +
                               "% code reserve: short by " + format_bytes(persistent_bytes - total) +
                               "; largest: " + list};
        }
    }

    // ---- supersteps -------------------------------------------------------------------------------------
    void begin(const std::string& name) {
        m_cur = bsp_mapper::superstep{};
        m_cur.name = name;
        m_cur.first = static_cast<std::uint32_t>(m_out.prog.size());
        m_open = true;
    }

    std::uint32_t op_id(const std::string& base, const char* phase) { return m_out.prog.intern_op(base + " [" + phase + "]"); }

    std::uint32_t transfer(std::uint32_t op, endpoint from, std::uint32_t to_tile, std::uint64_t bytes, std::vector<std::uint32_t> deps) {
        if (deps.empty()) deps = m_after;
        const std::uint32_t s = m_out.prog.add_transfer(op, from, tile_ep(to_tile), bytes, deps);
        if (m_incoming[to_tile].empty()) m_touched.push_back(to_tile);
        m_incoming[to_tile].push_back(s);
        return s;
    }

    /// Compute steps start here; each tile waits for its own incoming transfers (or the last sync).
    void start_compute() { m_cur.compute = static_cast<std::uint32_t>(m_out.prog.size()); }

    std::uint32_t compute(std::uint32_t op, std::uint32_t tile, const work& w) {
        const auto& in = m_incoming[tile];
        return m_out.prog.add_compute(op, tile_ep(tile), m_out.prog.add_work(w), in.empty() ? m_after : in);
    }

    void end(std::uint32_t op, std::uint32_t tiles_used) {
        const std::uint32_t last = static_cast<std::uint32_t>(m_out.prog.size());
        for (std::uint32_t t : m_touched) m_incoming[t].clear();
        m_touched.clear();
        m_open = false;
        if (last == m_cur.first) return;
        std::vector<std::uint32_t> deps(last - m_cur.first);
        for (std::uint32_t i = 0; i < deps.size(); ++i) deps[i] = m_cur.first + i;
        m_cur.sync = m_out.prog.add_sync(op, m_sync, deps);
        m_cur.tiles = tiles_used;
        m_after = {m_cur.sync};
        m_exchange_total += m_cur.exchange_bytes;
        m_streamed_total += m_cur.streamed_bytes;
        m_steps.push_back(m_cur);
    }

    /// A tile-memory address naming a piece of a tensor (and a region within it), so that copies of the same
    /// data sent at the same time are recognised as one multicast by the tiles and the exchange.
    static std::uint64_t piece_address(int t, size_t piece, const rect& pr, const rect& ov) {
        const auto q = [](double x) { return static_cast<std::uint64_t>(std::clamp(x, 0.0, 0.999) * 16); };
        const std::uint64_t sub = q((ov.y0 - pr.y0) / std::max(eps, pr.y1 - pr.y0)) * 16 + q((ov.x0 - pr.x0) / std::max(eps, pr.x1 - pr.x0));
        return (static_cast<std::uint64_t>(t + 1) << 48) | (static_cast<std::uint64_t>(piece & 0xFFFFF) << 28) | (sub << 20);
    }

    /// Brings region `q` of tensor `t` to tile `dst` in the current exchange phase.
    void fetch(std::uint32_t op, int t, const rect& q, std::uint32_t dst) {
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
                    if (m_incoming[dst].empty()) m_touched.push_back(dst);
                    m_incoming[dst].push_back(p.ready[piece]);
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

    /// Loads a streamed tensor from streaming memory onto the tiles of `home` for the current op.
    void stage(std::uint32_t op, int t, const layout& home) {
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
            src.address = p.address + static_cast<std::uint64_t>(pr.y0 * total);
            p.ready[i] = transfer(op, src, home.tile[i], bytes, {});
            m_cur.streamed_bytes += static_cast<double>(bytes);
        }
        account(r, home, +1);
        m_staged.push_back(r);
    }

    /// After an op: staged tensors go back to streaming memory (their tile memory is freed).
    void unstage() {
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

    /// Gives a resident persistent tensor its home (first use) or stages a streamed one.
    void home(std::uint32_t op, int t, const layout& lay) {
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

    void release(int o) {
        unstage();
        for (int t : m_g.op(o).inputs) {
            const int r = root(t);
            size_t& left = m_left[static_cast<size_t>(r)];
            if (left > 0) --left;
            placement& p = m_place[static_cast<size_t>(r)];
            if (left == 0 && !persistent(r) && p.w == where::tiles) {
                account(r, p.lay, -1);
                p.w = where::nowhere;
            }
        }
    }

    void alias(int o) {
        const op_node& op = m_g.op(o);
        int src = -1;
        for (int t : op.inputs)
            if (!is_constant(t)) {
                src = t;
                break;
            }
        for (int t : op.outputs) {
            if (src < 0) {
                m_root[static_cast<size_t>(t)] = t;
                continue;
            }
            const int r = root(src);
            m_root[static_cast<size_t>(t)] = r;
            m_left[static_cast<size_t>(r)] += tinfo(t).consumers.size();
        }
    }

    double base_max() const {
        double m = 0;
        for (double x : m_mem) m = std::max(m, x);
        return m + m_unplaced / m_T;
    }

    [[noreturn]] void no_fit(const op_node& op, double need, double have) {
        // The largest tensors holding memory now.
        std::vector<std::pair<double, std::string>> live;
        for (size_t i = 0; i < m_place.size(); ++i)
            if (m_place[i].w == where::tiles && m_root[i] == static_cast<int>(i)) live.emplace_back(tbytes(static_cast<int>(i)), m_g.tensors()[i].name);
        std::sort(live.rbegin(), live.rend());
        std::string list;
        for (size_t i = 0; i < live.size() && i < 5; ++i) list += (i ? ", " : "") + live[i].second + " " + format_bytes(live[i].first);
        throw does_not_fit{"op '" + op.name + "' of '" + m_g.name + "' needs " + format_bytes(need) + " per tile for its operands " +
                           "next to " + format_bytes(have) + " of live tensors, but a tile of '" + m_plat.title() + "' has " +
                           format_bytes(m_usable) + " for tensors (" + format_bytes(static_cast<double>(m_tiles->capacity_bytes())) +
                           " less the " + format_number(100 * m_opt.code_reserve, 3) + "% code reserve): short by " +
                           format_bytes(need + have - m_usable) + " per tile" + (list.empty() ? "" : "; largest live tensors: " + list)};
    }

    // ---- matrix products ----------------------------------------------------------------------------------
    struct plan {
        int pb = 1, pm = 1, pn = 1, pk = 1, serial = 1;
        double cost = 0, mem = 0, compute_s = 0, exchange_s = 0, reduce_s = 0;
        bool valid = false;
    };

    struct gemm_shape {
        std::int64_t batch, M, N, K;
        double eb, ob, pb_bytes;  // operand, output and partial element bytes
        bool b_persistent, b_streamed, b_batched, tb, ta, attention;
        dtype type;
    };

    /// Estimated cost and working set of a split (see the class comment).
    plan evaluate(const gemm_shape& s, int pb, int pm, int pn, int pk, int serial) const {
        plan p;
        p.pb = pb, p.pm = pm, p.pn = pn, p.pk = pk, p.serial = serial;
        const double bb = std::ceil(static_cast<double>(s.batch) / pb), bm = std::ceil(static_cast<double>(s.M) / pm);
        const double bn = std::ceil(std::ceil(static_cast<double>(s.N) / serial) / pn), bk = std::ceil(static_cast<double>(s.K) / pk);
        work w;
        w.type = s.type;
        w.batch = static_cast<std::int64_t>(bb);
        w.m = static_cast<std::int64_t>(bm);
        w.n = static_cast<std::int64_t>(bn);
        w.k = static_cast<std::int64_t>(bk);
        w.macs = bb * bm * bn * bk;
        w.bytes_in = bb * bm * bk * s.eb;
        w.bytes_weight = bb * bk * bn * s.eb;
        w.bytes_out = bb * bm * bn * (pk > 1 ? s.pb_bytes : s.ob);
        const double hz = m_tm->clock().hz;
        p.compute_s = serial * m_tm->cycles(w) / hz;
        const double a_blk = w.bytes_in, b_blk = w.bytes_weight;
        double recv_b = b_blk;
        double stream_s = 0;
        if (s.b_persistent) {
            recv_b = b_blk * (pm - 1) / pm;
            if (s.b_streamed) stream_s = b_blk * pn * pk * serial / m_stream_bps;
        }
        p.exchange_s = (a_blk + serial * recv_b) / m_tile_bps + serial * m_latency_s + stream_s;
        const double c_blk = bb * bm * bn * s.pb_bytes;
        if (pk > 1) {
            const double recv = c_blk * (pk - 1) / pk;
            work r;
            r.type = s.type;
            r.vector_ops = bb * bm * bn * (pk - 1) / pk;
            r.bytes_in = c_blk;
            r.bytes_out = bb * bm * bn * s.ob / pk;
            p.reduce_s = serial * (recv / m_tile_bps + m_latency_s + m_sync_s + m_tm->cycles(r) / hz);
        }
        p.cost = p.compute_s + p.exchange_s + p.reduce_s + serial * m_sync_s;
        // Working set per tile: the A block (kept over serial slices), one slice's B block and result.
        p.mem = a_blk + b_blk + (pk > 1 ? c_blk + c_blk * (pk - 1) / pk + bb * bm * bn * s.ob / pk : bb * bm * bn * s.ob);
        p.valid = true;
        return p;
    }

    plan choose(const op_node& op, const gemm_shape& s, double have) {
        plan best;
        const double room = m_usable - have;
        // Cheaper wins; within a part in 10^9, fewer tiles.
        const std::function<bool(const plan&, const plan&)> better = [](const plan& a, const plan& b) {
            return a.cost < b.cost * (1 - 1e-9) || (a.cost <= b.cost * (1 + 1e-9) && a.pb * a.pm * a.pn * a.pk < b.pb * b.pm * b.pn * b.pk);
        };
        auto consider = [&](const plan& p) {
            if (p.valid && p.mem <= room && (!best.valid || better(p, best))) best = p;
        };
        const int T = static_cast<int>(m_T);
        if (!m_opt.matmul_split.empty()) {
            int pm = 0, pn = 0, pk = 0;
            char x1 = 0, x2 = 0;
            std::istringstream is(m_opt.matmul_split);
            if (!(is >> pm >> x1 >> pn >> x2 >> pk) || x1 != 'x' || x2 != 'x' || pm < 1 || pn < 1 || pk < 1)
                throw input_error("mapper.matmul_split '" + m_opt.matmul_split + "': expected PMxPNxPK, e.g. 2x2x1");
            if (pm * pn * pk > T || pm > s.M || pn > s.N || pk > s.K)
                throw input_error("mapper.matmul_split " + m_opt.matmul_split + " does not fit op '" + op.name + "' (" +
                                  std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K) + " on " +
                                  std::to_string(T) + " tiles)");
            for (int serial = 1; serial <= s.N && !best.valid; serial *= 2) consider(evaluate(s, 1, pm, pn, pk, serial));
            if (!best.valid) no_fit(op, evaluate(s, 1, pm, pn, pk, 1).mem, have);
            return best;
        }
        // Batch x M x N x K over the tiles, factors from toolkit::smooth_factors. A band of several batch items
        // keeps M and K whole; a batched B operand (attention's keys) cannot split the dimension its items are
        // laid out along.
        const double macs = static_cast<double>(s.batch) * static_cast<double>(s.M) * static_cast<double>(s.N) * static_cast<double>(s.K);
        const double peak = m_tm->peak_macs_per_cycle(s.type) * m_tm->clock().hz;
        auto whole_items = [&](const toolkit::matmul_split& x) { return x.batch >= s.batch; };
        toolkit::split_space space;
        space.batch = toolkit::fixed(toolkit::smooth_factors(s.batch, T));
        space.m = [&](const toolkit::matmul_split& x) {
            return whole_items(x) ? toolkit::smooth_factors(s.M, T / x.batch) : std::vector<int>{1};
        };
        space.k = [&](const toolkit::matmul_split& x) {
            if (!whole_items(x) && s.b_batched && s.tb && x.n > 1) return std::vector<int>{};
            return s.attention ? std::vector<int>{1} : toolkit::smooth_factors(s.K, T / (x.batch * x.m * x.n));
        };
        for (int serial = 1; !best.valid; serial *= 2) {
            const std::int64_t n_slice = (s.N + serial - 1) / serial;
            space.n = [&](const toolkit::matmul_split& x) { return toolkit::smooth_factors(n_slice, T / (x.batch * x.m)); };
            const std::function<std::optional<plan>(const toolkit::matmul_split&, const plan*)> cost =
                [&](const toolkit::matmul_split& x, const plan* b) -> std::optional<plan> {
                if (!whole_items(x) && s.b_batched && !s.tb && x.k > 1) return std::nullopt;
                // No split beats its tiles' arithmetic at peak: skip those that cannot win.
                const double floor_s = macs / (static_cast<double>(x.batch * x.m * x.n * x.k) * peak) + serial * m_sync_s;
                if (b && floor_s >= b->cost) return std::nullopt;
                const plan p = evaluate(s, x.batch, x.m, x.n, x.k, serial);
                if (p.mem > room) return std::nullopt;
                return p;
            };
            if (const auto p = toolkit::best_split<plan>(space, cost, better)) best = *p;
            if (serial >= s.N) break;
        }
        if (!best.valid) no_fit(op, evaluate(s, 1, 1, 1, 1, static_cast<int>(s.N)).mem, have);
        return best;
    }

    void map_gemm(int o) {
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
        const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"), op_s = op_id(op.name, "sync");
        const std::uint32_t op_rx = op_id(op.name, "reduce exchange"), op_rc = op_id(op.name, "reduce"), op_rs = op_id(op.name, "reduce sync");

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
        std::vector<double> out_cols;                             // output column edges
        for (int sl = 0; sl < S; ++sl) {
            if (sl > 0) begin(op.name + " (slice " + std::to_string(sl + 1) + ")");
            const auto [ns0, ns1] = band(s.N, S, sl);
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
                rect ra = rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K);
                if (s.attention) ra.x0 = 0, ra.x1 = 1;
                return ra;
            };
            auto b_rect = [&](int b, int j, int l) {
                const auto [k0, k1] = band(s.K, pk, l);
                const auto [n0, n1] = nband(j);
                const auto [b0, b1] = band(s.batch, pb, b);
                rect rb;
                if (s.b_persistent && !s.attention) {
                    rb = s.tb ? rows_cols(static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N, static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K)
                              : rows_cols(static_cast<double>(k0) / s.K, static_cast<double>(k1) / s.K, static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N);
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
                            fetch_epilogue(op, op_x, rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N),
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
                            const double cells = static_cast<double>(w.batch) * static_cast<double>(w.m) * static_cast<double>(w.n);
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
                            const auto [b0, b1] = band(s.batch, pb, b);
                            const auto [m0, m1] = band(s.M, pm, i);
                            const auto [n0, n1] = nband(j);
                            const auto [r0, r1] = rows_of(b, i);
                            const std::int64_t width = n1 - n0;
                            const int parts = static_cast<int>(std::min<std::int64_t>(pk, width));
                            for (int l = 0; l < parts; ++l) {
                                const std::int64_t c0 = n0 + width * l / parts, c1 = n0 + width * (l + 1) / parts;
                                const double cells = static_cast<double>((b1 - b0) * (m1 - m0) * (c1 - c0));
                                const std::uint32_t dst = tile_of(b, i, j, l);
                                const auto bytes = static_cast<std::uint64_t>(std::ceil(cells * s.pb_bytes));
                                for (int l2 = 0; l2 < pk; ++l2) {
                                    if (l2 == l || bytes == 0) continue;
                                    const std::uint64_t addr = (static_cast<std::uint64_t>(out + 1) << 48) |
                                                               (static_cast<std::uint64_t>((((b * pm + i) * pn + j) * pk + l) & 0xFFFFF) << 28);
                                    transfer(op_rx, tile_ep(tile_of(b, i, j, l2), addr), dst, bytes, {});
                                    m_cur.exchange_bytes += static_cast<double>(bytes);
                                }
                                const rect rc = rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(c0) / s.N, static_cast<double>(c1) / s.N);
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
                            out_pieces.emplace_back(tile_of(b, i, j, 0), rows_cols(r0 / bm_rows, r1 / bm_rows, static_cast<double>(n0) / s.N, static_cast<double>(n1) / s.N));
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
        std::snprintf(line, sizeof line, "%s: %s %lldx%lldx%lld%s split b x m x n x k = %s on %u tiles%s%s", op.name.c_str(),
                      op_kind_name(op.kind), static_cast<long long>(s.M), static_cast<long long>(s.N),
                      static_cast<long long>(s.K), s.batch > 1 ? (" (batch " + std::to_string(s.batch) + ")").c_str() : "",
                      split_str({pb, pm, pn, pk}).c_str(), used, pk > 1 ? ", partials reduce-scattered" : "",
                      S > 1 ? (", in " + std::to_string(S) + " serial slices of N (working set)").c_str() : "");
        m_out.notes.push_back(line);
    }

    /// Bias and fused-epilogue inputs for an output region on tile t.
    void fetch_epilogue(const op_node& op, std::uint32_t opx, const rect& rc, std::uint32_t t, bool attention) {
        const size_t first = attention ? op.own_inputs() : 2;
        const int out = op.outputs.front();
        for (size_t x = first; x < op.inputs.size(); ++x) {
            const int in = op.inputs[x];
            if (attention && x == 3) continue;  // attention's mask: constant-sized, see the class comment
            const bool broadcast = tinfo(in).elements() < tinfo(out).elements();
            fetch(opx, in, broadcast ? rows_cols(0, 1, rc.x0, rc.x1) : rc, t);
        }
    }

    /// The output of an op is the grid of its pieces (rows and column edges taken from the pieces).
    void place_output(const op_node& op, const std::vector<std::pair<std::uint32_t, rect>>& pieces) {
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

    // ---- gathers and everything else ------------------------------------------------------------------------
    void map_gather(int o) {
        const op_node& op = m_g.op(o);
        const int table = op.inputs[0], out = op.outputs.front();
        const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"), op_s = op_id(op.name, "sync");
        begin(op.name);
        if (m_place[static_cast<size_t>(root(table))].w == where::nowhere) home(op_x, table, spread(table, spread_tiles(table), true));
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
                    transfer(op_x, tile_ep(tp.lay.tile[piece], piece_address(root(table), piece, tp.lay.piece(piece), q)), t, bytes,
                             tp.staged && tp.ready[piece] != ~0u ? std::vector<std::uint32_t>{tp.ready[piece]} : std::vector<std::uint32_t>{});
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

    static std::vector<std::pair<std::uint32_t, rect>> pieces_of(const layout& L) {
        std::vector<std::pair<std::uint32_t, rect>> v;
        for (size_t p = 0; p < L.pieces(); ++p) v.emplace_back(L.tile[p], L.piece(p));
        return v;
    }

    /// One compute step per tile holding pieces of L: its share of the op's work.
    void emit_rows(const op_node& op, const layout& L, std::uint32_t op_c) {
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

    void map_rows(int o) {
        const op_node& op = m_g.op(o);
        const int out = op.outputs.front();
        const bool rowwise = op.kind == op_kind::softmax || op.kind == op_kind::layernorm || op.kind == op_kind::reduce;
        const std::uint32_t op_x = op_id(op.name, "exchange"), op_c = op_id(op.name, "compute"), op_s = op_id(op.name, "sync");
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
            reuse = sp.w == where::tiles && !sp.staged && tinfo(src).elements() == tinfo(out).elements() && (!rowwise || sp.lay.nc() == 1);
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

    void finish() {
        m_out.details["mapper"] = "bsp";
        m_out.details["tiles"] = m_T;
        size_t streamed_tensors = 0, persistent_tensors = 0;
        double streamed_held = 0;
        for (size_t t = 0; t < m_streamed.size(); ++t) {
            const tensor_info& ti = m_g.tensors()[t];
            if (is_held(ti)) ++persistent_tensors;
            if (m_streamed[t]) ++streamed_tensors, streamed_held += tbytes(static_cast<int>(t));
        }
        m_out.details["weights"] = !m_streaming ? "resident" : m_opt.weights == "streaming" ? "streaming" : "partly streaming";
        m_out.details["streamed_tensors"] = streamed_tensors;
        m_out.details["tile_memory_usable_B"] = m_usable;
        double peak = 0;
        for (double x : m_mem) peak = std::max(peak, x);
        m_out.details["exchange_bytes"] = m_exchange_total;
        m_out.details["streamed_bytes"] = m_streamed_total;
        m_out.details["ops"] = m_ops;
        const auto it = m_g.parameters.find("batch");
        m_out.samples = it != m_g.parameters.end() ? std::max(1.0, std::atof(it->second.c_str())) : 1.0;
        if (m_streaming)
            m_out.notes.insert(m_out.notes.begin(),
                               std::to_string(streamed_tensors) + " of " + std::to_string(persistent_tensors) + " weight and state tensors (" +
                                   format_bytes(streamed_held) + ") stream from '" + m_stream_name + "' at " + format_rate(m_stream_bps, "B/s") +
                                   ": " + format_bytes(m_streamed_total) + " per run" +
                                   (streamed_tensors < persistent_tensors ? "; the others stay resident" : ""));
        else
            m_out.notes.insert(m_out.notes.begin(), "weights and state resident in tile memory");
        if (m_serial_ops > 0)
            m_out.notes.insert(m_out.notes.begin() + 1, std::to_string(m_serial_ops) +
                                                            " matrix product(s) run in serial slices so their working set fits a tile");
    }
};

}  // namespace

namespace {

/// Weight and state tensors in the order the fallback moves them to streaming memory: first those a run reads
/// least of per byte they hold (an embedding table, of which a run gathers a few rows), then the largest.
std::vector<int> streaming_order(const workload_graph& g) {
    struct cand {
        double read_share, bytes;
        int t;
    };
    std::vector<cand> c;
    for (size_t i = 0; i < g.tensors().size(); ++i) {
        const tensor_info& ti = g.tensors()[i];
        if (!is_held(ti)) continue;
        const double bytes = static_cast<double>(ti.bytes());
        double read = 0;
        for (int o : ti.consumers) {
            const op_node& op = g.op(o);
            read += (op.kind == op_kind::gather || op.kind == op_kind::embedding) && op.cost.bytes_weight > 0 ? std::min(op.cost.bytes_weight, bytes) : bytes;
        }
        c.push_back({bytes > 0 ? read / bytes : 1.0, bytes, static_cast<int>(i)});
    }
    std::stable_sort(c.begin(), c.end(), [](const cand& a, const cand& b) {
        if (a.read_share != b.read_share) return a.read_share < b.read_share;
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        return a.t < b.t;
    });
    std::vector<int> out;
    for (const auto& x : c) out.push_back(x.t);
    return out;
}

}  // namespace

mapping bsp_mapper::map(const workload_graph& g, const platform& plat) {
    if (m_opt.code_reserve < 0 || m_opt.code_reserve >= 1) throw input_error("mapper.code_reserve must be at least 0 and below 1");
    const std::vector<int> order = streaming_order(g);
    auto streamed = [&](size_t k) {  // the first k of `order` in streaming memory
        std::vector<bool> s(g.tensors().size(), false);
        for (size_t i = 0; i < k && i < order.size(); ++i) s[static_cast<size_t>(order[i])] = true;
        return s;
    };
    m_steps.clear();
    if (m_opt.weights == "streaming") {
        planner p(g, plat, m_opt, streamed(order.size()), m_steps);
        return p.run();
    }
    std::string first_miss;
    try {
        planner p(g, plat, m_opt, {}, m_steps);
        return p.run();
    } catch (const does_not_fit& e) {
        if (m_opt.weights == "resident") throw input_error("workload does not fit: " + e.message);
        first_miss = e.message;
    }
    // Fall back to streaming memory, tensor by tensor in streaming_order(): at least as many bytes as the
    // weights overflow the tiles by, then twice as many tensors each time until the mapping fits.
    double held = 0, total = 0;
    for (int t : order) total += static_cast<double>(g.tensor(t).bytes());
    size_t k = 0;
    {
        planner probe(g, plat, m_opt, {}, m_steps);  // only for the tiles' capacity
        const double room = probe.usable_total();
        while (k < order.size() && total - held > room) held += static_cast<double>(g.tensor(order[k++]).bytes());
    }
    k = std::max<size_t>(k, 1);
    for (;;) {
        m_steps.clear();
        try {
            planner p(g, plat, m_opt, streamed(k), m_steps);
            mapping m = p.run();
            m.notes.insert(m.notes.begin(), "fallback: resident weights do not fit (" + first_miss + ")");
            return m;
        } catch (const does_not_fit& e) {
            if (k >= order.size()) throw input_error("workload does not fit: " + e.message);
            k = std::min(order.size(), 2 * k);
        } catch (const input_error& e) {
            throw input_error("workload does not fit: " + first_miss + "; " + e.message());
        }
    }
}

void bsp_mapper::explain(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) const {
    if (m_steps.empty()) return;
    double tc = 0, ts = 0, tx = 0;
    tick prev = r.start;
    nlohmann::json arr = nlohmann::json::array();
    std::vector<std::pair<double, size_t>> longest;
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const superstep& st = m_steps[i];
        tick xend = prev;
        for (std::uint32_t k = st.first; k < st.compute; ++k) xend = std::max(xend, r.step_end[k]);
        const tick sync_start = std::max(r.step_start[st.sync], xend);
        const tick sync_end = r.step_end[st.sync];
        const double x = ticks_to_seconds(xend - prev), c = ticks_to_seconds(sync_start - xend), y = ticks_to_seconds(sync_end - sync_start);
        tx += x, tc += c, ts += y;
        nlohmann::json j;
        j["name"] = st.name;
        j["exchange_s"] = x;
        j["compute_s"] = c;
        j["sync_s"] = y;
        j["tiles"] = st.tiles;
        j["exchange_bytes"] = st.exchange_bytes;
        j["streamed_bytes"] = st.streamed_bytes;
        j["planned_compute_s"] = st.predicted_compute;
        arr.push_back(j);
        longest.emplace_back(x + c + y, i);
        prev = sync_end;
    }
    const double total = tc + ts + tx;
    s.details["supersteps"] = arr;
    s.details["phase_totals_s"] = {{"compute", tc}, {"sync", ts}, {"exchange", tx}};
    auto pct = [&](double v) { return format_number(total > 0 ? 100 * v / total : 0, 3) + "%"; };
    s.notes.push_back(std::to_string(m_steps.size()) + " supersteps: compute " + format_time(tc) + " (" + pct(tc) + "), sync " +
                      format_time(ts) + " (" + pct(ts) + "), exchange " + format_time(tx) + " (" + pct(tx) + ")");
    std::sort(longest.rbegin(), longest.rend());
    for (size_t i = 0; i < longest.size() && i < 5; ++i) {
        const auto& j = arr[longest[i].second];
        s.notes.push_back("  superstep " + std::to_string(longest[i].second) + " '" + j["name"].get<std::string>() + "': " +
                          format_time(longest[i].first) + " = compute " + format_time(j["compute_s"].get<double>()) + " + sync " +
                          format_time(j["sync_s"].get<double>()) + " + exchange " + format_time(j["exchange_s"].get<double>()) +
                          " (" + format_bytes(j["exchange_bytes"].get<double>() + j["streamed_bytes"].get<double>()) + " in)");
    }
}

TESSEL_REGISTER_MAPPER(make_mapper<bsp_mapper>(
    "bsp", "Graphcore IPU: every op a bulk-synchronous superstep (exchange, compute, sync) over all tiles; matrix "
           "products split in batch x M x N x K to minimise compute + exchange within each tile's memory; weights "
           "resident or streamed"));

}  // namespace tessel
