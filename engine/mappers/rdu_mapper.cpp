#include "engine/mappers/rdu_mapper.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "engine/mappers/toolkit/allocator.h"
#include "engine/mappers/toolkit/parts.h"
#include "engine/report/summary.h"
#include "models/interconnect/interconnect.h"

namespace tessel {

void rdu_mapper::options::declare(param_decl& d) {
    d.choice(mode, "mode", "sections", {"sections", "single"},
             "sections: run the graph as many sections as it needs, reconfiguring between them; single: the whole "
             "graph must fit on chip as one section (an error says by how much it does not)");
    d(pcus, "pcus", "", "the group of PCUs to use (default: the first rdu_pcu group)");
    d(pmus, "pmus", "", "the group of PMUs to use (default: the first rdu_pmu group)");
    d(agcus, "agcus", "", "the AGCUs to reach off-chip memory through (default: the first rdu_agcu)");
    d(tiles, "tiles", "16", "most tiles a tensor streams through the pipeline in (rounded down to a power of two)",
      bound::positive);
    d(min_tile_rows, "min_tile_rows", "8", "fewest rows of a tensor in one tile (fewer tiles for short tensors)",
      bound::positive);
    d(buffer_depth, "buffer_depth", "2", "tiles an input buffer holds (2: double buffering)", bound::positive);
    d(chunk_above, "chunk_above", "0.5",
      "split a matrix product into column chunks when its weights and whole operands need more than this share "
      "of all PMU capacity",
      bound::positive);
    d(weights_tier, "weights_tier", "",
      "memory (behind the AGCUs) holding weights, state and configurations (default: the fastest with room)");
    d(activations_tier, "activations_tier", "",
      "memory holding graph inputs and tensors stored between sections (default: the fastest with room)");
    d(steady_state, "steady_state", "true",
      "when the graph fits in one section, its configuration and weights stay on chip between runs and are not "
      "loaded (steady-state inference); false loads them in every run");
    d(floorplan_section, "floorplan_section", "-1",
      "section whose placement --floorplan outlines (-1: the one predicted to take longest)", bound::none);
}

rdu_mapper::rdu_mapper(options o) : m_opt(std::move(o)) {}
rdu_mapper::~rdu_mapper() = default;

namespace {

// ---------------------------------------------------------------------------------------------------------
// The chip as the mapper sees it.

struct chip {
    std::string pcu_group, pmu_group, agcu_group;
    int pcu_w = 0, pcu_h = 0, pmu_w = 0, pmu_h = 0;
    std::vector<std::uint32_t> pcu_ids, pmu_ids;        // snake order
    std::vector<std::pair<int, int>> pcu_xy, pmu_xy;    // grid coordinates, snake order
    std::vector<int> pcu_agcu, pmu_agcu;                // nearest AGCU unit, snake order
    std::vector<std::vector<int>> pmu_agcus;            // per PMU (snake order): every AGCU, nearest first
    const compute_model* pcu = nullptr;                 // one PCU's timing rules
    std::uint64_t pcu_config = 0, pmu_config = 0, pmu_capacity = 0;
    double pmu_bw = 0;
    const component* agcu = nullptr;                    // the AGCUs: DMA engines with the memories behind them
    int agcu_units = 0;
    double agcu_bw = 0;
    double link_bw = 0;
    double memory_bw = 0;   // the memory holding weights and configurations (the fastest, or mapper.weights_tier)
};

/// Snake order over a w x h grid: column by column, up then down.
std::vector<std::pair<int, int>> snake(int w, int h) {
    std::vector<std::pair<int, int>> out;
    out.reserve(static_cast<size_t>(w * h));
    for (int x = 0; x < w; ++x)
        for (int k = 0; k < h; ++k) out.emplace_back(x, x % 2 == 0 ? k : h - 1 - k);
    return out;
}

chip discover(const platform& plat, const rdu_mapper::options& o) {
    chip c;
    const platform::group* pg = &toolkit::find_part(
        plat, o.pcus, {"rdu mapper", "pcus", "a group of reconfigurable compute units (PCUs)", toolkit::is_reconfigurable_compute});
    const platform::group* mg = &toolkit::find_part(
        plat, o.pmus, {"rdu mapper", "pmus", "a group of reconfigurable memory units (PMUs)", toolkit::is_reconfigurable_memory});
    const platform::group* ag = &toolkit::find_part(
        plat, o.agcus, {"rdu mapper", "agcus", "a group of AGCUs (DMA engines with memories behind them)", toolkit::fronts_memories});
    if (pg->shape.size() != 2 || mg->shape.size() != 2)
        throw input_error("rdu mapper: PCUs and PMUs must be 2D replicate grids ({x: .., y: ..}); '" + pg->name +
                          "' and '" + mg->name + "' are not");
    c.pcu_group = pg->name;
    c.pmu_group = mg->name;
    c.agcu_group = ag->name;
    c.pcu_w = pg->shape[0];
    c.pcu_h = pg->shape[1];
    c.pmu_w = mg->shape[0];
    c.pmu_h = mg->shape[1];
    const component& pcu = toolkit::first(plat, *pg);
    const component& pmu = toolkit::first(plat, *mg);
    c.pcu = pcu.unit_model();
    c.agcu = &toolkit::first(plat, *ag);
    c.pcu_config = pcu.config_bytes();
    c.pmu_config = pmu.config_bytes();
    c.pmu_capacity = pmu.capacity_bytes();
    c.pmu_bw = pmu.peak_bytes_per_second();
    c.agcu_units = static_cast<int>(c.agcu->unit_count());
    c.agcu_bw = c.agcu->unit_bytes_per_second();
    double tier_bw = 0;
    for (const auto& t : c.agcu->memory_tiers())
        if (o.weights_tier.empty() ? t.peak_bytes_per_second > tier_bw : t.name == o.weights_tier) tier_bw = t.peak_bytes_per_second;
    c.memory_bw = tier_bw > 0 ? tier_bw : c.agcu_units * c.agcu_bw;
    // Every unit on one mesh; ports give the distances that placement and AGCU choice use.
    std::uint32_t net = ~0u;
    auto port_of = [&](std::uint32_t id, std::int32_t unit, const std::string& what) {
        const attach_point ap = plat.attachment(id, unit);
        if (!ap.valid()) throw input_error("rdu mapper: " + what + " is not connected to the switch mesh");
        if (net == ~0u) net = ap.net;
        if (ap.net != net) throw input_error("rdu mapper: " + what + " is on another network than the PCUs; all units must share one mesh");
        const std::vector<int> shape = plat.net(net).port_shape();
        if (shape.size() != 2) throw input_error("rdu mapper: the units' network must be a 2D mesh");
        return std::make_pair(static_cast<int>(ap.port) % shape[0], static_cast<int>(ap.port) / shape[0]);
    };
    port_of(pg->ids.front(), 0, c.pcu_group + "[0,0]");  // the PCUs' mesh is the one
    std::vector<std::pair<int, int>> agcu_port;
    for (int u = 0; u < c.agcu_units; ++u)
        agcu_port.push_back(port_of(ag->ids.front(), u, c.agcu_group + "[" + std::to_string(u) + "]"));
    c.link_bw = plat.net(net).link_bytes_per_second();
    auto nearest = [&](std::pair<int, int> p) {
        int best = 0, bd = -1;
        for (int u = 0; u < c.agcu_units; ++u) {
            const int d = std::abs(agcu_port[static_cast<size_t>(u)].first - p.first) + std::abs(agcu_port[static_cast<size_t>(u)].second - p.second);
            if (bd < 0 || d < bd) bd = d, best = u;
        }
        return best;
    };
    for (const auto& [x, y] : snake(c.pcu_w, c.pcu_h)) {
        const std::uint32_t id = pg->ids[static_cast<size_t>(y * c.pcu_w + x)];
        c.pcu_ids.push_back(id);
        c.pcu_xy.emplace_back(x, y);
        c.pcu_agcu.push_back(nearest(port_of(id, 0, plat.name_of(endpoint{id, 0, 0}))));
    }
    for (const auto& [x, y] : snake(c.pmu_w, c.pmu_h)) {
        const std::uint32_t id = mg->ids[static_cast<size_t>(y * c.pmu_w + x)];
        c.pmu_ids.push_back(id);
        c.pmu_xy.emplace_back(x, y);
        const std::pair<int, int> at = port_of(id, 0, plat.name_of(endpoint{id, 0, 0}));
        c.pmu_agcu.push_back(nearest(at));
        std::vector<int> order(static_cast<size_t>(c.agcu_units));
        for (int u = 0; u < c.agcu_units; ++u) order[static_cast<size_t>(u)] = u;
        auto dist = [&](int u) { return std::abs(agcu_port[static_cast<size_t>(u)].first - at.first) + std::abs(agcu_port[static_cast<size_t>(u)].second - at.second); };
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return dist(a) < dist(b); });
        c.pmu_agcus.push_back(std::move(order));
    }
    return c;
}

