// The rdu mapper's plan: ops become pipeline stages (column chunks when too big), stages are cut into sections
// by a dynamic programme over predicted time, and each section's PCUs and PMUs go to its stages (see
// rdu_mapper.h, steps 1 to 4).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "engine/mappers/rdu/internal.h"
#include "engine/mappers/toolkit/rows.h"
#include "engine/workload/op_types.h"

namespace tessel::rdu {

std::int64_t column_width(const rdu_stage& s, const compute_model& pcu) {
    const double rate = pcu.peak_macs_per_cycle(s.whole.type) / pcu.peak_vector_ops_per_cycle(s.whole.type);
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(pcu.lanes()) * std::max(1.0, rate)));
}

std::pair<std::int64_t, std::int64_t> tile_rows(std::int64_t total_rows, int n_tiles, int t) {
    return {total_rows * t / n_tiles, total_rows * (t + 1) / n_tiles};
}

span gemm_span(const rdu_stage& s, const compute_model& pcu, std::int64_t rows, int n, int p) {
    const std::int64_t n_cols = s.whole.n;
    const std::int64_t cw = column_width(s, pcu);
    const std::int64_t ncb = (n_cols + cw - 1) / cw;
    if (n <= ncb) return {std::min(n_cols, ncb * p / n * cw), std::min(n_cols, ncb * (p + 1) / n * cw), 0, rows};
    // Every column block gets n / ncb PCUs (the first n % ncb one more), which split the rows.
    const std::int64_t base = n / ncb, extra = n % ncb;
    const std::int64_t wide = extra * (base + 1);  // PCUs of the first `extra` blocks
    const std::int64_t blk = p < wide ? p / (base + 1) : extra + (p - wide) / base;
    const std::int64_t first = p < wide ? blk * (base + 1) : wide + (blk - extra) * base;
    const std::int64_t g = base + (blk < extra ? 1 : 0), r = p - first;
    return {std::min(n_cols, blk * cw), std::min(n_cols, (blk + 1) * cw), rows * r / g, rows * (r + 1) / g};
}

work share(const rdu_stage& s, const compute_model& pcu, int n_tiles, int t, int n, int p) {
    work w = s.whole;
    const auto [r0, r1] = tile_rows(s.rows, n_tiles, t);
    const std::int64_t rows = r1 - r0;
    if (s.whole.is_matmul()) {
        const std::int64_t b = std::max<std::int64_t>(1, s.whole.batch), m = s.whole.m, n_cols = s.whole.n;
        const span sp = gemm_span(s, pcu, rows, n, p);
        const std::int64_t qr = sp.q1 - sp.q0, cols = sp.c1 - sp.c0;
        const double f = (static_cast<double>(qr) * static_cast<double>(cols)) /
                         (static_cast<double>(s.rows) * static_cast<double>(n_cols));
        w.macs *= f;
        w.vector_ops *= f;
        w.bytes_in *= f;
        w.bytes_weight *= f;
        w.bytes_out *= f;
        // The share as a GEMM: whole batches when it spans them, else rows of one.
        std::int64_t vb = 1, vm = qr;
        if (b > 1 && qr >= m) {
            vb = (qr + m - 1) / m;
            vm = (qr + vb - 1) / vb;
        }
        w.batch = vb;
        w.m = qr > 0 ? vm : 0;
        w.n = cols;
        return w;
    }
    // Element-wise and row-wise work: an even share of the tile.
    const double f = static_cast<double>(rows) / static_cast<double>(s.rows) / n;
    w.macs *= f;
    w.vector_ops *= f;
    w.bytes_in *= f;
    w.bytes_weight *= f;
    w.bytes_out *= f;
    w.batch = w.m = w.n = w.k = 0;
    return w;
}

int max_parallel(const rdu_stage& s, const compute_model& pcu, int n_tiles) {
    const std::int64_t rows_min = std::max<std::int64_t>(1, s.rows / n_tiles);
    if (s.whole.is_matmul()) {
        const std::int64_t cw = column_width(s, pcu);
        const std::int64_t ncb = (s.whole.n + cw - 1) / cw;
        return static_cast<int>(std::min<std::int64_t>(1 << 20, ncb * rows_min));
    }
    const double elems =
        (s.whole.bytes_out > 0 ? s.whole.bytes_out / (dtype_bits(s.whole.type) / 8.0) : static_cast<double>(s.rows)) /
        n_tiles;
    return static_cast<int>(
        std::clamp(std::ceil(elems / static_cast<double>(pcu.lanes())), 1.0, static_cast<double>(1 << 20)));
}

double tile_seconds(const rdu_stage& s, const compute_model& pcu, int n_tiles, int n) {
    // The first share of the longest tile is at least as large as any (splits round down before it).
    int longest = 0;
    std::int64_t most = -1;
    for (int t = 0; t < std::min(n_tiles, 2); ++t) {
        const auto [r0, r1] = tile_rows(s.rows, n_tiles, t);
        if (r1 - r0 > most) most = r1 - r0, longest = t;
    }
    // Matrix-product shares differ in whole column blocks (the last one narrower) and rows: time each
    // distinct shape once. Element-wise shares are all equal.
    if (!s.whole.is_matmul()) return pcu.cycles(share(s, pcu, n_tiles, longest, n, 0)) / pcu.clock().hz;
    const auto [r0, r1] = tile_rows(s.rows, n_tiles, longest);
    std::vector<std::pair<std::int64_t, std::int64_t>> shapes;  // a few at most
    double worst = 0;
    for (int p = 0; p < n; ++p) {
        const span sp = gemm_span(s, pcu, r1 - r0, n, p);
        const std::pair<std::int64_t, std::int64_t> shape{sp.c1 - sp.c0, sp.q1 - sp.q0};
        if (std::find(shapes.begin(), shapes.end(), shape) != shapes.end()) continue;
        shapes.push_back(shape);
        worst = std::max(worst, pcu.cycles(share(s, pcu, n_tiles, longest, n, p)));
    }
    return worst / pcu.clock().hz;
}

namespace {

class planner {
public:
    planner(const workload_graph& g, const chip& c, const rdu_mapper::options& o, const std::string& plat_name,
            rdu_search* search)
        : m_g(g), m_c(c), m_o(o), m_plat(plat_name), m_search(search) {}

