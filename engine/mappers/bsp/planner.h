// The bsp mapper's planner (see bsp_mapper.h for the algorithm), split over plan.cpp (the platform, each matrix
// product's split, the fallback to streaming memory), allocate.cpp (where tensors live: tiles, streaming memory,
// staging), emit.cpp (the supersteps: exchange, compute, sync), gemm.cpp (a matrix product's supersteps),
// reduce.cpp (reductions) and explain.cpp (options and the report).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/mappers/bsp/bsp_mapper.h"
#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/liveness.h"
#include "models/bsp/bsp_superstep.h"
#include "models/core/compute_model.h"
#include "models/core/rect.h"
#include "models/interconnect/interconnect.h"

namespace tessel::bsp {

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
    std::uint64_t address = 0;         // in streaming memory
    std::vector<std::uint32_t> ready;  // per piece, for pieces staged from streaming memory in this superstep
    bool staged = false;               // a streamed tensor staged on tiles for the current op only
};

/// Internal: the mapping does not fit the tiles' memory (map() may fall back to streaming weights).
struct does_not_fit {
    std::string message;
};

inline std::string split_str(std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

inline double bytes_of(dtype t) { return dtype_bits(t) / 8.0; }

/// Band edges (as fractions) of `d` split into `parts` near-equal integer bands.
inline std::vector<double> edges(std::int64_t d, int parts) {
    std::vector<double> e(static_cast<size_t>(parts) + 1);
    for (int i = 0; i <= parts; ++i)
        e[static_cast<size_t>(i)] = static_cast<double>(d * i / parts) / static_cast<double>(d);
    return e;
}

/// A tensor the graph starts with (no producer, some reader, not a view).
inline bool is_source(const tensor_info& ti) { return ti.producer < 0 && !ti.consumers.empty() && ti.alias_of < 0; }

/// A weight or state tensor the graph starts with: what stays on the tiles or streams.
inline bool is_held(const tensor_info& ti) {
    return is_source(ti) && (ti.role == tensor_role::weight || ti.role == tensor_role::state);
}

/// Plans one mapping attempt: where every tensor lives, each op's split, and the program of supersteps.
class planner {
public:
    /// `streamed`: per tensor, whether it lives in streaming memory (weights and state only); empty: none.
    planner(const workload_graph& g, const platform& plat, const bsp_mapper::options& o, std::vector<bool> streamed,
            std::vector<bsp_mapper::superstep>& steps);

    /// Bytes all tiles hold for tensors (after the code reserve).
    double usable_total() const { return m_usable * m_T; }
    /// Whether the platform has streaming memory (weights, state and activations can go there).
    bool has_streaming_memory() const { return m_has_stream; }

    /// Maps the graph: every op a superstep (two for a K split).
    mapping run();

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
    toolkit::tensor_liveness m_liveness;  // each tensor's storage (views resolved) and the reads left of it
    bool m_spill = false;                 // activations the backward pass reads go to streaming memory
    std::vector<size_t> m_forward_left;   // per storage (as m_liveness): reads by forward ops still to come
    std::vector<int> m_saved_inputs;      // inputs only the backward pass reads (streamed out first)
    double m_spilled_bytes = 0;           // activations written to streaming memory
    std::uint32_t m_spilled = 0;
    std::vector<double> m_mem;  // bytes of live tensors per tile
    double m_unplaced = 0;      // resident weights not yet given a home, spread evenly for the fit check
    std::uint32_t m_offset = 0;

    // The superstep being built.
    bsp_mapper::superstep m_cur;
    bool m_open = false;
    std::vector<std::uint32_t> m_after;  // the last sync
    std::vector<std::vector<std::uint32_t>> m_incoming;
    std::vector<std::uint32_t> m_touched;

    // Coarse form (bsp_superstep.h): the superstep being built as totals per tile instead of steps.
    bool m_coarse = false;
    // The coarsest form (coarse with coarse_packet, what the system mapper asks for over the steps budget): a
    // superstep's loads from and write-backs to streaming memory merged into stream_fanout() transfers each.
    bool m_merge_streams = false;
    std::shared_ptr<bsp_superstep> m_ss;
    std::vector<std::int32_t> m_share_of;  // per tile: its first entry in m_ss->tiles, -1 when it has none yet
    struct sent {
        std::uint64_t address = ~std::uint64_t{0}, bytes = 0;
    };
    std::vector<sent> m_last_sent;                                 // per tile: its last message (multicast)
    std::vector<std::pair<std::uint32_t, std::uint32_t>> m_links;  // (sender, receiver) of every message
    std::vector<std::uint32_t> m_coarse_deps;                      // streamed steps the superstep waits for
    std::uint32_t m_coarse_op = ~0u;                               // the op its step is charged to
    double m_fine_steps = 0;  // the steps the fine form has (coarse: would have): representation auto decides on it
    bsp_superstep::tile_share& share(std::uint32_t tile);
    std::uint32_t packets(std::uint64_t bytes) const;
    std::vector<int> m_staged;
    double m_streamed_total = 0, m_exchange_total = 0;
    std::uint32_t m_serial_ops = 0;
    nlohmann::json m_ops = nlohmann::json::array();

    // ---- the platform (plan.cpp) ---------------------------------------------------------------------------
    void find_parts();
    void find_streaming();

    endpoint tile_ep(std::uint32_t t, std::uint64_t address = 0) const {
        return endpoint{m_tiles->id(), static_cast<std::int32_t>(t), address};
    }

    // ---- where tensors live (allocate.cpp) -------------------------------------------------------------------
    int root(int t) const { return m_liveness.root(t); }
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

    /// Where region `q` of tensor `t` starts in its storage (row-major: a row band's first byte; a column band's
    /// of a one-row tensor).
    std::uint64_t offset_in(int t, const rect& q) const {
        const double first = view_rows(t) == 1 ? q.x0 : q.y0;
        return static_cast<std::uint64_t>(first * tbytes(t));
    }

    /// Bytes of `t` in each piece of `lay`, added to (sign +1) or removed from (-1) the tiles' memory.
    void account(int t, const layout& lay, double sign);

    /// An even spread of `t` over up to `n` tiles, along rows (or columns when there are fewer rows and
    /// `rows_only` is false), starting at the rotating offset.
    layout spread(int t, std::uint32_t n, bool rows_only);

    std::uint32_t spread_tiles(int t) const;

    std::uint64_t stream_alloc(int t);

    /// Where every input, weight and state tensor starts.
    void place_sources();

    // ---- supersteps (emit.cpp) -----------------------------------------------------------------------------
    void begin(const std::string& name);

    std::uint32_t op_id(const std::string& base, const char* phase) {
        return m_out.prog.intern_op(base + " [" + phase + "]");
    }

    std::uint32_t transfer(std::uint32_t op, endpoint from, std::uint32_t to_tile, std::uint64_t bytes,
                           std::vector<std::uint32_t> deps);

    /// Compute steps start here; each tile waits for its own incoming transfers (or the last sync).
    void start_compute() { m_cur.compute = static_cast<std::uint32_t>(m_out.prog.size()); }

    std::uint32_t compute(std::uint32_t op, std::uint32_t tile, const work& w);

    void end(std::uint32_t op, std::uint32_t tiles_used);
    /// Coarse form: the superstep's one step (bsp_superstep payload), after its streamed transfers.
    void end_coarse();

    /// A tile-memory address naming a piece of a tensor (and a region within it), so that copies of the same
    /// data sent at the same time are recognised as one multicast by the tiles and the exchange.
    static std::uint64_t piece_address(int t, size_t piece, const rect& pr, const rect& ov);

    /// Brings region `q` of tensor `t` to tile `dst` in the current exchange phase.
    void fetch(std::uint32_t op, int t, const rect& q, std::uint32_t dst);

    /// Loads a streamed tensor from streaming memory onto the tiles of `home` for the current op.
    void stage(std::uint32_t op, int t, const layout& home);

    /// After an op: staged tensors go back to streaming memory (their tile memory is freed).
    void unstage();

    /// Gives a resident persistent tensor its home (first use) or stages a streamed one.
    void home(std::uint32_t op, int t, const layout& lay);

    void release(int o);
    /// With streaming memory in use: the gradients the program returns and no later op reads (a pipeline
    /// stage's weight gradients, kept for its optimizer program) leave the tiles for streaming memory in a
    /// superstep of their own, instead of holding tile memory to the end of the program. Other results (an
    /// inference's output) stay on the tiles, as host I/O is left out.
    void write_out(int o);
    /// With activations in streaming memory: writes there every activation op `o` read or wrote that only the
    /// backward pass reads from now on (its forward reads done), and frees its tiles.
    void spill_saved(int o);
    /// Activations `out` (on the tiles) to streaming memory: move_out, counted for the report.
    void spill(const std::vector<int>& out, const std::string& op_name);
    /// Writes tensors `out` (on the tiles) to streaming memory in a superstep of their own (named op_name + what),
    /// charged to op `op_name`, and frees their tiles; returns their bytes.
    double move_out(const std::vector<int>& out, const std::string& op_name, const std::string& what);

    void alias(int o);

    double base_max() const;

    [[noreturn]] void no_fit(const op_node& op, double need, double have);

    // ---- matrix products: the split (plan.cpp), the supersteps (gemm.cpp) --------------------------------------
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
    plan evaluate(const gemm_shape& s, int pb, int pm, int pn, int pk, int serial) const;

    plan choose(const op_node& op, const gemm_shape& s, double have);

    void map_gemm(int o);

    /// A split's grid of tiles and the serial slice being emitted (gemm.cpp).
    struct gemm_grid;
    gemm_shape gemm_shape_of(const op_node& op) const;
    /// Exchange: the A blocks (first slice only), the B blocks and the epilogue inputs of every tile.
    void gemm_exchange(const op_node& op, const gemm_grid& g, bool first_slice);
    void gemm_compute(const op_node& op, const gemm_grid& g);
    /// With a K split: the superstep that sums each block's pk partials, its columns split among its tiles.
    void gemm_reduce_scatter(const op_node& op, const gemm_grid& g, int sl,
                             std::vector<std::pair<std::uint32_t, rect>>& out_pieces);
    void report_gemm(const op_node& op, const gemm_grid& g);

    /// Bias and fused-epilogue inputs for an output region on tile t.
    void fetch_epilogue(const op_node& op, std::uint32_t opx, const rect& rc, std::uint32_t t, bool attention);

    /// The output of an op is the grid of its pieces (rows and column edges taken from the pieces).
    void place_output(const op_node& op, const std::vector<std::pair<std::uint32_t, rect>>& pieces);

    // ---- gathers and everything else (emit.cpp) -----------------------------------------------------------------
    void map_gather(int o);

    static std::vector<std::pair<std::uint32_t, rect>> pieces_of(const layout& L);

    /// One compute step per tile holding pieces of L: its share of the op's work.
    void emit_rows(const op_node& op, const layout& L, std::uint32_t op_c);

    void map_rows(int o);

    /// An optimizer step: it rewrites its weight and state in place (output i replaces input i, the gradient
    /// skipped), on row bands of the weight; state in streaming memory comes in and goes back, in as many serial
    /// slices of rows as the tiles' free memory needs.
    void map_update(int o);

    /// Sends region `q` of tensor `t`, held in streaming memory, back there from `tile` once the tile's compute step
    /// of the current superstep is done (emitted by end()).
    void write_back(std::uint32_t op, std::uint32_t tile, int t, const rect& q);
    struct pending_write {
        std::uint32_t op, tile;
        std::uint64_t address, bytes;
    };
    std::vector<pending_write> m_writes;
    /// Merged streams: the superstep's loads from streaming memory, emitted merged by end().
    std::vector<pending_write> m_loads;
    /// Merged streams: `moves` (loads when `load`, else write-backs waiting on `deps`) as at most stream_fanout()
    /// transfers, each a run of consecutive moves of near-equal bytes, to or from its first move's tile.
    void emit_merged(const std::vector<pending_write>& moves, bool load, const std::vector<std::uint32_t>& deps);
    /// How many tiles' exchange ports outrun the streaming memory's rate twice: merged transfers spread over that
    /// many tiles are bound by the stream, as the fine form's one transfer per piece is.
    std::uint32_t stream_fanout() const;
    std::vector<std::uint32_t> m_tile_compute;  // per tile: its compute step in the current superstep (fine form)

    // ---- reductions (reduce.cpp) ---------------------------------------------------------------------------------
    /// Reductions (reduce_* ops, argmax, dot) split over tiles like every other op: keeping the last axis, column
    /// bands of the input, each tile reducing its columns over all rows (exact, one superstep); folding only the
    /// last axis, bands of output elements, each tile reducing the input rows behind them; otherwise (a scalar,
    /// several axes with the last, or bands too coarse to fit) row bands of the input reduced to fp32 partials on
    /// every tile, then a second superstep that sums the partials where the output lives.
    void map_reduce(int o);

    /// A reduction being mapped (reduce.cpp).
    struct reduce_job;
    void reduce_band(reduce_job& r, std::uint32_t t, const rect& in_region, const rect& out_piece);
    /// One compute step per band of r.out_pieces, then the sync.
    void emit_reduce_bands(const reduce_job& r);
    std::string reduce_columns(reduce_job& r);
    std::string reduce_output_bands(reduce_job& r);
    std::string reduce_partials(reduce_job& r);
    void send_partial(reduce_job& r, std::uint32_t op_rx, std::uint32_t from, std::uint32_t to, double bytes);
    /// Partials (tile, elements) summed inside groups of L.pieces() bands; to_piece gets each group's sums.
    void reduce_scatter_partials(reduce_job& r, const std::vector<std::pair<std::uint32_t, double>>& partials,
                                 const layout& L, std::vector<std::vector<std::pair<std::uint32_t, double>>>& to_piece);
    /// The combine superstep: each piece of L sums what to_piece lists for it on its tile.
    void combine_partials(reduce_job& r, const layout& L,
                          const std::vector<std::vector<std::pair<std::uint32_t, double>>>& to_piece);

    // ---- the mapping's details and notes (emit.cpp) ----------------------------------------------------------------
    void finish();
};

}  // namespace tessel::bsp