/// The AGCU each PMU loads through, given the bytes each loads (0: none): its nearest, unless that one already
/// carries an even share of all the bytes; then the nearest that does not (or, when every one does, the least
/// busy). Nearest keeps routes short; the share keeps a section whose bytes sit in a few large PMUs from
/// loading through the one or two AGCUs next to them.
std::vector<int> balance_loads(const chip& c, const std::vector<double>& bytes) {
    double total = 0;
    for (double b : bytes) total += b;
    const double share = total / c.agcu_units;
    std::vector<double> carried(static_cast<size_t>(c.agcu_units), 0.0);
    std::vector<int> out(bytes.size(), -1);
    for (size_t u = 0; u < bytes.size(); ++u) {
        if (bytes[u] <= 0) continue;
        const auto& order = c.pmu_agcus[u];
        int pick = -1;
        for (int a : order)
            if (carried[static_cast<size_t>(a)] == 0 || carried[static_cast<size_t>(a)] + bytes[u] <= share * (1 + 1e-9)) {
                pick = a;
                break;
            }
        if (pick < 0) {
            pick = order.front();
            for (int a : order)
                if (carried[static_cast<size_t>(a)] < carried[static_cast<size_t>(pick)]) pick = a;
        }
        carried[static_cast<size_t>(pick)] += bytes[u];
        out[u] = pick;
    }
    return out;
}