    rdu_plan run() {
        m_plan.pmu_capacity = m_c.pmu_capacity;
        m_plan.pcu_count = static_cast<int>(m_c.pcu_ids.size());
        m_plan.pmu_count = static_cast<int>(m_c.pmu_ids.size());
        m_plan.pcu_ids = m_c.pcu_ids;
        m_plan.pmu_ids = m_c.pmu_ids;
        resolve_views();
        build_stages();
        partition();
        return std::move(m_plan);
    }

    /// Root tensor of t (views resolved).
    const std::vector<int>& roots() const { return m_root; }

private:
    const workload_graph& m_g;
    const chip& m_c;
    const rdu_mapper::options& m_o;
    std::string m_plat;
    rdu_search* m_search;
    rdu_plan m_plan;
    std::vector<int> m_root;
    std::vector<std::vector<int>> m_producers;                           // root tensor -> stages writing it
    std::vector<int> m_last_reader;                                      // root tensor -> last stage reading it
    std::vector<bool> m_user_reads;                                      // root tensor -> a graph output
    std::unordered_map<std::uint64_t, std::vector<double>> m_tile_memo;  // (stage, tiles) -> per PCU count, -1: not yet
    std::vector<int> m_class;                                            // stage -> its kind (stages_alike())

    double chip_capacity() const {
        return static_cast<double>(m_c.pmu_capacity) * static_cast<double>(m_c.pmu_ids.size());
    }

    void resolve_views() {
        const auto& ts = m_g.tensors();
        m_root.resize(ts.size());
        for (size_t t = 0; t < ts.size(); ++t) m_root[t] = ts[t].alias_of >= 0 ? ts[t].alias_of : static_cast<int>(t);
        for (int o : m_g.topological_order()) {
            const op_node& op = m_g.op(o);
            if (!is_view(op)) continue;
            const int src = view_source(m_g, op);
            if (src < 0) continue;
            for (int t : op.outputs) m_root[static_cast<size_t>(t)] = m_root[static_cast<size_t>(src)];
        }
    }

    int root(int t) const { return m_root[static_cast<size_t>(t)]; }

    /// Rows of tensor t as a stage streams it: its elements over its last dimension.
    std::int64_t rows_of(int t) const { return toolkit::rows_of(m_g.tensor(t)); }

    /// An element-wise op or an optimizer update works on each element alone, so its rows are only a view. A
    /// tensor of too few rows for the tiles its `buffers` need (a ZeRO shard of flattened parameters is one row)
    /// streams in rows of the PCU's lanes instead; a stage that streams an input of another size keeps its rows
    /// (an operand it holds whole, a broadcast, does not count).
    void flat_rows(rdu_stage& s, const op_node& op, double buffers) {
        if ((op.kind != op_kind::elementwise && op.kind != op_kind::optimizer) || op.outputs.empty()) return;
        const std::int64_t elems = m_g.tensor(op.outputs.front()).elements();
        for (const auto& in : s.inputs)
            if (!in.whole && m_g.tensor(in.tensor).elements() != elems) return;
        // Tiles double until the buffers fit: the power of two at or above what they need.
        const double tiles = pow2_floor(2 * std::ceil(buffers / (m_o.chunk_above * chip_capacity())) - 1);
        if (static_cast<double>(s.rows) >= tiles * static_cast<double>(m_o.min_tile_rows)) return;
        const std::int64_t lanes = std::max<std::int64_t>(1, m_c.pcu->lanes());
        const std::int64_t rows = (elems + lanes - 1) / lanes;
        if (rows <= s.rows) return;
        m_plan.notes.push_back(op.name + ": " + std::to_string(s.rows) + " row" + (s.rows == 1 ? "" : "s") + " of " +
                               std::to_string(elems / s.rows) + " elements, streamed in rows of the PCU's " +
                               std::to_string(lanes) + " lanes");
        s.rows = rows;
        s.own_tiles = std::max(s.own_tiles, pow2_floor(std::min(static_cast<double>(m_o.tiles),
                                                                static_cast<double>(rows) / m_o.min_tile_rows)));
    }