int pow2_floor(double v) {
    int p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

/// Rectangles covering a run [a, b) of snake positions on a w x h grid (column by column).
std::vector<floorplan_region> run_regions(const std::vector<std::pair<int, int>>& xy, int h, int a, int b,
                                          const std::string& label) {
    std::vector<floorplan_region> out;
    int i = a;
    while (i < b) {
        const int x = xy[static_cast<size_t>(i)].first;
        int j = i;
        int y0 = xy[static_cast<size_t>(i)].second, y1 = y0;
        while (j < b && xy[static_cast<size_t>(j)].first == x) {
            y0 = std::min(y0, xy[static_cast<size_t>(j)].second);
            y1 = std::max(y1, xy[static_cast<size_t>(j)].second);
            ++j;
        }
        // Merge with the previous rectangle when both cover whole columns.
        if (!out.empty() && y0 == 0 && y1 == h - 1 && out.back().y0 == 0 && out.back().y1 == h && out.back().x1 == x)
            out.back().x1 = x + 1;
        else
            out.push_back(floorplan_region{label, x, y0, x + 1, y1 + 1});
        i = j;
    }
    return out;
}

std::string region_text(const std::string& group, const std::vector<floorplan_region>& rs) {
    std::string s;
    for (const auto& r : rs) {
        if (!s.empty()) s += " ";
        auto range = [](int a, int b) { return b - a == 1 ? std::to_string(a) : std::to_string(a) + ".." + std::to_string(b - 1); };
        s += group + "[" + range(r.x0, r.x1) + "," + range(r.y0, r.y1) + "]";
    }
    return s;
}

// ---------------------------------------------------------------------------------------------------------
// Planning: stages, sections, units.

bool is_view(const op_node& op) {
    return op.kind == op_kind::shape_only || op.kind == op_kind::reshape ||
           (op.cost.flops == 0 && op.cost.macs == 0 && op.cost.bytes_out == 0);
}

bool is_gemm(const op_node& op) { return op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0; }

class planner {
public:
    planner(const workload_graph& g, const chip& c, const rdu_mapper::options& o, const std::string& plat_name)
        : m_g(g), m_c(c), m_o(o), m_plat(plat_name) {}

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
    rdu_plan m_plan;
    std::vector<int> m_root;
    std::vector<std::vector<int>> m_producers;  // root tensor -> stages writing it
    std::vector<int> m_last_reader;             // root tensor -> last stage reading it
    std::vector<bool> m_user_reads;             // root tensor -> a graph output
    std::unordered_map<std::uint64_t, double> m_tile_memo;

    double chip_capacity() const { return static_cast<double>(m_c.pmu_capacity) * static_cast<double>(m_c.pmu_ids.size()); }

    void resolve_views() {
        const auto& ts = m_g.tensors();
        m_root.resize(ts.size());
        for (size_t t = 0; t < ts.size(); ++t) m_root[t] = ts[t].alias_of >= 0 ? ts[t].alias_of : static_cast<int>(t);
        for (int o : m_g.topological_order()) {
            const op_node& op = m_g.op(o);
            if (!is_view(op)) continue;
            int src = -1;
            for (int t : op.inputs)
                if (m_g.tensor(t).role != tensor_role::constant) {
                    src = t;
                    break;
                }
            if (src < 0) continue;
            for (int t : op.outputs) m_root[static_cast<size_t>(t)] = m_root[static_cast<size_t>(src)];
        }
    }

    int root(int t) const { return m_root[static_cast<size_t>(t)]; }

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
                const auto& sh = m_g.tensor(first_out).shape;
                const double last = sh.empty() ? 1.0 : static_cast<double>(std::max<std::int64_t>(1, sh.back()));
                s.rows = static_cast<std::int64_t>(std::max(1.0, out_elems / last));
            }
            s.own_tiles = pow2_floor(std::min(static_cast<double>(m_o.tiles), static_cast<double>(s.rows) / static_cast<double>(m_o.min_tile_rows)));
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
                        in.bytes = op.cost.bytes_weight > 0 ? std::min(op.cost.bytes_weight, static_cast<double>(ri.bytes()))
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
            // Chunks: a matrix product too big for `chunk_above` of the chip splits its columns.
            double resident = s.weight_bytes;
            for (const auto& in : s.inputs)
                if (in.whole) resident += in.bytes;
            int chunks = 1;
            if (gemm && resident > m_o.chunk_above * cap) {
                chunks = static_cast<int>(std::ceil(resident / (m_o.chunk_above * cap)));
                if (op.kind == op_kind::attention || chunks > s.whole.n)
                    throw input_error("op '" + op.name + "' needs " + format_bytes(resident) + " on chip (weights and operands it needs whole); '" +
                                      m_plat + "' has " + format_bytes(cap) + " of PMU capacity and this op cannot be split into chunks that fit");
                m_plan.notes.push_back(op.name + ": " + format_bytes(resident) + " of weights and whole operands, more than " +
                                       format_number(100 * m_o.chunk_above, 3) + "% of the " + format_bytes(cap) +
                                       " on chip: split into " + std::to_string(chunks) + " column chunks");
            }
            for (int c = 0; c < chunks; ++c) {
                rdu_stage sc = s;
                sc.chunk = c;
                sc.chunks = chunks;
                if (chunks > 1) {
                    const std::int64_t n0 = s.whole.n * c / chunks, n1 = s.whole.n * (c + 1) / chunks;
                    const double f = static_cast<double>(n1 - n0) / static_cast<double>(s.whole.n);
                    sc.name = op.name + "#" + std::to_string(c);
                    sc.whole.n = n1 - n0;
                    sc.whole.macs *= f;
                    sc.whole.vector_ops *= f;
                    sc.whole.bytes_weight *= f;
                    sc.whole.bytes_out *= f;
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

public:
    /// Output columns one PCU covers per block: its lanes (times the MACs per functional unit).
    static std::int64_t column_width(const rdu_stage& s, const compute_model& pcu) {
        const double rate = pcu.peak_macs_per_cycle(s.whole.type) / pcu.peak_vector_ops_per_cycle(s.whole.type);
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(pcu.lanes()) * std::max(1.0, rate)));
    }

    /// Row items [r0, r1) of tile t of T over R rows.
    static std::pair<std::int64_t, std::int64_t> tile_rows(std::int64_t R, int T, int t) {
        return {R * t / T, R * (t + 1) / T};
    }

    /// What PCU p of n covers of a matrix product's tile of `rows` rows: columns [c0, c1) and rows [q0, q1).
    struct span {
        std::int64_t c0, c1, q0, q1;
    };
    static span gemm_span(const rdu_stage& s, const compute_model& pcu, std::int64_t rows, int n, int p) {
        const std::int64_t N = s.whole.n;
        const std::int64_t cw = column_width(s, pcu);
        const std::int64_t ncb = (N + cw - 1) / cw;
        if (n <= ncb) return {std::min(N, ncb * p / n * cw), std::min(N, ncb * (p + 1) / n * cw), 0, rows};
        // Every column block gets n / ncb PCUs (the first n % ncb one more), which split the rows.
        const std::int64_t base = n / ncb, extra = n % ncb;
        std::int64_t blk = 0, first = 0;
        for (;; ++blk) {
            const std::int64_t g = base + (blk < extra ? 1 : 0);
            if (p < first + g) break;
            first += g;
        }
        const std::int64_t g = base + (blk < extra ? 1 : 0), r = p - first;
        return {std::min(N, blk * cw), std::min(N, (blk + 1) * cw), rows * r / g, rows * (r + 1) / g};
    }

    /// The work of PCU p of n for tile t of T of stage s.
    static work share(const rdu_stage& s, const compute_model& pcu, int T, int t, int n, int p) {
        work w = s.whole;
        const auto [r0, r1] = tile_rows(s.rows, T, t);
        const std::int64_t rows = r1 - r0;
        if (s.whole.is_matmul()) {
            const std::int64_t b = std::max<std::int64_t>(1, s.whole.batch), m = s.whole.m, N = s.whole.n;
            const span sp = gemm_span(s, pcu, rows, n, p);
            const std::int64_t qr = sp.q1 - sp.q0, cols = sp.c1 - sp.c0;
            const double f = (static_cast<double>(qr) * static_cast<double>(cols)) /
                             (static_cast<double>(s.rows) * static_cast<double>(N));
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

    /// The most PCUs that still each get work in every tile.
    static int max_parallel(const rdu_stage& s, const compute_model& pcu, int T) {
        const std::int64_t rows_min = std::max<std::int64_t>(1, s.rows / T);
        if (s.whole.is_matmul()) {
            const std::int64_t cw = column_width(s, pcu);
            const std::int64_t ncb = (s.whole.n + cw - 1) / cw;
            return static_cast<int>(std::min<std::int64_t>(1 << 20, ncb * rows_min));
        }
        const double elems = (s.whole.bytes_out > 0 ? s.whole.bytes_out / (dtype_bits(s.whole.type) / 8.0) : static_cast<double>(s.rows)) / T;
        return static_cast<int>(std::clamp(std::ceil(elems / static_cast<double>(pcu.lanes())), 1.0, static_cast<double>(1 << 20)));
    }

    /// Seconds of one tile on the busiest of n PCUs.
    static double tile_seconds(const rdu_stage& s, const compute_model& pcu, int T, int n) {
        // The first share of the longest tile is at least as large as any (splits round down before it).
        int longest = 0;
        std::int64_t most = -1;
        for (int t = 0; t < std::min(T, 2); ++t) {
            const auto [r0, r1] = tile_rows(s.rows, T, t);
            if (r1 - r0 > most) most = r1 - r0, longest = t;
        }
        // Matrix-product shares differ in whole column blocks (the last one narrower) and rows: time each
        // distinct shape once. Element-wise shares are all equal.
        if (!s.whole.is_matmul()) return pcu.cycles(share(s, pcu, T, longest, n, 0)) / pcu.clock().hz;
        const auto [r0, r1] = tile_rows(s.rows, T, longest);
        std::set<std::pair<std::int64_t, std::int64_t>> shapes;
        double worst = 0;
        for (int p = 0; p < n; ++p) {
            const span sp = gemm_span(s, pcu, r1 - r0, n, p);
            if (shapes.emplace(sp.c1 - sp.c0, sp.q1 - sp.q0).second) worst = std::max(worst, pcu.cycles(share(s, pcu, T, longest, n, p)));
        }
        return worst / pcu.clock().hz;
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
        };
        std::vector<src> srcs;
        for (const auto& in : s.inputs) {
            const auto& prods = m_producers[static_cast<size_t>(in.tensor)];
            size_t here = 0;
            src sr{false, 0, 0, 1 << 20};
            for (int pr : prods) {
                const auto it = os.index.find(pr);
                if (it == os.index.end()) continue;
                ++here;
                const rdu_placed& pp = os.sec.stages[it->second];
                sr.level = std::max(sr.level, pp.level);
                sr.depth = std::max(sr.depth, pp.depth);
                sr.tiles = std::min(sr.tiles, pp.tiles);
            }
            if (here > 0 && here < prods.size()) {
                // Part of this tensor is made here, part before: it is complete only in memory after this section.
                if (why) *why = "its input '" + m_g.tensor(in.tensor).name + "' is only partly produced in this section";
                return false;
            }
            sr.on_chip = here > 0;
            srcs.push_back(sr);
        }
        for (size_t i = 0; i < srcs.size(); ++i)
            if (srcs[i].on_chip) p.level = std::max(p.level, srcs[i].level + (s.inputs[i].whole ? 1 : 0));
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
            if (srcs[i].on_chip) depth += std::max(0, p.depth - srcs[i].depth - 1);  // a short path rejoining a long one
            p.buffer_tiles[i] = depth;
            p.resident_bytes += depth * in.bytes / p.tiles;
        }
        const int pcus = s.computes ? 1 : 0;
        const int pmus_bytes = static_cast<int>(std::ceil(p.resident_bytes / static_cast<double>(m_c.pmu_capacity)));
        const int pmus = std::max({1, pcus, pmus_bytes});
        if (os.pcus + pcus > m_plan.pcu_count || os.pmus + pmus > m_plan.pmu_count) {
            if (why)
                *why = "it needs " + std::to_string(pcus) + " PCU(s) and " + std::to_string(pmus) + " PMU(s) (" +
                       format_bytes(p.resident_bytes) + ") with " + std::to_string(m_plan.pcu_count - os.pcus) + " PCUs and " +
                       std::to_string(m_plan.pmu_count - os.pmus) + " PMUs free";
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

    // ---- Where to cut.
    //
    // A section is a contiguous run of stages (in topological order) that fits the chip. Packing each section
    // as full as it fits is not monotone in capacity: a bigger section can take in stages of a later level
    // (ones that need a whole operand made in the section), whose PCUs idle while the earlier levels run. So
    // the cuts are chosen by a dynamic programme: rest[i] is the least predicted time of stages [i, N) over
    // every first section [i, j) that fits. Whatever fits with less PMU capacity also fits with more, so more
    // capacity only adds choices and the predicted time never grows with it. A section whose lower bound
    // (its weights over the memory's bandwidth, then the longer of its work over every PCU at peak and one
    // tile through every stage at its fastest) cannot beat the best found is not costed.
    void partition() {
        const int N = static_cast<int>(m_plan.stages.size());
        const bool single = m_o.mode == "single";
        m_plan.section_of.assign(static_cast<size_t>(N), -1);
        index_readers();
        std::vector<double> weights(static_cast<size_t>(N) + 1, 0.0), ideal(static_cast<size_t>(N) + 1, 0.0), fill(ideal);
        for (int k = 0; k < N; ++k) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(k)];
            weights[static_cast<size_t>(k) + 1] = weights[static_cast<size_t>(k)] + s.weight_bytes;
            ideal[static_cast<size_t>(k) + 1] = ideal[static_cast<size_t>(k)] + (s.computes ? (*m_c.pcu).ideal_seconds(s.whole) : 0.0);
            fill[static_cast<size_t>(k) + 1] = fill[static_cast<size_t>(k)] + shortest_tile(k);
        }
        const double inf = std::numeric_limits<double>::infinity();
        std::vector<double> rest(static_cast<size_t>(N) + 1, inf);
        std::vector<int> next(static_cast<size_t>(N) + 1, -1);
        rest[static_cast<size_t>(N)] = 0;
        for (int i = single ? 0 : N - 1; i >= 0; --i) {
            open_section os;
            for (int j = i; j < N; ++j) {
                std::string why;
                if (!try_add(os, j, &why)) {
                    const rdu_stage& s = m_plan.stages[static_cast<size_t>(j)];
                    if (single && j > i)
                        throw input_error("workload '" + m_g.name + "' does not fit on '" + m_plat + "' as one section (mapper.mode=single): at op '" +
                                          s.name + "' " + why + "; the graph has " + std::to_string(N) + " stages and " +
                                          format_bytes(weights.back()) + " of weights to hold on chip against " + std::to_string(m_plan.pcu_count) +
                                          " PCUs and " + format_bytes(chip_capacity()) + " of PMU capacity (use mapper.mode=sections to run it in sections)");
                    if (j == i)
                        throw input_error("op '" + s.name + "' does not fit on '" + m_plat + "' even alone: " + why + " (PMU capacity " +
                                          format_bytes(static_cast<double>(m_c.pmu_capacity)) + " each)");
                    break;
                }
                const size_t e = static_cast<size_t>(j) + 1, b = static_cast<size_t>(i);
                if (single && static_cast<int>(e) < N) continue;
                const double bound = (preloaded(i, j + 1) ? 0.0 : (weights[e] - weights[b]) / m_c.memory_bw) +
                                     std::max((ideal[e] - ideal[b]) / m_plan.pcu_count, fill[e] - fill[b]);
                if (bound >= rest[b]) break;  // the bound only grows with the section
                if (bound + rest[e] >= rest[b]) continue;
                rdu_section sec = os.sec;
                allocate(sec);
                const double t = section_cost(sec, i, j + 1) + rest[e];
                if (t <= rest[b]) {  // ties keep the longer section
                    rest[b] = t;
                    next[b] = j + 1;
                }
            }
        }
        for (int i = 0; i < N; i = next[static_cast<size_t>(i)]) {
            const int j = next[static_cast<size_t>(i)];
            open_section os;
            for (int k = i; k < j; ++k) try_add(os, k, nullptr);
            allocate(os.sec);
            os.sec.predicted_total_seconds = section_cost(os.sec, i, j);
            os.sec.load_agcu = balance_loads(m_c, pmu_loads(os.sec, i, j));
            for (const rdu_placed& p : os.sec.stages) m_plan.section_of[static_cast<size_t>(p.stage)] = static_cast<int>(m_plan.sections.size());
            m_plan.sections.push_back(std::move(os.sec));
        }
    }

    /// Per root tensor: the last stage that reads it (-1: none), and whether the user reads it (a graph output).
    void index_readers() {
        m_last_reader.assign(m_g.tensors().size(), -1);
        m_user_reads.assign(m_g.tensors().size(), false);
        for (size_t k = 0; k < m_plan.stages.size(); ++k)
            for (const auto& in : m_plan.stages[k].inputs) m_last_reader[static_cast<size_t>(in.tensor)] = static_cast<int>(k);
        for (int t : m_g.graph_outputs()) m_user_reads[static_cast<size_t>(root(t))] = true;
    }

    /// Whether section [i, j) keeps its configuration and weights on chip between runs (steady state).
    bool preloaded(int i, int j) const { return m_o.steady_state && i == 0 && j == static_cast<int>(m_plan.stages.size()); }

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
        const size_t A = static_cast<size_t>(m_c.agcu_units);
        std::vector<double> cfg(A, 0.0), load(A, 0.0), io(A, 0.0);
        auto spread = [](std::vector<double>& to, const std::vector<int>& units, const std::vector<int>& agcu_of, double bytes) {
            for (int u : units) to[static_cast<size_t>(agcu_of[static_cast<size_t>(u)])] += bytes / static_cast<double>(units.size());
        };
        const std::vector<double> loads = pmu_loads(sec, i, j);
        const std::vector<int> via = balance_loads(m_c, loads);
        for (size_t u = 0; u < loads.size(); ++u)
            if (via[u] >= 0) load[static_cast<size_t>(via[u])] += loads[u];
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            if (!preloaded(i, j)) {
                for (int u : p.pcus) cfg[static_cast<size_t>(m_c.pcu_agcu[static_cast<size_t>(u)])] += static_cast<double>(m_c.pcu_config);
                for (int u : p.pmus) cfg[static_cast<size_t>(m_c.pmu_agcu[static_cast<size_t>(u)])] += static_cast<double>(m_c.pmu_config);
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

    /// One tile's time on the busiest of n PCUs, remembered: the cut search asks for the same stages often.
    double tile_time(const rdu_placed& p, int n) {
        const std::uint64_t key = (static_cast<std::uint64_t>(p.stage) << 40) | (static_cast<std::uint64_t>(p.tiles) << 24) | static_cast<std::uint64_t>(n);
        const auto it = m_tile_memo.find(key);
        if (it != m_tile_memo.end()) return it->second;
        const double t = tile_seconds(m_plan.stages[static_cast<size_t>(p.stage)], (*m_c.pcu), p.tiles, n);
        m_tile_memo.emplace(key, t);
        return t;
    }

    /// Gives a section's PCUs and PMUs to its stages and places them; fills in its predicted streaming time.
    void allocate(rdu_section& sec) {
        const auto& pcu = (*m_c.pcu);
        const int P = m_plan.pcu_count, M = m_plan.pmu_count;
        // Units in proportion to work within a level. The levels of a section run one after another (a level
        // waits for an operand the one before completes), so the section takes the sum over levels of each
        // level's slowest stage.
        std::vector<int> n(sec.stages.size(), 0), pm(sec.stages.size(), 0), cap(sec.stages.size(), 0);
        int free_p = P, free_m = M;
        auto stage_time = [&](size_t i, int k) { return sec.stages[i].tiles * tile_time(sec.stages[i], k); };
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
            level_time[static_cast<size_t>(p.level)] = std::max(level_time[static_cast<size_t>(p.level)], p.tiles * p.tile_seconds);
            fill += p.tile_seconds;
            sec.tiles = std::max(sec.tiles, p.tiles);
            sec.load_bytes += s.weight_bytes;
        }
        sec.pcus = np;
        sec.pmus = nm;
        sec.load_bytes += static_cast<double>(np) * static_cast<double>(m_c.pcu_config) + static_cast<double>(nm) * static_cast<double>(m_c.pmu_config);
        sec.predicted_seconds = fill;
        for (double t : level_time) sec.predicted_seconds += t;
    }
};

}  // namespace

rdu_plan rdu_mapper::plan(const workload_graph& g, const platform& plat) const {
    if (m_opt.chunk_above > 1) throw input_error("mapper.chunk_above must be at most 1 (a share of the chip's PMU capacity)");
    const chip c = discover(plat, m_opt);
    planner p(g, c, m_opt, plat.title());
    rdu_plan out = p.run();
    out.preloaded = m_opt.steady_state && out.sections.size() == 1;
    return out;
}

// ---------------------------------------------------------------------------------------------------------
// The program.

struct rdu_mapper::record {
    struct stage_rec {
        std::vector<std::uint32_t> computes;  // every compute step of the stage
        int pcus = 0, pmus = 0;
    };
    struct section_rec {
        std::uint32_t start = 0, configured = 0, loaded = 0, end = 0;
        std::vector<stage_rec> stages;  // as plan.sections[i].stages
    };
    rdu_plan plan;
    std::vector<section_rec> sections;
    std::vector<std::vector<std::string>> units;  // per section, per stage: "pcu[..] pmu[..]"
};

namespace {

/// DRAM layout: an allocator per tier behind the AGCUs (weights, configurations and stored tensors, laid out once).
class dram_layout {
public:
    dram_layout(const component& a, const workload_graph& g) : m_a(a), m_g(g) {
        for (const auto& t : a.memory_tiers()) m_tier.emplace_back(toolkit::address_allocator::options{t.capacity, 4096, t.base, 0});
    }