    void build_stages() {
        m_producers.assign(m_g.tensors().size(), {});
        const double cap = chip_capacity();
        for (int o : m_g.topological_order()) {
            const op_node& op = m_g.op(o);
            if (is_view(op)) continue;
            rdu_stage s;
            s.op = o;
            s.name = op.name;
            s.computes = op.cost.macs > 0 || op.cost.flops > 0;
            s.whole = op.to_work();
            const bool gemm = is_gemm(op);
            if (s.whole.macs > 0) (*m_c.pcu).check(s.whole, "PCUs of '" + m_plat + "'");
            const int first_out = op.outputs.empty() ? -1 : op.outputs.front();
            const double out_elems = first_out >= 0 ? static_cast<double>(m_g.tensor(first_out).elements()) : 1.0;
            if (gemm) {
                s.rows = std::max<std::int64_t>(1, s.whole.batch) * s.whole.m;
            } else if (first_out >= 0) {
                s.rows = rows_of(first_out);
            }
            s.own_tiles = pow2_floor(std::min(static_cast<double>(m_o.tiles),
                                              static_cast<double>(s.rows) / static_cast<double>(m_o.min_tile_rows)));
            // Inputs.
            bool streamed_seen = false;
            std::set<int> seen;
            for (size_t i = 0; i < op.inputs.size(); ++i) {
                const int t = op.inputs[i];
                const tensor_info& ti = m_g.tensor(t);
                const int r = root(t);
                const tensor_info& ri = m_g.tensor(r);
                if (ti.role == tensor_role::constant || ri.role == tensor_role::constant) continue;
                if (!seen.insert(r).second) continue;
                if (ri.role == tensor_role::weight) {
                    if (s.computes) {
                        s.weight_bytes += static_cast<double>(ri.bytes());
                        s.weight_tensors.push_back(r);
                    } else {
                        rdu_stage::input in;
                        in.tensor = r;
                        in.gather = true;
                        in.bytes = op.cost.bytes_weight > 0
                                       ? std::min(op.cost.bytes_weight, static_cast<double>(ri.bytes()))
                                       : static_cast<double>(ri.bytes());
                        s.inputs.push_back(in);
                    }
                    continue;
                }
                rdu_stage::input in;
                in.tensor = r;
                in.bytes = static_cast<double>(ti.bytes());
                if (gemm && i < op.own_inputs()) {
                    in.whole = streamed_seen;  // the first activation operand streams, the others are needed whole
                    streamed_seen = true;
                } else if (s.computes) {
                    in.whole = static_cast<double>(ti.elements()) < out_elems;  // broadcast operands
                }
                s.inputs.push_back(in);
            }
            for (int t : op.outputs) s.outputs.push_back(root(t));
            // An element-wise op on weights too big to hold (an optimizer's update of an embedding) streams them
            // in row tiles like its other inputs instead.
            if (!gemm && s.computes && s.weight_bytes > m_o.chunk_above * cap) {
                for (int w : s.weight_tensors) {
                    rdu_stage::input in;
                    in.tensor = w;
                    in.bytes = static_cast<double>(m_g.tensor(w).bytes());
                    s.inputs.push_back(in);
                }
                m_plan.notes.push_back(op.name + ": " + format_bytes(s.weight_bytes) +
                                       " of weights, more than it can hold on chip: streamed in row tiles");
                s.weight_tensors.clear();
                s.weight_bytes = 0;
            }
            // Finer tiles for a stage whose input buffers would not fit the chip at `tiles` (a streamed tensor
            // of gigabytes, attention's scores at a long sequence): the fewest that bring them within
            // `chunk_above` of it, as far as its rows allow.
            double streamed = 0;
            for (const auto& in : s.inputs)
                if (!in.whole) streamed += in.bytes;
            const double depth = static_cast<double>(m_o.buffer_depth);
            if (streamed * depth / s.own_tiles > cap && !gemm && s.computes) {
                // A reduction (a bias gradient's sum over the batch) has fewer rows than what it reads: its tiles
                // follow the rows of its largest streamed input. Its output still leaves in equal parts with each
                // tile, as every stage's does, where the chip would write it once at the end: for a reduction's
                // small output, a difference of a few KiB moved early.
                std::int64_t in_rows = s.rows;
                for (const auto& in : s.inputs)
                    if (!in.whole) in_rows = std::max(in_rows, rows_of(in.tensor));
                if (in_rows > s.rows) {
                    m_plan.notes.push_back(op.name + ": a reduction of " + std::to_string(in_rows) + " rows into " +
                                           std::to_string(s.rows) + ", streamed in tiles of its input's rows");
                    s.rows = in_rows;
                }
            }
            if (streamed * depth / s.own_tiles > cap) flat_rows(s, op, streamed * depth);
            if (streamed * depth / s.own_tiles > cap) {
                const double most = static_cast<double>(s.rows) / static_cast<double>(m_o.min_tile_rows);
                const int before = s.own_tiles;
                while (streamed * depth / s.own_tiles > m_o.chunk_above * cap && 2.0 * s.own_tiles <= most)
                    s.own_tiles *= 2;
                m_plan.notes.push_back(op.name + ": " + format_bytes(streamed) + " streamed in " +
                                       std::to_string(s.own_tiles) + " tiles, not " + std::to_string(before) +
                                       ", so that its input buffers fit on chip");
            }
            // Chunks: a matrix product too big for `chunk_above` of the chip splits its columns.
            double resident = s.weight_bytes, buffers = 0;
            for (const auto& in : s.inputs)
                (in.whole ? resident : buffers) += in.whole ? in.bytes : in.bytes * m_o.buffer_depth / s.own_tiles;
            int chunks = 1;
            const bool col_split = gemm && resident > m_o.chunk_above * cap;
            if (col_split) chunks = static_cast<int>(std::ceil(resident / (m_o.chunk_above * cap)));
            const bool col_fails = col_split && (op.kind == op_kind::attention || chunks > s.whole.n);
            // Every column chunk streams all of the first operand: when its buffers and a chunk's share of the
            // rest overflow the chip (a weight gradient over many tokens), finer tiles shrink the buffers.
            if (col_split && !col_fails && resident / chunks + buffers > cap) {
                const double most = static_cast<double>(s.rows) / static_cast<double>(m_o.min_tile_rows);
                const int before = s.own_tiles;
                while (resident / chunks + buffers > cap && 2.0 * s.own_tiles <= most) {
                    s.own_tiles *= 2;
                    buffers /= 2;
                }
                if (s.own_tiles != before)
                    m_plan.notes.push_back(op.name + ": each of its column chunks streams its first operand in " +
                                           std::to_string(s.own_tiles) + " tiles, not " + std::to_string(before) +
                                           ", so that its buffers fit on chip beside the chunk");
            }
            // A batched product without weights that column chunks cannot fit (its streamed operand's buffers
            // alone overflow the chip, or its columns are too few) splits its batch items: all of it shrinks.
            const std::int64_t items = std::max<std::int64_t>(1, s.whole.batch);
            if (gemm && items > 1 && s.weight_bytes == 0 && (col_fails || resident / chunks + buffers > cap)) {
                s.by_batch = true;
                chunks = static_cast<int>(std::ceil((resident + buffers) / (m_o.chunk_above * cap)));
                if (chunks > items)
                    throw input_error("op '" + op.name + "' needs " + format_bytes((resident + buffers) / items) +
                                      " on chip for one of its " + std::to_string(items) +
                                      " batch items (operands and input buffers); '" + m_plat + "' has " +
                                      format_bytes(cap) + " of PMU capacity");
                m_plan.notes.push_back(op.name + ": " + format_bytes(resident + buffers) +
                                       " of operands and input buffers, more than the " + format_bytes(cap) +
                                       " on chip: split into " + std::to_string(chunks) + " chunks of its " +
                                       std::to_string(items) + " batch items");
            } else if (col_split) {
                if (col_fails)
                    throw input_error("op '" + op.name + "' needs " + format_bytes(resident) +
                                      " on chip (weights and operands it needs whole); '" + m_plat + "' has " +
                                      format_bytes(cap) +
                                      " of PMU capacity and this op cannot be split into chunks that fit");
                m_plan.notes.push_back(op.name + ": " + format_bytes(resident) +
                                       " of weights and whole operands, more than " +
                                       format_number(100 * m_o.chunk_above, 3) + "% of the " + format_bytes(cap) +
                                       " on chip: split into " + std::to_string(chunks) + " column chunks");
            }
            // A chunk's share f of the work, of its weights and of what it writes.
            auto shrink = [](work& w, double f) {
                w.macs *= f;
                w.vector_ops *= f;
                w.bytes_weight *= f;
                w.bytes_out *= f;
            };
            for (int c = 0; c < chunks; ++c) {
                rdu_stage sc = s;
                sc.chunk = c;
                sc.chunks = chunks;
                if (s.by_batch) {
                    const std::int64_t b0 = items * c / chunks, b1 = items * (c + 1) / chunks;
                    const double f = static_cast<double>(b1 - b0) / static_cast<double>(items);
                    sc.name = op.name + "#" + std::to_string(c);
                    sc.whole.batch = b1 - b0;
                    shrink(sc.whole, f);
                    sc.whole.bytes_in *= f;
                    for (auto& in : sc.inputs) in.bytes *= f;
                    sc.rows = std::max<std::int64_t>(1, sc.whole.batch) * sc.whole.m;
                    sc.own_tiles = std::max(
                        1, std::min(s.own_tiles,
                                    pow2_floor(static_cast<double>(sc.rows) / static_cast<double>(m_o.min_tile_rows))));
                } else if (chunks > 1) {
                    const std::int64_t n0 = s.whole.n * c / chunks, n1 = s.whole.n * (c + 1) / chunks;
                    const double f = static_cast<double>(n1 - n0) / static_cast<double>(s.whole.n);
                    sc.name = op.name + "#" + std::to_string(c);
                    sc.whole.n = n1 - n0;
                    shrink(sc.whole, f);
                    sc.weight_bytes *= f;
                    for (auto& in : sc.inputs)
                        if (in.whole) in.bytes *= f;
                }
                const int id = static_cast<int>(m_plan.stages.size());
                for (int r : sc.outputs) m_producers[static_cast<size_t>(r)].push_back(id);
                m_plan.stages.push_back(std::move(sc));
            }
        }
    }

private:
    // ---- Sections.