    /// Picks the tier named `name`, or the fastest with room for `bytes` ("" = automatic).
    size_t pick(const std::string& name, double bytes, const std::string& what) const {
        const auto& ts = m_a.memory_tiers();
        std::string names;
        for (const auto& t : ts) names += (names.empty() ? "" : ", ") + t.name + " (" + format_bytes(static_cast<double>(t.capacity)) + ")";
        if (!name.empty()) {
            for (size_t i = 0; i < ts.size(); ++i)
                if (ts[i].name == name) {
                    if (!m_tier[i].room_for(bytes))
                        throw input_error("workload '" + m_g.name + "': " + what + " need " + format_bytes(bytes) + " but '" + name + "' has " +
                                          format_bytes(static_cast<double>(ts[i].capacity - m_tier[i].high_water())) + " free; memories behind the AGCUs: " + names);
                    return i;
                }
            throw input_error("rdu mapper: no memory '" + name + "' behind the AGCUs; they reach " + names);
        }
        std::vector<size_t> order(ts.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return ts[x].peak_bytes_per_second > ts[y].peak_bytes_per_second; });
        for (size_t i : order)
            if (m_tier[i].room_for(bytes)) return i;
        throw input_error("workload '" + m_g.name + "': " + what + " need " + format_bytes(bytes) + ", more than any memory behind the AGCUs has free: " + names);
    }

    std::uint64_t alloc(size_t tier, double bytes) {
        const auto& t = m_a.memory_tiers()[tier];
        const std::uint64_t a = m_tier[tier].alloc(static_cast<std::uint64_t>(std::ceil(bytes)));
        if (m_tier[tier].overflowed())
            throw input_error("workload '" + m_g.name + "' needs more than the " + format_bytes(static_cast<double>(t.capacity)) + " of '" + t.name + "'");
        return a;
    }

private:
    const component& m_a;
    const workload_graph& m_g;
    std::vector<toolkit::address_allocator> m_tier;
};

class builder {
public:
    builder(const workload_graph& g, const chip& c, const rdu_plan& plan, const std::vector<int>& root,
            const rdu_mapper::options& o, rdu_mapper::record& rec, mapping& out)
        : m_g(g), m_c(c), m_plan(plan), m_root(root), m_o(o), m_rec(rec), m_out(out), m_mem(*c.agcu, g) {}

    void run() {
        m_out.prog.name = m_g.name;
        layout();
        m_cfg_op = m_out.prog.intern_op("reconfigure");
        m_join_op = m_out.prog.intern_op("section");
        std::uint32_t prev = ~0u;
        for (size_t s = 0; s < m_plan.sections.size(); ++s) prev = section(s, prev);
    }

private:
    const workload_graph& m_g;
    const chip& m_c;
    const rdu_plan& m_plan;
    const std::vector<int>& m_root;
    const rdu_mapper::options& m_o;
    rdu_mapper::record& m_rec;
    mapping& m_out;
    dram_layout m_mem;
    std::vector<std::uint64_t> m_addr;   // per root tensor, when it lives in off-chip memory
    std::vector<bool> m_in_dram;
    std::vector<int> m_last_section;     // per root tensor: the last section that reads it
    std::vector<std::uint64_t> m_config_addr;  // per section
    std::uint32_t m_cfg_op = 0, m_join_op = 0;
    static constexpr std::uint32_t none = ~0u;

    std::uint32_t join(const std::vector<std::uint32_t>& deps) { return m_out.prog.add_delay(m_join_op, 0, deps); }
    /// A step the tile order guarantees exists already (a broken order would be a mapper bug, not bad input).
    static std::uint32_t created(std::uint32_t step, const std::string& stage) {
        if (step == none) throw std::logic_error("rdu mapper: stage '" + stage + "' depends on a tile not yet scheduled");
        return step;
    }
    endpoint agcu(int unit, std::uint64_t address) const { return endpoint{m_c.agcu->id(), unit, address}; }
    endpoint pcu(int i) const { return endpoint{m_c.pcu_ids[static_cast<size_t>(i)], 0, 0}; }
    endpoint pmu(int i, std::uint64_t address = 0) const { return endpoint{m_c.pmu_ids[static_cast<size_t>(i)], 0, address}; }

    static std::uint64_t slice(double total, double lo, double hi) {
        return static_cast<std::uint64_t>(std::floor(total * hi + 1e-9) - std::floor(total * lo + 1e-9));
    }

    void layout() {
        const size_t nt = m_g.tensors().size();
        m_addr.assign(nt, 0);
        m_in_dram.assign(nt, false);
        m_last_section.assign(nt, -1);
        std::vector<int> made_in(nt, -1);
        for (size_t i = 0; i < m_plan.stages.size(); ++i) {
            const rdu_stage& s = m_plan.stages[i];
            const int sec = m_plan.section_of[i];
            for (const auto& in : s.inputs) m_last_section[static_cast<size_t>(in.tensor)] = std::max(m_last_section[static_cast<size_t>(in.tensor)], sec);
            for (int w : s.weight_tensors) m_last_section[static_cast<size_t>(w)] = std::max(m_last_section[static_cast<size_t>(w)], sec);
            for (int r : s.outputs) made_in[static_cast<size_t>(r)] = std::max(made_in[static_cast<size_t>(r)], sec);
        }
        // What lives off chip: weights and state, graph inputs, and tensors a later section (or the user) reads.
        double wbytes = 0, abytes = 0;
        std::vector<int> weights, acts;
        std::set<int> outputs;
        for (int t : m_g.graph_outputs()) outputs.insert(m_root[static_cast<size_t>(t)]);
        for (size_t t = 0; t < nt; ++t) {
            if (m_root[t] != static_cast<int>(t)) continue;
            const tensor_info& ti = m_g.tensors()[t];
            if (ti.role == tensor_role::constant) continue;
            const bool used = m_last_section[t] >= 0 || outputs.count(static_cast<int>(t));
            if (!used) continue;
            if (ti.role == tensor_role::weight || ti.role == tensor_role::state) {
                weights.push_back(static_cast<int>(t));
                wbytes += static_cast<double>(ti.bytes());
            } else if (made_in[t] < 0 || m_last_section[t] > made_in[t] || outputs.count(static_cast<int>(t))) {
                acts.push_back(static_cast<int>(t));
                abytes += static_cast<double>(ti.bytes());
            }
        }
        double cfg = 0;
        for (const auto& sec : m_plan.sections)
            cfg += static_cast<double>(sec.pcus) * static_cast<double>(m_c.pcu_config) + static_cast<double>(sec.pmus) * static_cast<double>(m_c.pmu_config);
        const size_t wt = m_mem.pick(m_o.weights_tier, wbytes + cfg, "weights, state and configurations");
        for (int t : weights) {
            m_addr[static_cast<size_t>(t)] = m_mem.alloc(wt, static_cast<double>(m_g.tensor(t).bytes()));
            m_in_dram[static_cast<size_t>(t)] = true;
        }
        for (const auto& sec : m_plan.sections)
            m_config_addr.push_back(m_mem.alloc(wt, static_cast<double>(sec.pcus) * static_cast<double>(m_c.pcu_config) +
                                                        static_cast<double>(sec.pmus) * static_cast<double>(m_c.pmu_config)));
        const size_t at = m_mem.pick(m_o.activations_tier, abytes, "graph inputs and tensors stored between sections");
        for (int t : acts) {
            m_addr[static_cast<size_t>(t)] = m_mem.alloc(at, static_cast<double>(m_g.tensor(t).bytes()));
            m_in_dram[static_cast<size_t>(t)] = true;
        }
        const auto& tiers = m_c.agcu->memory_tiers();
        m_out.notes.push_back("off-chip memory: " + format_bytes(wbytes) + " of weights and state in " + tiers[wt].name + ", " +
                              format_bytes(abytes) + " of inputs, outputs and tensors stored between sections in " + tiers[at].name);
        m_out.details["weights_tier"] = tiers[wt].name;
        m_out.details["activations_tier"] = tiers[at].name;
    }

    /// Per placed stage while a section is built.
    struct live {
        std::vector<std::vector<std::uint32_t>> pending;   // per tile: transfers into its buffers
        std::vector<std::uint32_t> whole_in;               // transfers into its whole buffers
        std::vector<std::uint32_t> ready, done;            // per tile
        std::vector<std::vector<std::uint32_t>> compute;   // per tile, per PCU
        std::vector<std::vector<std::vector<std::uint32_t>>> sent;  // per tile, per source unit: its pushes
    };

    std::uint32_t section(size_t si, std::uint32_t prev) {
        const rdu_section& sec = m_plan.sections[si];
        program& prog = m_out.prog;
        rdu_mapper::record::section_rec rec;
        rec.start = join(prev == ~0u ? std::vector<std::uint32_t>{} : std::vector<std::uint32_t>{prev});
        // Where each root tensor is produced in this section.
        std::map<int, std::vector<size_t>> producers;
        for (size_t i = 0; i < sec.stages.size(); ++i)
            for (int r : m_plan.stages[static_cast<size_t>(sec.stages[i].stage)].outputs) producers[r].push_back(i);
        // Consumers in this section of each root tensor.
        std::map<int, std::vector<std::pair<size_t, size_t>>> consumers;  // tensor -> (placed index, input index)
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(sec.stages[i].stage)];
            for (size_t k = 0; k < s.inputs.size(); ++k)
                if (producers.count(s.inputs[k].tensor)) consumers[s.inputs[k].tensor].emplace_back(i, k);
        }

        // 1. Reconfiguration: every unit used loads its configuration through its nearest AGCU.
        std::vector<std::uint32_t> cfg;
        if (!m_plan.preloaded) {
            std::uint64_t off = m_config_addr[si];
            for (int u = 0; u < sec.pcus; ++u) {
                cfg.push_back(prog.add_transfer(m_cfg_op, agcu(m_c.pcu_agcu[static_cast<size_t>(u)], off), pcu(u), m_c.pcu_config, {rec.start}));
                off += m_c.pcu_config;
            }
            for (int u = 0; u < sec.pmus; ++u) {
                cfg.push_back(prog.add_transfer(m_cfg_op, agcu(m_c.pmu_agcu[static_cast<size_t>(u)], off), pmu(u), m_c.pmu_config, {rec.start}));
                off += m_c.pmu_config;
            }
        }
        rec.configured = join(cfg.empty() ? std::vector<std::uint32_t>{rec.start} : cfg);

        // 2. Loads: weights, and operands needed whole that are in memory, spread over each stage's PMUs, each PMU
        //    through the AGCU the plan balanced its bytes onto.
        std::vector<std::uint32_t> loads;
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            const std::uint32_t op = prog.intern_op(s.name);
            const int m = static_cast<int>(p.pmus.size());
            auto load = [&](int tensor, double bytes, double lo_frac, double hi_frac) {
                const std::uint64_t base = m_addr[static_cast<size_t>(tensor)];
                for (int b = 0; b < m; ++b) {
                    const double lo = lo_frac + (hi_frac - lo_frac) * b / m, hi = lo_frac + (hi_frac - lo_frac) * (b + 1) / m;
                    const std::uint64_t n = slice(bytes / (hi_frac - lo_frac), lo, hi);
                    if (n == 0) continue;
                    const int u = p.pmus[static_cast<size_t>(b)];
                    loads.push_back(prog.add_transfer(op, agcu(sec.load_agcu[static_cast<size_t>(u)], base + slice(bytes / (hi_frac - lo_frac), 0, lo)),
                                                      pmu(u), n, {rec.configured}));
                }
            };
            const double f0 = static_cast<double>(s.chunk) / s.chunks, f1 = static_cast<double>(s.chunk + 1) / s.chunks;
            if (!m_plan.preloaded)
                for (int w : s.weight_tensors) load(w, static_cast<double>(m_g.tensor(w).bytes()) * (f1 - f0), f0, f1);
            for (const auto& in : s.inputs)
                if (in.whole && !producers.count(in.tensor)) {
                    const bool chunked = in.bytes < static_cast<double>(m_g.tensor(in.tensor).bytes()) * (1 - 1e-12);
                    load(in.tensor, in.bytes, chunked ? f0 : 0.0, chunked ? f1 : 1.0);
                }
        }
        rec.loaded = join(loads.empty() ? std::vector<std::uint32_t>{rec.configured} : loads);

        // 3. Streaming, in the order the tiles flow: by level, then by the tile's end, then topologically.
        std::vector<live> L(sec.stages.size());
        struct item {
            int level, g, pos, tile;
        };
        std::vector<item> order;
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            const rdu_placed& p = sec.stages[i];
            L[i].pending.assign(static_cast<size_t>(p.tiles), {});
            L[i].ready.assign(static_cast<size_t>(p.tiles), none);
            L[i].done.assign(static_cast<size_t>(p.tiles), none);
            L[i].compute.assign(static_cast<size_t>(p.tiles), {});
            const size_t sources = m_plan.stages[static_cast<size_t>(p.stage)].computes ? p.pcus.size() : p.pmus.size();
            L[i].sent.assign(static_cast<size_t>(p.tiles), std::vector<std::vector<std::uint32_t>>(sources));
            const int per = sec.tiles / p.tiles;
            for (int t = 0; t < p.tiles; ++t) order.push_back(item{p.level, (t + 1) * per - 1, static_cast<int>(i), t});
        }
        std::stable_sort(order.begin(), order.end(), [](const item& a, const item& b) {
            if (a.level != b.level) return a.level < b.level;
            if (a.g != b.g) return a.g < b.g;
            return a.pos < b.pos;
        });
        std::vector<std::uint32_t> spills;
        rec.stages.resize(sec.stages.size());
        const auto& pcu_model = (*m_c.pcu);
        for (const item& it : order) {
            const size_t i = static_cast<size_t>(it.pos);
            const rdu_placed& p = sec.stages[i];
            const rdu_stage& s = m_plan.stages[static_cast<size_t>(p.stage)];
            const std::uint32_t op = prog.intern_op(s.name);
            const int t = it.tile, T = p.tiles;
            live& me = L[i];
            // Inputs streamed from memory for this tile.
            std::vector<std::uint32_t> deps = me.pending[static_cast<size_t>(t)];
            for (size_t k = 0; k < s.inputs.size(); ++k) {
                const auto& in = s.inputs[k];
                if (in.whole || producers.count(in.tensor)) continue;
                if (!m_in_dram[static_cast<size_t>(in.tensor)])
                    throw std::logic_error("rdu mapper: '" + m_g.tensor(in.tensor).name + "' is read by '" + s.name + "' but is neither on chip nor in memory");
                const int depth = static_cast<int>(p.buffer_tiles[k]);
                const std::vector<std::uint32_t> room{t >= depth ? created(me.done[static_cast<size_t>(t - depth)], s.name) : rec.loaded};
                const int m = static_cast<int>(p.pmus.size());
                for (int b = 0; b < m; ++b) {
                    const double lo = (t + static_cast<double>(b) / m) / T, hi = (t + static_cast<double>(b + 1) / m) / T;
                    const std::uint64_t n = slice(in.bytes, lo, hi);
                    if (n == 0) continue;
                    const int u = p.pmus[static_cast<size_t>(b)];
                    deps.push_back(prog.add_transfer(op, agcu(m_c.pmu_agcu[static_cast<size_t>(u)], m_addr[static_cast<size_t>(in.tensor)] + slice(in.bytes, 0, lo)),
                                                     pmu(u), n, room));
                }
            }
            if (t == 0) deps.insert(deps.end(), me.whole_in.begin(), me.whole_in.end());
            deps.push_back(t == 0 ? rec.loaded : me.ready[static_cast<size_t>(t - 1)]);
            me.ready[static_cast<size_t>(t)] = join(deps);
            // Compute.
            std::vector<std::uint32_t> src_step;  // per source unit: the step its output of this tile waits for
            if (s.computes) {
                const int n = static_cast<int>(p.pcus.size());
                me.compute[static_cast<size_t>(t)].resize(static_cast<size_t>(n));
                for (int q = 0; q < n; ++q) {
                    std::vector<std::uint32_t> cd{me.ready[static_cast<size_t>(t)]};
                    if (t > 0) cd.push_back(me.compute[static_cast<size_t>(t - 1)][static_cast<size_t>(q)]);
                    const int depth = static_cast<int>(m_o.buffer_depth);
                    if (t >= depth) {
                        const auto& out = me.sent[static_cast<size_t>(t - depth)][static_cast<size_t>(q)];
                        cd.insert(cd.end(), out.begin(), out.end());
                    }
                    const work w = planner::share(s, pcu_model, T, t, n, q);
                    const std::uint32_t c = prog.add_compute(op, pcu(p.pcus[static_cast<size_t>(q)]), prog.add_work(w), cd);
                    me.compute[static_cast<size_t>(t)][static_cast<size_t>(q)] = c;
                    rec.stages[i].computes.push_back(c);
                    src_step.push_back(c);
                }
                me.done[static_cast<size_t>(t)] = join(me.compute[static_cast<size_t>(t)]);
            } else {
                src_step.assign(p.pmus.size(), me.ready[static_cast<size_t>(t)]);
            }
            // Outputs: into the buffers of consumers here, and to memory when later sections or the user need them.
            const size_t U = src_step.size();
            auto source = [&](size_t a) { return s.computes ? pcu(p.pcus[a]) : pmu(p.pmus[a]); };
            auto source_agcu = [&](size_t a) {
                return s.computes ? m_c.pcu_agcu[static_cast<size_t>(p.pcus[a])] : m_c.pmu_agcu[static_cast<size_t>(p.pmus[a])];
            };
            std::vector<std::uint32_t> outgoing;
            for (int r : s.outputs) {
                const double total = static_cast<double>(m_g.tensor(r).bytes());
                for (size_t a = 0; a < U; ++a) {
                    // This source's part of tile t, as a fraction of the whole tensor.
                    const double lo = (t + (s.chunk + static_cast<double>(a) / U) / s.chunks) / T;
                    const double hi = (t + (s.chunk + static_cast<double>(a + 1) / U) / s.chunks) / T;
                    if (consumers.count(r))
                        for (const auto& [ci, k] : consumers[r]) {
                            const rdu_placed& cp = sec.stages[ci];
                            const rdu_stage& cs = m_plan.stages[static_cast<size_t>(cp.stage)];
                            live& cl = L[ci];
                            const bool whole = cp.buffer_tiles[k] == 0;
                            const int tc = whole ? 0 : static_cast<int>(std::floor(lo * cp.tiles + 1e-9));
                            const double base = whole ? 0.0 : static_cast<double>(tc);
                            const double scale = whole ? 1.0 : static_cast<double>(cp.tiles);
                            const int m = static_cast<int>(cp.pmus.size());
                            const double l0 = lo * scale - base, l1 = hi * scale - base;  // in the consumer's buffer
                            std::vector<std::uint32_t> after{src_step[a]};
                            const int depth = static_cast<int>(cp.buffer_tiles[k]);
                            if (!whole && tc >= depth) after.push_back(created(cl.done[static_cast<size_t>(tc - depth)], cs.name));
                            const double used = cs.inputs[k].bytes;  // bytes of this tensor the consumer holds
                            for (int b = static_cast<int>(std::floor(l0 * m)); b < m && b < std::ceil(l1 * m - 1e-12); ++b) {
                                const double o0 = std::max(l0, static_cast<double>(b) / m), o1 = std::min(l1, static_cast<double>(b + 1) / m);
                                if (o1 <= o0) continue;
                                const std::uint64_t n = slice(used, (base + o0) / scale, (base + o1) / scale);
                                if (n == 0) continue;
                                const std::uint64_t into = slice(used, 0, (base + o0) / scale) % std::max<std::uint64_t>(1, m_c.pmu_capacity);
                                const std::uint32_t x = prog.add_transfer(op, source(a), pmu(cp.pmus[static_cast<size_t>(b)], into), n, after);
                                me.sent[static_cast<size_t>(t)][a].push_back(x);
                                if (whole) cl.whole_in.push_back(x);
                                else cl.pending[static_cast<size_t>(tc)].push_back(x);
                                outgoing.push_back(x);
                            }
                        }
                    if (m_in_dram[static_cast<size_t>(r)]) {
                        const std::uint64_t n = slice(total, lo, hi);
                        if (n == 0) continue;
                        const std::uint32_t x = prog.add_transfer(op, source(a), agcu(source_agcu(a), m_addr[static_cast<size_t>(r)] + slice(total, 0, lo)), n,
                                                                  {src_step[a]});
                        me.sent[static_cast<size_t>(t)][a].push_back(x);
                        spills.push_back(x);
                        outgoing.push_back(x);
                    }
                }
            }
            // A PMU-only stage frees its buffer once the tile has left it.
            if (!s.computes) me.done[static_cast<size_t>(t)] = outgoing.empty() ? me.ready[static_cast<size_t>(t)] : join(outgoing);
        }
        // 4. The section ends when every stage has finished its last tile and every store is done.
        std::vector<std::uint32_t> tail = spills;
        for (size_t i = 0; i < sec.stages.size(); ++i) tail.push_back(L[i].done.back());
        rec.end = join(tail);
        for (size_t i = 0; i < sec.stages.size(); ++i) {
            rec.stages[i].pcus = static_cast<int>(sec.stages[i].pcus.size());
            rec.stages[i].pmus = static_cast<int>(sec.stages[i].pmus.size());
        }
        m_rec.sections.push_back(std::move(rec));
        return m_rec.sections.back().end;
    }
};

}  // namespace