    struct open_section {
        rdu_section sec;
        std::map<int, size_t> index;  // stage -> position in sec.stages
        int pcus = 0, pmus = 0;
    };

    /// Tries to place stage `id` in `os`; returns false when it does not fit.
    bool try_add(open_section& os, int id, std::string* why) {
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(id)];
        rdu_placed p;
        p.stage = id;
        p.tiles = s.own_tiles;
        // Inputs produced in this section decide its level, depth and tiles.
        struct src {
            bool on_chip;
            int level, depth, tiles;
            bool by_batch;  // made by a batch chunk
        };
        std::vector<src> srcs;
        for (const auto& in : s.inputs) {
            const auto& prods = m_producers[static_cast<size_t>(in.tensor)];
            size_t here = 0;
            src sr{false, 0, 0, 1 << 20, false};
            for (int pr : prods) {
                const auto it = os.index.find(pr);
                if (it == os.index.end()) continue;
                ++here;
                const rdu_placed& pp = os.sec.stages[it->second];
                sr.level = std::max(sr.level, pp.level);
                sr.depth = std::max(sr.depth, pp.depth);
                sr.tiles = std::min(sr.tiles, pp.tiles);
                sr.by_batch = sr.by_batch || m_plan.stages[static_cast<size_t>(pr)].by_batch;
            }
            if (here > 0 && here < prods.size()) {
                // Part of this tensor is made here, part before: it is complete only in memory after this section.
                if (why)
                    *why = "its input '" + m_g.tensor(in.tensor).name + "' is only partly produced in this section";
                return false;
            }
            sr.on_chip = here > 0;
            srcs.push_back(sr);
        }
        // A batch chunk's tiles cover its own items, not the rows its producer's or consumer's tiles do: data
        // between the two is held whole (the next level) rather than streamed tile by tile.
        for (size_t i = 0; i < srcs.size(); ++i)
            if (srcs[i].on_chip)
                p.level =
                    std::max(p.level, srcs[i].level + (s.inputs[i].whole || s.by_batch || srcs[i].by_batch ? 1 : 0));
        for (size_t i = 0; i < srcs.size(); ++i)
            if (srcs[i].on_chip && !s.inputs[i].whole && srcs[i].level == p.level) {
                p.tiles = std::min(p.tiles, srcs[i].tiles);
                p.depth = std::max(p.depth, srcs[i].depth + 1);
            }
        // Resident bytes: weights, whole operands, input buffers.
        p.resident_bytes = s.weight_bytes;
        p.buffer_tiles.assign(s.inputs.size(), 0.0);
        for (size_t i = 0; i < s.inputs.size(); ++i) {
            const auto& in = s.inputs[i];
            if (in.whole || (srcs[i].on_chip && srcs[i].level < p.level)) {
                p.resident_bytes += in.bytes;
                continue;
            }
            double depth = static_cast<double>(m_o.buffer_depth);
            if (srcs[i].on_chip)
                depth += std::max(0, p.depth - srcs[i].depth - 1);  // a short path rejoining a long one
            p.buffer_tiles[i] = depth;
            p.resident_bytes += depth * in.bytes / p.tiles;
        }
        const int pcus = s.computes ? 1 : 0;
        const int pmus_bytes = static_cast<int>(std::ceil(p.resident_bytes / static_cast<double>(m_c.pmu_capacity)));
        const int pmus = std::max({1, pcus, pmus_bytes});
        if (os.pcus + pcus > m_plan.pcu_count || os.pmus + pmus > m_plan.pmu_count) {
            if (why)
                *why = "it needs " + std::to_string(pcus) + " PCU(s) and " + std::to_string(pmus) + " PMU(s) (" +
                       format_bytes(p.resident_bytes) + ") with " + std::to_string(m_plan.pcu_count - os.pcus) +
                       " PCUs and " + std::to_string(m_plan.pmu_count - os.pmus) + " PMUs free";
            return false;
        }
        os.pcus += pcus;
        os.pmus += pmus;
        p.pcus.assign(static_cast<size_t>(pcus), -1);
        p.pmus.assign(static_cast<size_t>(pmus), -1);
        os.index[id] = os.sec.stages.size();
        os.sec.stages.push_back(std::move(p));
        return true;
    }

    // ---- Sections that cost the same.
    //
    // A candidate section's predicted time depends on what its stages are and how they connect, not on where
    // in the graph it sits: the 24 layers of BERT-large pose the same candidates 24 times over. So a cost is
    // remembered under a key of the section's shape, relative to its first stage: each stage's kind, which of
    // its inputs come from which earlier stage of the section, and which of its outputs are read after the
    // section (or by the user). Everything try_add(), allocate() and section_cost() read is in that key.

    /// Per stage, a number shared exactly by stages whose contents are equal: work, rows, tiles, weights, and
    /// the kind and bytes of each input and output (the values themselves, not a hash of them).
    void stages_alike() {
        std::map<std::vector<double>, int> kinds;
        m_class.assign(m_plan.stages.size(), 0);
        for (size_t k = 0; k < m_plan.stages.size(); ++k) {
            const rdu_stage& s = m_plan.stages[k];
            const work& w = s.whole;
            std::vector<double> v{s.computes ? 1.0 : 0.0,
                                  static_cast<double>(s.chunks),
                                  s.by_batch ? 1.0 : 0.0,
                                  static_cast<double>(s.rows),
                                  static_cast<double>(s.own_tiles),
                                  s.weight_bytes,
                                  w.macs,
                                  w.vector_ops,
                                  w.bytes_in,
                                  w.bytes_weight,
                                  w.bytes_out,
                                  static_cast<double>(w.type),
                                  static_cast<double>(w.cls),
                                  static_cast<double>(w.batch),
                                  static_cast<double>(w.m),
                                  static_cast<double>(w.n),
                                  static_cast<double>(w.k),
                                  static_cast<double>(s.inputs.size())};
            for (const auto& in : s.inputs) {
                v.insert(v.end(), {in.whole ? 1.0 : 0.0, in.gather ? 1.0 : 0.0, in.bytes,
                                   static_cast<double>(m_producers[static_cast<size_t>(in.tensor)].size())});
            }
            v.push_back(static_cast<double>(s.outputs.size()));
            for (int r : s.outputs) v.push_back(static_cast<double>(m_g.tensor(r).bytes()));
            m_class[k] = kinds.emplace(std::move(v), static_cast<int>(kinds.size())).first->second;
        }
    }

    /// The shape of section [first, j) as stages are added: two independent 64-bit chains over the stages in
    /// order, plus a sum (order-free) over the outputs that no stage after the section reads. It is a hash of
    /// the shape (192 bits; two different shapes sharing it among the ~10^5 candidates of a model is below
    /// 10^-40), so that a key grows in constant time per stage instead of holding the whole shape.
    class section_key {
    public:
        explicit section_key(int first) : m_first(first) {}
        void add(const planner& pl, int j) {
            const rdu_stage& s = pl.m_plan.stages[static_cast<size_t>(j)];
            feed(static_cast<std::uint64_t>(pl.m_class[static_cast<size_t>(j)]));
            for (const auto& in : s.inputs) {
                const auto& prods = pl.m_producers[static_cast<size_t>(in.tensor)];
                const bool here =
                    std::any_of(prods.begin(), prods.end(), [&](int pr) { return pr >= m_first && pr < j; });
                feed(here ? prods.size() : ~std::uint64_t{0});
                if (!here) continue;
                for (int pr : prods) feed(static_cast<std::uint64_t>(pr - m_first));
                const size_t t = static_cast<size_t>(in.tensor);
                if (pl.m_last_reader[t] != j || pl.m_user_reads[t]) continue;
                for (int pr : prods) close(pl, pr, in.tensor);  // stage j is its last reader: no longer read after
            }
            for (size_t q = 0; q < s.outputs.size(); ++q) {
                const size_t r = static_cast<size_t>(s.outputs[q]);
                if (!pl.m_user_reads[r] && pl.m_last_reader[r] <= j)
                    m_closed += mix(pack(j, q));  // read by nobody after
            }
        }
        bool operator==(const section_key& o) const { return m_a == o.m_a && m_b == o.m_b && m_closed == o.m_closed; }
        std::uint64_t hash() const { return m_a ^ mix(m_closed); }
        std::uint64_t with(bool preloaded) const { return preloaded ? ~m_b : m_b; }