mapping rdu_mapper::map(const workload_graph& g, const platform& plat) {
    if (m_opt.chunk_above > 1) throw input_error("mapper.chunk_above must be at most 1 (a share of the chip's PMU capacity)");
    const chip c = discover(plat, m_opt);
    planner pl(g, c, m_opt, plat.title());
    rdu_plan plan = pl.run();
    plan.preloaded = m_opt.steady_state && plan.sections.size() == 1;
    m_record = std::make_unique<record>();
    mapping out;
    builder b(g, c, plan, pl.roots(), m_opt, *m_record, out);
    b.run();

    // Notes and details: the plan, section by section.
    const int S = static_cast<int>(plan.sections.size());
    int stages_on_pcus = 0;
    for (const auto& st : plan.stages) stages_on_pcus += st.computes ? 1 : 0;
    out.notes.insert(out.notes.begin(),
                     std::to_string(plan.stages.size()) + " pipeline stages (" + std::to_string(stages_on_pcus) + " on PCUs, " +
                         std::to_string(plan.stages.size() - static_cast<size_t>(stages_on_pcus)) + " on PMUs only) in " + std::to_string(S) +
                         " section" + (S == 1 ? "" : "s") + " on " + std::to_string(plan.pcu_count) + " PCUs and " + std::to_string(plan.pmu_count) +
                         " PMUs of " + format_bytes(static_cast<double>(plan.pmu_capacity)) + (S > 1 ? "; reconfigured between sections" : ""));
    if (plan.preloaded)
        out.notes.push_back("one section: configuration and weights stay on chip between runs (steady state; mapper.steady_state=false loads them)");
    for (const auto& n : plan.notes) out.notes.push_back(n);
    nlohmann::json secs = nlohmann::json::array();
    int chosen = static_cast<int>(m_opt.floorplan_section);
    if (chosen >= S) throw input_error("mapper.floorplan_section=" + std::to_string(chosen) + ": the run has " + std::to_string(S) + " sections (0.." + std::to_string(S - 1) + ")");
    if (chosen < 0) {
        chosen = 0;
        for (int s = 1; s < S; ++s)
            if (plan.sections[static_cast<size_t>(s)].predicted_seconds > plan.sections[static_cast<size_t>(chosen)].predicted_seconds) chosen = s;
    }
    m_record->units.resize(static_cast<size_t>(S));
    for (int s = 0; s < S; ++s) {
        const rdu_section& sec = plan.sections[static_cast<size_t>(s)];
        nlohmann::json js;
        js["section"] = s;
        js["tiles"] = sec.tiles;
        js["pcus"] = sec.pcus;
        js["pmus"] = sec.pmus;
        js["predicted_s"] = sec.predicted_seconds;
        js["predicted_total_s"] = sec.predicted_total_seconds;
        js["load_bytes"] = sec.load_bytes;
        nlohmann::json ops = nlohmann::json::array();
        for (const rdu_placed& p : sec.stages) {
            const rdu_stage& st = plan.stages[static_cast<size_t>(p.stage)];
            const std::string label = st.name;
            std::vector<floorplan_region> pr, mr;
            if (!p.pcus.empty()) pr = run_regions(c.pcu_xy, c.pcu_h, p.pcus.front(), p.pcus.back() + 1, label);
            if (!p.pmus.empty()) mr = run_regions(c.pmu_xy, c.pmu_h, p.pmus.front(), p.pmus.back() + 1, label);
            const std::string units = (pr.empty() ? std::string() : region_text(c.pcu_group, pr) + " ") + region_text(c.pmu_group, mr);
            m_record->units[static_cast<size_t>(s)].push_back(units);
            nlohmann::json jo;
            jo["op"] = st.name;
            jo["kind"] = op_kind_name(g.op(st.op).kind);
            jo["pcus"] = p.pcus.size();
            jo["pmus"] = p.pmus.size();
            jo["tiles"] = p.tiles;
            jo["level"] = p.level;
            jo["resident_bytes"] = p.resident_bytes;
            jo["tile_s"] = p.tile_seconds;
            jo["units"] = units;
            ops.push_back(jo);
            if (s == chosen) {
                for (auto& r : pr) out.regions.emplace_back(c.pcu_group, r);
                for (auto& r : mr) out.regions.emplace_back(c.pmu_group, r);
            }
        }
        js["ops"] = ops;
        secs.push_back(js);
    }
    out.details["mapper"] = "rdu";
    out.details["sections"] = secs;
    out.details["floorplan_section"] = chosen;
    out.details["preloaded"] = plan.preloaded;
    if (S > 1 || m_opt.floorplan_section >= 0) out.notes.push_back("--floorplan outlines section " + std::to_string(chosen) + " (mapper.floorplan_section)");
    const auto it = g.parameters.find("batch");
    out.samples = it != g.parameters.end() ? std::max(1.0, std::atof(it->second.c_str())) : 1.0;
    m_record->plan = std::move(plan);
    return out;
}

void rdu_mapper::explain(const mapping&, const platform&, const executor::result& r, run_summary& s) const {
    if (!m_record) return;
    const rdu_plan& plan = m_record->plan;
    auto at = [&](std::uint32_t step) { return ticks_to_seconds(r.step_end[step] - r.start); };
    auto started = [&](std::uint32_t step) { return ticks_to_seconds(r.step_start[step] - r.start); };
    double tot_cfg = 0, tot_load = 0, tot_fill = 0, tot_steady = 0, tot_drain = 0, tot_store = 0;
    nlohmann::json secs = nlohmann::json::array();
    std::vector<std::string> lines;
    for (size_t si = 0; si < m_record->sections.size(); ++si) {
        const auto& rec = m_record->sections[si];
        const rdu_section& sec = plan.sections[si];
        const double t0 = at(rec.start), cfg = at(rec.configured), loaded = at(rec.loaded), end = at(rec.end);
        // The bottleneck: the compute stage whose PCUs were busiest (per PCU).
        int bn = -1;
        double bn_busy = -1, clast = loaded;
        for (size_t i = 0; i < rec.stages.size(); ++i) {
            const auto& st = rec.stages[i];
            if (st.computes.empty()) continue;
            double busy = 0;
            for (std::uint32_t c : st.computes) {
                busy += ticks_to_seconds(r.step_end[c] - r.step_start[c]);
                clast = std::max(clast, at(c));
            }
            busy /= std::max(1, st.pcus);
            if (busy > bn_busy) bn_busy = busy, bn = static_cast<int>(i);
        }
        double bfirst = loaded, blast = loaded;
        if (bn >= 0) {
            const auto& st = rec.stages[static_cast<size_t>(bn)];
            bfirst = 1e300;
            blast = 0;
            for (std::uint32_t c : st.computes) {
                bfirst = std::min(bfirst, started(c));
                blast = std::max(blast, at(c));
            }
        }
        const double rc = cfg - t0, ld = loaded - cfg, fill = std::max(0.0, bfirst - loaded), steady = std::max(0.0, blast - std::max(bfirst, loaded)),
                     drain = std::max(0.0, clast - blast), store = std::max(0.0, end - std::max(clast, loaded));
        tot_cfg += rc;
        tot_load += ld;
        tot_fill += fill;
        tot_steady += steady;
        tot_drain += drain;
        tot_store += store;
        nlohmann::json js;
        js["section"] = si;
        js["time_s"] = end - t0;
        js["reconfigure_s"] = rc;
        js["load_s"] = ld;
        js["fill_s"] = fill;
        js["steady_s"] = steady;
        js["drain_s"] = drain;
        js["store_s"] = store;
        nlohmann::json ops = nlohmann::json::array();
        for (size_t i = 0; i < rec.stages.size(); ++i) {
            const rdu_placed& p = sec.stages[i];
            const auto& st = rec.stages[i];
            double busy = 0;
            for (std::uint32_t c : st.computes) busy += ticks_to_seconds(r.step_end[c] - r.step_start[c]);
            nlohmann::json jo;
            jo["op"] = plan.stages[static_cast<size_t>(p.stage)].name;
            jo["pcus"] = st.pcus;
            jo["pmus"] = st.pmus;
            jo["busy_per_pcu_s"] = st.pcus > 0 ? busy / st.pcus : 0.0;
            jo["units"] = m_record->units[si][i];
            ops.push_back(jo);
        }
        js["ops"] = ops;
        std::string line = "section " + std::to_string(si) + ": " + std::to_string(sec.stages.size()) + " stages on " + std::to_string(sec.pcus) +
                           " PCUs / " + std::to_string(sec.pmus) + " PMUs, " + std::to_string(sec.tiles) + " tile" + (sec.tiles == 1 ? "" : "s") + "; ";
        if (bn >= 0) {
            const rdu_placed& p = sec.stages[static_cast<size_t>(bn)];
            const std::string name = plan.stages[static_cast<size_t>(p.stage)].name;
            js["bottleneck"] = name;
            js["bottleneck_busy_s"] = bn_busy;
            line += "bottleneck '" + name + "' (" + std::to_string(p.pcus.size()) + " PCUs, " + format_time(bn_busy / p.tiles) + " per tile); ";
        }
        line += format_time(end - t0) + " = reconfigure " + format_time(rc) + " + load " + format_time(ld) + " + fill " + format_time(fill) +
                " + steady " + format_time(steady) + " + drain " + format_time(drain) + " + store " + format_time(store);
        lines.push_back(line);
        secs.push_back(js);
    }
    const double total = tot_cfg + tot_load + tot_fill + tot_steady + tot_drain + tot_store;
    auto pct = [&](double x) { return format_number(total > 0 ? 100 * x / total : 0, 3) + "%"; };
    s.notes.push_back("time: reconfiguration " + format_time(tot_cfg) + " (" + pct(tot_cfg) + "), loads " + format_time(tot_load) + " (" + pct(tot_load) +
                      "), pipeline fill " + format_time(tot_fill) + " (" + pct(tot_fill) + ") and drain " + format_time(tot_drain) + " (" +
                      pct(tot_drain) + "), steady streaming " + format_time(tot_steady) + " (" + pct(tot_steady) + "), stores " +
                      format_time(tot_store) + " (" + pct(tot_store) + ")");
    // One line per section; very long runs keep the first and last ones.
    const size_t keep = 24;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines.size() > keep && i == keep / 2) s.notes.push_back("... " + std::to_string(lines.size() - keep) + " more sections in summary.json (mapping.measured)");
        if (lines.size() > keep && i >= keep / 2 && i < lines.size() - keep / 2) continue;
        s.notes.push_back(lines[i]);
    }
    nlohmann::json meas;
    meas["sections"] = secs;
    meas["reconfigure_s"] = tot_cfg;
    meas["load_s"] = tot_load;
    meas["fill_s"] = tot_fill;
    meas["steady_s"] = tot_steady;
    meas["drain_s"] = tot_drain;
    meas["store_s"] = tot_store;
    s.details["measured"] = meas;
}

TESSEL_REGISTER_MAPPER(make_mapper<rdu_mapper>(
    "rdu", "spatial pipeline for reconfigurable dataflow units: graph sections laid out on PCUs and PMUs, tiles "
           "streamed through, sections run one after another with reconfiguration and off-chip loads and stores"));

}  // namespace tessel