    private:
        int m_first;
        std::uint64_t m_a = 0x6a09e667f3bcc908ull, m_b = 0xbb67ae8584caa73bull, m_closed = 0;
        static std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: a bijection
            x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
            return x ^ (x >> 31);
        }
        void feed(std::uint64_t v) {
            m_a = mix(m_a * 0x9e3779b97f4a7c15ull + v);
            m_b = mix(m_b ^ (v * 0xc2b2ae3d27d4eb4full + 0x165667b19e3779f9ull));
        }
        std::uint64_t pack(int stage, size_t output) const {
            return (static_cast<std::uint64_t>(stage - m_first) << 16) | output;
        }
        void close(const planner& pl, int pr, int tensor) {
            const auto& outs = pl.m_plan.stages[static_cast<size_t>(pr)].outputs;
            for (size_t q = 0; q < outs.size(); ++q)
                if (outs[q] == tensor) m_closed += mix(pack(pr, q));
        }
    };

    struct key_hash {
        size_t operator()(const std::pair<section_key, bool>& k) const {
            return static_cast<size_t>(k.first.hash() ^ k.first.with(k.second));
        }
    };

    // ---- Where to cut.
    //
    // A section is a contiguous run of stages (in topological order) that fits the chip. Packing each section
    // as full as it fits is not monotone in capacity: a bigger section can take in stages of a later level
    // (ones that need a whole operand made in the section), whose PCUs idle while the earlier levels run. So
    // the cuts are chosen by a dynamic programme: rest[i] is the least predicted time of stages [i, n_stages) over
    // every first section [i, j) that fits. Whatever fits with less PMU capacity also fits with more, so more
    // capacity only adds choices and the predicted time never grows with it. A section whose lower bound
    // (its weights over the memory's bandwidth, then the longer of its work over every PCU at peak and one
    // tile through every stage at its fastest) cannot beat the best found is not costed.
    void partition() {
        const int n_stages = static_cast<int>(m_plan.stages.size());
        const bool single = m_o.mode == "single";
        m_plan.section_of.assign(static_cast<size_t>(n_stages), -1);
        index_readers();
        std::vector<double> weights(static_cast<size_t>(n_stages) + 1, 0.0),
            ideal(static_cast<size_t>(n_stages) + 1, 0.0), fill(ideal);
        for (int k = 0; k < n_stages; ++k) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(k)];
            weights[static_cast<size_t>(k) + 1] = weights[static_cast<size_t>(k)] + s.weight_bytes;
            ideal[static_cast<size_t>(k) + 1] =
                ideal[static_cast<size_t>(k)] + (s.computes ? (*m_c.pcu).ideal_seconds(s.whole) : 0.0);
            fill[static_cast<size_t>(k) + 1] = fill[static_cast<size_t>(k)] + shortest_tile(k);
        }
        const double inf = std::numeric_limits<double>::infinity();
        std::vector<double> rest(static_cast<size_t>(n_stages) + 1, inf);
        std::vector<int> next(static_cast<size_t>(n_stages) + 1, -1);
        rest[static_cast<size_t>(n_stages)] = 0;
        stages_alike();
        const bool recall = !m_search || m_search->recall;
        std::unordered_map<std::pair<section_key, bool>, double, key_hash> costs;
        for (int i = single ? 0 : n_stages - 1; i >= 0; --i) {
            open_section os;
            section_key key(i);
            for (int j = i; j < n_stages; ++j) {
                std::string why;
                if (!try_add(os, j, &why)) {
                    const rdu_stage& s = m_plan.stages[static_cast<size_t>(j)];
                    if (single && j > i)
                        throw input_error("workload '" + m_g.name + "' does not fit on '" + m_plat +
                                          "' as one section (mapper.mode=single): at op '" + s.name + "' " + why +
                                          "; the graph has " + std::to_string(n_stages) + " stages and " +
                                          format_bytes(weights.back()) + " of weights to hold on chip against " +
                                          std::to_string(m_plan.pcu_count) + " PCUs and " +
                                          format_bytes(chip_capacity()) +
                                          " of PMU capacity (use mapper.mode=sections to run it in sections)");
                    if (j == i)
                        throw input_error("op '" + s.name + "' is more than one section of '" + m_plat +
                                          "' can hold: " + why + " (PMU capacity " +
                                          format_bytes(static_cast<double>(m_c.pmu_capacity)) +
                                          " each); the rdu mapper splits only matrix products (by columns or batch "
                                          "items) and streams in row tiles, so this is a limit of tessel's mapper, "
                                          "not of the chip, whose off-chip memory holds it");
                    break;
                }
                key.add(*this, j);
                const size_t e = static_cast<size_t>(j) + 1, b = static_cast<size_t>(i);
                if (single && static_cast<int>(e) < n_stages) continue;
                const double bound = (preloaded(i, j + 1) ? 0.0 : (weights[e] - weights[b]) / m_c.memory_bw) +
                                     std::max((ideal[e] - ideal[b]) / m_plan.pcu_count, fill[e] - fill[b]);
                if (bound >= rest[b]) break;  // the bound only grows with the section
                if (bound + rest[e] >= rest[b]) continue;
                const std::pair<section_key, bool> shape{key, preloaded(i, j + 1)};
                const auto known = recall ? costs.find(shape) : costs.end();
                double cost = 0;
                if (known != costs.end()) {
                    cost = known->second;
                    if (m_search) ++m_search->recalled;
                } else {
                    rdu_section sec = os.sec;
                    allocate(sec);
                    cost = section_cost(sec, i, j + 1);
                    if (recall) costs.emplace(shape, cost);
                    if (m_search) ++m_search->costed;
                }
                const double t = cost + rest[e];
                if (t <= rest[b]) {  // ties keep the longer section
                    rest[b] = t;
                    next[b] = j + 1;
                }
            }
        }
        for (int i = 0; i < n_stages; i = next[static_cast<size_t>(i)]) {
            const int j = next[static_cast<size_t>(i)];
            open_section os;
            for (int k = i; k < j; ++k) try_add(os, k, nullptr);
            allocate(os.sec);
            os.sec.predicted_total_seconds = section_cost(os.sec, i, j);
            os.sec.load_agcu = balance_loads(m_c, pmu_loads(os.sec, i, j));
            for (const rdu_placed& p : os.sec.stages)
                m_plan.section_of[static_cast<size_t>(p.stage)] = static_cast<int>(m_plan.sections.size());
            m_plan.sections.push_back(std::move(os.sec));
        }
    }

    /// Per root tensor: the last stage that reads it (-1: none), and whether the user reads it (a graph output).
    void index_readers() {
        m_last_reader.assign(m_g.tensors().size(), -1);
        m_user_reads.assign(m_g.tensors().size(), false);
        for (size_t k = 0; k < m_plan.stages.size(); ++k)
            for (const auto& in : m_plan.stages[k].inputs)
                m_last_reader[static_cast<size_t>(in.tensor)] = static_cast<int>(k);
        for (int t : m_g.graph_outputs()) m_user_reads[static_cast<size_t>(root(t))] = true;
    }

    /// Whether section [i, j) keeps its configuration and weights on chip between runs (steady state).
    bool preloaded(int i, int j) const {
        return m_o.steady_state && i == 0 && j == static_cast<int>(m_plan.stages.size());
    }

    /// Whether part of root tensor r is made in section [i, j).
    bool made_in(int r, int i, int j) const {
        const auto& prods = m_producers[static_cast<size_t>(r)];
        return std::any_of(prods.begin(), prods.end(), [&](int pr) { return pr >= i && pr < j; });
    }

    /// Bytes each PMU (snake order) loads before section [i, j) streams: its share of its stage's weights
    /// (unless they stay on chip) and of the operands it needs whole that come from memory.
    std::vector<double> pmu_loads(const rdu_section& sec, int i, int j) const {
        std::vector<double> bytes(static_cast<size_t>(m_plan.pmu_count), 0.0);
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            double b = preloaded(i, j) ? 0.0 : s.weight_bytes;
            for (const auto& in : s.inputs)
                if (in.whole && !made_in(in.tensor, i, j)) b += in.bytes;
            for (int u : p.pmus) bytes[static_cast<size_t>(u)] += b / static_cast<double>(p.pmus.size());
        }
        return bytes;
    }

    /// Predicted time of section [i, j) once its units are placed: configuration, then loads, then streaming,
    /// as the builder runs them. Loads go through the AGCUs balance_loads() picks, configurations and streamed
    /// reads and stores through each unit's nearest, so a phase takes at least its busiest AGCU's bytes over
    /// one AGCU's bandwidth and all its bytes over the memory's; streaming also takes at least the pipeline's
    /// own estimate. The builder's result is measured, not this estimate.
    double section_cost(const rdu_section& sec, int i, int j) const {
        const size_t n_agcu = static_cast<size_t>(m_c.agcu_units);
        std::vector<double> cfg(n_agcu, 0.0), load(n_agcu, 0.0), io(n_agcu, 0.0);
        auto spread = [](std::vector<double>& to, const std::vector<int>& units, const std::vector<int>& agcu_of,
                         double bytes) {
            for (int u : units)
                to[static_cast<size_t>(agcu_of[static_cast<size_t>(u)])] += bytes / static_cast<double>(units.size());
        };
        const std::vector<double> loads = pmu_loads(sec, i, j);
        const std::vector<int> via = balance_loads(m_c, loads);
        for (size_t u = 0; u < loads.size(); ++u)
            if (via[u] >= 0) load[static_cast<size_t>(via[u])] += loads[u];
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            if (!preloaded(i, j)) {
                for (int u : p.pcus)
                    cfg[static_cast<size_t>(m_c.pcu_agcu[static_cast<size_t>(u)])] +=
                        static_cast<double>(m_c.pcu_config);
                for (int u : p.pmus)
                    cfg[static_cast<size_t>(m_c.pmu_agcu[static_cast<size_t>(u)])] +=
                        static_cast<double>(m_c.pmu_config);
            }
            for (const auto& in : s.inputs)
                if (!in.whole && !made_in(in.tensor, i, j)) spread(io, p.pmus, m_c.pmu_agcu, in.bytes);
            for (int r : s.outputs)
                if (m_last_reader[static_cast<size_t>(r)] >= j || m_user_reads[static_cast<size_t>(r)])
                    spread(io, s.computes ? p.pcus : p.pmus, s.computes ? m_c.pcu_agcu : m_c.pmu_agcu,
                           static_cast<double>(m_g.tensor(r).bytes()) / s.chunks);
        }
        auto phase = [&](const std::vector<double>& bytes) {
            double total = 0, busiest = 0;
            for (double b : bytes) total += b, busiest = std::max(busiest, b);
            return std::max(busiest / m_c.agcu_bw, total / m_c.memory_bw);
        };
        return phase(cfg) + phase(load) + std::max(sec.predicted_seconds, phase(io));
    }

    /// A lower bound on one tile of stage k anywhere: its finest tiles' work spread over as many PCUs as can
    /// share it, at peak (0 for stages on PMUs alone). Part of the bound that prunes the cut search.
    double shortest_tile(int k) const {
        const rdu_stage& s = m_plan.stages[static_cast<size_t>(k)];
        if (!s.computes) return 0.0;
        const auto& pcu = (*m_c.pcu);
        const int n = std::min(max_parallel(s, pcu, s.own_tiles), m_plan.pcu_count);
        return pcu.ideal_seconds(s.whole) / s.own_tiles / std::max(1, n);
    }

    /// One tile's time on the busiest of n PCUs, remembered: the cut search asks for the same stages on every
    /// count of PCUs, in every candidate section that holds them. `times` is tile_times(p).
    double tile_time(std::vector<double>& times, const rdu_placed& p, int n) const {
        double& t = times[static_cast<size_t>(n)];
        if (t < 0) t = tile_seconds(m_plan.stages[static_cast<size_t>(p.stage)], (*m_c.pcu), p.tiles, n);
        return t;
    }
    double tile_time(const rdu_placed& p, int n) { return tile_time(tile_times(p), p, n); }
    /// Stage p's remembered tile times at its tile count, by PCU count (the vector stays where it is).
    std::vector<double>& tile_times(const rdu_placed& p) {
        auto& v = m_tile_memo[(static_cast<std::uint64_t>(p.stage) << 32) | static_cast<std::uint64_t>(p.tiles)];
        if (v.empty()) v.assign(static_cast<size_t>(m_plan.pcu_count) + 1, -1.0);
        return v;
    }

    /// Gives a section's PCUs and PMUs to its stages and places them; fills in its predicted streaming time.
    void allocate(rdu_section& sec) {
        const auto& pcu = (*m_c.pcu);
        const int n_pcus = m_plan.pcu_count, n_pmus = m_plan.pmu_count;
        // Units in proportion to work within a level. The levels of a section run one after another (a level
        // waits for an operand the one before completes), so the section takes the sum over levels of each
        // level's slowest stage.
        std::vector<int> n(sec.stages.size(), 0), pm(sec.stages.size(), 0), cap(sec.stages.size(), 0);
        int free_p = n_pcus, free_m = n_pmus;
        std::vector<std::vector<double>*> times(sec.stages.size());
        for (size_t i = 0; i < sec.stages.size(); ++i)
            if (m_plan.stages[static_cast<size_t>(sec.stages[i].stage)].computes) times[i] = &tile_times(sec.stages[i]);
        auto stage_time = [&](size_t i, int k) { return sec.stages[i].tiles * tile_time(*times[i], sec.stages[i], k); };
        int levels = 1;
        for (const rdu_placed& p : sec.stages) levels = std::max(levels, p.level + 1);
        using item = std::pair<double, int>;  // (stage time, placed index); ties by the larger index, stable
        std::vector<std::priority_queue<item>> heap(static_cast<size_t>(levels));
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_placed& p = sec.stages[i];
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            n[i] = static_cast<int>(p.pcus.size());
            pm[i] = static_cast<int>(p.pmus.size());
            free_p -= n[i];
            free_m -= pm[i];
            if (s.computes) {
                cap[i] = max_parallel(s, pcu, p.tiles);
                heap[static_cast<size_t>(p.level)].push({stage_time(i, n[i]), static_cast<int>(i)});
            }
        }
        // The fewest extra PCUs that shorten stage i (shares round to whole column blocks and rows): one more,
        // else 2, 4, 8 ... more while units last. Returns {extra PCUs, new time}; 0 PCUs when none helps.
        auto faster = [&](size_t i, double t) {
            for (int step = 1; n[i] + step <= std::min(cap[i], n[i] + free_p); step *= 2) {
                if (std::max(0, n[i] + step - pm[i]) > free_m) break;
                const double next = stage_time(i, n[i] + step);
                if (next < t) return std::make_pair(step, next);
            }
            return std::make_pair(0, t);
        };
        // Per level: PCUs it holds. With a level's time ~ its work / its PCUs, one more PCU saves about
        // time / PCUs there: the next PCUs go to the level where that is largest, to its slowest stage.
        std::vector<int> level_pcus(static_cast<size_t>(levels), 0);
        for (size_t i = 0; i < sec.stages.size(); ++i) level_pcus[static_cast<size_t>(sec.stages[i].level)] += n[i];
        while (free_p > 0) {
            int best = -1;
            double best_gain = 0;
            for (int l = 0; l < levels; ++l) {
                const auto& h = heap[static_cast<size_t>(l)];
                if (h.empty()) continue;
                const double gain = h.top().first / std::max(1, level_pcus[static_cast<size_t>(l)]);
                if (best < 0 || gain > best_gain) best = l, best_gain = gain;
            }
            if (best < 0) break;
            auto& h = heap[static_cast<size_t>(best)];
            const auto [t, i] = h.top();
            const size_t ii = static_cast<size_t>(i);
            h.pop();
            const auto [k, next] = faster(ii, t);
            if (k == 0) {  // the level's slowest stage cannot get faster: neither can the level
                while (!h.empty()) h.pop();
                continue;
            }
            const int pmu_need = std::max(0, n[ii] + k - pm[ii]);
            n[ii] += k;
            pm[ii] += pmu_need;
            free_p -= k;
            free_m -= pmu_need;
            level_pcus[static_cast<size_t>(best)] += k;
            h.push({next, i});
        }
        // Spare PMUs spread the bytes a stage moves through its PMUs (weights it loads, or for a stage on PMUs
        // alone the tensors it moves): the next goes to the stage whose PMUs each carry the most, so a section on
        // large PMUs still uses many write ports and links instead of the few its bytes need for capacity.
        std::vector<double> carried(sec.stages.size(), 0.0);
        std::priority_queue<std::pair<double, int>> spread;
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(sec.stages[i].stage)];
            carried[i] = s.weight_bytes;
            if (!s.computes)
                for (const auto& in : s.inputs) carried[i] += in.bytes;
            if (carried[i] > 0) spread.push({carried[i] / pm[i], static_cast<int>(i)});
        }
        while (free_m > 0 && !spread.empty()) {
            const size_t i = static_cast<size_t>(spread.top().second);
            spread.pop();
            ++pm[i];
            --free_m;
            spread.push({carried[i] / pm[i], static_cast<int>(i)});
        }
        // Placement: stage after stage along the snakes.
        int np = 0, nm = 0;
        double fill = 0;
        std::vector<double> level_time(static_cast<size_t>(levels), 0.0);
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            rdu_placed& p = sec.stages[i];
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            p.pcus.resize(static_cast<size_t>(n[i]));
            p.pmus.resize(static_cast<size_t>(pm[i]));
            for (int& u : p.pcus) u = np++;
            for (int& u : p.pmus) u = nm++;
            if (s.computes) {
                p.tile_seconds = tile_time(p, n[i]);
            } else {
                double bytes = 0;
                for (const auto& in : s.inputs) bytes += in.bytes;
                p.tile_seconds = bytes / p.tiles / (static_cast<double>(pm[i]) * std::min(m_c.pmu_bw, m_c.link_bw));
            }
            level_time[static_cast<size_t>(p.level)] =
                std::max(level_time[static_cast<size_t>(p.level)], p.tiles * p.tile_seconds);
            fill += p.tile_seconds;
            sec.tiles = std::max(sec.tiles, p.tiles);
            sec.load_bytes += s.weight_bytes;
        }
        sec.pcus = np;
        sec.pmus = nm;
        sec.load_bytes += static_cast<double>(np) * static_cast<double>(m_c.pcu_config) +
                          static_cast<double>(nm) * static_cast<double>(m_c.pmu_config);
        sec.predicted_seconds = fill;
        for (double t : level_time) sec.predicted_seconds += t;
    }
};

}  // namespace

rdu_plan make_plan(const workload_graph& g, const chip& c, const rdu_mapper::options& o, const std::string& plat_name,
                   std::vector<int>* roots, rdu_search* search) {
    planner p(g, c, o, plat_name, search);
    rdu_plan out = p.run();
    if (roots) *roots = p.roots();
    return out;
}

}  // namespace tessel::rdu

namespace tessel {

rdu_plan rdu_mapper::plan(const workload_graph& g, const platform& plat, rdu_search* search) const {
    const options opt = effective_options();
    if (opt.chunk_above > 1)
        throw input_error("mapper.chunk_above must be at most 1 (a share of the chip's PMU capacity)");
    const rdu::chip c = rdu::discover(plat, opt);
    rdu_plan out = rdu::make_plan(g, c, opt, plat.title(), nullptr, search);
    out.preloaded = opt.steady_state && out.sections.size() == 1;
    return out;
}

rdu_mapper::options rdu_mapper::effective_options() const {
    options o = m_opt;
    if (m_maps_pieces) {
        o.steady_state = false;  // a piece of a longer program: its weights do not stay on chip
        o.program_resident_bytes = m_piece_chip_bytes + m_piece_update_bytes;
    }
    return o;
}

}  // namespace tessel
